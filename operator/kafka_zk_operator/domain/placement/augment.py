"""Augmenting paths for "each item picks one of its bins, bins have capacities" assignments.

Used after greedy proposal rounds (which find a maximal, not maximum, assignment) by the leader
stage (orphaned partitions -> one of their replicas) and by replica drops (rows -> one of their
brokers). A path ``item -> full bin -> an item assigned to it -> ... -> bin with room`` shifts
every item on it by one step, so one more item is placed and no bin exceeds its capacity.
Breadth-first, deterministic (items and candidates in the order given), with a work budget; bins
reached by a failed search are not searched again (their reachable room can only shrink).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence


def augment(
    cands: Callable[[int], Sequence[int]],
    assigned: list[int],
    room: list[int],
    *,
    budget: int = 1_000_000,
) -> list[int]:
    """Place pending items (``assigned[i] == -1``) along augmenting paths.

    :param cands: the bins item ``i`` may use, in preference order (called only for items the
        search reaches).
    :param assigned: bin of each item or -1; updated in place.
    :param room: remaining capacity per bin; updated in place.
    :returns: the items whose bin changed (newly placed or shifted).
    """
    holder: dict[int, list[int]] = {}
    for item, bin_ in enumerate(assigned):
        if bin_ >= 0:
            holder.setdefault(bin_, []).append(item)
    changed: list[int] = []
    total_room = sum(room)
    dead: set[int] = set()  # bins from which a failed search found no room (room only shrinks)
    for start in [i for i, b in enumerate(assigned) if b < 0]:
        if budget <= 0 or total_room <= 0:
            break
        reached_from: dict[int, int] = {}  # bin -> item it was reached from
        came_from: dict[int, int] = {start: -1}  # item -> bin it was reached from
        queue = [start]
        found = -1
        head = 0
        while head < len(queue) and found < 0:
            item = queue[head]
            head += 1
            for bin_ in cands(item):
                budget -= 1
                if bin_ in reached_from or bin_ == assigned[item] or bin_ in dead:
                    continue
                reached_from[bin_] = item
                if room[bin_] > 0:
                    found = bin_
                    break
                holders = holder.get(bin_, ())
                budget -= len(holders)
                for other in holders:
                    if other not in came_from:
                        came_from[other] = bin_
                        queue.append(other)
        if found < 0:
            dead.update(reached_from)
            continue
        room[found] -= 1
        total_room -= 1
        bin_ = found
        while True:
            item = reached_from[bin_]
            previous = came_from[item]
            assigned[item] = bin_
            holder.setdefault(bin_, []).append(item)
            changed.append(item)
            if previous < 0:
                break
            holder[previous].remove(item)
            bin_ = previous
    return changed
