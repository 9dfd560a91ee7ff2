"""A reassignment Kafka's controller never picks up, on the session's real Kafka 3.9.2 cluster.

After it finds data it cannot parse in ``/admin/reassign_partitions`` ("Ignoring partition
reassignment due to invalid json"), the controller stops watching the path: a valid znode
written after the bad one was deleted is ignored until the controller changes. The operator
reports such a batch as stuck, with the remedy, after ``UNNOTICED_AFTER_S``; the remedy given
(a new controller election) is then applied here and makes Kafka carry the batch out.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from kafka_zk_operator.adapters.zk import znodes_admin
from kafka_zk_operator.adapters.zk.store import ZkStore
from kafka_zk_operator.domain.reassignment.plan import PartitionMove
from kafka_zk_operator.domain.reassignment.progress import UNNOTICED_AFTER_S
from kafka_zk_operator.service.reassignment.execution import observe_batch
from tests.conftest import KafkaCluster
from tests.integration.helpers import wait_for

PATH = znodes_admin.REASSIGN_PARTITIONS_PATH


def test_a_batch_the_controller_stopped_watching_for_is_reported_stuck_with_the_remedy(
    kafka_cluster: KafkaCluster, unique_topic: str
) -> None:
    with kafka_cluster.zk_session() as client:
        store = ZkStore(client)
        store.create_topic(unique_topic, {0: (1, 2)}, {})
        wait_for(
            lambda: store.partition_states(unique_topic, [0]).get(0) is not None,
            what="a leader for the new topic",
        )
        wait_for(lambda: client.exists(PATH) is None, what="no reassignment in progress")
        client.create(PATH, b"this is not json")
        time.sleep(2)  # the controller logs "Ignoring partition reassignment due to invalid json"
        client.delete(PATH)
        move = PartitionMove(unique_topic, 0, (1, 2), (2, 3))
        store.create_reassignment([znodes_admin.PartitionReassignment(unique_topic, 0, (2, 3))])
        time.sleep(3)  # a watching controller starts a move within milliseconds
        try:
            assert client.exists(PATH) is not None, "the controller acted after all"
            assert store.read_assignment(unique_topic).value.partitions[0] == (1, 2)  # type: ignore[union-attr]
            now = datetime.now(UTC)
            seen = observe_batch(
                store,
                [move],
                {(unique_topic, 0): (2, 3)},
                now=now,
                started_at=now - timedelta(seconds=UNNOTICED_AFTER_S + 1),
                stuck_after_seconds=1800,
            )
            (stuck,) = seen.progress.stuck
            assert "has not acted on /admin/reassign_partitions" in stuck.reason
            assert "delete the /controller znode" in stuck.reason
        finally:
            # The remedy: a new controller election; the new controller reads the znode and moves.
            client.delete("/controller")
            wait_for(
                lambda: client.exists(PATH) is None, timeout=60, what="the new controller to finish the move"
            )
        assert store.read_assignment(unique_topic).value.partitions[0] == (2, 3)  # type: ignore[union-attr]
