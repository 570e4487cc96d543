"""What a change strands: the groups that today's plan placed and a what-if plan cannot, and what each
lacks (docs/headroom.md). Shared by ``whatif`` (what a change makes unschedulable) and ``headroom`` (what
each loss strands), so that both say the same of the same plans.

A group is stranded when, after the change:

- ``no-room``: it is unschedulable although some cluster may take it — no candidate has room (single
  placement picks one cluster, and none fits; an autoscaled candidate would have taken it);
- ``no-candidate``: its policy selects no cluster any more (the lost cluster was the only one it matches),
  or only cordoned ones (a group that must move never lands there, so their room rescues nothing);
- ``pinned``: an annotation placed it (``nova.elotl.co/cluster``, ``spread-onto``) on clusters that are gone;
- ``share``: a spread group (Divide or Duplicate) is placed, but a cluster's share or copy no longer fits
  where it did (the planner warns ``<cluster> needs … for its N replicas``): a Divide's lost share re-divided
  over clusters that cannot hold it, or a copy on a shrunken cluster; or a pinned group no longer fits its
  cluster (shrunk, or the group scaled: a pin is rendered as asked, with a warning). Its pods would stay
  Pending.

A group unschedulable today is not stranded by the change (it is stranded already); a group that overflows
onto an autoscaled cluster is placed (the planner trusts the autoscaler), and says so in a warning.

What a group lacks is counted in cluster totals, per resource: its requests less the free room (available
less what the plan placed) of each candidate, the candidates closest to holding it first (the fewest
resources short, then the least short relative to the request). Fit is per node, so a cluster may lack
nothing in total and still not fit the group: the planner's own words for that cluster (``verdict``, from
its reason) say why. The rescuing shortfall of a group is what its closest candidate lacks; of a share, how
far its cluster is over-committed; of a group no cluster may take, its whole request.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from nova_gitops.api.inputs import SourceSet
from nova_gitops.scheduling import candidates, cordoning
from nova_gitops.scheduling.planparts import ClusterUsage, GroupPlan, Mode
from nova_gitops.scheduling.plans import Plan

Why = Literal["no-room", "no-candidate", "pinned", "share"]
CLOSEST = 3
"""How many of the closest clusters a stranded group names."""
SHARE_VERDICTS = ("needs ", "cannot run its ", "does not have enough resources for the pinned group")
"""How the planner's warning of a spread's cluster begins when its share does not fit
(``distributing._capacity_warnings``: ``<cluster> needs 2500m cpu for its 5 replicas, has 1000m``), and of
a pin's cluster when the pinned group does not (``explicitplacing``: rendered as asked all the same)."""


@dataclass(frozen=True, slots=True)
class Closest:
    """A cluster that came close to holding a stranded group: what it lacks in total, per resource
    (milli-units; empty when its totals would do and only per-node fit failed), and the planner's verdict
    on it ("" when the reason names none)."""

    cluster: str
    lacks: Mapping[str, int]
    verdict: str = ""


@dataclass(frozen=True, slots=True)
class Stranded:
    """A group the change strands (see the module docstring for ``why``)."""

    group: str
    policy: str | None
    mode: Mode
    why: Why
    reason: str  # the planner's reason, or for a share its warnings
    requests: Mapping[str, int]  # what the group's pods request in total (milli-units)
    lacks: Mapping[str, int]  # the shortfall that would rescue it (milli-units, per resource)
    closest: tuple[Closest, ...] = ()
    objects: tuple[str, ...] = ()  # "Deployment shop/web"
    before: tuple[str, ...] = field(default=())  # the clusters it is on today
    free_elsewhere: Mapping[str, int] = field(default_factory=dict)
    """Per resource it requests, the most free room any cluster has after the change (0 when none has
    any): "needs 4 nvidia.com/gpu, 0 free elsewhere"."""


def stranded(
    before: Plan, after: Plan, source_after: SourceSet, elsewhere: Sequence[Mapping[str, int]] = ()
) -> tuple[Stranded, ...]:
    """The groups ``after`` strands that ``before`` placed, by name (the module docstring); ``elsewhere``:
    the free room of clusters ``after`` did not plan (a part of a fleet was), for ``free_elsewhere``."""
    today = {group.name: group for group in before.groups}
    usage = {entry.cluster: entry for entry in after.clusters}
    policies = {policy.name: policy for policy in source_after.policies}
    found: list[Stranded] = []
    rooms = [*(free_room(entry) for entry in after.clusters), *elsewhere]
    closed = cordoning.cordoned(source_after.clusters)
    for group in after.groups:
        was = today.get(group.name)
        if was is None or was.status == "unschedulable":
            continue
        if group.status == "unschedulable":
            policy = policies.get(group.policy) if group.policy is not None else None
            if policy is None:
                found.append(_made(group, was, "pinned", group.requests, ()))
                continue
            # a group that must move never lands on a cordoned cluster: room there rescues nothing
            names = [
                name
                for name in candidates.candidates(policy, source_after.clusters).names
                if name not in closed
            ]
            if not names:
                found.append(_made(group, was, "no-candidate", group.requests, ()))
                continue
            closest = closest_clusters(group, names, usage)
            found.append(
                _made(group, was, "no-room", closest[0].lacks if closest else group.requests, closest)
            )
        else:  # a spread's share, or a pinned group, rendered where it no longer fits
            share = _share(group, was, usage)
            if share is not None:
                found.append(share)
    return tuple(replace(item, free_elsewhere=most_free(item.requests, rooms)) for item in found)


def most_free(need: Mapping[str, int], rooms: Sequence[Mapping[str, int]]) -> dict[str, int]:
    """Per resource of ``need``, the most free room in ``rooms`` (0 when none has any)."""
    return {name: max([0, *(room.get(name, 0) for room in rooms)]) for name in sorted(need)}


def _made(
    group: GroupPlan, was: GroupPlan, why: Why, lacks: Mapping[str, int], closest: tuple[Closest, ...]
) -> Stranded:
    """A stranded group; one no cluster may take lacks its whole request (today's, when it has none now)."""
    requests = dict(group.requests or was.requests)
    return Stranded(
        group.name,
        group.policy,
        group.mode,
        why,
        group.reason,
        requests,
        dict(lacks) if why == "no-room" else requests,
        closest,
        _objects(group),
        tuple(sorted(was.clusters)),
    )


def _objects(group: GroupPlan) -> tuple[str, ...]:
    return tuple(str(item.manifest.key) for item in group.objects)


def free_room(usage: ClusterUsage) -> dict[str, int]:
    """A cluster's room left after a plan: what was available less what the plan placed there."""
    resources = set(usage.available) | set(usage.placed)
    return {name: usage.available.get(name, 0) - usage.placed.get(name, 0) for name in resources}


def lacking(need: Mapping[str, int], free: Mapping[str, int]) -> dict[str, int]:
    """Per resource, how much ``free`` is short of ``need`` (only the resources that are short)."""
    return {
        name: amount - max(free.get(name, 0), 0)
        for name, amount in need.items()
        if amount > free.get(name, 0)
    }


def closest_clusters(
    group: GroupPlan, names: Sequence[str], usage: Mapping[str, ClusterUsage], limit: int = CLOSEST
) -> tuple[Closest, ...]:
    """The candidates closest to holding ``group``: fewest resources short, then the least short relative
    to the request, then by name; with the planner's verdict on each, read from the group's reason."""
    need = group.requests
    ranked: list[tuple[tuple[int, int, str], Closest]] = []
    for name in dict.fromkeys(names):
        found = usage.get(name)
        if found is None:
            continue
        lacks = lacking(need, free_room(found))
        relative = sum(amount * 1000 // max(need[resource], 1) for resource, amount in lacks.items())
        ranked.append(((len(lacks), relative, name), Closest(name, lacks, verdict(group.reason, name))))
    ranked.sort(key=lambda item: item[0])
    return tuple(closest for _, closest in ranked[:limit])


def verdict(reason: str, cluster: str) -> str:
    """The planner's words on ``cluster`` in a reason (``Cluster c skipped, does not have enough
    resources: …;``), without the cluster's name; "" when the reason says nothing of it."""
    prefix = f"Cluster {cluster} "
    for part in reason.split(";"):
        part = part.strip()
        if part.startswith(prefix):
            return part[len(prefix) :]
    return ""


def _share(group: GroupPlan, was: GroupPlan, usage: Mapping[str, ClusterUsage]) -> Stranded | None:
    """A spread group whose share on some cluster no longer fits, where today's fitted (or was not there).
    By cluster, not by the warning's words: a share short today that a change leaves short by another
    amount ("has 0m" -> "has 200m") was Pending before it, so the change strands nothing there."""
    before = short_shares(was)
    short = {cluster: words for cluster, words in short_shares(group).items() if cluster not in before}
    if not short:
        return None
    closest = tuple(
        Closest(cluster, over_committed(usage[cluster]) if cluster in usage else {}, words)
        for cluster, words in sorted(short.items())
    )
    lacks = total(closest_item.lacks for closest_item in closest)
    reason = "; ".join(f"{cluster} {words}" for cluster, words in sorted(short.items()))
    return Stranded(
        group.name,
        group.policy,
        group.mode,
        "share",
        reason,
        dict(group.requests),
        lacks,
        closest,
        _objects(group),
        tuple(sorted(was.clusters)),
    )


def short_shares(group: GroupPlan) -> dict[str, str]:
    """The clusters of ``group`` whose share (or pinned group) the planner warns does not fit, with its
    words on each (the warning without the cluster's name)."""
    short: dict[str, str] = {}
    for cluster in group.clusters:
        for warning in group.warnings:
            if any(warning.startswith(f"{cluster} {start}") for start in SHARE_VERDICTS):
                short.setdefault(cluster, warning[len(cluster) + 1 :])
    return short


def over_committed(usage: ClusterUsage) -> dict[str, int]:
    """How far a plan placed more on a cluster than it has available, per resource (those over only)."""
    return {name: -amount for name, amount in free_room(usage).items() if amount < 0}


def total(lists: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """The per-resource sum of ``lists``, resources by name."""
    sums: dict[str, int] = {}
    for resources in lists:
        for name, amount in resources.items():
            sums[name] = sums.get(name, 0) + amount
    return dict(sorted(sums.items()))


def shortfall(found: Iterable[Stranded]) -> dict[str, int]:
    """What would rescue every group of ``found``, each on its own, in total per resource: a share's
    cluster is counted once however many shares are short there (its over-commitment is theirs together)."""
    lists: list[Mapping[str, int]] = []
    clusters: set[str] = set()
    for item in found:
        if item.why != "share":
            lists.append(item.lacks)
            continue
        for closest in item.closest:
            if closest.cluster not in clusters:
                clusters.add(closest.cluster)
                lists.append(closest.lacks)
    return total(lists)
