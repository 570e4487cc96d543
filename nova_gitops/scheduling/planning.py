"""The planner: a validated source in, a Plan out — match → group → place/spread → namespaces follow.

Order of placement (DESIGN: "Sticky groups are placed first, then new groups"): groups the previous render
placed and that did not grow — single placements, pins and spreads alike — keep their room; then groups
the previous render could not place, then those that grew, then new groups; each stage in name order. A
first render has only new groups, and a re-render of the same input only sticky ones in the same name
order, so it gives the same plan (no commit churn); a change to one workload, or a new pin, never pushes
an unchanged neighbour off its cluster. Pins and spreads take their room whatever it costs, with a warning
where it is short; capacity is consumed in placement order, so single placements never oversubscribe.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from nova_gitops.api import labels
from nova_gitops.api.clusters import Cluster
from nova_gitops.api.inputs import SourceSet
from nova_gitops.api.names import SYSTEM_NAMESPACES
from nova_gitops.api.objects import Manifest
from nova_gitops.api.policies import FieldOverride, SchedulePolicy, SpreadConstraints
from nova_gitops.api.problems import Problem
from nova_gitops.errors import InputError
from nova_gitops.scheduling import candidates, demand, distributing, grouping, intents, matching
from nova_gitops.scheduling.placing import Ledger, place_single
from nova_gitops.scheduling.plans import (
    ClusterCopy,
    ClusterUsage,
    FollowedNamespace,
    GroupPlan,
    Mode,
    ObjectPlan,
    Plan,
    PlanSettings,
    PreviousPlacement,
    Status,
    Unscheduled,
)

NO_POLICY = "no SchedulePolicy matches"


@dataclass(frozen=True, slots=True)
class _Work:
    group: grouping.Group
    policy: SchedulePolicy | None
    intent: intents.Pin | intents.SpreadOnto | None
    demands: tuple[demand.PodDemand, ...]
    need: Mapping[str, int]
    member_demands: tuple[tuple[demand.PodDemand, ...], ...]  # per member: ``demands`` is their concatenation

    @property
    def explicit(self) -> bool:
        return self.intent is not None or (self.policy is not None and self.policy.spread is not None)


def plan(
    source: SourceSet,
    *,
    previous: PreviousPlacement | None = None,
    settings: PlanSettings | None = None,
    avoid: Mapping[str, Mapping[str, str]] | None = None,
    failback: bool | Collection[str] = True,
) -> Plan:
    """Decide where every object of ``source`` goes.

    ``previous`` gives stickiness; ``avoid`` maps a group name to clusters it must not be placed on, with the
    reason (reschedule requests); ``failback=False`` keeps sticky groups on a lower tier even when a higher
    one fits (the controller, while it waits out ``--failback-after``), and a collection of group names lets
    only those fail back. Raises ``InputError`` for objects whose resource requests cannot be read.
    """
    previous = previous or PreviousPlacement.empty()
    settings = settings or PlanSettings()
    avoid = avoid or {}
    policies = sorted(source.policies, key=matching.precedence)
    clusters = sorted(source.clusters, key=lambda cluster: cluster.name)
    warnings: list[str] = []  # the source's own warnings carry file names: the CLI prints them, renders don't
    unscheduled: list[Unscheduled] = []
    overlaps: list[str] = []

    matcher = matching.Matcher(policies, source.namespace_labels)
    by_policy: dict[str, list[Manifest]] = {}
    annotated: list[tuple[Manifest, intents.Pin | intents.SpreadOnto]] = []
    for manifest in source.workloads:
        intent = intents.intent(manifest)
        if intent is not None:
            annotated.append((manifest, intent))
            continue
        found = matcher.match(manifest)
        if found.overlap_warning:
            overlaps.append(found.overlap_warning)
        if found.policy is None:
            unscheduled.append(Unscheduled(manifest.key, manifest.api_version, None, NO_POLICY))
        else:
            by_policy.setdefault(found.policy.name, []).append(manifest)

    problems: list[Problem] = []
    work = [
        _measure(group, policy, None, problems)
        for policy in sorted(policies, key=lambda policy: policy.name)
        for group in grouping.form_groups(policy.name, policy.group_by_key, by_policy.get(policy.name, ()))
    ]
    work += [
        _measure(
            grouping.form_groups(grouping.ANNOTATION_GROUP_PREFIX, None, [manifest])[0],
            None,
            intent,
            problems,
        )
        for manifest, intent in annotated
    ]
    if problems:
        raise InputError(sorted(problems))

    ledger = Ledger(clusters)
    status: Status = "delegated" if settings.delegated else "scheduled"

    def stage(item: _Work) -> tuple[int, str]:
        """Groups the previous render placed (sticky, pins and spreads alike) first, then those it could not
        place, then those that grew, then new groups; each stage in name order. A first render has only new
        groups and a re-render of the same input only sticky ones: the same order, so the same plan."""
        name = item.group.name
        if name not in previous.groups:
            return (3, name)
        before = previous.requests.get(name, {})
        grown = name in previous.requests and any(
            amount > before.get(resource, 0) for resource, amount in item.need.items()
        )
        if grown:
            return (2, name)
        return (0 if previous.groups[name] else 1, name)

    warnings += overlaps
    groups: list[GroupPlan] = []

    def record(item: _Work, group_plan: GroupPlan) -> None:
        groups.append(group_plan)
        warnings.extend(f"{group_plan.name}: {warning}" for warning in group_plan.warnings)
        if group_plan.status == "unschedulable":
            unscheduled.extend(
                Unscheduled(member.key, member.api_version, group_plan.policy, group_plan.reason)
                for member in item.group.members
            )

    # A policy's candidates depend only on the policy and the clusters: found once per plan, not per group.
    chosen = {policy.name: candidates.candidates(policy, clusters) for policy in policies}

    def place(item: _Work) -> GroupPlan:
        fails_back = failback if isinstance(failback, bool) else item.group.name in failback
        avoided = avoid.get(item.group.name, {})
        return _place(item, clusters, chosen, ledger, previous, avoided, fails_back, status)

    deferred: list[_Work] = []
    for item in sorted(work, key=stage):
        group_plan = place(item)
        if group_plan.status == "unschedulable" and not item.explicit:
            deferred.append(item)
        else:
            record(item, group_plan)
    # A group that fits nowhere is explained against the final state of the render (capacity only shrinks as
    # groups are placed, so it still fits nowhere): its reason does not depend on the order of placement.
    for item in deferred:
        record(item, place(item))
    groups.sort(key=lambda group_plan: group_plan.name)

    followed = _follow_namespaces(groups, source, clusters, policies) if settings.namespace_follow else []
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
    usage = tuple(
        ClusterUsage(
            cluster.name,
            ledger.allocatable[cluster.name],
            ledger.available[cluster.name],
            ledger.placed[cluster.name],
        )
        for cluster in clusters
    )
    return Plan(
        groups=tuple(groups),
        unscheduled=tuple(sorted(unscheduled, key=lambda entry: entry.key)),
        followed_namespaces=tuple(followed),
        clusters=usage,
        warnings=tuple(warnings),
        settings=settings,
        policy_overlaps=tuple(overlaps),
    )


def _measure(
    group: grouping.Group,
    policy: SchedulePolicy | None,
    intent: intents.Pin | intents.SpreadOnto | None,
    problems: list[Problem],
) -> _Work:
    divides = isinstance(intent, intents.SpreadOnto) and intent.mode == "Divide"
    divides = divides or bool(policy and policy.spread and policy.spread.mode == "Divide")
    per_member = distributing.member_demands(group.members, divides, problems)
    pods = tuple(pod for member_pods in per_member for pod in member_pods)
    return _Work(group, policy, intent, pods, demand.total_requests(pods), tuple(per_member))


def _single(
    item: _Work, cluster: str | None, reason: str, warnings: Sequence[str], status: Status
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
    item: _Work,
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


def _place(
    item: _Work,
    clusters: Sequence[Cluster],
    candidates_by_policy: Mapping[str, candidates.Candidates],
    ledger: Ledger,
    previous: PreviousPlacement,
    avoid: Mapping[str, str],
    failback: bool,
    status: Status,
) -> GroupPlan:
    if isinstance(item.intent, intents.Pin):
        target = next((cluster for cluster in clusters if cluster.name == item.intent.cluster), None)
        if target is None:
            reason = (
                f"Annotation {labels.CLUSTER_PIN} names cluster {item.intent.cluster}, "
                "which is not in the cluster inventory;"
            )
            return _single(item, None, reason, (), status)
        warnings = [] if target.is_candidate else [f"pinned to cluster {target.name}, which is not ready"]
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
    assert item.policy is not None
    chosen = candidates_by_policy[item.policy.name]
    if item.policy.spread is not None:
        return _spread(
            item,
            item.policy.spread,
            sorted(chosen.clusters, key=lambda c: c.name),
            f"clusters matching policy {item.policy.name} ({chosen.description})",
            ledger,
            status,
        )
    before = previous.groups.get(item.group.name, ())
    decision = place_single(
        item.policy.name,
        chosen,
        item.demands,
        item.need,
        ledger,
        previous=before[0] if len(before) == 1 else None,
        avoid=avoid,
        failback=failback,
    )
    reason = decision.reason
    if before == (decision.cluster,) and item.group.name in previous.reasons:
        reason = previous.reasons[item.group.name]  # it stays: the decision that put it there still holds
    return _single(item, decision.cluster, reason, decision.warnings, status)


def _follow_namespaces(
    groups: Sequence[GroupPlan],
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
    rendered: set[tuple[str, str]] = set()
    wanted: dict[tuple[str, str], GroupPlan] = {}
    for group in groups:  # sorted by name: the first group that pulls a namespace in names it
        for object_plan in group.objects:
            manifest = object_plan.manifest
            if manifest.kind == "Namespace" and manifest.group == "":
                rendered.update((copy.cluster, manifest.name) for copy in object_plan.copies)
            elif manifest.namespaced:
                for copy in object_plan.copies:
                    wanted.setdefault((copy.cluster, manifest.namespace), group)
    by_policy = {policy.name: policy for policy in policies}
    labels_of = {cluster.name: cluster.labels for cluster in clusters}
    followed = []
    for (cluster, namespace), group in sorted(wanted.items()):
        if (cluster, namespace) in rendered:
            continue
        found = defined.get(namespace)
        if found is None and namespace in SYSTEM_NAMESPACES:
            continue
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
