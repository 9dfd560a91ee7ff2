"""``stat_probe.RecentZxid`` keeps the shared stamps of the newest round that answered: a slower,
older round that settles later does not replace them, and a round that did not answer drops them
(they could predate the zxid a resync holds, and every stamp kept with a zxid must follow it)."""

from __future__ import annotations

from typing import Any, cast

from kafka_zk_operator.adapters.zk import stat_probe

PATH = "/admin/reassign_partitions"


def _recent(now: list[float]) -> stat_probe.RecentZxid:
    return stat_probe.RecentZxid(cast(Any, object()), shared=(PATH,), clock=lambda: now[0])


def test_an_older_round_settling_late_does_not_replace_a_newer_one() -> None:
    now = [10.0]
    recent = _recent(now)
    recent._settle(2, (10.0, {PATH: (7, 0)}))
    recent._settle(1, (9.0, {PATH: (5, 0)}))
    assert recent.shared_stamps() == {PATH: (7, 0)}


def test_a_round_that_did_not_answer_drops_the_stamps_kept() -> None:
    now = [10.0]
    recent = _recent(now)
    recent._settle(1, (10.0, {PATH: (5, 0)}))
    recent._settle(2, None)
    assert recent.shared_stamps() is None
    recent._settle(3, (10.0, {PATH: None}))
    assert recent.shared_stamps() == {PATH: None}, "a znode that does not exist has a stamp too"
    now[0] += stat_probe.SHARED_FRESH_S
    assert recent.shared_stamps() is None, "too old"
