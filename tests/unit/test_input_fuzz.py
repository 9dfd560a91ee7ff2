"""Fuzzing what users and other programs hand the operator (issue #17, item 4): snapshot files,
Kafka's reassignment JSON, PartitionReassignment specs and plan documents, each mutated from a
valid one or made of arbitrary bytes. Every input is accepted or refused with ``InvalidSpec``
(one line); no other exception. ``kzo plan`` on a damaged snapshot file exits 0 or 2 with one
line and no traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_zk_operator.domain import errors, placement
from kafka_zk_operator.domain.documents import plan_result as plan_document
from kafka_zk_operator.domain.documents.snapshot import (
    arrays_to_snapshot,
    parse_snapshot_json,
    snapshot_to_arrays,
)
from kafka_zk_operator.domain.modes import Mode
from kafka_zk_operator.domain.placement.synthetic import synthetic_cluster
from kafka_zk_operator.domain.reassignment.request import parse_reassignment_json, parse_request
from tests.unit.cli_support import run_kzo
from tests.unit.fuzz_support import mutate

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

CLUSTER = synthetic_cluster(4, 2, 12, seed=1, layout="kafka")
SNAPSHOT = arrays_to_snapshot(CLUSTER)
REASSIGNMENT_JSON = {
    "version": 1,
    "partitions": [
        {"topic": "t", "partition": 0, "replicas": [2, 1], "log_dirs": ["any", "any"]},
        {"topic": "t", "partition": 1, "replicas": [1, 3]},
    ],
}
SPECS: list[dict[str, Any]] = [
    {
        "mode": "Explicit",
        "partitions": [{"topic": "t", "partition": 0, "replicas": [2, 1]}],
        "throttle": 1000,
    },
    {"mode": "AddBrokers", "brokers": [4], "batch": {"maxPartitions": 5, "maxMovesPerBroker": 2}},
    {"mode": "Rebalance", "topics": ["t"], "topicsRegex": "t.*", "tolerance": 1, "approval": "Manual"},
    {"mode": "ReplicationFactor", "replicationFactors": {"t": 3}, "rackPolicy": "Warn"},
]
_REQUEST = placement.PlanRequest(mode=Mode.REBALANCE)
PLAN_DOCUMENT = json.loads(
    plan_document.dump(
        plan_document.plan_document(
            placement.plan(CLUSTER, _REQUEST), request=_REQUEST, input_sha256="0" * 64
        )
    )
)


def _refused_cleanly(error: errors.KzoError) -> None:
    assert isinstance(error, errors.InvalidSpec), f"{type(error).__name__}: {error}"
    assert "\n" not in str(error), "one line"


@FUZZ
@given(choice=st.data())
def test_mutated_snapshots_parse_or_are_refused(choice: st.DataObject) -> None:
    text = json.dumps(mutate(choice, SNAPSHOT), allow_nan=True)
    try:
        snapshot_to_arrays(parse_snapshot_json(text))
    except errors.KzoError as error:
        _refused_cleanly(error)


@FUZZ
@given(data=st.binary(max_size=200))
def test_arbitrary_bytes_are_not_a_snapshot(data: bytes) -> None:
    try:
        parse_snapshot_json(data)
    except errors.KzoError as error:
        _refused_cleanly(error)


@FUZZ
@given(choice=st.data())
def test_mutated_reassignment_json_parses_or_is_refused(choice: st.DataObject) -> None:
    text = json.dumps(mutate(choice, REASSIGNMENT_JSON), allow_nan=True)
    try:
        parse_reassignment_json(text)
    except errors.KzoError as error:
        _refused_cleanly(error)


@FUZZ
@given(choice=st.data(), spec=st.sampled_from(SPECS))
def test_mutated_reassignment_specs_parse_or_are_refused(choice: st.DataObject, spec: dict[str, Any]) -> None:
    mutated = mutate(choice, spec)
    try:
        parse_request(mutated if isinstance(mutated, dict) else {"mode": mutated})
    except errors.KzoError as error:
        _refused_cleanly(error)


@pytest.mark.parametrize("factor", [0, None])
def test_a_replication_factor_keyed_by_a_control_character_is_refused_in_one_line(factor: object) -> None:
    """Found by the fuzz test above: the topic name (a key) went into the message as is."""
    spec = {"mode": "ReplicationFactor", "replicationFactors": {"\n": factor}}
    with pytest.raises(errors.InvalidSpec) as refused:
        parse_request(spec)
    _refused_cleanly(refused.value)
    assert "spec.replicationFactors['\\n']" in str(refused.value)


@FUZZ
@given(choice=st.data())
def test_mutated_plan_documents_restore_or_are_refused(choice: st.DataObject) -> None:
    mutated = mutate(choice, PLAN_DOCUMENT)
    try:
        plan_document.read_plan_document(json.loads(json.dumps(mutated, allow_nan=True)), CLUSTER)
    except errors.KzoError as error:
        _refused_cleanly(error)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(choice=st.data())
def test_kzo_plan_on_a_damaged_snapshot_file_is_one_line_and_exit_2(
    choice: st.DataObject, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snapshot = tmp_path / "snapshot.json"
    snapshot.write_text(json.dumps(mutate(choice, SNAPSHOT), allow_nan=True))
    out = tmp_path / "plan.json"
    code, _, err = run_kzo(capsys, "plan", "--snapshot", str(snapshot), "--mode", "rebalance", "-o", str(out))
    assert code in (0, 2), err
    assert "Traceback" not in err
    if code == 2:
        assert len(err.strip().splitlines()) == 1, err
