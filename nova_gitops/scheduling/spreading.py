"""Divide: split a workload's replicas over topology domains and their clusters, exactly and stably.

Users rely on three things when they write ``percentageSplit: 70/30`` (docs/design.md §3 "Spread"):

1. the parts sum to the replicas asked for (Nova's old floor rounding turned 5 at 70/30 into 3/1);
2. every part is the floor or the ceiling of its exact share (within quota);
3. raising the total never takes a replica away from a cluster (house monotone), so scaling up never moves
   running pods between clusters (KubeFed's divider moved pods going 6 → 7 at 170:110:60).

Largest remainder breaks (3), Webster/Sainte-Laguë breaks (2). The Balinski–Young *quota method* has all
three: seats are handed out one at a time; for seat h+1 the eligible parties are those still below their
upper quota (``a_i * W < w_i * (h + 1)``), and the seat goes to the eligible party with the greatest
``w_i / (a_i + 1)``; ties go to the larger weight, then the earlier position (callers list parties in policy
order, then by name). Integer arithmetic only: priorities are compared by cross-multiplication.

A heap holds the eligible parties by priority and a second heap the parties waiting for their upper quota
to rise, so a split costs O(total · log parties) rather than O(total · parties).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence


class _Claim:
    """A party's claim on its next seat; ``a < b`` when ``a`` deserves the seat before ``b``."""

    __slots__ = ("index", "next_seat", "weight")

    def __init__(self, index: int, weight: int, next_seat: int) -> None:
        self.index = index
        self.weight = weight
        self.next_seat = next_seat

    def __lt__(self, other: _Claim) -> bool:
        mine, theirs = self.weight * other.next_seat, other.weight * self.next_seat
        if mine != theirs:
            return mine > theirs
        if self.weight != other.weight:
            return self.weight > other.weight
        return self.index < other.index


def divide(total: int, weights: Sequence[int]) -> list[int]:
    """Split ``total`` over parties in proportion to ``weights`` by the quota method.

    Parts sum to ``total``, each is the floor or ceiling of ``weights[i] * total / sum(weights)``, and no part
    shrinks when ``total`` grows. Weight-0 parties get 0. Raises ValueError on a negative total or weight, and
    when there is no party or every weight is 0 (there is nowhere to put the replicas).
    """
    if total < 0:
        raise ValueError(f"cannot divide a negative number of replicas ({total})")
    if any(weight < 0 for weight in weights):
        raise ValueError(f"weights must not be negative, got {list(weights)}")
    weight_sum = sum(weights)
    if weight_sum == 0:
        raise ValueError("cannot divide replicas: no party has a positive weight")
    seats = [0] * len(weights)
    ready = [_Claim(index, weight, 1) for index, weight in enumerate(weights) if weight > 0]
    heapq.heapify(ready)
    waiting: list[tuple[int, int]] = []  # (first step at which the party is below its upper quota, index)
    for step in range(total):
        while waiting and waiting[0][0] <= step:
            _, index = heapq.heappop(waiting)
            heapq.heappush(ready, _Claim(index, weights[index], seats[index] + 1))
        while True:
            # Never empty: if every party were at its upper quota, sum(seats) * W >= W * (step + 1).
            claim = ready[0]
            if seats[claim.index] * weight_sum < claim.weight * (step + 1):
                break
            heapq.heappop(ready)
            heapq.heappush(waiting, (seats[claim.index] * weight_sum // claim.weight, claim.index))
        seats[claim.index] += 1
        heapq.heapreplace(ready, _Claim(claim.index, claim.weight, seats[claim.index] + 1))
    return seats


def split_replicas(total: int, domains: Sequence[tuple[str, int, Sequence[str]]]) -> dict[str, int]:
    """Replicas per cluster: ``total`` divided over ``domains`` by weight, then each domain's part equally
    over its clusters (the first clusters in the given order get the extra replicas).

    ``domains`` are ``(topology value, weight, its clusters in name order)`` in policy order. Every domain
    must have at least one cluster: the caller drops a listed domain without ready candidates and
    redistributes its share over the others (with a warning) before calling. A cluster whose part is 0 is
    still in the result, with 0. Raises ValueError for a domain without clusters, a cluster in two
    domains, or no positive weight.
    """
    seen: set[str] = set()
    for value, _, members in domains:
        if not members:
            raise ValueError(f"topology domain {value!r} has no cluster: drop it and redistribute its share")
        for cluster in members:
            if cluster in seen:
                raise ValueError(f"cluster {cluster!r} is listed in more than one topology domain")
            seen.add(cluster)
    parts = divide(total, [weight for _, weight, _ in domains])
    replicas: dict[str, int] = {}
    for (_, _, members), part in zip(domains, parts, strict=True):
        replicas.update(zip(members, _equal_parts(part, len(members)), strict=True))
    return replicas


def _equal_parts(total: int, parties: int) -> list[int]:
    """``divide(total, [1] * parties)`` in O(parties): with equal weights the quota method gives everyone
    the floor and the first ``total % parties`` parties one more (ties go to the earlier position)."""
    share, extra = divmod(total, parties)
    return [share + 1] * extra + [share] * (parties - extra)
