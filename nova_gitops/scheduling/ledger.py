"""The capacity ledger a plan consumes as it places: each cluster's room, and what is placed there.

The ledger keeps every cluster's state a function of *what* is placed there, not of the order it was
placed in, so that a plan is a fixed point (docs/design.md §3): explicit intents (pins, spreads) are consumed
first,
into the cluster's base; single placements are then packed onto the base in group-name order, whatever the
order they arrive in. A group inserted before others is packed at its place and the ones after it are packed
again; the insertion is refused when one of them would no longer fit. On an autoscaled cluster a group may
stay that does not fit (it *overflows*: the autoscaler adds nodes for it; it takes no room from others).
Re-planning the same input with a plan's own placement re-packs each cluster's groups in that same order,
so each fits exactly as it did. Appending (a first render, a re-render) costs one fit, as before.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from nova_gitops.api import quantities
from nova_gitops.api.clusters import Cluster
from nova_gitops.scheduling import fitting
from nova_gitops.scheduling.demand import PodDemand
from nova_gitops.scheduling.memory import BaseRoom, Kept

DEFAULT_SCORED_RESOURCES = ("cpu", "memory")
SCORE_SCALE = 10**12


@dataclass(frozen=True, slots=True)
class _Single:
    """A group placed alone on a cluster, as the ledger packs it."""

    name: str
    demands: Sequence[PodDemand]  # prepared for fitting by ``Ledger._pods`` when it is packed again
    need: Mapping[str, int]


class _Stack:
    """One cluster's single placements in name order: after each, the nodes' room, whether it packed (False:
    it overflows an autoscaled cluster) and, if not, why."""

    __slots__ = ("after", "entries", "names", "packed", "shortfalls")

    def __init__(self) -> None:
        self.names: list[str] = []
        self.entries: list[_Single] = []
        self.after: list[tuple[fitting.NodeRoom, ...] | None] = []  # None: not worked out (``_after``)
        self.packed: list[bool] = []
        self.shortfalls: list[str] = []


@dataclass(frozen=True, slots=True)
class Trial:
    """A change to one cluster's single placements, worked out but not made (``Ledger.accept`` makes it).
    ``ok``: it may be made; ``shortfall``: why not, or why the inserted group overflows."""

    cluster: str
    ok: bool
    shortfall: str
    index: int = 0
    entry: _Single | None = None  # None: a removal
    tail: tuple[tuple[tuple[fitting.NodeRoom, ...], bool, str], ...] = ()  # (after, packed, shortfall)


class ExplicitRoom(Protocol):
    """What placing an explicit intent asks of the room: a cluster's free room, and its share consumed
    whether or not it fits (the ``Ledger``, or the placer's record and replay: ``explicitfitting``)."""

    def free(self, cluster: str) -> Mapping[str, int]: ...

    def consume_regardless(
        self, cluster: str, demands: Sequence[PodDemand], need: Mapping[str, int]
    ) -> str: ...


class Ledger:
    """Free room per node of every cluster, consumed as the plan places groups. Never oversubscribed, except
    where an explicit intent or an autoscaled cluster's overflow is placed regardless.

    Each cluster's rooms stay in node-name order (``fitting.rooms`` sorts them, ``Fit.after`` and
    ``consume_regardless`` keep the order), so fits need not sort them: see ``fitting.fit_in_name_order``.
    Explicit intents (``consume_regardless``, ``commit``) go into a cluster's base, before any single
    placement there (``try_insert``/``try_remove`` then ``accept``), which is packed in group-name order.
    """

    def __init__(self, clusters: Sequence[Cluster]) -> None:
        self._rooms = {cluster.name: fitting.rooms(cluster.nodes) for cluster in clusters}
        self._base = dict(self._rooms)  # the rooms once explicit intents took theirs
        self._stacks = {cluster.name: _Stack() for cluster in clusters}
        # Demands prepared for fitting, by the identity of the tuple a caller passes (a group's demands are
        # fitted on cluster after cluster); the tuple is held, so its id is not reused while it is cached.
        self._prepared: dict[int, tuple[tuple[PodDemand, ...], fitting.Pods]] = {}
        self.allocatable = {
            cluster.name: _totals(node.allocatable for node in cluster.nodes) for cluster in clusters
        }
        self.available = {
            cluster.name: _totals(node.available for node in cluster.nodes) for cluster in clusters
        }
        self._free = {name: dict(totals) for name, totals in self.available.items()}
        self._base_free = {name: dict(totals) for name, totals in self.available.items()}
        self._base_placed: dict[str, dict[str, int]] = {cluster.name: {} for cluster in clusters}
        # ``ranked``'s scores by the need they were computed for, with the cluster's version (bumped when its
        # free room changes): groups ask for few distinct needs, and a placement changes one cluster.
        self._versions = dict.fromkeys(self._free, 0)
        self._scores: dict[tuple[tuple[str, int], ...], dict[str, tuple[int, int]]] = {}
        self.placed: dict[str, dict[str, int]] = {cluster.name: {} for cluster in clusters}

    def free(self, cluster: str) -> Mapping[str, int]:
        return self._free[cluster]

    def rooms(self, cluster: str) -> tuple[fitting.NodeRoom, ...]:
        """The cluster's nodes' free room now, in node-name order."""
        return self._rooms[cluster]

    def fit(self, cluster: str, demands: Sequence[PodDemand], need: Mapping[str, int]) -> fitting.Fit:
        """Whether the pods pack onto the cluster's nodes now. A check on totals goes first; when it fails,
        packing still runs for its per-node words ("needs 1500m cpu on one node, best node has 900m")."""
        free = self._free[cluster]
        pods = self._pods(demands)
        if fitting.within(need, free):
            return fitting.fit_in_name_order(self._rooms[cluster], pods)
        refused = fitting.fit_in_name_order(self._rooms[cluster], pods)
        if refused.ok:  # cannot happen (nodes never hold more than the totals); never place on it regardless
            short = next(resource for resource, amount in need.items() if amount > free.get(resource, 0))
            shortfall = (
                f"needs {quantities.in_words(short, need[short])} {short} in total, "
                f"has {quantities.in_words(short, max(free.get(short, 0), 0))} free"
            )
            return fitting.Fit(False, self._rooms[cluster], shortfall)
        return refused

    def _pods(self, demands: Sequence[PodDemand]) -> fitting.Pods:
        if not isinstance(demands, tuple):  # a list may change between calls: prepare it every time
            return fitting.prepare(demands)
        cached = self._prepared.get(id(demands))
        if cached is None or cached[0] is not demands:
            cached = self._prepared[id(demands)] = (demands, fitting.prepare(demands))
        return cached[1]

    def commit(self, cluster: str, fit: fitting.Fit, need: Mapping[str, int]) -> None:
        """Take a fit's room into the cluster's base (an explicit intent that fits)."""
        self._to_base(cluster)
        self._rooms[cluster] = self._base[cluster] = fit.after
        self._add(cluster, need)
        self._add_base(cluster, need, used=True)

    def _to_base(self, cluster: str) -> None:
        if self._stacks[cluster].names:
            raise RuntimeError(f"explicit intents are placed before single placements (cluster {cluster})")

    def consume_regardless(self, cluster: str, demands: Sequence[PodDemand], need: Mapping[str, int]) -> str:
        """Place an explicit intent (spread, pin) whether or not it fits; return the shortfall, "" if none.

        When it does not fit, the resources it asks for are marked used up on every node, so that later
        placements in this render never count on room this group may take.
        """
        fit = self.fit(cluster, demands, need)
        if fit.ok:
            self.commit(cluster, fit, need)
            return ""
        self._to_base(cluster)
        self._rooms[cluster] = self._base[cluster] = tuple(
            fitting.NodeRoom(
                room.name,
                {res: (0 if res in need else amount) for res, amount in room.free.items()},
                room.labels,
                room.taints,
                room.labels_known,
            )
            for room in self._rooms[cluster]
        )
        self._add(cluster, need)
        self._add_base(cluster, need, used=True)
        return fit.shortfall

    def base_of(self, cluster: str) -> BaseRoom:
        """The cluster's state once the explicit intents took their room, before any single placement."""
        self._to_base(cluster)
        return BaseRoom(
            self._base[cluster],
            dict(self._free[cluster]),
            dict(self._base_free[cluster]),
            dict(self._base_placed[cluster]),
            dict(self.placed[cluster]),
        )

    def restore_base(self, cluster: str, room: BaseRoom) -> None:
        """Put back a state ``base_of`` gave, made by the same explicit intents on the same cluster."""
        self._to_base(cluster)
        self._rooms[cluster] = self._base[cluster] = room.rooms
        self._free[cluster], self._base_free[cluster] = dict(room.free), dict(room.base_free)
        self._base_placed[cluster], self.placed[cluster] = dict(room.base_placed), dict(room.placed)
        self._versions[cluster] += 1

    def kept(self, cluster: str) -> Kept:
        """The cluster's single placements and its room after them (``restore_kept`` puts them back)."""
        stack = self._stacks[cluster]
        return Kept(
            tuple(stack.names),
            tuple(stack.packed),
            tuple(stack.shortfalls),
            tuple(room.free for room in self._rooms[cluster]),
            dict(self._free[cluster]),
            dict(self.placed[cluster]),
        )

    def restore_kept(
        self, cluster: str, kept: Kept, entries: Mapping[str, tuple[Sequence[PodDemand], Mapping[str, int]]]
    ) -> None:
        """Put back single placements ``kept`` gave, made on the same base room by inserting the same
        groups (``entries``: each one's demands and need, by name) in the same order. The nodes' room after
        each group but the last is worked out again only if a change before the last asks for it."""
        stack = self._stacks[cluster]
        if stack.names:
            raise RuntimeError(f"kept placements are restored onto an empty cluster (cluster {cluster})")
        base = self._base[cluster]
        rooms = tuple(
            fitting.NodeRoom(room.name, dict(free), room.labels, room.taints, room.labels_known)
            for room, free in zip(base, kept.rooms, strict=True)
        )
        stack.names = list(kept.names)
        stack.entries = [_Single(name, *entries[name]) for name in kept.names]
        stack.packed, stack.shortfalls = list(kept.packed), list(kept.shortfalls)
        stack.after = [*([None] * (len(kept.names) - 1)), rooms] if kept.names else []
        self._rooms[cluster] = rooms if kept.names else base
        self._free[cluster], self.placed[cluster] = dict(kept.free), dict(kept.placed)
        self._versions[cluster] += 1

    def _after(self, cluster: str, position: int) -> tuple[fitting.NodeRoom, ...]:
        """The nodes' room after the single placement at ``position`` (the base before the first); those a
        restored stack does not hold are packed again, as they were packed."""
        if position < 0:
            return self._base[cluster]
        stack = self._stacks[cluster]
        found = stack.after[position]
        if found is not None:
            return found
        rooms = self._base[cluster]
        for index, entry in enumerate(stack.entries):
            after = stack.after[index]
            if after is None:
                if stack.packed[index]:
                    fit = fitting.fit_in_name_order(rooms, self._pods(entry.demands))
                    if not fit.ok:
                        raise RuntimeError(
                            f"restored group {entry.name} no longer packs on cluster {cluster}"
                        )
                    rooms = fit.after
                stack.after[index] = rooms
            else:
                rooms = after
            if index == position:
                return rooms
        raise IndexError(position)

    def _add_base(self, cluster: str, need: Mapping[str, int], *, used: bool) -> None:
        free, placed = self._base_free[cluster], self._base_placed[cluster]
        for resource, amount in need.items():
            if used:
                free[resource] = free.get(resource, 0) - amount
            placed[resource] = placed.get(resource, 0) + amount

    def try_insert(
        self,
        cluster: str,
        name: str,
        demands: Sequence[PodDemand],
        need: Mapping[str, int],
        *,
        overflow: bool = False,
    ) -> Trial:
        """Group ``name`` placed alone on ``cluster``, packed at its place in name order. Without
        ``overflow`` it must fit and every group packed there must still fit after it; with ``overflow``
        (an autoscaled cluster) it is always placed, and what does not fit overflows."""
        stack = self._stacks[cluster]
        entry = _Single(name, demands, need)
        index = bisect.bisect_left(stack.names, name)
        if index < len(stack.names) and stack.names[index] == name:
            raise RuntimeError(f"group {name} is already placed on cluster {cluster}")
        if index == len(stack.names) or not (overflow or fitting.within(need, self._free[cluster])):
            # Appending (the common case), or refused on totals: the fit on the rooms as they are now.
            fit = self.fit(cluster, demands, need)
            if index == len(stack.names) and (fit.ok or overflow):
                after = fit.after if fit.ok else self._rooms[cluster]
                return Trial(cluster, True, fit.shortfall, index, entry, ((after, fit.ok, fit.shortfall),))
            if not fit.ok:
                return Trial(cluster, False, fit.shortfall)
        rooms = self._after(cluster, index - 1)
        first = fitting.fit_in_name_order(rooms, self._pods(demands))
        if not first.ok and not overflow:
            return Trial(cluster, False, first.shortfall)
        rooms = first.after if first.ok else rooms
        tail = [(rooms, first.ok, first.shortfall)]
        for position in range(index, len(stack.names)):
            refit = self._refit(stack, position, rooms, overflow)
            if refit is None:
                shortfall = (
                    f"it would leave no room for group {stack.names[position]}, placed there before it"
                )
                return Trial(cluster, False, shortfall)
            rooms = refit[0]
            tail.append(refit)
        return Trial(cluster, True, first.shortfall, index, entry, tuple(tail))

    def try_remove(self, cluster: str, name: str) -> Trial:
        """Group ``name`` taken off ``cluster``; refused when a group packed after it would no longer fit
        (first-fit packing is not monotone: more room can, rarely, pack worse)."""
        stack = self._stacks[cluster]
        index = bisect.bisect_left(stack.names, name)
        if index == len(stack.names) or stack.names[index] != name:
            raise RuntimeError(f"group {name} is not placed on cluster {cluster}")
        rooms = self._after(cluster, index - 1)
        tail = []
        for position in range(index + 1, len(stack.names)):
            refit = self._refit(stack, position, rooms, overflow=False)
            if refit is None:
                return Trial(
                    cluster, False, f"taking it off would leave no room for group {stack.names[position]}"
                )
            rooms = refit[0]
            tail.append(refit)
        return Trial(cluster, True, "", index, None, tuple(tail))

    def _refit(
        self, stack: _Stack, position: int, rooms: tuple[fitting.NodeRoom, ...], overflow: bool
    ) -> tuple[tuple[fitting.NodeRoom, ...], bool, str] | None:
        """A placed group packed again after a change before it; None when it packed and no longer does
        (and ``overflow`` is not allowed)."""
        fit = fitting.fit_in_name_order(rooms, self._pods(stack.entries[position].demands))
        if fit.ok:
            return (fit.after, True, "")
        if stack.packed[position] and not overflow:
            return None
        return (rooms, False, fit.shortfall)

    def accept(self, trial: Trial) -> None:
        """Make the change a ``try_insert`` or ``try_remove`` worked out (it must be ``ok``)."""
        if not trial.ok:
            raise RuntimeError(f"refused change on cluster {trial.cluster} accepted: {trial.shortfall}")
        cluster, index, entry = trial.cluster, trial.index, trial.entry
        stack = self._stacks[cluster]
        appended = entry is not None and index == len(stack.names)
        if entry is not None:
            stack.names.insert(index, entry.name)
            stack.entries.insert(index, entry)
        else:
            del stack.names[index], stack.entries[index]
        stack.after[index:] = [after for after, _, _ in trial.tail]
        stack.packed[index:] = [packed for _, packed, _ in trial.tail]
        stack.shortfalls[index:] = [shortfall for _, _, shortfall in trial.tail]
        self._rooms[cluster] = self._after(cluster, len(stack.names) - 1)
        if appended and entry is not None:
            if stack.packed[-1]:
                self._add(cluster, entry.need)
            else:
                self._versions[cluster] += 1
                placed = self.placed[cluster]
                for resource, amount in entry.need.items():
                    placed[resource] = placed.get(resource, 0) + amount
            return
        free, placed = dict(self._base_free[cluster]), dict(self._base_placed[cluster])
        for single, packed in zip(stack.entries, stack.packed, strict=True):
            for resource, amount in single.need.items():
                if packed:
                    free[resource] = free.get(resource, 0) - amount
                placed[resource] = placed.get(resource, 0) + amount
        self._free[cluster], self.placed[cluster] = free, placed
        self._versions[cluster] += 1

    def overflowing(self, cluster: str) -> dict[str, str]:
        """The groups placed on ``cluster`` that its nodes cannot hold (an autoscaled cluster scales up for
        them), with why, by group name."""
        stack = self._stacks[cluster]
        return {
            name: shortfall
            for name, packed, shortfall in zip(stack.names, stack.packed, stack.shortfalls, strict=True)
            if not packed
        }

    def score(self, cluster: str, need: Mapping[str, int]) -> int:
        """The minimum, over the resources asked for, of the fraction left free after placing ``need``,
        in units of 1/SCORE_SCALE (exact integer arithmetic: the same order on every machine)."""
        allocatable = self.allocatable[cluster]
        free = self._free[cluster]
        lowest: int | None = None
        for resource in need or DEFAULT_SCORED_RESOURCES:  # a plain loop: this runs groups x clusters times
            total = allocatable.get(resource, 0)
            if total > 0:
                left = (free.get(resource, 0) - need.get(resource, 0)) * SCORE_SCALE // total
                if lowest is None or left < lowest:
                    lowest = left
        return 0 if lowest is None else lowest

    def ranked(self, clusters: Sequence[Cluster], need: Mapping[str, int]) -> Iterator[Cluster]:
        """``clusters`` by ``score`` (the most left free first), then name. The scores are computed inline,
        as ``score`` does, when the first cluster is asked for, and kept until the cluster's free room
        changes; the rest are sorted only if the first is passed over. A first render ranks every candidate
        for every group (250,000 scores for 2,500 groups over 100 clusters), and the best one usually takes
        the group."""
        asked = tuple((resource, need.get(resource, 0)) for resource in need or DEFAULT_SCORED_RESOURCES)
        allocatable_of, free_of, versions = self.allocatable, self._free, self._versions
        known = self._scores.setdefault(asked, {})
        keyed: list[tuple[int, str, int]] = []
        for index, cluster in enumerate(clusters):
            name = cluster.name
            found = known.get(name)
            if found is not None and found[0] == versions[name]:
                keyed.append((found[1], name, index))
                continue
            allocatable, free = allocatable_of[name], free_of[name]
            lowest: int | None = None
            for resource, amount in asked:
                total = allocatable.get(resource, 0)
                if total > 0:
                    left = (free.get(resource, 0) - amount) * SCORE_SCALE // total
                    if lowest is None or left < lowest:
                        lowest = left
            key = -(0 if lowest is None else lowest)
            known[name] = (versions[name], key)
            keyed.append((key, name, index))
        if not keyed:
            return
        best = min(keyed)
        yield clusters[best[2]]
        keyed.remove(best)
        yield from (clusters[index] for _, _, index in sorted(keyed))

    def _add(self, cluster: str, need: Mapping[str, int]) -> None:
        free, placed = self._free[cluster], self.placed[cluster]
        self._versions[cluster] += 1
        for resource, amount in need.items():
            free[resource] = free.get(resource, 0) - amount
            placed[resource] = placed.get(resource, 0) + amount


def _totals(lists: Iterable[Mapping[str, int]]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for resources in lists:
        for resource, amount in resources.items():
            totals[resource] = totals.get(resource, 0) + amount
    return totals
