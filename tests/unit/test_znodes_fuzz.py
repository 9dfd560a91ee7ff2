"""Fuzzing the znode decoders (issue #17): whatever bytes a znode holds, reading it either gives a
value or raises ``MalformedZnode`` naming the znode's path - never another exception, which would
surface as a traceback in a reconcile or a CLI command.

Two kinds of input, with Hypothesis: arbitrary bytes, and real znodes (the golden captures of a
Kafka 3.9.2 cluster) mutated at the JSON level (a value replaced by one of another type, a key
removed or added, the document nested in a list) and at the byte level (bytes flipped, cut,
inserted). The example counts are bounded so that ``make test`` stays fast; each test prints how
many cases it ran.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_zk_operator.adapters.zk import znodes
from kafka_zk_operator.domain import errors
from tests.unit import test_znodes_golden as golden
from tests.unit.fuzz_support import mutate

Decoder = Callable[[bytes], object]

#: (name, path, decoder, real znode data): every codec that reads what someone else wrote.
CODECS: list[tuple[str, str, Decoder, bytes]] = [
    ("broker", "/brokers/ids/1", lambda d: znodes.BrokerIdZNode.decode(d, "/brokers/ids/1"), golden.BROKER_1),
    (
        "controller",
        "/controller",
        lambda d: znodes.ControllerZNode.decode(d, "/controller"),
        golden.CONTROLLER,
    ),
    (
        "controller_epoch",
        "/controller_epoch",
        lambda d: znodes.ControllerEpochZNode.decode(d, "/controller_epoch"),
        golden.CONTROLLER_EPOCH,
    ),
    (
        "cluster_id",
        "/cluster/id",
        lambda d: znodes.ClusterIdZNode.decode(d, "/cluster/id"),
        golden.CLUSTER_ID,
    ),
    ("feature", "/feature", lambda d: znodes.FeatureZNode.decode(d, "/feature"), golden.FEATURE),
    (
        "migration",
        "/migration",
        lambda d: znodes.MigrationZNode.decode(d, "/migration"),
        b'{"version":0,"kraft_metadata_offset":1,"kraft_controller_id":3000,"kraft_metadata_epoch":1,'
        b'"kraft_controller_epoch":1}',
    ),
    ("topic", "/brokers/topics/t", lambda d: znodes.TopicZNode.decode(d, "/brokers/topics/t"), golden.TOPIC),
    (
        "topic_in_flight",
        "/brokers/topics/t",
        lambda d: znodes.TopicZNode.decode(d, "/brokers/topics/t"),
        golden.TOPIC_IN_FLIGHT,
    ),
    (
        "partition_state",
        "/brokers/topics/t/partitions/0/state",
        lambda d: znodes.PartitionStateZNode.decode(d, "/brokers/topics/t/partitions/0/state", zk_version=3),
        golden.STATE_1,
    ),
    (
        "topic_config",
        "/config/topics/t",
        lambda d: znodes.ConfigEntityZNode.decode(d, "/config/topics/t"),
        golden.TOPIC_CONFIG,
    ),
    (
        "user_config",
        "/config/users/u",
        lambda d: znodes.ConfigEntityZNode.decode(d, "/config/users/u"),
        golden.USER_CONFIG,
    ),
    (
        "config_change",
        "/config/changes/config_change_0000000001",
        lambda d: znodes.ConfigChangeZNode.decode(d, "/config/changes/config_change_0000000001"),
        golden.TOPIC_CHANGE,
    ),
    (
        "reassign_partitions",
        "/admin/reassign_partitions",
        lambda d: znodes.ReassignPartitionsZNode.decode(d, "/admin/reassign_partitions"),
        b'{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[2,1]}]}',
    ),
    (
        "preferred_replica_election",
        "/admin/preferred_replica_election",
        lambda d: znodes.PreferredReplicaElectionZNode.decode(d, "/admin/preferred_replica_election"),
        b'{"version":1,"partitions":[{"topic":"t","partition":0}]}',
    ),
]
IDS = [name for name, *_ in CODECS]

#: Per test and codec; bounded so that make test stays fast (raise it here for a long run).
EXAMPLES = 150
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_cases: dict[str, int] = {}


def _read(name: str, path: str, decode: Decoder, data: bytes) -> None:
    """Decode ``data``: a value, or MalformedZnode naming ``path``. Anything else fails the test."""
    _cases[name] = _cases.get(name, 0) + 1
    try:
        decode(data)
    except errors.MalformedZnode as malformed:
        assert malformed.path == path, f"the error names {malformed.path}, not {path}"
        assert path in str(malformed)
        assert "\n" not in str(malformed), "one line"


@pytest.mark.parametrize(("name", "path", "decode", "real"), CODECS, ids=IDS)
@FUZZ
@given(data=st.binary(max_size=300))
def test_arbitrary_bytes_are_a_value_or_malformed_znode(
    name: str, path: str, decode: Decoder, real: bytes, data: bytes
) -> None:
    _read(name, path, decode, data)


@pytest.mark.parametrize(("name", "path", "decode", "real"), CODECS, ids=IDS)
@FUZZ
@given(choice=st.data())
def test_mutated_real_znodes_are_a_value_or_malformed_znode(
    name: str, path: str, decode: Decoder, real: bytes, choice: st.DataObject
) -> None:
    decode(real)  # the seed itself is valid
    mutated = mutate(choice, json.loads(real))
    _read(name, path, decode, json.dumps(mutated, allow_nan=True).encode())


@pytest.mark.parametrize(("name", "path", "decode", "real"), CODECS, ids=IDS)
@FUZZ
@given(choice=st.data())
def test_byte_damaged_real_znodes_are_a_value_or_malformed_znode(
    name: str, path: str, decode: Decoder, real: bytes, choice: st.DataObject
) -> None:
    data = bytearray(real)
    for _ in range(choice.draw(st.integers(min_value=1, max_value=4))):
        at = choice.draw(st.integers(min_value=0, max_value=max(len(data) - 1, 0)))
        kind = choice.draw(st.sampled_from(["flip", "cut", "insert", "truncate"]))
        if kind == "flip" and data:
            data[at] ^= 1 << choice.draw(st.integers(min_value=0, max_value=7))
        elif kind == "cut" and data:
            del data[at]
        elif kind == "insert":
            data.insert(at, choice.draw(st.integers(min_value=0, max_value=255)))
        else:
            del data[at:]
    _read(name, path, decode, bytes(data))


def test_zz_report_case_counts(capsys: pytest.CaptureFixture[str]) -> None:
    """Prints how many cases each decoder read (named zz_ to run after the fuzz tests in this module)."""
    with capsys.disabled():
        total = sum(_cases.values())
        print(f"\nznode decoder fuzzing: {total} cases over {len(_cases)} codecs")
    assert total == 0 or len(_cases) == len(CODECS)
