"""Failover headroom: the loss of each cluster in turn (or of every cluster sharing each value of a label,
``--domain``), planned as ``whatif`` plans ``--without``, and what each loss moves and strands
(docs/headroom.md).

Pure, like ``whatif``: a loaded source, the previous placement and the settings in (and the plan memory
when there is one), a ``Headroom`` out; ``workflows/whatif.py`` loads, the CLI prints. How to call it::

    report = headroom.headroom(source, previous=previous, settings=settings)
    report.losses           # worst first: each Loss names its clusters, moves and stranded groups
    report.strands          # some loss strands a group not ignored (``nova-gitops headroom`` exits 1)
    loss = report.loss_of("wlc-gpu")   # one loss by name (a cluster, or LABEL=VALUE with a domain)

Each loss is a what-if of today's plan (``whatif.what_if`` with one ``Without`` per lost cluster), so a
group a loss strands is exactly one the what-if of that loss makes unschedulable (``stranding``). What a
loss costs is what it touches:
- it plans only the components of the fleet it can reach (``Reaches``: the clusters joined to the lost
  ones by some group's candidates, with the planner's own partition, and those groups' workloads); the
  others are as today's placement planned again (``settled``), and a property holds every loss so planned
  equal to the loss planned whole (``partitioned=False``);
- with ``file_digests`` (``planning.plan``'s), every plan reuses what that re-plan worked out (``memory``):
  the decisions, groups and measures of every workload, and the sticky groups kept on each cluster whose
  room the loss leaves alone;
- ``mapper`` may plan the losses side by side (``workflows.whatif.spread_over``: forked processes).

What a loss does to a group scheduled today:
- **moved**: a single group lands on a cluster it was not on (the lost one held it);
- **re-divided**: a Divide group loses a cluster and its share is divided over the rest;
- a Duplicate group merely loses its copy on the lost cluster: neither (nothing has to go anywhere);
- **stranded**: ``stranding``'s cases (no room, no candidate, pinned, a share that does not fit).

Worst loss first: the most stranded groups, then the most accepted (``--ignore``d) ones, then the most
moves, then by name.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from nova_gitops.api.inputs import SourceSet
from nova_gitops.api.objects import Manifest
from nova_gitops.errors import UserError
from nova_gitops.scheduling import candidates, components, intents, planning, stranding, whatif
from nova_gitops.scheduling.memory import PlanMemory
from nova_gitops.scheduling.plans import Plan, PlanSettings, PreviousPlacement
from nova_gitops.scheduling.stranding import Stranded

MoveKind = Literal["moved", "re-divided"]
SCALE_UP = "must scale up for the group"
"""The words of the planner's warning at a group that overflows onto an autoscaled cluster
(``placementstages``: ``cluster c must scale up for the group: …``)."""


Mapper = Callable[
    [Callable[[tuple[str, tuple[str, ...]]], "Loss"], Sequence[tuple[str, tuple[str, ...]]]], Iterable["Loss"]
]
"""How the losses are planned: ``map`` itself, or one that spreads them over processes."""


class HeadroomError(UserError):
    """A ``--domain`` no cluster has, an ``--ignore`` that names nothing: said with the flag."""


@dataclass(frozen=True, slots=True)
class Move:
    group: str
    kind: MoveKind
    before: tuple[str, ...]
    after: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Loss:
    """What losing ``clusters`` does: the groups it moves, those it strands (``accepted``: stranded but
    ignored), the groups that would overflow onto an autoscaled cluster, and the shortfall per resource
    that would rescue the stranded ones (``stranding.shortfall``; milli-units)."""

    name: str  # the cluster, or LABEL=VALUE
    clusters: tuple[str, ...]
    moved: tuple[Move, ...] = ()
    stranded: tuple[Stranded, ...] = ()
    accepted: tuple[Stranded, ...] = ()
    scale_ups: tuple[str, ...] = ()

    @property
    def shortfall(self) -> dict[str, int]:
        return stranding.shortfall(self.stranded)

    def order(self) -> tuple[int, int, int, str]:
        return (-len(self.stranded), -len(self.accepted), -len(self.moved), self.name)


@dataclass(frozen=True, slots=True)
class Headroom:
    """Every loss, worst first; ``unschedulable_today``: groups no loss can strand, being so already;
    ``unlabelled``: with a domain, the clusters without its label (never lost)."""

    losses: tuple[Loss, ...]
    domain: str | None = None
    clusters: int = 0
    groups: int = 0
    unschedulable_today: tuple[str, ...] = ()
    unlabelled: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    @property
    def strands(self) -> bool:
        """Some loss strands a group not ignored: the CI gate (exit 1)."""
        return any(loss.stranded for loss in self.losses)

    def loss_of(self, name: str) -> Loss | None:
        return next((loss for loss in self.losses if loss.name == name), None)


def losses_of(source: SourceSet, domain: str | None) -> tuple[list[tuple[str, tuple[str, ...]]], list[str]]:
    """The losses to plan — each cluster, or each value of ``domain`` with the clusters carrying it — and,
    with a domain, the clusters without the label; ``HeadroomError`` when no cluster has it."""
    if domain is None:
        return [(cluster.name, (cluster.name,)) for cluster in source.clusters], []
    by_value: dict[str, list[str]] = {}
    unlabelled: list[str] = []
    for cluster in source.clusters:
        value = cluster.labels.get(domain)
        if value is None:
            unlabelled.append(cluster.name)
        else:
            by_value.setdefault(value, []).append(cluster.name)
    if not by_value:
        known = sorted({key for cluster in source.clusters for key in cluster.labels})
        listed = ", ".join(known) or "none"
        raise HeadroomError(f"--domain {domain}: no cluster has the label {domain} (their labels: {listed})")
    losses = [(f"{domain}={value}", tuple(sorted(names))) for value, names in sorted(by_value.items())]
    return losses, unlabelled


def check_ignore(ignore: Sequence[str], today: Plan) -> None:
    """``HeadroomError`` for an ``--ignore`` that matches no group and no policy of today's plan: a typo
    would otherwise accept nothing, silently."""
    names = {group.name for group in today.groups} | {g.policy for g in today.groups if g.policy}
    for pattern in ignore:
        if not any(fnmatch.fnmatchcase(name, pattern) for name in names):
            raise HeadroomError(f"--ignore {pattern}: no group or policy of that name in the plan")


def ignored(item: Stranded, ignore: Sequence[str]) -> bool:
    """A stranded group is accepted when a pattern (a name or a shell glob) matches its name or policy."""
    names = (item.group, item.policy) if item.policy else (item.group,)
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in ignore for name in names)


def headroom(
    source: SourceSet,
    *,
    previous: PreviousPlacement | None = None,
    settings: PlanSettings | None = None,
    domain: str | None = None,
    ignore: Sequence[str] = (),
    recalled: PlanMemory | None = None,
    file_digests: Mapping[str, str] | None = None,
    today: Plan | None = None,
    mapper: Mapper | None = None,
    partitioned: bool = True,
) -> Headroom:
    """The failover headroom of ``source`` as placed today (``planning.plan`` with ``previous``, or the
    given ``today``). ``HeadroomError`` for a ``domain`` no cluster has or an ``ignore`` matching nothing.
    ``mapper`` plans the losses (``map`` when None; the workflow's spreads them over processes): each loss
    is planned alone, so the order they are planned in changes nothing. Each loss plans only the components
    of the fleet it reaches (``Reaches``); ``partitioned=False`` plans the whole fleet for each (the reference
    the property tests compare with)."""
    settings = settings or PlanSettings()
    losses, unlabelled = losses_of(source, domain)
    if today is None:
        today = planning.plan(
            source, previous=previous, settings=settings, recalled=recalled, file_digests=file_digests
        )
    check_ignore(ignore, today)
    memory = today.memory.merged(recalled) if today.memory and recalled else (today.memory or recalled)

    memory, rooms = settled(source, today, memory, file_digests)
    reaches = Reaches(source, today, rooms) if partitioned else None
    previous = whatif.placement_of(today)

    def one(loss: tuple[str, tuple[str, ...]]) -> Loss:
        name, clusters = loss
        reached = reaches.of(clusters) if reaches is not None else None
        return loss_of(
            source,
            today,
            name,
            clusters,
            ignore=ignore,
            recalled=memory,
            file_digests=file_digests,
            reach=reached,
            previous=previous,
        )

    made = list((mapper or map)(one, losses))
    return Headroom(
        tuple(sorted(made, key=Loss.order)),
        domain,
        len(source.clusters),
        len(today.groups),
        tuple(group.name for group in today.groups if group.status == "unschedulable"),
        tuple(unlabelled),
        tuple(ignore),
    )


def settled(
    source: SourceSet, today: Plan, memory: PlanMemory | None, file_digests: Mapping[str, str] | None
) -> tuple[PlanMemory | None, dict[str, dict[str, int]]]:
    """Today's placement planned again with itself as the previous placement, as every loss starts from
    it: its memory (which holds the sticky groups kept on each cluster: a fresh plan keeps none, and every
    loss reuses them where it leaves a cluster's room alone), and each cluster's free room (what a loss that
    does not reach the cluster leaves it)."""
    plan = planning.plan(
        source,
        previous=whatif.placement_of(today),
        settings=today.settings,
        recalled=memory,
        file_digests=file_digests,
    )
    kept = plan.memory or memory
    if kept is not None:  # every loss reads most clusters' fits: read once here, not once per loss
        kept = replace(
            kept, fits={key: part for key in kept.fits if (part := kept.fits.get(key)) is not None}
        )
    return kept, {usage.cluster: stranding.free_room(usage) for usage in plan.clusters}


def loss_of(
    source: SourceSet,
    today: Plan,
    name: str,
    clusters: Sequence[str],
    *,
    ignore: Sequence[str] = (),
    recalled: PlanMemory | None = None,
    file_digests: Mapping[str, str] | None = None,
    reach: Reach | None = None,
    previous: PreviousPlacement | None = None,
) -> Loss:
    """One loss: ``clusters`` leave the inventory (``whatif.Without``), planned against ``today``; with
    ``reach``, only the part of the fleet the loss reaches is planned (the same loss, for less)."""
    if reach is not None and not reach.clusters:
        return Loss(name, tuple(clusters))  # no group may touch them: losing them changes nothing
    part = source if reach is None else reach.source
    lost = [cluster for cluster in clusters if reach is None or cluster in reach.clusters]
    result = whatif.what_if(
        part,
        [whatif.Without(cluster) for cluster in lost],
        today=today,
        settings=today.settings,
        recalled=recalled,
        file_digests=file_digests,
        elsewhere=() if reach is None else reach.elsewhere,
        previous=previous,
    )
    return loss_from(name, tuple(clusters), result, ignore)


@dataclass(frozen=True, slots=True)
class Reach:
    """What a loss can change: the components of the fleet (``scheduling.components``) holding a lost
    cluster — their clusters, and the workloads of the groups that may touch them, as a source of their
    own — and the free room of every other cluster, which the loss leaves as it is today."""

    clusters: frozenset[str]
    source: SourceSet
    elsewhere: tuple[Mapping[str, int], ...] = ()


def components_of(source: SourceSet, today: Plan) -> list[components.Component]:
    """The fleet's components as today's plan placed them: each group joined to the clusters it may touch
    (its policy's candidates and the clusters its selectors match that are not ready; the clusters an
    annotation names), as the planner partitions a plan (``componentplanning``)."""
    chosen = {policy.name: candidates.candidates(policy, source.clusters) for policy in source.policies}
    inventory = {cluster.name for cluster in source.clusters}
    touches: list[tuple[str, tuple[str, ...]]] = []
    for group in today.groups:
        found: tuple[str, ...] = ()
        if group.policy is not None and group.policy in chosen:
            found = (*chosen[group.policy].names, *chosen[group.policy].not_ready)
        elif group.policy is None:
            named = {name for item in group.objects for name in _named_clusters(item.manifest)}
            found = tuple(sorted(named & inventory))
        touches.append((group.name, found))
    return components.partition(touches)


def _named_clusters(manifest: Manifest) -> tuple[str, ...]:
    found = intents.intent(manifest)
    if isinstance(found, intents.Pin):
        return (found.cluster,)
    return found.clusters if isinstance(found, intents.SpreadOnto) else ()


class Reaches:
    """What each loss can change (``Reach``), from the fleet's components as today's plan has them; each
    part of the fleet made into a source once, however many losses reach it."""

    def __init__(self, source: SourceSet, today: Plan, rooms: Mapping[str, Mapping[str, int]]) -> None:
        self.source, self.rooms = source, rooms
        self.parts = components_of(source, today)
        self.group_keys = {
            group.name: [item.manifest.key for item in group.objects] for group in today.groups
        }
        self.workload_keys = [manifest.key for manifest in source.workloads]
        self._sources: dict[frozenset[str], SourceSet] = {}

    def of(self, lost: Sequence[str]) -> Reach | None:
        """What losing ``lost`` can change; None when it reaches every cluster (plan it whole). The clusters
        it does not reach keep the free room of today's placement planned again (``rooms``)."""
        reached = [part for part in self.parts if not set(part.clusters).isdisjoint(lost)]
        clusters = frozenset(name for part in reached for name in part.clusters)
        if len(clusters) == len(self.source.clusters):
            return None
        part_source = self._sources.get(clusters)
        if part_source is None:
            keys = {key for part in reached for name in part.groups for key in self.group_keys[name]}
            part_source = self._sources[clusters] = dataclasses.replace(
                self.source,
                clusters=tuple(cluster for cluster in self.source.clusters if cluster.name in clusters),
                workloads=tuple(
                    manifest
                    for manifest, key in zip(self.source.workloads, self.workload_keys, strict=True)
                    if key in keys
                ),
            )
        elsewhere = tuple(
            room for name, room in sorted(self.rooms.items()) if name not in clusters and name not in lost
        )
        return Reach(clusters, part_source, elsewhere)


def loss_from(name: str, clusters: tuple[str, ...], result: whatif.WhatIf, ignore: Sequence[str]) -> Loss:
    """The ``Loss`` a what-if of losing ``clusters`` shows."""
    before = {group.name: group for group in result.before.groups}
    stranded_names = {item.group for item in result.unschedulable}
    moved: list[Move] = []
    scale_ups: list[str] = []
    for group in result.after.groups:
        was = before.get(group.name)
        if was is None or group.name in stranded_names or "unschedulable" in (was.status, group.status):
            continue
        new = [warning for warning in group.warnings if SCALE_UP in warning and warning not in was.warnings]
        if new:
            scale_ups.append(group.name)
        kind = move_kind(was.clusters, group.clusters, group.mode)
        if kind is not None:
            moved.append(Move(group.name, kind, tuple(sorted(was.clusters)), tuple(sorted(group.clusters))))
    stranded = tuple(item for item in result.unschedulable if not ignored(item, ignore))
    accepted = tuple(item for item in result.unschedulable if ignored(item, ignore))
    return Loss(name, clusters, tuple(moved), stranded, accepted, tuple(scale_ups))


def move_kind(before: Sequence[str], after: Sequence[str], mode: str) -> MoveKind | None:
    """How a placed group's clusters changed (the module docstring); None when it did not move."""
    was, now = set(before), set(after)
    if was == now or (mode == "duplicate" and now < was):
        return None
    return "re-divided" if mode == "divide" else "moved"
