"""A write longer than a ZooKeeper server accepts in one request is refused before it is sent
(found by the spec fuzzing of issue #17: a KafkaTopic with 250,000 partitions made the operator
send a 4 MB topic znode, which the server answered by closing the connection; the operator then
reported ClusterUnavailable and sent it again every 5 s, dropping its session's connection each
time). No server is needed: the size is measured on the request kazoo would send."""

from __future__ import annotations

import pytest
from kazoo.client import KazooClient

from kafka_zk_operator.adapters.zk.store_writes import MAX_REQUEST_BYTES, check_request_size, request_bytes
from kafka_zk_operator.domain import errors


def _transaction(data_bytes: int) -> object:
    client = KazooClient(hosts="127.0.0.1:1/kafka")  # never started: nothing is sent
    tx = client.transaction()
    tx.check("/controller_epoch", 3)
    tx.create("/config/topics/t", b'{"version":1,"config":{}}')
    tx.create("/brokers/topics/t", b"x" * data_bytes)
    return tx


def test_the_measured_size_is_the_request_the_server_reads() -> None:
    base = request_bytes(_transaction(0))
    assert request_bytes(_transaction(1000)) == base + 1000
    # header (8) + 3 multi headers (9 each) + the end marker (9) + paths, data and ACLs: the
    # chroot is part of every path on the wire.
    assert base > 8 + 4 * 9 + len("/kafka/controller_epoch") + 2 * len("/kafka/brokers/topics/t")


def test_a_request_up_to_the_limit_passes() -> None:
    fits = MAX_REQUEST_BYTES - request_bytes(_transaction(0))
    tx = _transaction(fits)
    assert request_bytes(tx) == MAX_REQUEST_BYTES
    check_request_size(tx, "/brokers/topics/t")


def test_one_byte_over_the_limit_is_refused_as_not_supported_naming_the_path_and_size() -> None:
    fits = MAX_REQUEST_BYTES - request_bytes(_transaction(0))
    with pytest.raises(errors.RequestTooLarge) as refused:
        check_request_size(_transaction(fits + 1), "/brokers/topics/t")
    assert isinstance(refused.value, errors.NotSupported)
    assert not refused.value.retryable
    assert refused.value.reason is errors.Reason.NOT_SUPPORTED
    assert "/brokers/topics/t" in refused.value.message
    assert f"{MAX_REQUEST_BYTES + 1:,} bytes" in refused.value.message
