"""Unit tests for leader election: the Lease rules (``domain.leader_lease``), the elector's states
(``runtime.leadership``) on an in-memory Lease with a fake clock, and the ``KZO_LEADER_ELECTION*``
settings. The real Lease, API server and fence are exercised in ``tests/integration`` and
``tests/faults/test_leader_failover.py``."""

from __future__ import annotations

import itertools

import pytest

from kafka_zk_operator.adapters.k8s.api import KubernetesApiError
from kafka_zk_operator.config import SettingsError, load
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.leader_lease import (
    LeaseRecord,
    LeaseTimings,
    Observation,
    Step,
    next_step,
    transitions_after,
)
from kafka_zk_operator.runtime.leadership import LeaderElector
from tests.unit.clock_support import ManualClock

TIMINGS = LeaseTimings(duration_s=10, renew_deadline_s=7, retry_s=2)


def _record(holder: str, version: str = "1", transitions: int = 0) -> LeaseRecord:
    return LeaseRecord(holder=holder, duration_s=10, transitions=transitions, resource_version=version)


# ---------------------------------------------------------------- the rules


def test_no_lease_is_created() -> None:
    assert next_step(None, "a", Observation(), 0) is Step.CREATE


def test_the_holder_renews() -> None:
    observation = Observation()
    observation.see(_record("a"), 0)
    assert next_step(_record("a"), "a", observation, 100) is Step.RENEW


def test_another_holder_is_waited_for_until_the_record_is_unchanged_for_a_whole_lease() -> None:
    observation = Observation()
    record = _record("b", version="5")
    observation.see(record, 100.0)
    assert next_step(record, "a", observation, 109.9) is Step.WAIT
    assert next_step(record, "a", observation, 110.0) is Step.TAKE_OVER


def test_a_renewal_restarts_the_wait() -> None:
    """Expiry is measured from when *this* replica saw the record change, never from the
    timestamps inside it (another node's clock)."""
    observation = Observation()
    observation.see(_record("b", version="5"), 100.0)
    renewed = _record("b", version="6")
    observation.see(renewed, 108.0)
    assert next_step(renewed, "a", observation, 115.0) is Step.WAIT
    assert next_step(renewed, "a", observation, 118.0) is Step.TAKE_OVER


def test_a_released_lease_is_taken_at_once() -> None:
    observation = Observation()
    released = _record("", version="7")
    observation.see(released, 50.0)
    assert next_step(released, "a", observation, 50.0) is Step.TAKE_OVER


def test_transitions_count_holder_changes_only() -> None:
    assert transitions_after(None, "a") == 0
    assert transitions_after(_record("a", transitions=3), "a") == 3
    assert transitions_after(_record("b", transitions=3), "a") == 4


def test_timings_follow_client_go_ratios() -> None:
    timings = LeaseTimings.for_duration(15)
    assert (timings.renew_deadline_s, timings.retry_s) == pytest.approx((10.5, 3.0))
    assert timings.renew_deadline_s < timings.duration_s


# ---------------------------------------------------------------- the elector


class FakeLeases:
    """An in-memory Lease with resourceVersion semantics (conditional replace)."""

    namespace = "kzo"
    name = "kafka-zk-operator"
    ref = "Lease kzo/kafka-zk-operator"

    def __init__(self) -> None:
        self.record: LeaseRecord | None = None
        self._versions = itertools.count(1)
        self.unreachable = False
        self.writes = 0
        self.reads = 0

    def read(self) -> LeaseRecord | None:
        self.reads += 1
        if self.unreachable:
            raise KubernetesApiError("the Kubernetes API server could not be reached (test)")
        return self.record

    def create(self, holder: str, duration_s: float) -> LeaseRecord | None:
        if self.record is not None:
            return None
        return self._store(holder, duration_s, 0)

    def replace(
        self, record: LeaseRecord, holder: str, duration_s: float, *, transitions: int, acquired: bool
    ) -> LeaseRecord | None:
        if self.unreachable:
            raise KubernetesApiError("the Kubernetes API server could not be reached (test)")
        if self.record is None or self.record.resource_version != record.resource_version:
            return None
        return self._store(holder, duration_s, transitions)

    def _store(self, holder: str, duration_s: float, transitions: int) -> LeaseRecord:
        self.writes += 1
        self.record = LeaseRecord(holder, duration_s, transitions, str(next(self._versions)))
        return self.record


def _elector(leases: FakeLeases, identity: str, clock: ManualClock) -> LeaderElector:
    return LeaderElector(leases, identity, TIMINGS, clock=clock)  # type: ignore[arg-type]


def test_first_replica_creates_the_lease_and_leads() -> None:
    leases, clock = FakeLeases(), ManualClock(1000.0)
    a = _elector(leases, "a", clock)
    assert a.try_once()
    assert a.leading()
    assert leases.record is not None and leases.record.holder == "a"
    a.check()


def test_standby_waits_while_the_leader_renews_and_takes_over_after_it_stops() -> None:
    leases, clock = FakeLeases(), ManualClock(1000.0)
    a, b = _elector(leases, "a", clock), _elector(leases, "b", clock)
    assert a.try_once()
    for _ in range(10):  # a renews every 2 s: b never takes over
        assert not b.try_once()
        clock.now += 2
        assert a.try_once()
    # a dies: b observes the same record for a whole lease, then takes it
    taken_at = None
    for step in range(10):
        clock.now += 2
        if b.try_once():
            taken_at = step
            break
    assert taken_at is not None and (taken_at + 1) * 2 >= 10
    assert leases.record is not None and leases.record.holder == "b" and leases.record.transitions == 1
    assert b.leading()


def test_the_leader_stops_leading_when_it_cannot_renew_within_the_deadline() -> None:
    leases, clock = FakeLeases(), ManualClock(1000.0)
    a = _elector(leases, "a", clock)
    assert a.try_once()
    leases.unreachable = True
    clock.now += 6.9
    assert a.leading()
    clock.now += 0.2
    assert not a.leading()
    with pytest.raises(errors.LeadershipLost, match="renewed more than 7 s ago"):
        a.check()
    assert a.lost is not None


def test_a_paused_leader_is_refused_on_resume_before_anything_else_runs() -> None:
    """SIGSTOP for longer than the lease: b took over; a's first write after resuming is refused
    by its own clock, whatever its renewal thread has done yet; and lost stays lost."""
    leases, clock = FakeLeases(), ManualClock(1000.0)
    a, b = _elector(leases, "a", clock), _elector(leases, "b", clock)
    lost: list[str] = []
    assert a.try_once()
    a._on_lost = lost.append  # keep_leading without its thread
    b.try_once()
    clock.now += 30  # a is stopped; b sees an unchanged record for a whole lease
    assert b.try_once()
    with pytest.raises(errors.LeadershipLost):
        a.check()
    assert len(lost) == 1
    assert not a.try_once()  # b holds it now
    with pytest.raises(errors.LeadershipLost):
        a.check()
    assert len(lost) == 1  # told once


def test_the_leader_renews_with_one_write_on_the_version_it_wrote_last() -> None:
    """client-go's fast path: a renewal is one request, not a read and a write (under load each
    request to the API server counts against the renew deadline)."""
    leases, clock = FakeLeases(), ManualClock(1000.0)
    a = _elector(leases, "a", clock)
    assert a.try_once()
    reads, writes = leases.reads, leases.writes
    for _ in range(5):
        clock.now += 2
        assert a.try_once()
    assert (leases.reads - reads, leases.writes - writes) == (0, 5)
    assert a.leading()


def test_a_renewal_that_finds_the_lease_changed_reads_it_and_sees_the_new_holder() -> None:
    leases, clock = FakeLeases(), ManualClock(1000.0)
    a, b = _elector(leases, "a", clock), _elector(leases, "b", clock)
    assert a.try_once()
    b.try_once()
    clock.now += 30  # a was paused; b took the lease over
    assert b.try_once()
    reads = leases.reads
    assert not a.try_once()
    assert leases.reads == reads + 1
    assert leases.record is not None and leases.record.holder == "b"


def test_one_request_may_not_use_up_the_renew_deadline() -> None:
    timings = LeaseTimings.for_duration(10)
    assert timings.request_timeout_s + timings.retry_s <= timings.renew_deadline_s


def test_a_lost_race_for_the_lease_is_not_leadership() -> None:
    leases, clock = FakeLeases(), ManualClock(1000.0)
    a, b = _elector(leases, "a", clock), _elector(leases, "b", clock)
    assert a.try_once()
    stale = leases.record
    assert a.try_once()  # renewed: the version b read is gone
    assert stale is not None
    assert leases.replace(stale, "b", 10, transitions=1, acquired=True) is None
    assert not b.try_once()


def test_stepping_down_releases_the_lease_for_the_standby_at_once() -> None:
    leases, clock = FakeLeases(), ManualClock(1000.0)
    a, b = _elector(leases, "a", clock), _elector(leases, "b", clock)
    assert a.try_once()
    assert not b.try_once()
    a.release()
    assert leases.record is not None and leases.record.holder == ""
    assert not a.leading()
    assert b.try_once()


def test_an_unreachable_api_server_keeps_the_standby_waiting() -> None:
    leases, clock = FakeLeases(), ManualClock(1000.0)
    b = _elector(leases, "b", clock)
    leases.unreachable = True
    with pytest.raises(KubernetesApiError):
        b.try_once()
    assert not b.leading()


# ---------------------------------------------------------------- settings


BASE = {"KZO_ZOOKEEPER": "zk:2181/kafka"}


def test_leader_election_is_off_by_default() -> None:
    assert load(BASE).leader_election is None


def test_leader_election_settings() -> None:
    settings = load(
        {**BASE, "KZO_LEADER_ELECTION": "true", "POD_NAMESPACE": "kafka", "POD_NAME": "kzo-6d9f-abcde"}
    ).leader_election
    assert settings is not None
    assert (settings.namespace, settings.lease, settings.lease_seconds) == (
        "kafka",
        "kafka-zk-operator",
        10.0,
    )
    assert settings.identity.startswith("kzo-6d9f-abcde_")
    again = load(
        {**BASE, "KZO_LEADER_ELECTION": "true", "POD_NAMESPACE": "kafka", "POD_NAME": "kzo-6d9f-abcde"}
    )
    assert again.leader_election is not None and again.leader_election.identity != settings.identity


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"KZO_LEADER_ELECTION": "yes"}, "KZO_LEADER_ELECTION='yes' is not one of: true, false"),
        (
            {"KZO_LEADER_ELECTION": "true"},
            "needs the namespace of its Lease: set KZO_LEADER_ELECTION_NAMESPACE",
        ),
        (
            {"KZO_LEADER_ELECTION": "true", "KZO_LEADER_ELECTION_NAMESPACE": "Kafka_NS"},
            "is not a Kubernetes namespace name",
        ),
        (
            {
                "KZO_LEADER_ELECTION": "true",
                "KZO_LEADER_ELECTION_NAMESPACE": "kafka",
                "KZO_LEADER_ELECTION_LEASE": "A/B",
            },
            "is not a Kubernetes object name",
        ),
        (
            {
                "KZO_LEADER_ELECTION": "true",
                "KZO_LEADER_ELECTION_NAMESPACE": "kafka",
                "KZO_LEADER_ELECTION_LEASE_SECONDS": "1",
            },
            "too short: use at least 2",
        ),
        (
            {
                "KZO_LEADER_ELECTION": "true",
                "KZO_LEADER_ELECTION_NAMESPACE": "kafka",
                "KZO_LEADER_ELECTION_LEASE_SECONDS": "x",
            },
            "not a valid number of seconds",
        ),
    ],
)
def test_bad_leader_election_settings_are_one_line(env: dict[str, str], expected: str) -> None:
    with pytest.raises(SettingsError) as raised:
        load({**BASE, **env})
    assert expected in str(raised.value) and "\n" not in str(raised.value)
