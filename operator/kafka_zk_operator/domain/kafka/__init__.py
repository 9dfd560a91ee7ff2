"""What Kafka itself does, line by line: which line a cluster runs (``lines``), each line's topic
configs (``topic_configs``, from the generated ``kafka_topic_configs.json``), topic-name rules
(``topic_names``), Kafka's default replica assignment (``assignment``) and the sizes ZooKeeper can
hold (``znode_bounds``).
"""
