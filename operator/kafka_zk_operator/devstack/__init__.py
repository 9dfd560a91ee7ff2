"""The local development and test stack: real ZooKeeper, Kafka brokers, etcd and kube-apiserver.

Used by ``kzo dev up|down|status`` and by the pytest fixtures. Everything binds to 127.0.0.1 and
runs as the current user; binaries and jars are fetched or built once into the cache folder
(``$KZO_CACHE_DIR`` or ``~/.cache/kafka-zk-operator``).
"""
