"""Every znode codec Kafka's ZooKeeper metadata needs, in one namespace (one class per znode schema).

The ZooKeeper store adapter imports this module (``from kafka_zk_operator.adapters.zk import znodes``)
and calls ``znodes.TopicZNode.decode(data, path)`` and friends; the implementations live in
``znodes_topics``, ``znodes_brokers``, ``znodes_cluster``, ``znodes_config``, ``znodes_admin`` and
``topic_ids``. No codec touches a ZooKeeper client: each is path builder(s), ``encode(value) -> bytes``
and ``decode(data, path) -> value`` (decode-only where only Kafka may write). Decoders raise
``MalformedZnode(path, problem)`` for data Kafka would not have written; path builders raise
``InvalidTopicName``/``InvalidSpec`` for names that would escape their path segment.

============================================  =========================  ================================
znode                                         codec                      value
============================================  =========================  ================================
/brokers/topics/<t> (v1, v2, v3)              TopicZNode                 model.TopicAssignment
/brokers/topics/<t>/partitions/<p>/state      PartitionStateZNode        model.PartitionState (decode)
/brokers/ids/<id> (v1-v5)                     BrokerIdZNode              BrokerRegistration
/controller (v1, v2), /controller_epoch       ControllerZNode, ...Epoch  ControllerRegistration, int
/cluster/id                                   ClusterIdZNode             str
/migration                                    MigrationZNode             MigrationState
/feature                                      FeatureZNode               FinalizedFeatures (decode)
/config/<type>/<name>                         ConfigEntityZNode          ConfigEntity
/config/changes/config_change_N (v2, v1, 0.8)  ConfigChangeZNode          ConfigChangeNotification
/admin/reassign_partitions                    ReassignPartitionsZNode    tuple[PartitionReassignment]
/admin/preferred_replica_election             PreferredReplicaElectionZNode  tuple[TopicPartition]
/admin/delete_topics/<t>                      DeleteTopicZNode           (no data)
============================================  =========================  ================================
"""

from __future__ import annotations

from kafka_zk_operator.adapters.zk.topic_ids import (
    METADATA_TOPIC_ID,
    RESERVED_TOPIC_IDS,
    TOPIC_ID_LENGTH,
    ZERO_TOPIC_ID,
    RandomSource,
    generate_topic_id,
    is_valid_topic_id,
    topic_id_from_bytes,
    topic_id_problem,
    topic_id_to_bytes,
)
from kafka_zk_operator.adapters.zk.znodes_admin import (
    ADMIN_PATH,
    DELETE_TOPIC_MARKER_DATA,
    DELETE_TOPICS_PATH,
    PREFERRED_REPLICA_ELECTION_PATH,
    REASSIGN_PARTITIONS_PATH,
    DeleteTopicZNode,
    PartitionReassignment,
    PreferredReplicaElectionZNode,
    ReassignPartitionsZNode,
    TopicPartition,
    delete_topic_path,
)
from kafka_zk_operator.adapters.zk.znodes_brokers import (
    BROKER_IDS_PATH,
    BROKER_ZNODE_VERSIONS,
    SECURITY_PROTOCOLS,
    BrokerIdZNode,
    BrokerRegistration,
    Endpoint,
    SupportedFeatureRange,
    broker_id_from_path,
    broker_path,
)
from kafka_zk_operator.adapters.zk.znodes_cluster import (
    CLUSTER_ID_PATH,
    CONTROLLER_EPOCH_PATH,
    CONTROLLER_PATH,
    FEATURE_PATH,
    MIGRATION_PATH,
    MIGRATION_UNSET,
    ZK_CONTROLLER_KRAFT_EPOCH,
    ClusterIdZNode,
    ControllerEpochZNode,
    ControllerRegistration,
    ControllerZNode,
    FeatureZNode,
    FeatureZNodeStatus,
    FinalizedFeatures,
    MigrationState,
    MigrationZNode,
)
from kafka_zk_operator.adapters.zk.znodes_common import ANY_VERSION
from kafka_zk_operator.adapters.zk.znodes_config import (
    CONFIG_CHANGE_CREATE_PATH,
    CONFIG_CHANGE_LEGACY,
    CONFIG_CHANGE_PREFIX,
    CONFIG_CHANGE_V1,
    CONFIG_CHANGE_V2,
    CONFIG_CHANGES_PATH,
    CONFIG_PATH,
    DEFAULT_ENTITY_NAME,
    ConfigChangeNotification,
    ConfigChangeZNode,
    ConfigEntity,
    ConfigEntityType,
    ConfigEntityZNode,
    broker_config_path,
    config_change_sequence,
    config_change_version_for,
    config_change_version_for_line,
    config_entity_path,
    topic_config_path,
    user_client_config_path,
)
from kafka_zk_operator.adapters.zk.znodes_topics import (
    LEADER_RECOVERED,
    LEADER_RECOVERING,
    NO_LEADER,
    TOPIC_ZNODE_V1,
    TOPIC_ZNODE_V2,
    TOPIC_ZNODE_V3,
    TOPIC_ZNODE_VERSIONS,
    TOPICS_PATH,
    PartitionStateZNode,
    TopicZNode,
    partition_path,
    partition_state_path,
    topic_partitions_path,
    topic_path,
    topic_znode_version_for,
)

__all__ = [
    "ADMIN_PATH",
    "ANY_VERSION",
    "BROKER_IDS_PATH",
    "BROKER_ZNODE_VERSIONS",
    "CLUSTER_ID_PATH",
    "CONFIG_CHANGES_PATH",
    "CONFIG_CHANGE_CREATE_PATH",
    "CONFIG_CHANGE_LEGACY",
    "CONFIG_CHANGE_PREFIX",
    "CONFIG_CHANGE_V1",
    "CONFIG_CHANGE_V2",
    "CONFIG_PATH",
    "CONTROLLER_EPOCH_PATH",
    "CONTROLLER_PATH",
    "DEFAULT_ENTITY_NAME",
    "DELETE_TOPICS_PATH",
    "DELETE_TOPIC_MARKER_DATA",
    "FEATURE_PATH",
    "LEADER_RECOVERED",
    "LEADER_RECOVERING",
    "METADATA_TOPIC_ID",
    "MIGRATION_PATH",
    "MIGRATION_UNSET",
    "NO_LEADER",
    "PREFERRED_REPLICA_ELECTION_PATH",
    "REASSIGN_PARTITIONS_PATH",
    "RESERVED_TOPIC_IDS",
    "SECURITY_PROTOCOLS",
    "TOPICS_PATH",
    "TOPIC_ID_LENGTH",
    "TOPIC_ZNODE_V1",
    "TOPIC_ZNODE_V2",
    "TOPIC_ZNODE_V3",
    "TOPIC_ZNODE_VERSIONS",
    "ZERO_TOPIC_ID",
    "ZK_CONTROLLER_KRAFT_EPOCH",
    "BrokerIdZNode",
    "BrokerRegistration",
    "ClusterIdZNode",
    "ConfigChangeNotification",
    "ConfigChangeZNode",
    "ConfigEntity",
    "ConfigEntityType",
    "ConfigEntityZNode",
    "ControllerEpochZNode",
    "ControllerRegistration",
    "ControllerZNode",
    "DeleteTopicZNode",
    "Endpoint",
    "FeatureZNode",
    "FeatureZNodeStatus",
    "FinalizedFeatures",
    "MigrationState",
    "MigrationZNode",
    "PartitionReassignment",
    "PartitionStateZNode",
    "PreferredReplicaElectionZNode",
    "RandomSource",
    "ReassignPartitionsZNode",
    "SupportedFeatureRange",
    "TopicPartition",
    "TopicZNode",
    "broker_config_path",
    "broker_id_from_path",
    "broker_path",
    "config_change_sequence",
    "config_change_version_for",
    "config_change_version_for_line",
    "config_entity_path",
    "delete_topic_path",
    "generate_topic_id",
    "is_valid_topic_id",
    "partition_path",
    "partition_state_path",
    "topic_config_path",
    "topic_id_from_bytes",
    "topic_id_problem",
    "topic_id_to_bytes",
    "topic_partitions_path",
    "topic_path",
    "topic_znode_version_for",
    "user_client_config_path",
]
