"""Reschedule requests become exclusions with a cool-down; failback waits until it has been due a while.

Pure: takes what agents reported, the clock's reading, and the memory of the previous reconcile; returns
the new memory and the ``avoid`` map the planner takes (group → {cluster: reason}). Nothing here reads a
clock or a file, so every timer rule is a table test.

Exclusion rules (issue 5, item 2):
- A request from cluster C for group G excludes C for G from the moment the controller first sees it.
- The exclusion ends when C's reported capacity changes (a node added, removed or resized: room may exist
  now) or after the cool-down, whichever comes first. It lasts even when the agent stops reporting the
  request (the agent stops once the group has left C), so G does not bounce back at once.
- A request whose exclusion ended is not acted on again while the agent keeps reporting that same request
  (same ``since``): only a new episode of Pending pods re-excludes the cluster.
- Requests for spread groups are reported, not acted on (docs/design.md §3): spread is the user's explicit
intent.

Memory stays bounded: exclusions die with their cool-down, and remembered "released" requests are
forgotten as soon as the agent stops reporting them.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from nova_gitops.api.statusreports import RescheduleRequest


@dataclass(frozen=True, slots=True)
class Exclusion:
    group: str
    cluster: str
    reason: str  # the agent's words, quoted in the plan's reason and the commit message
    since: float  # clock reading when the controller acted
    capacity: str  # the cluster's capacity fingerprint then
    request_since: str  # identity of the agent's request

    @property
    def key(self) -> tuple[str, str]:
        return (self.group, self.cluster)

    def avoid_reason(self) -> str:
        """Completes the planner's "Cluster C skipped, ...;" in Nova's wording, with the agent's reason."""
        return f"does not have enough resources (rescheduling triggered: {self.reason})"


@dataclass(frozen=True, slots=True)
class RescheduleMemory:
    exclusions: Mapping[tuple[str, str], Exclusion] = field(default_factory=dict)
    released: frozenset[tuple[str, str, str]] = frozenset()  # (group, cluster, request since)

    def avoid(self) -> dict[str, dict[str, str]]:
        avoid: dict[str, dict[str, str]] = {}
        for exclusion in sorted(self.exclusions.values(), key=lambda item: item.key):
            avoid.setdefault(exclusion.group, {})[exclusion.cluster] = exclusion.avoid_reason()
        return avoid

    def without_groups(self, groups: Collection[str]) -> RescheduleMemory:
        """Forget exclusions of ``groups`` (spread groups: their requests are reported, not acted on)."""
        kept = {key: value for key, value in self.exclusions.items() if key[0] not in groups}
        return RescheduleMemory(kept, self.released)


@dataclass(frozen=True, slots=True)
class RescheduleUpdate:
    memory: RescheduleMemory
    started: tuple[Exclusion, ...]  # new this time
    ended: tuple[Exclusion, ...]  # released this time (cool-down over or capacity changed)


def update(
    memory: RescheduleMemory,
    requests: Iterable[RescheduleRequest],
    capacities: Mapping[str, str],
    *,
    now: float,
    cooldown: float,
) -> RescheduleUpdate:
    """Apply the rules of the module docstring. ``capacities`` maps each reporting cluster to its capacity
    fingerprint; a cluster that stopped reporting counts as changed (its exclusion ends)."""
    reported = {(request.group, request.cluster, request.since): request for request in requests}
    kept: dict[tuple[str, str], Exclusion] = {}
    ended: list[Exclusion] = []
    for key, exclusion in memory.exclusions.items():
        expired = now - exclusion.since >= cooldown
        if expired or capacities.get(exclusion.cluster) != exclusion.capacity:
            ended.append(exclusion)
        else:
            kept[key] = exclusion
    released = {key for key in memory.released if key in reported}
    released.update(
        (exclusion.group, exclusion.cluster, exclusion.request_since)
        for exclusion in ended
        if (exclusion.group, exclusion.cluster, exclusion.request_since) in reported
    )
    started: list[Exclusion] = []
    for identity, request in sorted(reported.items()):
        key = (request.group, request.cluster)
        if key in kept or identity in released or request.cluster not in capacities:
            continue
        exclusion = Exclusion(
            request.group, request.cluster, request.reason, now, capacities[request.cluster], request.since
        )
        kept[key] = exclusion
        started.append(exclusion)
    ended.sort(key=lambda item: item.key)
    return RescheduleUpdate(RescheduleMemory(kept, frozenset(released)), tuple(started), tuple(ended))


@dataclass(frozen=True, slots=True)
class FailbackHold:
    """Since when each sticky group could have failed back to a higher tier (``--failback-after``)."""

    waiting: Mapping[str, float] = field(default_factory=dict)

    def observe(self, wanting: Collection[str], now: float) -> FailbackHold:
        """Groups that could fail back now keep their first moment; the others are forgotten (the room in
        the higher tier went away, so the wait starts again next time)."""
        return FailbackHold({group: self.waiting.get(group, now) for group in sorted(wanting)})

    def due(self, now: float, after: float) -> tuple[str, ...]:
        return tuple(group for group, since in self.waiting.items() if now - since >= after)

    def without(self, groups: Collection[str]) -> FailbackHold:
        """The hold once ``groups`` failed back: the others keep the moment their wait started."""
        return FailbackHold({group: since for group, since in self.waiting.items() if group not in groups})


def failback_candidates(
    held: Mapping[str, Sequence[str]],
    free: Mapping[str, Sequence[str]],
    previous: Mapping[str, Sequence[str]],
) -> set[str]:
    """Groups placed differently when failback is allowed (``free``) than when it is held (``held``),
    among those the previous render had placed: the ones that would fail back now."""
    return {
        group
        for group, clusters in free.items()
        if previous.get(group) and tuple(held.get(group, ())) != tuple(clusters)
    }
