"""The Argo CD health checks in ``charts/kafka-zk-operator/argocd/*.lua``, run in a real Lua runtime.

Argo CD runs health scripts in gopher-lua (Lua 5.1 semantics) with the resource as the global
``obj`` and reads ``hs.status`` / ``hs.message`` from the returned table. Here the scripts run in
lupa's Lua 5.1 and 5.4 inside a sandbox holding only the basic functions Argo CD offers, so a
script that reaches for ``os`` or ``io`` fails. Statuses come from hand-written fixtures and, for
KafkaTopic, from the operator's own ``build_topic_status`` so the check follows the status contract.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from lupa import lua51, lua54

from kafka_zk_operator.domain import crd_identity, errors
from kafka_zk_operator.domain.reassignment.status import Phase, Verdict, verdict_fields
from kafka_zk_operator.domain.topic import status as ts

ROOT = Path(__file__).resolve().parents[2]
ARGOCD_DIR = ROOT / "charts" / "kafka-zk-operator" / "argocd"
TOPIC_SCRIPT = ARGOCD_DIR / "health-kafkatopic.lua"
REASSIGNMENT_SCRIPT = ARGOCD_DIR / "health-partitionreassignment.lua"
ARGOCD_DOC = ROOT / "docs" / "argocd.md"

HEALTH_STATES = {"Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown"}
#: Ready=False reasons the check reports as Progressing: the operator retries them by itself.
TRANSIENT = {
    "ClusterUnavailable",
    "ZooKeeperError",
    "ReassignmentInProgress",
    "TopicBeingDeleted",
    "ReplicationFactorChanging",
    "PlanJobFailed",
    "KRaftMigration",
}
NOW = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)

_SANDBOX = """
local source, obj = ...
local env = {
  obj = obj, ipairs = ipairs, pairs = pairs, next = next, type = type, tostring = tostring,
  tonumber = tonumber, select = select, error = error, pcall = pcall, unpack = unpack,
  string = string, table = table, math = math,
}
local chunk, err
if setfenv ~= nil then
  chunk, err = loadstring(source, "=health.lua")
  if chunk == nil then error(err) end
  setfenv(chunk, env)
else
  chunk, err = load(source, "=health.lua", "t", env)
  if chunk == nil then error(err) end
end
local hs = chunk()
return hs.status, hs.message
"""

Health = Callable[[Path, dict[str, Any]], tuple[str, str]]


@pytest.fixture(params=[lua51, lua54], ids=["lua5.1", "lua5.4"])
def health(request: pytest.FixtureRequest) -> Iterator[Health]:
    """Run a health script against an object, as Argo CD does (JSON → Lua tables)."""
    runtime = request.param.LuaRuntime(unpack_returned_tuples=True)
    sandbox = runtime.eval(f"function(...) {_SANDBOX} end")

    def run(script: Path, obj: dict[str, Any]) -> tuple[str, str]:
        # Argo CD hands the script decoded JSON: round-trip to get exactly JSON types.
        table = runtime.table_from(json.loads(json.dumps(obj)), recursive=True)
        status, message = sandbox(script.read_text(), table)
        assert status in HEALTH_STATES, f"hs.status={status!r} is not an Argo CD health state"
        assert isinstance(message, str) and message, "hs.message must be a non-empty string"
        return status, message

    yield run


# --- KafkaTopic ---------------------------------------------------------------------------------------


def condition(
    kind: str, status: str, reason: str, message: str, generation: int | None = 3
) -> dict[str, Any]:
    result: dict[str, Any] = {"type": kind, "status": status, "reason": reason, "message": message}
    if generation is not None:
        result["observedGeneration"] = generation
        result["lastTransitionTime"] = "2025-03-01T12:00:00Z"
    return result


def kafkatopic(status: dict[str, Any] | None, generation: int = 3, **metadata: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "kafka.zk-operator.io/v1alpha1",
        "kind": "KafkaTopic",
        "metadata": {"name": "orders", "namespace": "team-a", "generation": generation, **metadata},
        "spec": {"partitions": 6, "replicationFactor": 3},
    }
    if status is not None:
        obj["status"] = status
    return obj


def ready_status(status: str, reason: str, message: str = "text", generation: int = 3) -> dict[str, Any]:
    return {
        "observedGeneration": generation,
        "topicName": "orders",
        "conditions": [condition("Ready", status, reason, message, generation)],
    }


@pytest.mark.parametrize("reason", ["Created", "Updated", "Adopted", "InSync"])
def test_ready_topic_with_current_generation_is_healthy(health: Health, reason: str) -> None:
    status, message = health(TOPIC_SCRIPT, kafkatopic(ready_status("True", reason, "Topic 'orders' ok.")))
    assert status == "Healthy"
    assert message == f"{reason}: Topic 'orders' ok."


def test_ready_topic_with_a_warning_is_healthy_and_says_so(health: Health) -> None:
    body = ready_status("True", "InSync")
    body["conditions"].append(condition("Warning", "True", "PlanningWarnings", "min.insync.replicas > RF"))
    status, message = health(TOPIC_SCRIPT, kafkatopic(body))
    assert status == "Healthy"
    assert message.endswith("Warning: min.insync.replicas > RF")


@pytest.mark.parametrize(
    "reason", ["InvalidSpec", "NotSupported", "ResourceConflict", "TopicDeletedInKafka", "InternalError"]
)
def test_not_ready_for_a_permanent_reason_is_degraded(health: Health, reason: str) -> None:
    topic = kafkatopic(ready_status("False", reason, "Decreasing partitions (6 -> 3) is not supported."))
    status, message = health(TOPIC_SCRIPT, topic)
    assert status == "Degraded"
    assert message == f"{reason}: Decreasing partitions (6 -> 3) is not supported."


def test_not_ready_for_an_unknown_reason_is_degraded_not_progressing_forever(health: Health) -> None:
    status, message = health(TOPIC_SCRIPT, kafkatopic(ready_status("False", "SomethingNew", "boom")))
    assert (status, message) == ("Degraded", "SomethingNew: boom")


@pytest.mark.parametrize("reason", sorted(TRANSIENT))
def test_not_ready_for_a_transient_reason_is_progressing(health: Health, reason: str) -> None:
    status, message = health(TOPIC_SCRIPT, kafkatopic(ready_status("False", reason, "retrying in 10 s")))
    assert (status, message) == ("Progressing", f"{reason}: retrying in 10 s")


def test_ready_unknown_is_progressing(health: Health) -> None:
    status, _ = health(TOPIC_SCRIPT, kafkatopic(ready_status("Unknown", "Reconciling", "working")))
    assert status == "Progressing"


def test_ready_for_an_older_generation_is_progressing(health: Health) -> None:
    topic = kafkatopic(ready_status("True", "InSync", generation=2), generation=3)
    status, message = health(TOPIC_SCRIPT, topic)
    assert status == "Progressing"
    assert "generation 3" in message and "generation 2" in message


def test_degraded_status_of_an_older_generation_is_progressing_after_a_fix(health: Health) -> None:
    topic = kafkatopic(ready_status("False", "InvalidSpec", generation=4), generation=5)
    assert health(TOPIC_SCRIPT, topic)[0] == "Progressing"


def test_ready_condition_of_an_older_generation_is_progressing(health: Health) -> None:
    body = ready_status("True", "InSync", generation=3)
    body["conditions"][0]["observedGeneration"] = 2
    assert health(TOPIC_SCRIPT, kafkatopic(body))[0] == "Progressing"


def test_ready_condition_without_its_own_generation_uses_the_status_generation(health: Health) -> None:
    body = {"observedGeneration": 3, "conditions": [condition("Ready", "True", "InSync", "ok", None)]}
    assert health(TOPIC_SCRIPT, kafkatopic(body)) == ("Healthy", "InSync: ok")


def test_missing_status_is_progressing(health: Health) -> None:
    status, message = health(TOPIC_SCRIPT, kafkatopic(None))
    assert (status, message) == ("Progressing", "Waiting for the operator to report a status")


def test_status_without_observed_generation_is_progressing(health: Health) -> None:
    body = ready_status("True", "InSync")
    del body["observedGeneration"]
    assert health(TOPIC_SCRIPT, kafkatopic(body))[0] == "Progressing"


@pytest.mark.parametrize("conditions", [None, []], ids=["absent", "empty"])
def test_status_without_conditions_is_progressing(health: Health, conditions: list[Any] | None) -> None:
    body: dict[str, Any] = {"observedGeneration": 3, "topicName": "orders"}
    if conditions is not None:
        body["conditions"] = conditions
    assert health(TOPIC_SCRIPT, kafkatopic(body)) == ("Progressing", "Waiting for the Ready condition")


def test_paused_topic_is_suspended_even_with_an_older_generation(health: Health) -> None:
    body = ready_status("True", "InSync", generation=2)
    body["conditions"].append(
        condition("ReconciliationPaused", "True", "PausedByAnnotation", "nothing is written", 3)
    )
    assert health(TOPIC_SCRIPT, kafkatopic(body)) == ("Suspended", "PausedByAnnotation: nothing is written")


def test_paused_condition_false_does_not_suspend(health: Health) -> None:
    body = ready_status("True", "InSync")
    body["conditions"].append(condition("ReconciliationPaused", "False", "Resumed", "resumed"))
    assert health(TOPIC_SCRIPT, kafkatopic(body))[0] == "Healthy"


def test_unmanaged_topic_is_healthy(health: Health) -> None:
    body = {
        "observedGeneration": 3,
        "conditions": [condition("Unmanaged", "True", "ManagedAnnotationFalse", "let go")],
    }
    assert health(TOPIC_SCRIPT, kafkatopic(body)) == ("Healthy", "ManagedAnnotationFalse: let go")


def test_topic_being_deleted_is_progressing(health: Health) -> None:
    topic = kafkatopic(ready_status("True", "InSync"), deletionTimestamp="2025-03-01T12:00:00Z")
    status, message = health(TOPIC_SCRIPT, topic)
    assert status == "Progressing" and "finalizer" in message


def _error_classes() -> Iterator[type[errors.KzoError]]:
    pending: list[type[errors.KzoError]] = [errors.KzoError]
    while pending:
        cls = pending.pop()
        yield cls
        pending.extend(cls.__subclasses__())


def _instance(cls: type[errors.KzoError]) -> errors.KzoError:
    """An instance of each error class, with the arguments the classes that need more than a message take."""
    if cls is errors.MalformedZnode:
        return errors.MalformedZnode("/x", "bad")
    if cls is errors.KRaftMigrationDetected:
        return errors.KRaftMigrationDetected("it happened", phase="DualWrite")
    return cls("it happened")


def test_every_retryable_error_reason_is_transient_in_the_health_check() -> None:
    """A new retryable reason in the domain must be taught to the Lua check (else: Degraded)."""
    retryable = {cls.reason.value for cls in _error_classes() if cls.retryable}
    assert retryable <= TRANSIENT, f"add {sorted(retryable - TRANSIENT)} to TRANSIENT_REASONS in the Lua"
    source = TOPIC_SCRIPT.read_text()
    for reason in TRANSIENT:
        assert f"{reason} = true" in source


@pytest.mark.parametrize("reason", list(errors.Reason), ids=lambda r: r.value)
def test_every_reason_of_the_status_contract_has_a_deliberate_health(
    health: Health, reason: errors.Reason
) -> None:
    """Status built by the operator's own build_topic_status for each reason it can write."""
    if reason in ts.SUCCESS_REASONS:
        outcome: ts.Outcome = reason
        expected = "Healthy"
    else:
        retryable = reason.value in TRANSIENT
        error_cls = type("Error", (errors.KzoError,), {"reason": reason, "retryable": retryable})
        outcome = error_cls(f"the {reason.value} case")
        expected = "Progressing" if reason.value in TRANSIENT else "Degraded"
    body = ts.build_topic_status(topic_name="orders", generation=3, now=NOW, outcome=outcome)
    status, message = health(TOPIC_SCRIPT, kafkatopic(body))
    assert status == expected
    assert message.startswith(f"{reason.value}: ")


def test_every_error_class_is_degraded_when_stalled_and_progressing_when_retried(health: Health) -> None:
    """The real classes: a malformed znode (reason ZooKeeperError, not retried) is Degraded."""
    for cls in _error_classes():
        error = _instance(cls)
        body = ts.build_topic_status(topic_name="orders", generation=3, now=NOW, outcome=error)
        expected = "Progressing" if cls.retryable else "Degraded"
        assert health(TOPIC_SCRIPT, kafkatopic(body))[0] == expected, cls.__name__


def test_stalled_and_reconciling_decide_before_the_ready_reason(health: Health) -> None:
    stalled = ready_status("False", "ZooKeeperError", "znode /x is malformed")
    stalled["conditions"].append(condition("Stalled", "True", "ZooKeeperError", "znode /x is malformed"))
    assert health(TOPIC_SCRIPT, kafkatopic(stalled)) == ("Degraded", "ZooKeeperError: znode /x is malformed")
    retried = ready_status("False", "SomethingNew", "retrying")
    retried["conditions"].append(condition("Reconciling", "True", "SomethingNew", "retrying"))
    assert health(TOPIC_SCRIPT, kafkatopic(retried)) == ("Progressing", "SomethingNew: retrying")


def test_paused_status_from_build_topic_status_is_suspended(health: Health) -> None:
    previous = ts.build_topic_status(
        topic_name="orders", generation=2, now=NOW, outcome=errors.Reason.IN_SYNC
    )
    body = ts.build_topic_status(
        topic_name="orders", generation=3, now=NOW, mode=ts.ReconcileMode.PAUSED, previous=previous
    )
    status, message = health(TOPIC_SCRIPT, kafkatopic(body, generation=3))
    assert status == "Suspended"
    assert crd_identity.PAUSED_ANNOTATION in message


def test_unmanaged_status_from_build_topic_status_is_healthy(health: Health) -> None:
    body = ts.build_topic_status(topic_name="orders", generation=3, now=NOW, mode=ts.ReconcileMode.UNMANAGED)
    assert health(TOPIC_SCRIPT, kafkatopic(body))[0] == "Healthy"


# --- PartitionReassignment ----------------------------------------------------------------------------


def reassignment(
    phase: str | None,
    *,
    approval: str = "Auto",
    generation: int = 1,
    observed: int | None = 1,
    **status_fields: Any,
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "kafka.zk-operator.io/v1alpha1",
        "kind": "PartitionReassignment",
        "metadata": {"name": "add-broker-4", "namespace": "kafka", "generation": generation},
        "spec": {"mode": "AddBrokers", "brokers": [4], "approval": approval},
    }
    if phase is not None or status_fields or observed is not None:
        status: dict[str, Any] = dict(status_fields)
        if phase is not None:
            status["phase"] = phase
        if observed is not None:
            status["observedGeneration"] = observed
        obj["status"] = status
    return obj


@pytest.mark.parametrize(
    ("phase", "expected"),
    [
        ("Pending", "Progressing"),
        ("Queued", "Progressing"),
        ("Running", "Progressing"),
        ("Completed", "Healthy"),
        ("Failed", "Degraded"),
        ("Stopped", "Suspended"),
    ],
)
@pytest.mark.parametrize("approval", ["Auto", "Manual"])
def test_reassignment_phase_maps_to_health(health: Health, phase: str, expected: str, approval: str) -> None:
    obj = reassignment(phase, approval=approval, message=f"{phase} because of reasons.")
    assert health(REASSIGNMENT_SCRIPT, obj) == (expected, f"{phase} because of reasons.")


def test_reassignment_proposal_waiting_for_manual_approval_is_suspended(health: Health) -> None:
    obj = reassignment("ProposalReady", approval="Manual", proposal={"id": "p-1a2b", "moves": 12})
    status, message = health(REASSIGNMENT_SCRIPT, obj)
    assert status == "Suspended"
    assert message == (
        "The proposal p-1a2b (12 replica moves) waits for approval: kubectl annotate "
        "partitionreassignment add-broker-4 -n kafka kafka.zk-operator.io/approve=true"
    )


def test_reassignment_proposal_with_auto_approval_is_progressing(health: Health) -> None:
    assert health(REASSIGNMENT_SCRIPT, reassignment("ProposalReady", approval="Auto"))[0] == "Progressing"


def test_reassignment_without_approval_field_defaults_to_auto(health: Health) -> None:
    obj = reassignment("ProposalReady")
    del obj["spec"]["approval"]
    assert health(REASSIGNMENT_SCRIPT, obj)[0] == "Progressing"


@pytest.mark.parametrize("approval", [None, "Auto", "Manual"])
@pytest.mark.parametrize(
    ("why", "expected"),
    [("AwaitingApproval", "Suspended"), ("ProposalStale", "Suspended"), ("Pending", "Progressing")],
)
def test_a_proposal_is_judged_by_its_conditions_not_the_approval_field(
    health: Health, approval: str | None, why: str, expected: str
) -> None:
    """The operator's own conditions decide, whatever default the approval field has."""
    fields = verdict_fields(Verdict(Phase.PROPOSAL_READY, why, "m"), generation=1, now=NOW, previous={})
    obj = reassignment("ProposalReady", conditions=fields["conditions"], proposal={"id": "p-1"})
    if approval is None:
        del obj["spec"]["approval"]
    else:
        obj["spec"]["approval"] = approval
    assert health(REASSIGNMENT_SCRIPT, obj)[0] == expected


@pytest.mark.parametrize("phase", list(Phase), ids=lambda p: p.value)
def test_reassignment_health_agrees_with_the_kstatus_conditions(health: Health, phase: Phase) -> None:
    """Progressing exactly with Reconciling=True; Stalled=True is Degraded (Failed) or Suspended
    (Stopped); Ready=True is Healthy."""
    why = "AwaitingApproval" if phase is Phase.PROPOSAL_READY else phase.value
    fields = verdict_fields(Verdict(phase, why, "m"), generation=1, now=NOW, previous={})
    true = {c["type"] for c in fields["conditions"] if c["status"] == "True"}
    status, _ = health(REASSIGNMENT_SCRIPT, reassignment(phase.value, conditions=fields["conditions"]))
    assert (status == "Progressing") == ("Reconciling" in true)
    if "Stalled" in true:
        assert status in {"Degraded", "Suspended"}
    if "Ready" in true:
        assert status == "Healthy"


def test_running_reassignment_reports_progress(health: Health) -> None:
    obj = reassignment("Running", message="Batch 2 of 4 in flight.", progressText="12/40")
    assert health(REASSIGNMENT_SCRIPT, obj) == (
        "Progressing",
        "Batch 2 of 4 in flight. (12/40 partitions done)",
    )


def test_failed_reassignment_falls_back_to_the_ready_condition_message(health: Health) -> None:
    obj = reassignment(
        "Failed", conditions=[condition("Ready", "False", "ClusterUnavailable", "no brokers", 1)]
    )
    assert health(REASSIGNMENT_SCRIPT, obj) == ("Degraded", "no brokers")


@pytest.mark.parametrize("phase", ["Completed", "Failed", "Stopped", "ProposalReady"])
def test_reassignment_with_an_older_generation_is_progressing(health: Health, phase: str) -> None:
    obj = reassignment(phase, approval="Manual", generation=2, observed=1)
    status, message = health(REASSIGNMENT_SCRIPT, obj)
    assert status == "Progressing" and "generation 2" in message


def test_reassignment_without_status_is_progressing(health: Health) -> None:
    obj = reassignment(None, observed=None)
    assert "status" not in obj
    assert health(REASSIGNMENT_SCRIPT, obj) == (
        "Progressing",
        "Waiting for the operator to compute a proposal",
    )


def test_reassignment_without_phase_is_progressing(health: Health) -> None:
    assert health(REASSIGNMENT_SCRIPT, reassignment(None, observed=1))[0] == "Progressing"


def test_reassignment_without_observed_generation_is_progressing(health: Health) -> None:
    assert health(REASSIGNMENT_SCRIPT, reassignment("Completed", observed=None))[0] == "Progressing"


def test_reassignment_being_deleted_is_progressing(health: Health) -> None:
    obj = reassignment("Running")
    obj["metadata"]["deletionTimestamp"] = "2025-03-01T12:00:00Z"
    status, message = health(REASSIGNMENT_SCRIPT, obj)
    assert status == "Progressing" and "throttles" in message


def test_reassignment_in_an_unknown_phase_is_degraded(health: Health) -> None:
    status, message = health(REASSIGNMENT_SCRIPT, reassignment("Exploded"))
    assert (status, message) == ("Degraded", "Unknown phase Exploded")


def test_every_phase_of_the_crd_is_handled_explicitly() -> None:
    crd = yaml.safe_load((ROOT / "crds" / "partitionreassignments.yaml").read_text())
    phases = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"][
        "phase"
    ]["enum"]
    source = REASSIGNMENT_SCRIPT.read_text()
    for phase in phases:
        assert f'"{phase}"' in source, f"phase {phase} is not handled by {REASSIGNMENT_SCRIPT.name}"


# --- format and docs ----------------------------------------------------------------------------------


@pytest.mark.parametrize("script", [TOPIC_SCRIPT, REASSIGNMENT_SCRIPT], ids=lambda p: p.name)
def test_script_has_argo_cd_resource_customization_shape(script: Path) -> None:
    lines = [line for line in script.read_text().splitlines() if line.strip()]
    assert "hs = {}" in lines
    assert lines[-1] == "return hs"


@pytest.mark.parametrize(
    ("script", "key"),
    [
        (TOPIC_SCRIPT, "resource.customizations.health.kafka.zk-operator.io_KafkaTopic"),
        (REASSIGNMENT_SCRIPT, "resource.customizations.health.kafka.zk-operator.io_PartitionReassignment"),
    ],
    ids=["KafkaTopic", "PartitionReassignment"],
)
def test_docs_embed_the_scripts_verbatim_under_their_argocd_cm_key(script: Path, key: str) -> None:
    doc = ARGOCD_DOC.read_text()
    marker = f"  {key}: |\n"
    assert marker in doc, f"docs/argocd.md lacks the argocd-cm key {key}"
    block = doc.split(marker, 1)[1]
    lines = []
    for line in block.splitlines():
        if line and not line.startswith("    "):
            break
        lines.append(line)
    embedded = textwrap.dedent("\n".join(lines)).strip() + "\n"
    assert embedded == script.read_text(), f"docs/argocd.md is out of date with {script.name}"
