"""The planner: a validated source in, a Plan out — match → group → place/spread → namespaces follow.

Order of placement (DESIGN §3 "Choice and stability"): explicit intents first — pins, spread-onto and spread
policies, which are rendered as asked whatever the room (with a warning where it is short) and do not
depend on the previous render; then sticky groups that still fit beside them (those that did not grow,
then those that grew); then groups that moved or that the previous render could not place, then new groups;
each stage in name order. Last, failing back to a higher tier and placing groups that found no cluster are
repeated until neither changes anything. A new pin is thus never refused for room a policy-placed group
held (the group moves, and its reason says why), and a change to one workload that is not a pin never pushes
an unchanged neighbour off its cluster.

Every plan is a fixed point: ``plan(S, previous=plan(S, previous=P)) == plan(S, previous=P)`` for any P.
Re-planning keeps every single placement (the ledger packs a cluster's groups in name order whatever the
order they arrived in, so each fits exactly as it did, and a group that overflows an autoscaled cluster
stays), finds nothing to fail back and nothing new to place (the last round found none on the same state),
keeps each placed group's reason and works out the rest, and every warning, from that same final state.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace

from nova_gitops.api import kinds, labels, podshapes
from nova_gitops.api.clusters import Cluster
from nova_gitops.api.inputs import SourceSet
from nova_gitops.api.names import SYSTEM_NAMESPACES
from nova_gitops.api.objects import Manifest
from nova_gitops.api.policies import FieldOverride, SchedulePolicy, SpreadConstraints
from nova_gitops.api.problems import Problem
from nova_gitops.errors import InputError
from nova_gitops.scheduling import (
    candidates,
    components,
    cordoning,
    demand,
    distributing,
    fitting,
    grouping,
    intents,
    matching,
    memory,
    placing,
)
from nova_gitops.scheduling.memory import Key, PlanMemory, StoredGroup
from nova_gitops.scheduling.placing import Ledger, place_single
from nova_gitops.scheduling.planparts import ClusterCopy, ClusterUsage, GroupPlan, Mode, ObjectPlan, Status
from nova_gitops.scheduling.plans import FollowedNamespace, Plan, PlanSettings, PreviousPlacement, Unscheduled
from nova_gitops.scheduling.recalling import Recall, Work

NO_POLICY = "no SchedulePolicy matches"


def plan(
    source: SourceSet,
    *,
    previous: PreviousPlacement | None = None,
    settings: PlanSettings | None = None,
    avoid: Mapping[str, Mapping[str, str]] | None = None,
    failback: bool | Collection[str] = True,
    recalled: PlanMemory | None = None,
    file_digests: Mapping[str, str] | None = None,
    partitioned: bool = True,
) -> Plan:
    """Decide where every object of ``source`` goes.

    ``previous`` gives stickiness; ``avoid`` maps a group name to clusters it must not be placed on, with the
    reason (reschedule requests); ``failback=False`` keeps sticky groups on a lower tier even when a higher
    one fits (the controller, while it waits out ``--failback-after``), and a collection of group names lets
    only those fail back. Raises ``InputError`` for objects whose resource requests cannot be read.

    With ``file_digests`` (source file name → digest of its bytes) the plan carries the ``memory`` of its
    parts, and reuses those of ``recalled`` whose inputs are unchanged (``scheduling.memory``): the plan is
    the same, made for the cost of what changed. ``partitioned=False`` places the whole fleet as one
    component (the reference the equivalence properties compare with).
    """
    previous = previous or PreviousPlacement.empty()
    settings = settings or PlanSettings()
    avoid = avoid or {}
    policies = sorted(source.policies, key=matching.precedence)
    clusters = sorted(source.clusters, key=lambda cluster: cluster.name)
    warnings: list[str] = []  # the source's own warnings carry file names: the CLI prints them, renders don't
    unscheduled: list[Unscheduled] = []
    overlaps: list[str] = []

    recall = None if file_digests is None else Recall(recalled or memory.EMPTY, file_digests, source)
    matcher = matching.Matcher(policies, source.namespace_labels)

    def decide(manifest: Manifest) -> memory.Decision:
        intent = intents.intent(manifest)
        if intent is not None:
            return (intent, None, None)
        found = matcher.match(manifest)
        return (None, found.policy.name if found.policy else None, found.overlap_warning)

    by_policy: dict[str, list[Manifest]] = {}
    annotated: list[tuple[Manifest, intents.Pin | intents.SpreadOnto]] = []
    for manifest in source.workloads:
        intent, policy_name, overlap = decide(manifest) if recall is None else recall.decide(manifest, decide)
        if intent is not None:
            annotated.append((manifest, intent))
            continue
        if overlap:
            overlaps.append(overlap)
        if policy_name is None:
            unscheduled.append(Unscheduled(manifest.key, manifest.api_version, None, NO_POLICY))
        else:
            by_policy.setdefault(policy_name, []).append(manifest)

    def groups_of(policy: SchedulePolicy) -> list[grouping.Group]:
        found = by_policy.get(policy.name, ())
        if recall is None:
            return grouping.form_groups(policy.name, policy.group_by_key, found)
        return recall.groups(policy.name, policy.group_by_key, found)

    problems: list[Problem] = []
    work = [
        _measure(group, policy, None, problems, source.pod_shapes, recall)
        for policy in sorted(policies, key=lambda policy: policy.name)
        for group in groups_of(policy)
    ]
    work += [
        _measure(
            grouping.form_groups(grouping.ANNOTATION_GROUP_PREFIX, None, [manifest])[0],
            None,
            intent,
            problems,
            source.pod_shapes,
            recall,
        )
        for manifest, intent in annotated
    ]
    if problems:
        raise InputError(sorted(problems))

    status: Status = "delegated" if settings.delegated else "scheduled"
    # A policy's candidates depend only on the policy and the clusters: found once per plan, not per group.
    if recall is None:
        chosen = {policy.name: candidates.candidates(policy, clusters) for policy in policies}
    else:
        chosen = {policy.name: recall.candidates(policy, clusters) for policy in policies}
    results, usage, needs = _place_components(
        work, clusters, chosen, previous, avoid, failback, status, recall, partitioned
    )
    warnings += overlaps
    groups = [results[name] for name in sorted(results)]
    for item, group_plan in zip(sorted(work, key=lambda item: item.group.name), groups, strict=True):
        warnings.extend(f"{group_plan.name}: {warning}" for warning in group_plan.warnings)
        if group_plan.status == "unschedulable":
            unscheduled.extend(
                Unscheduled(member.key, member.api_version, group_plan.policy, group_plan.reason)
                for member in item.group.members
            )

    followed = (
        _follow_namespaces(needs, results, source, clusters, policies) if settings.namespace_follow else []
    )
    followed_keys = {(namespace.manifest.kind, namespace.manifest.name) for namespace in followed}
    unscheduled = [
        entry
        for entry in unscheduled
        if not (
            entry.key.kind == "Namespace"
            and entry.key.group == ""
            and ("Namespace", entry.key.name) in followed_keys
        )
    ]
    return Plan(
        groups=tuple(groups),
        unscheduled=tuple(sorted(unscheduled, key=lambda entry: entry.key)),
        followed_namespaces=tuple(followed),
        clusters=tuple(usage[cluster.name] for cluster in clusters),
        warnings=tuple(warnings),
        settings=settings,
        policy_overlaps=tuple(overlaps),
        memory=recall.built() if recall is not None else None,
    )


def _place_components(
    work: Sequence[Work],
    clusters: Sequence[Cluster],
    chosen: Mapping[str, candidates.Candidates],
    previous: PreviousPlacement,
    avoid: Mapping[str, Mapping[str, str]],
    failback: bool | Collection[str],
    status: Status,
    recall: Recall | None,
    partitioned: bool,
) -> tuple[dict[str, GroupPlan], dict[str, ClusterUsage], memory.NamespaceNeeds]:
    """Every group's plan and every cluster's usage, component by component (``components``): a component
    whose inputs an earlier plan had is taken from ``recall``'s memory; and the namespaces the groups need."""
    by_name = {cluster.name: cluster for cluster in clusters}
    items = {item.group.name: item for item in work}
    if partitioned:
        touched = {name: (*found.names, *found.not_ready) for name, found in chosen.items()}
        parts = components.partition((name, _touches(item, touched, by_name)) for name, item in items.items())
    else:
        parts = [components.Component(tuple(by_name), tuple(sorted(items)))]
    fails_back = _fails_back(failback)
    results: dict[str, GroupPlan] = {}
    usage: dict[str, ClusterUsage] = {}
    wanted: dict[tuple[str, str], str] = {}
    rendered: set[tuple[str, str]] = set()
    for part in parts:
        part_work = [items[name] for name in part.groups]
        key = (
            None
            if recall is None
            else recall.component_key(part, part_work, previous, avoid, fails_back, status)
        )
        stored = None if recall is None or key is None else recall.component(key)
        if stored is not None:
            results.update(
                (item.group.name, stored.groups[item.group.name].attached(item.group.members))
                for item in part_work
            )
            usage.update(stored.usage)
            wanted.update(stored.namespaces.wanted)
            rendered.update(stored.namespaces.rendered)
            continue
        placer = _Placer(
            [by_name[name] for name in part.clusters], chosen, previous, avoid, failback, status, recall
        )
        found = placer.place_all(part_work)
        ledger = placer.ledger
        part_usage = {
            name: ClusterUsage(name, ledger.allocatable[name], ledger.available[name], ledger.placed[name])
            for name in part.clusters
        }
        results.update(found)
        usage.update(part_usage)
        part_needs = _namespace_needs(
            [found[name] for name in part.groups if not items[name].explicit], placer.explicit_needs
        )
        wanted.update(part_needs.wanted)
        rendered.update(part_needs.rendered)
        if recall is not None and key is not None:
            stored_groups = {name: StoredGroup.of(plan) for name, plan in found.items()}
            keeps = tuple(key for key in placer.keeps if key is not None)
            placement = memory.Placement(stored_groups, part_usage, part_needs, placer.spreads_key, keeps)
            recall.keep_component(key, placement)
    rest = [by_name[name] for name in components.untouched(list(by_name), parts)]
    idle = Ledger(rest)
    usage.update(
        (name, ClusterUsage(name, idle.allocatable[name], idle.available[name], {}))
        for name in (cluster.name for cluster in rest)
    )
    return results, usage, memory.NamespaceNeeds(wanted, frozenset(rendered))


def _namespace_needs(
    groups: Sequence[GroupPlan], others: memory.NamespaceNeeds | None = None
) -> memory.NamespaceNeeds:
    """Where ``groups`` (sorted by name), and the groups ``others`` holds the needs of, send namespaced
    objects, and which Namespaces they render where."""
    rendered: set[tuple[str, str]] = set()
    wanted: dict[tuple[str, str], str] = {}
    for group in groups:  # sorted by name: the first group that pulls a namespace in names it
        for object_plan in group.objects:
            manifest = object_plan.manifest
            if manifest.kind == "Namespace" and manifest.group == "":
                rendered.update((copy.cluster, manifest.name) for copy in object_plan.copies)
            elif manifest.namespaced:
                for copy in object_plan.copies:
                    wanted.setdefault((copy.cluster, manifest.namespace), group.name)
    if others is not None:  # the first group by name of either
        for where, name in others.wanted.items():
            found = wanted.get(where)
            if found is None or name < found:
                wanted[where] = name
        rendered.update(others.rendered)
    return memory.NamespaceNeeds(wanted, frozenset(rendered))


def _touches(
    item: Work, touched: Mapping[str, tuple[str, ...]], clusters: Mapping[str, Cluster]
) -> tuple[str, ...]:
    """The clusters a group's placement may read or take room on (``components``); ``touched``: those of
    each policy (its candidates, and the clusters it selects that are not ready, which reasons name)."""
    if isinstance(item.intent, intents.Pin):
        return (item.intent.cluster,) if item.intent.cluster in clusters else ()
    if isinstance(item.intent, intents.SpreadOnto):
        return tuple(name for name in item.intent.clusters if name in clusters)
    return () if item.policy is None else touched[item.policy.name]


def _fails_back(failback: bool | Collection[str]) -> Callable[[str], bool]:
    """Whether a group (by name) may fail back: ``plan``'s ``failback``, all, none or those named."""
    if isinstance(failback, bool):
        return lambda _: failback
    return lambda name: name in failback


def _measure(
    group: grouping.Group,
    policy: SchedulePolicy | None,
    intent: intents.Pin | intents.SpreadOnto | None,
    problems: list[Problem],
    shapes: Mapping[kinds.GroupKind, podshapes.PodControllerShape],
    recall: Recall | None,
) -> Work:
    divides = isinstance(intent, intents.SpreadOnto) and intent.mode == "Divide"
    divides = divides or bool(policy and policy.spread and policy.spread.mode == "Divide")
    members = None if recall is None else recall.members(group)
    key = None if members is None or recall is None else (divides, recall.shapes, members)
    found = None if key is None or recall is None else recall.measure(key)
    if found is None:
        known = len(problems)
        per_member = tuple(distributing.member_demands(group.members, divides, problems, shapes))
        pods = tuple(pod for member_pods in per_member for pod in member_pods)
        found = (per_member, pods, demand.total_requests(pods))
        if recall is not None and key is not None and len(problems) == known:
            recall.measures[key] = found
    per_member, pods, need = found
    return Work(group, policy, intent, pods, need, per_member)


def _single(
    item: Work, cluster: str | None, reason: str, warnings: Sequence[str], status: Status
) -> GroupPlan:
    """The group placed on ``cluster``, or unschedulable when it is None."""
    copies: tuple[ClusterCopy, ...] = (ClusterCopy(cluster),) if cluster is not None else ()
    return GroupPlan(
        item.group.name,
        item.policy.name if item.policy else None,
        item.group.group_by,
        "single",
        status if cluster is not None else "unschedulable",
        (cluster,) if cluster is not None else (),
        reason,
        tuple(ObjectPlan(member, copies) for member in item.group.members),
        tuple(warnings),
        dict(item.need),
    )


def _spread(
    item: Work,
    spread: SpreadConstraints,
    chosen: Sequence[Cluster],
    chosen_by: str,
    ledger: Ledger,
    status: Status,
    extra_warnings: Sequence[str] = (),
) -> GroupPlan:
    result = distributing.spread_group(
        chosen_by, spread, chosen, item.group.members, ledger, member_pods=item.member_demands
    )
    policy = item.policy.name if item.policy else None
    mode: Mode = "duplicate" if spread.mode == "Duplicate" else "divide"
    if result is None:
        reason = f"No cluster to spread onto among {chosen_by};"
        return GroupPlan(
            item.group.name,
            policy,
            item.group.group_by,
            mode,
            "unschedulable",
            (),
            reason,
            tuple(ObjectPlan(member, ()) for member in item.group.members),
            tuple(extra_warnings),
            dict(item.need),
        )
    return GroupPlan(
        item.group.name,
        policy,
        item.group.group_by,
        result.mode,
        status,
        result.clusters,
        result.reason,
        result.objects,
        (*extra_warnings, *result.warnings),
        dict(item.need),
    )


def _place_explicit(
    item: Work,
    clusters: Sequence[Cluster],
    candidates_by_policy: Mapping[str, candidates.Candidates],
    ledger: Ledger,
    status: Status,
    closed: frozenset[str] = frozenset(),
) -> GroupPlan:
    """A pin, a spread-onto annotation or a policy's spread: rendered as asked, with a warning where it does
    not fit. Nothing here depends on the previous render but ``closed``: the cordoned clusters a policy's
    spread may not newly spread onto (``cordoning``)."""
    if isinstance(item.intent, intents.Pin):
        target = next((cluster for cluster in clusters if cluster.name == item.intent.cluster), None)
        if target is None:
            reason = (
                f"Annotation {labels.CLUSTER_PIN} names cluster {item.intent.cluster}, "
                "which is not in the cluster inventory;"
            )
            return _single(item, None, reason, (), status)
        warnings = [] if target.is_candidate else [f"pinned to cluster {target.name}, which is not ready"]
        if target.cordoned:
            warnings.append(f"pinned to cluster {target.name}, which is cordoned")
        shortfall = ledger.consume_regardless(target.name, item.demands, item.need)
        if shortfall:
            warnings.append(f"{target.name} does not have enough resources for the pinned group: {shortfall}")
        reason = f"Picked cluster {target.name} because annotation {labels.CLUSTER_PIN} pins it;"
        return _single(item, target.name, reason, warnings, status)
    if isinstance(item.intent, intents.SpreadOnto):
        found, missing = candidates.named(item.intent.clusters, clusters)
        warnings = [
            f"annotation {labels.SPREAD_ONTO} names cluster {name}, which is not in the cluster inventory"
            for name in missing
        ]
        spread = SpreadConstraints(item.intent.mode, labels.METADATA_NAME, (), ())
        return _spread(
            item,
            spread,
            found,  # in the annotation's order: ties of an equal split go to the first named
            f"clusters named by annotation {labels.SPREAD_ONTO}",
            ledger,
            status,
            warnings,
        )
    assert item.policy is not None and item.policy.spread is not None
    chosen = candidates_by_policy[item.policy.name]
    shut_out = sorted(closed.intersection(chosen.names))  # named when they would have been candidates
    shut = f"; {', '.join(shut_out)} {cordoning.CORDONED}" if shut_out else ""
    return _spread(
        item,
        item.policy.spread,
        sorted((c for c in chosen.clusters if c.name not in closed), key=lambda c: c.name),
        f"clusters matching policy {item.policy.name} ({chosen.description}{shut})",
        ledger,
        status,
    )


class _Placer:
    """Places a plan's groups in the order that makes every plan a fixed point (module docstring)."""

    def __init__(
        self,
        clusters: Sequence[Cluster],
        chosen: Mapping[str, candidates.Candidates],
        previous: PreviousPlacement,
        avoid: Mapping[str, Mapping[str, str]],
        failback: bool | Collection[str],
        status: Status,
        recall: Recall | None = None,
    ) -> None:
        self.clusters, self.chosen, self.previous, self.recall = clusters, chosen, previous, recall
        self.cordoned = cordoning.cordoned(clusters)
        self.avoid, self.status = avoid, status
        self.fails_back = _fails_back(failback)
        self.ledger = Ledger(clusters)
        self.autoscaled = {cluster.name for cluster in clusters if cluster.autoscaled}
        self.unknown_labels = {cluster.name for cluster in clusters if not cluster.node_labels_known}
        self.standby = {cluster.name for cluster in clusters if cluster.standby}
        self.results: dict[str, GroupPlan] = {}
        self.placed: dict[str, str] = {}  # single placements: group -> cluster
        self.overflows: set[str] = set()  # placed on an autoscaled cluster because nothing fits
        self.spreads_key: Key | None = None  # the memory's key of the explicit intents placed here
        self.keeps: list[Key | None] = []  # the memory's keys of each cluster's kept sticky groups
        self.explicit_needs = memory.NamespaceNeeds(
            {}, frozenset()
        )  # the explicit intents' (``_namespace_needs``)

    def place_all(self, work: Sequence[Work]) -> dict[str, GroupPlan]:
        ordered = sorted(work, key=lambda item: item.group.name)
        self._place_explicit_all([item for item in ordered if item.explicit])  # 1. on the bare capacity
        unchanged: list[Work] = []
        grown: list[Work] = []
        known: list[Work] = []
        new: list[Work] = []
        sticky: dict[str, str] = {}  # group -> the cluster it stays on if it still fits there
        for item in ordered:
            if item.explicit:
                continue
            name = item.group.name
            before = self.previous.groups.get(name)
            if before is None:
                new.append(item)
            elif (cluster := self._sticky_cluster(item)) is None:
                known.append(item)
            else:
                sticky[name] = cluster
                (grown if self._grown(item) else unchanged).append(item)
        moved = self._keep_all([*unchanged, *grown], sticky)  # 2. sticky groups that fit
        self._fail_back(ordered)
        for item in sorted((*moved, *known), key=lambda item: item.group.name):  # 3. the rest
            self._place(item, self._sticky_cluster(item))
        for item in new:
            self._place(item, None)
        while self._fail_back(ordered) | self._retry(ordered):  # 4. until nothing changes
            pass
        for name, cluster in self.placed.items():  # the warnings of the final state
            shortfall = self.ledger.overflowing(cluster).get(name) if cluster in self.autoscaled else None
            if shortfall:
                found = self.results[name]
                warning = f"cluster {cluster} must scale up for the group: {shortfall}"
                self.results[name] = replace(found, warnings=(*found.warnings, warning))
        if self.standby or self.unknown_labels:  # else no group has a note to add
            for item in ordered:
                self._note(item)
        return self.results

    def _place_explicit_all(self, explicit: Sequence[Work]) -> None:
        """Explicit intents, in name order, on the clusters' bare capacity; taken from the memory when it
        has them placed on the same clusters (and then so is the room they left)."""
        if not explicit:
            return
        closed = {
            item.group.name: cordoning.closed_to_spread(
                self.cordoned, self.previous.groups.get(item.group.name, ())
            )
            for item in explicit
        }
        recall = self.recall
        key = None if recall is None else recall.spreads_key(explicit, closed, self.clusters, self.status)
        self.spreads_key = key
        stored = None if recall is None or key is None else recall.spread(key)
        if stored is not None:
            for item in explicit:
                self.results[item.group.name] = stored.groups[item.group.name].attached(item.group.members)
            for name, room in stored.rooms.items():
                self.ledger.restore_base(name, room)
            self.explicit_needs = stored.namespaces
            return
        for item in explicit:
            self.results[item.group.name] = _place_explicit(
                item, self.clusters, self.chosen, self.ledger, self.status, closed[item.group.name]
            )
        self.explicit_needs = _namespace_needs([self.results[item.group.name] for item in explicit])
        if recall is not None and key is not None:
            groups = {item.group.name: StoredGroup.of(self.results[item.group.name]) for item in explicit}
            rooms = {cluster.name: self.ledger.base_of(cluster.name) for cluster in self.clusters}
            recall.keep_spreads(key, memory.Spreads(groups, rooms, self.explicit_needs))

    def _note(self, item: Work) -> None:
        """Say in the reason where the group lands on a Standby cluster (placing there wakes it) and where a
        group with a nodeSelector or required node affinity lands on a cluster that reports no node labels
        (it was assumed to satisfy them, DESIGN §3 "Capacity and fit"). The reason of a group that stays may
        carry a note already: it is not repeated."""
        found = self.results[item.group.name]
        wanted = []
        if not self.standby.isdisjoint(found.clusters):  # a Duplicate has every cluster: looked at once
            wanted += [
                f"Cluster {cluster} is on Standby: placing there wakes it;"
                for cluster in found.clusters
                if cluster in self.standby
            ]
        if not self.unknown_labels.isdisjoint(found.clusters) and any(
            pod.shape.node_selector or pod.shape.required_affinity for pod in item.demands if pod.count
        ):
            wanted += [
                f"node labels unknown for {cluster}: nodeSelector not checked;"
                for cluster in found.clusters
                if cluster in self.unknown_labels
            ]
        if notes := [note for note in wanted if note not in found.reason]:
            self.results[item.group.name] = replace(found, reason=" ".join([found.reason, *notes]))

    def _sticky_cluster(self, item: Work) -> str | None:
        """The one cluster the previous render placed the group on, while a candidate and not avoided."""
        before = self.previous.groups.get(item.group.name, ())
        assert item.policy is not None
        if len(before) != 1 or self.chosen[item.policy.name].tier_of(before[0]) is None:
            return None
        return None if before[0] in self.avoid.get(item.group.name, {}) else before[0]

    def _grown(self, item: Work) -> bool:
        before = self.previous.requests.get(item.group.name)
        return before is not None and any(
            amount > before.get(resource, 0) for resource, amount in item.need.items()
        )

    def _keep_all(self, items: Sequence[Work], sticky: Mapping[str, str]) -> list[Work]:
        """Keep each group of ``items`` on its ``sticky`` cluster if it still fits there, in the order given;
        the groups that must move. Each cluster's keeps read and change only its own room, so they are worked
        out cluster by cluster, and taken from the memory for a cluster whose room and groups tried are an
        earlier plan's."""
        ledger, recall = self.ledger, self.recall
        tried: dict[str, list[Work]] = {}
        for item in items:
            tried.setdefault(sticky[item.group.name], []).append(item)
        kept: set[str] = set()
        for cluster, on_cluster in tried.items():
            key = None
            if recall is not None:
                key = recall.keeps_key(
                    cluster, ledger.rooms(cluster), ledger.free(cluster), ledger.placed[cluster], on_cluster
                )
                self.keeps.append(key)
            found = None if recall is None or key is None else recall.kept(key)
            if found is not None:
                ledger.restore_kept(
                    cluster, found, {item.group.name: (item.demands, item.need) for item in on_cluster}
                )
                kept.update(found.names)
                continue
            kept.update(item.group.name for item in on_cluster if self._fits_sticky(cluster, item))
            if recall is not None and key is not None:
                recall.keep_kept(key, ledger.kept(cluster))
        moved = []
        for item in items:
            if item.group.name in kept:
                self._keep(item, sticky[item.group.name])
            else:
                moved.append(item)
        return moved

    def _fits_sticky(self, cluster: str, item: Work) -> bool:
        """Place a sticky group on ``cluster`` if it still fits there (on an autoscaled cluster: always,
        which scales up for it); False when it must move."""
        name = item.group.name
        trial = self.ledger.try_insert(cluster, name, item.demands, item.need)
        if not trial.ok and cluster in self.autoscaled:
            trial = self.ledger.try_insert(cluster, name, item.demands, item.need, overflow=True)
        if trial.ok:
            self.ledger.accept(trial)
        return trial.ok

    def _keep(self, item: Work, cluster: str) -> None:
        """Record a sticky group kept where it was, with the reason that put it there."""
        name = item.group.name
        assert item.policy is not None
        reason = self.previous.reasons.get(name)
        if reason is None:
            lines = placing.header(item.policy.name, self.chosen[item.policy.name])
            reason = " ".join([*lines, placing.picked(cluster)])
        self._record(item, cluster, reason)

    def _record(self, item: Work, cluster: str | None, reason: str) -> None:
        name = item.group.name
        self.results[name] = _single(item, cluster, reason, (), self.status)
        if cluster is None:
            self.placed.pop(name, None)
        else:
            self.placed[name] = cluster

    def _place(self, item: Work, sticky: str | None, *, failback: bool | None = None) -> bool:
        """Place a group that is not (or no longer) placed; True when it found a cluster."""
        assert item.policy is not None
        name = item.group.name
        decision = place_single(
            item.policy.name,
            self.chosen[item.policy.name],
            item.demands,
            item.need,
            self.ledger,
            group=name,
            previous=sticky,
            avoid=cordoning.avoiding(self.avoid.get(name, {}), self.cordoned),
            failback=self.fails_back(name) if failback is None else failback,
        )
        reason = decision.reason
        if sticky is not None and decision.cluster == sticky and name in self.previous.reasons:
            reason = self.previous.reasons[name]  # it stays: the decision that put it there still holds
        self._record(item, decision.cluster, reason)
        return decision.cluster is not None

    def _fail_back(self, ordered: Sequence[Work]) -> bool:
        """Move single placements on a lower tier up to a higher tier that fits them now; True if any did."""
        moved = False
        for item in ordered:
            name = item.group.name
            cluster = self.placed.get(name)
            if cluster is None or item.policy is None or not self.fails_back(name):
                continue
            chosen = self.chosen[item.policy.name]
            tier = chosen.tier_of(cluster)
            if not tier:
                continue
            avoided = cordoning.avoiding(self.avoid.get(name, {}), self.cordoned)
            higher = [found for rank in chosen.tiers[:tier] for found in rank if found.name not in avoided]
            ledger = self.ledger
            if not any(
                fitting.within(item.need, ledger.free(found.name))  # cheap: most higher tiers are full
                and ledger.try_insert(found.name, name, item.demands, item.need).ok
                for found in higher
            ):
                continue
            removal = self.ledger.try_remove(cluster, name)
            if not removal.ok:
                continue
            self.ledger.accept(removal)
            self._place(item, cluster, failback=True)
            moved = True
        return moved

    def _retry(self, ordered: Sequence[Work]) -> bool:
        """Place again the groups that found no cluster, against the plan as it is now (so that their reasons
        do not depend on the order of placement); True if any found one."""
        found = False
        for item in ordered:
            if not item.explicit and item.group.name not in self.placed:
                found |= self._place(item, None)
        return found


def _follow_namespaces(
    needs: memory.NamespaceNeeds,
    results: Mapping[str, GroupPlan],
    source: SourceSet,
    clusters: Sequence[Cluster],
    policies: Sequence[SchedulePolicy],
) -> list[FollowedNamespace]:
    """Namespaces for every cluster that receives a namespaced object but not its Namespace."""
    defined = {
        manifest.name: manifest
        for manifest in source.workloads
        if manifest.kind == "Namespace" and manifest.group == ""
    }
    by_policy = {policy.name: policy for policy in policies}
    labels_of = {cluster.name: cluster.labels for cluster in clusters}
    followed = []
    for (cluster, namespace), group_name in sorted(needs.wanted.items()):
        if (cluster, namespace) in needs.rendered:
            continue
        found = defined.get(namespace)
        if found is None and namespace in SYSTEM_NAMESPACES:
            continue
        group = results[group_name]
        manifest = found if found is not None else _minimal_namespace(namespace, group)
        policy = by_policy.get(group.policy or "")
        overrides: tuple[FieldOverride, ...] = ()
        if policy is not None and policy.spread is not None:
            overrides = distributing.overrides_for(
                policy.spread.overrides, labels_of[cluster].get(policy.spread.topology_key), manifest
            )
        followed.append(FollowedNamespace(manifest, cluster, group.name, group.policy, overrides))
    return followed


def _minimal_namespace(name: str, group: GroupPlan) -> Manifest:
    location = group.objects[0].manifest.location
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    return Manifest(body, location, "v1", "Namespace", name, "", False)
