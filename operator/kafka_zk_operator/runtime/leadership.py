"""One active operator replica among several: leader election on a Kubernetes Lease, and the
guard every ZooKeeper write of the leader passes.

Why a Lease and not kopf's peering: kopf's peering pauses operators of lower priority while one of
higher priority runs, and freezes *all* operators of equal priority, so two replicas of one
Deployment either both stop or need hand-set priorities; and it has no fencing - a paused operator
that resumes keeps handling what it had started. A ``coordination.k8s.io`` Lease is what
Kubernetes' own controllers and client-go use, ``kubectl get lease`` shows the holder, and with
the rules of ``domain.leader_lease`` a leader knows, from its own clock alone, when it must stop.

How a replica runs (``cli.operator_cmd``):

1. **Standby**: :meth:`LeaderElector.acquire` tries every ``retry_s`` until it holds the lease.
   Nothing else runs: no kopf, no ZooKeeper session.
2. **Leader**: kopf starts; a thread renews the lease every ``retry_s``. Each cluster's fence znode
   is claimed when its ZooKeeper store is opened (``adapters.zk.fence``), and every write
   transaction passes :meth:`LeaderElector.check` (raises once the last renewal started more than
   ``renew_deadline_s`` ago) and checks the fence's version in ZooKeeper.
3. **Lost**: a renewal that finds another holder, or that has not succeeded for
   ``renew_deadline_s``, or a write refused by the fence, marks the leadership lost for good: the
   guard refuses every further write at once, and ``on_lost`` stops the process (the pod restarts
   and stands by). A replica paused past its deadline (SIGSTOP) is refused by the guard when it
   resumes, and whatever it had already sent is refused by the fence.
4. **Stepping down**: on a normal stop (SIGTERM, ``helm upgrade``) the leader releases the lease
   (empty holder), so the standby takes over at its next try instead of after ``duration_s``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from kafka_zk_operator import metrics
from kafka_zk_operator.adapters.k8s.leases import LeaseApi
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.leader_lease import (
    LeaseRecord,
    LeaseTimings,
    Observation,
    Step,
    next_step,
    transitions_after,
)

log = logging.getLogger(__name__)


class LeaderElector:
    def __init__(
        self,
        leases: LeaseApi,
        identity: str,
        timings: LeaseTimings,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.leases = leases
        self.identity = identity
        self.timings = timings
        self._clock = clock
        self._observation = Observation()
        self._lock = threading.Lock()
        #: Monotonic time the last successful write of the lease (acquire or renew) was started.
        self._renewed_at: float | None = None
        self._lost: str | None = None
        #: Set by :meth:`release`: a normal stop, not a loss; no write is allowed after it either.
        self._stepped_down = False
        self._on_lost: Callable[[str], None] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: The lease as this replica last wrote it, while it holds it (renewals write on it).
        self._held: LeaseRecord | None = None
        #: The holder seen last (for the standby's health answer and logs).
        self.holder_seen: str = ""

    @property
    def fence_name(self) -> tuple[str, str]:
        """(namespace, name) of the Lease: the fence znode is named after it."""
        return self.leases.namespace, self.leases.name

    # ------------------------------------------------------------------ one attempt

    def try_once(self) -> bool:
        """Create, renew or take over the lease if the rules allow; True if we hold it.

        The holder renews with one write, on the version it wrote last (client-go's fast path);
        only when that write finds the lease changed, or when it does not hold the lease, does it
        read first.

        :raises KubernetesApiError: the API server refused or could not be reached.
        """
        started = self._clock()
        written = self._renew_held() if self._held is not None else None
        if written is None:
            written = self._read_and_write(started)
        if written is None:
            return False
        with self._lock:
            self._renewed_at = started
            self._held = written
        self.holder_seen = self.identity
        return True

    def _renew_held(self) -> LeaseRecord | None:
        held = self._held
        assert held is not None
        self._held = None  # until this write succeeds: a failure must not be retried on it
        return self.leases.replace(
            held, self.identity, self.timings.duration_s, transitions=held.transitions, acquired=False
        )

    def _read_and_write(self, started: float) -> LeaseRecord | None:
        record = self.leases.read()
        self._observation.see(record, started)
        self.holder_seen = record.holder if record is not None else ""
        step = next_step(record, self.identity, self._observation, self._clock())
        if step is Step.WAIT:
            return None
        duration = self.timings.duration_s
        if step is Step.CREATE:
            written = self.leases.create(self.identity, duration)
        else:
            assert record is not None
            written = self.leases.replace(
                record,
                self.identity,
                duration,
                transitions=transitions_after(record, self.identity),
                acquired=step is Step.TAKE_OVER,
            )
        if written is not None and step is not Step.RENEW:
            log.info("became the leader (%s, identity %s)", self.leases.ref, self.identity)
        return written

    # ------------------------------------------------------------------ standby

    def acquire(self, stop: threading.Event | None = None) -> bool:
        """Block until this replica holds the lease (True) or ``stop`` is set (False)."""
        stop = stop or threading.Event()
        announced = ""
        while not stop.is_set():
            try:
                if self.try_once():
                    metrics.LEADER.set(1)
                    return True
            except errors.KzoError as error:
                log.warning("leader election: %s; trying again in %.0f s", error, self.timings.retry_s)
            else:
                if self.holder_seen != announced:
                    announced = self.holder_seen
                    log.info("standing by: %s is held by %s", self.leases.ref, announced)
            stop.wait(self.timings.retry_s)
        return False

    # ------------------------------------------------------------------ leader

    def keep_leading(self, on_lost: Callable[[str], None]) -> None:
        """Renew the lease in a thread until :meth:`release`; ``on_lost`` runs once if it is lost."""
        self._on_lost = on_lost
        self._thread = threading.Thread(target=self._renew_loop, name="kzo-lease-renewal", daemon=True)
        self._thread.start()

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.timings.retry_s):
            if self._lost is not None:
                return
            started = self._clock()
            try:
                held = self.try_once()
            except errors.KzoError as error:
                log.warning("renewing %s failed: %s", self.leases.ref, error)
                held = True  # not lost yet: the deadline decides
            took = self._clock() - started
            if took > self.timings.retry_s:
                log.warning(
                    "renewing %s took %.1f s (the leader stops after %g s without a renewal)",
                    self.leases.ref,
                    took,
                    self.timings.renew_deadline_s,
                )
            if not held:
                self.lose(f"{self.holder_seen or 'another replica'} holds {self.leases.ref} now")
                return
            if not self.leading():
                self.lose(
                    f"{self.leases.ref} was not renewed for {self.timings.renew_deadline_s:g} s "
                    "(the API server was unreachable or too slow, or this process was paused)"
                )
                return

    def leading(self) -> bool:
        """True while this replica holds the lease and renewed it within the renew deadline."""
        with self._lock:
            if self._lost is not None or self._stepped_down or self._renewed_at is None:
                return False
            return self._clock() - self._renewed_at < self.timings.renew_deadline_s

    def check(self) -> None:
        """The write guard. :raises LeadershipLost: this replica may not write any more."""
        if self.leading():
            return
        with self._lock:
            reason = "stepped down" if self._stepped_down else self._lost
        if reason is None:
            reason = (
                f"{self.leases.ref} was last renewed more than {self.timings.renew_deadline_s:g} s ago"
                if self._renewed_at is not None
                else f"this replica does not hold {self.leases.ref}"
            )
            self.lose(reason)
        raise errors.LeadershipLost(f"not the leader any more ({reason}): nothing was written")

    def lose(self, reason: str) -> None:
        """Mark the leadership lost for good (every later :meth:`check` fails) and tell ``on_lost`` once."""
        with self._lock:
            if self._lost is not None:
                return
            self._lost = reason
        metrics.LEADER.set(0)
        log.error("lost the leadership: %s; this replica writes nothing more and stops", reason)
        if self._on_lost is not None:
            self._on_lost(reason)

    @property
    def lost(self) -> str | None:
        """Why the leadership was lost (None: still held, or handed over by :meth:`release`)."""
        with self._lock:
            return self._lost

    def release(self) -> None:
        """Stop renewing; if still the leader, hand the lease over at once (empty holder)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=self.timings.retry_s + 5)
        if not self.leading():
            return
        with self._lock:
            self._stepped_down = True
        metrics.LEADER.set(0)
        try:
            for known in (self._held, None):  # the version written last; if it changed, read
                record = known or self.leases.read()
                if record is None or record.holder != self.identity:
                    return
                released = self.leases.replace(
                    record, "", record.duration_s, transitions=record.transitions, acquired=False
                )
                if released is not None:
                    log.info("stepped down: released %s", self.leases.ref)
                    return
        except errors.KzoError as error:
            log.warning(
                "could not release %s (%s); it expires in %g s",
                self.leases.ref,
                error,
                self.timings.duration_s,
            )
