"""Single-cluster placement of a ScheduleGroup, and the capacity ledger a plan consumes as it places.

Choice (DESIGN §3 "Choice and stability"): the first tier with a fitting cluster wins; inside it the group's
previous cluster when it still fits (stickiness), otherwise the cluster left with the most free capacity —
the largest minimum free fraction over the resources the group asks for — then the name. Stickiness never
beats tier order: a group that spilled to a lower tier fails back as soon as a higher tier fits (the
controller may hold it with ``failback=False`` while it waits out ``--failback-after``). Nothing fits: the
first autoscaled candidate, said so; otherwise unschedulable with one reason per cluster.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from nova_gitops.api import quantities
from nova_gitops.api.clusters import Cluster
from nova_gitops.scheduling import fitting
from nova_gitops.scheduling.candidates import Candidates
from nova_gitops.scheduling.demand import PodDemand

DEFAULT_SCORED_RESOURCES = ("cpu", "memory")
SCORE_SCALE = 10**12


class Ledger:
    """Free room per node of every cluster, consumed as the plan places groups. Never oversubscribed.

    Each cluster's rooms stay in node-name order (``fitting.rooms`` sorts them, ``Fit.after`` and
    ``consume_regardless`` keep the order), so fits need not sort them: see ``fitting.fit_in_name_order``.
    """

    def __init__(self, clusters: Sequence[Cluster]) -> None:
        self._rooms = {cluster.name: fitting.rooms(cluster.nodes) for cluster in clusters}
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
        self._rooms[cluster] = fit.after
        self._add(cluster, need)

    def consume_regardless(self, cluster: str, demands: Sequence[PodDemand], need: Mapping[str, int]) -> str:
        """Place an explicit intent (spread, pin) whether or not it fits; return the shortfall, "" if none.

        When it does not fit, the resources it asks for are marked used up on every node, so that later
        placements in this render never count on room this group may take.
        """
        fit = self.fit(cluster, demands, need)
        if fit.ok:
            self.commit(cluster, fit, need)
            return ""
        self._rooms[cluster] = tuple(
            fitting.NodeRoom(
                room.name,
                {res: (0 if res in need else amount) for res, amount in room.free.items()},
                room.labels,
                room.taints,
            )
            for room in self._rooms[cluster]
        )
        self._add(cluster, need)
        return fit.shortfall

    def scale_up_for(self, cluster: str, need: Mapping[str, int]) -> None:
        """Record a group placed on an autoscaled cluster because it fits nowhere: the autoscaler adds nodes
        for it, so the room the cluster has now stays free for other groups."""
        placed = self.placed[cluster]
        for resource, amount in need.items():
            placed[resource] = placed.get(resource, 0) + amount

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


def _trial_order(
    candidates: Candidates, sticky: str | None, failback: bool, ledger: Ledger, need: Mapping[str, int]
) -> Iterator[Cluster]:
    """Clusters in the order they are tried: tier by tier, the sticky cluster first in its tier (first of all
    without failback), then the most free capacity left, then the name. Lazy: a sticky group that still fits
    — the common case — never ranks the rest of its tier."""
    sticky_tier = None if sticky is None else candidates.tier_of(sticky)
    if sticky is not None and not failback:
        yield from (cluster for cluster in candidates.clusters if cluster.name == sticky)
    for index, tier in enumerate(candidates.tiers):
        if failback and index == sticky_tier:
            yield from (cluster for cluster in tier if cluster.name == sticky)
        yield from ledger.ranked([cluster for cluster in tier if cluster.name != sticky], need)


@dataclass(frozen=True, slots=True)
class Decision:
    cluster: str | None  # None: unschedulable
    reason: str
    warnings: tuple[str, ...] = ()


def place_single(
    policy_name: str,
    candidates: Candidates,
    demands: Sequence[PodDemand],
    need: Mapping[str, int],
    ledger: Ledger,
    *,
    previous: str | None = None,
    avoid: Mapping[str, str] | None = None,
    failback: bool = True,
) -> Decision:
    """Choose one cluster for a group, consuming its room in ``ledger``. Reasons use Nova's event wording."""
    avoid = avoid or {}
    clusters = candidates.clusters
    if not clusters:
        lines = [f"No cluster matches policy {policy_name} ({candidates.description});"]
        lines += [f"Cluster {name} skipped, it is not ready;" for name in candidates.not_ready]
        return Decision(None, " ".join(lines))
    names = ",".join(candidates.names)
    if len(clusters) > 1:
        lines = [f"Multiple clusters matching policy {policy_name} ({candidates.description}): {names};"]
    else:
        lines = [f"One cluster matching policy {policy_name} ({candidates.description}): {names};"]
    lines += [f"Cluster {name} skipped, it is not ready;" for name in candidates.not_ready]

    sticky = previous if previous is not None and candidates.tier_of(previous) is not None else None
    for cluster in _trial_order(candidates, sticky, failback, ledger, need):
        if cluster.name in avoid:
            lines.append(f"Cluster {cluster.name} skipped, {avoid[cluster.name]};")
            continue
        fit = ledger.fit(cluster.name, demands, need)
        if not fit.ok:
            lines.append(f"Cluster {cluster.name} skipped, does not have enough resources: {fit.shortfall};")
            continue
        ledger.commit(cluster.name, fit, need)
        lines.append(f"Picked cluster {cluster.name} because it has enough resources;")
        return Decision(cluster.name, " ".join(lines))

    for cluster in clusters:
        if cluster.autoscaled and cluster.name not in avoid:
            shortfall = ledger.fit(cluster.name, demands, need).shortfall
            ledger.scale_up_for(cluster.name, need)
            lines.append(
                f"Picked cluster {cluster.name} because no cluster has enough resources and it is autoscaled;"
            )
            warning = f"cluster {cluster.name} must scale up for the group: {shortfall}" if shortfall else ""
            return Decision(cluster.name, " ".join(lines), (warning,) if warning else ())
    return Decision(None, " ".join(lines))
