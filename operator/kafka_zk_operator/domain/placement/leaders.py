"""Leader stage: balance preferred leaders by reordering replica lists (no data moves).

GOALS
    Preferred leaders within ±1 per eligible broker (a broker never leads more partitions than it
    holds), with the fewest leader changes; a partition whose leader replica moved away must get a
    new leader anyway. Runs after the replica moves, as reference §5.2 advises.

CONSTRAINTS
    A leader is one of the partition's replicas; rows of excluded topics keep their order; only the
    first slot changes meaning (the chosen replica is moved to the front, the others keep order).

ALGORITHM
    1. Targets with :func:`targets.balance_targets` (one "rack", floors = fixed leaders, ceilings =
       partitions held, extras to the brokers leading most now).
    2. Orphans (rows whose leader left) pick, in proposal rounds, the replica whose broker has the
       most room below target; leftovers take the replica with the most room anyway, preferring
       replicas that did not just move in.
    3. Over-target brokers offer their rows (hash order, as many as their excess); each offered row
       proposes to its follower with the most room; brokers accept up to their room; repeat.
    4. Remaining imbalance, relayed: ``a -> c -> b`` (a row led by ``a`` handed to follower ``c``,
       a row led by ``c`` handed to follower ``b``; needed e.g. when RF = racks and the brokers
       with room are in the over-target brokers' rack, so never their followers). Done in bulk:
       step 3 again with temporary headroom on brokers that can pass leadership on, then step 3
       with the real targets; a per-unit search finishes the rest.
The bound reported is ``orphans + sum_b max(0, leaders_b - target_b)`` over the leaders kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kafka_zk_operator.domain.placement.arrays import BoolArray, IntArray
from kafka_zk_operator.domain.placement.augment import augment
from kafka_zk_operator.domain.placement.state import segment_positions
from kafka_zk_operator.domain.placement.targets import balance_targets

_MAX_TWO_HOP = 200


@dataclass(frozen=True, eq=False)
class LeaderResult:
    replicas: IntArray
    target: IntArray
    changes: int
    lower_bound: int
    unresolved: int


def balance_leaders(
    replicas: IntArray,
    original_leader: IntArray,
    *,
    movable: BoolArray,
    eligible: BoolArray,
    moved: BoolArray,
    row_hash: np.ndarray,
) -> LeaderResult:
    """Steps 1-4 of the module docstring. ``original_leader`` is -1 for rows without one (new)."""
    n = len(eligible)
    rep = replicas
    p, w = rep.shape
    nonempty = rep[:, 0] >= 0 if w else np.zeros(p, dtype=np.bool_)
    mov = movable & nonempty
    is_orig = (rep == original_leader[:, None]) & (original_leader[:, None] >= 0)
    retained = mov & is_orig.any(axis=1)
    orphan = mov & ~retained
    lead = np.full(p, -1, dtype=np.int64)
    fixed_rows = nonempty & ~mov
    lead[fixed_rows] = rep[fixed_rows, 0]
    lead[retained] = original_leader[retained]
    fixed_leaders = np.bincount(lead[fixed_rows], minlength=n)[:n]
    held = np.bincount(rep[mov][rep[mov] >= 0], minlength=n)[:n]
    cur = np.bincount(lead[lead >= 0], minlength=n)[:n].astype(np.int64)
    tg = balance_targets(
        eligible=eligible,
        floor=fixed_leaders.astype(np.int64),
        ceil=(fixed_leaders + held).astype(np.int64),
        rack=np.zeros(n, dtype=np.int64),
        rack_lo=np.zeros(1, dtype=np.int64),
        rack_hi=np.array([int(nonempty.sum())], dtype=np.int64),
        total=int(nonempty.sum()),
        prefer=cur,
    ).target
    bound = int(orphan.sum()) + int(np.maximum(0, cur - tg).sum())
    priority = np.argsort(row_hash, kind="stable")
    rank_of_row = np.empty(p, dtype=np.int64)
    rank_of_row[priority] = np.arange(p)

    _orphans(rep, lead, cur, tg, np.flatnonzero(orphan), rank_of_row, moved, row_hash)
    _shed(rep, lead, cur, tg, mov, rank_of_row)
    _relay(rep, lead, cur, tg, mov, rank_of_row)
    unresolved = _two_hop(rep, lead, cur, tg, mov)

    out = rep.copy()
    change = mov & (lead != rep[:, 0])
    rows = np.flatnonzero(change)
    if len(rows):
        sub = rep[rows]
        is_lead = sub == lead[rows, None]
        order = np.argsort(~is_lead, axis=1, kind="stable")
        out[rows] = np.take_along_axis(sub, order, axis=1)
    changes = int((mov & (original_leader >= 0) & (out[:, 0] != original_leader)).sum())
    return LeaderResult(out, tg, changes, bound, unresolved)


def _orphans(
    rep: IntArray,
    lead: IntArray,
    cur: IntArray,
    tg: IntArray,
    rows: IntArray,
    rank: IntArray,
    moved: BoolArray,
    row_hash: np.ndarray,
) -> None:
    if len(rows) == 0:
        return
    rows = rows[np.argsort(rank[rows], kind="stable")]
    sub = rep[rows]
    fresh = moved[rows]
    w = sub.shape[1]
    # Ties between equally roomy replicas are broken by a per-row rotation, not by slot order.
    tie = (np.arange(w)[None, :] + (row_hash[rows] % np.uint64(max(w, 1))).astype(np.int64)[:, None]) % max(
        w, 1
    )
    pending = np.ones(len(rows), dtype=np.bool_)
    while pending.any():
        idx = np.flatnonzero(pending)
        cand = sub[idx]
        room = np.where(cand >= 0, tg[np.maximum(cand, 0)] - cur[np.maximum(cand, 0)], -(1 << 40))
        best = np.argmax(room * w * 2 - tie[idx], axis=1)
        best_room = room[np.arange(len(idx)), best]
        proposing = best_room > 0
        if not proposing.any():
            break
        pi = idx[proposing]
        broker = sub[pi, best[proposing]]
        order = np.lexsort((pi, broker))
        pos = segment_positions(broker[order])
        accept = order[pos < (tg - cur)[broker[order]]]
        if len(accept) == 0:
            break
        chosen = pi[accept]
        lead[rows[chosen]] = broker[accept]
        np.add.at(cur, broker[accept], 1)
        pending[chosen] = False
    _augment_orphans(sub, lead, rows, cur, tg, pending)
    # Leftovers: most room, preferring replicas that did not just move in, then slot order.
    idx = np.flatnonzero(pending)
    if len(idx):
        cand = sub[idx]
        room = np.where(cand >= 0, tg[np.maximum(cand, 0)] - cur[np.maximum(cand, 0)], -(1 << 40))
        score = room * 2 * w * 2 - fresh[idx].astype(np.int64) * w - np.arange(w)[None, :]
        best = np.argmax(score, axis=1)
        for i, j in zip(idx.tolist(), best.tolist(), strict=True):  # leftovers are few
            b = int(sub[i, j])
            lead[rows[i]] = b
            cur[b] += 1


def _augment_orphans(
    sub: IntArray, lead: IntArray, rows: IntArray, cur: IntArray, tg: IntArray, pending: BoolArray
) -> None:
    """Augmenting paths (:mod:`augment`) for orphans the proposal rounds left without a leader:
    only orphans shift, so no retained leader changes."""
    if not pending.any():
        return
    cands = [[int(b) for b in row if b >= 0] for row in sub.tolist()]
    assigned = [-1 if p else int(lead[r]) for p, r in zip(pending.tolist(), rows.tolist(), strict=True)]
    room = np.maximum(0, tg - cur).astype(np.int64).tolist()
    before = list(assigned)
    for i in augment(cands.__getitem__, assigned, room):
        if before[i] >= 0:
            cur[before[i]] -= 1
        cur[assigned[i]] += 1
        pending[i] = False
        lead[rows[i]] = assigned[i]


def _shed(rep: IntArray, lead: IntArray, cur: IntArray, tg: IntArray, mov: BoolArray, rank: IntArray) -> None:
    while True:
        excess = cur - tg
        room = tg - cur
        over = excess > 0
        if not over.any() or not (room > 0).any():
            return
        rows = np.flatnonzero(mov & (lead >= 0) & over[np.maximum(lead, 0)])
        sub = rep[rows]
        cand_room = np.where((sub >= 0) & (sub != lead[rows, None]), room[np.maximum(sub, 0)], 0)
        has = (cand_room > 0).any(axis=1)
        rows, sub, cand_room = rows[has], sub[has], cand_room[has]
        if len(rows) == 0:
            return
        order = np.lexsort((rank[rows], lead[rows]))
        pos = segment_positions(lead[rows][order])
        offered = order[pos < excess[lead[rows][order]]]
        best = np.argmax(cand_room[offered], axis=1)
        broker = sub[offered, best]
        order2 = np.lexsort((rank[rows[offered]], broker))
        pos2 = segment_positions(broker[order2])
        accept = order2[pos2 < room[broker[order2]]]
        if len(accept) == 0:
            return
        chosen = rows[offered[accept]]
        old = lead[chosen]
        new = broker[accept]
        # One change per giving broker beyond its excess cannot happen: offers are capped by excess.
        lead[chosen] = new
        np.add.at(cur, old, -1)
        np.add.at(cur, new, 1)


def _relay(
    rep: IntArray, lead: IntArray, cur: IntArray, tg: IntArray, mov: BoolArray, rank: IntArray
) -> None:
    """Step 4 in bulk: over -> intermediaries (temporary headroom) -> brokers with room."""
    for _ in range(6):
        over = cur > tg
        room = np.maximum(0, tg - cur)
        if not over.any() or not room.any():
            return
        rows = np.flatnonzero(mov & (lead >= 0))
        sub = rep[rows]
        under = room > 0
        to_under = ((sub >= 0) & under[np.maximum(sub, 0)] & (sub != lead[rows, None])).any(axis=1)
        give = np.bincount(lead[rows[to_under]], minlength=len(cur))
        give[over | under] = 0
        give = np.minimum(give, int(room.sum()))
        if not give.any():
            return
        before = lead.copy()
        _shed(rep, lead, cur, tg + give, mov, rank)
        _shed(rep, lead, cur, tg, mov, rank)
        if np.array_equal(before, lead):
            return


def _two_hop(rep: IntArray, lead: IntArray, cur: IntArray, tg: IntArray, mov: BoolArray) -> int:
    for _ in range(_MAX_TWO_HOP):
        over = np.flatnonzero(cur > tg)
        under = cur < tg
        if len(over) == 0 or not under.any():
            break
        rows = np.flatnonzero(mov & (lead >= 0))
        sub = rep[rows]
        # Rows led by some c with a follower under target: c can hand one over.
        has_under = ((sub >= 0) & under[np.maximum(sub, 0)] & (sub != lead[rows, None])).any(axis=1)
        givers = np.zeros(len(cur), dtype=np.bool_)
        givers[lead[rows[has_under]]] = True
        # Rows led by an over broker with a follower that is a giver.
        led_over = np.isin(lead[rows], over)
        to_giver = led_over & ((sub >= 0) & givers[np.maximum(sub, 0)] & (sub != lead[rows, None])).any(
            axis=1
        )
        if not to_giver.any():
            break
        i = int(np.flatnonzero(to_giver)[0])
        row1 = int(rows[i])
        followers = [int(b) for b in rep[row1] if b >= 0 and b != lead[row1] and givers[b]]
        c = followers[0]
        j = int(np.flatnonzero(has_under & (lead[rows] == c))[0])
        row2 = int(rows[j])
        b = next(int(x) for x in rep[row2] if x >= 0 and x != c and under[x])
        a = int(lead[row1])
        lead[row1] = c
        lead[row2] = b
        cur[a] -= 1
        cur[b] += 1
    return int(np.maximum(0, cur - tg).sum())
