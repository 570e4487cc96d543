"""The planner: a validated source in, a Plan out — match → group → measure → place → namespaces follow.

Placement goes component by component (``componentplanning``), each in the order the placer's stages keep
(``placementstages``: explicit intents, then sticky groups, then the rest, then failing back), and the
namespaces follow the objects placed (``namespacefollowing``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from nova_gitops.api import kinds, podshapes
from nova_gitops.api.clusters import Cluster
from nova_gitops.api.inputs import SourceSet
from nova_gitops.api.objects import Manifest
from nova_gitops.api.policies import SchedulePolicy
from nova_gitops.api.problems import Problem
from nova_gitops.errors import InputError
from nova_gitops.scheduling import (
    candidates,
    demand,
    distributing,
    grouping,
    intents,
    matching,
    memory,
)
from nova_gitops.scheduling.componentplanning import place_components
from nova_gitops.scheduling.memory import PlanMemory
from nova_gitops.scheduling.namespacefollowing import follow_namespaces
from nova_gitops.scheduling.planparts import Status
from nova_gitops.scheduling.plans import (
    NO_POLICY,
    FollowedNamespace,
    Plan,
    PlanSettings,
    PreviousPlacement,
    Unscheduled,
)
from nova_gitops.scheduling.recalling import Recall, Work


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
    policies = sorted(source.policies, key=matching.precedence)
    clusters = sorted(source.clusters, key=lambda cluster: cluster.name)
    recall = None if file_digests is None else Recall(recalled or memory.EMPTY, file_digests, source)
    decided = _decide_all(source, policies, recall)
    work = _measure_all(source, policies, decided, recall)
    status: Status = "delegated" if settings.delegated else "scheduled"
    chosen = _chosen(policies, clusters, recall)
    results, usage, needs = place_components(
        work, clusters, chosen, previous, avoid or {}, failback, status, recall, partitioned
    )
    # the source's own warnings carry file names: the CLI prints them, renders don't
    warnings = list(decided.overlaps)
    unscheduled = list(decided.unscheduled)
    groups = [results[name] for name in sorted(results)]
    for item, group_plan in zip(sorted(work, key=lambda item: item.group.name), groups, strict=True):
        warnings.extend(f"{group_plan.name}: {warning}" for warning in group_plan.warnings)
        if group_plan.status == "unschedulable":
            unscheduled.extend(
                Unscheduled(member.key, member.api_version, group_plan.policy, group_plan.reason)
                for member in item.group.members
            )
    followed = (
        follow_namespaces(needs, results, source, clusters, policies) if settings.namespace_follow else []
    )
    return Plan(
        groups=tuple(groups),
        unscheduled=tuple(sorted(_not_followed(unscheduled, followed), key=lambda entry: entry.key)),
        followed_namespaces=tuple(followed),
        clusters=tuple(usage[cluster.name] for cluster in clusters),
        warnings=tuple(warnings),
        settings=settings,
        policy_overlaps=tuple(decided.overlaps),
        memory=recall.built() if recall is not None else None,
    )


def _chosen(
    policies: Sequence[SchedulePolicy], clusters: Sequence[Cluster], recall: Recall | None
) -> dict[str, candidates.Candidates]:
    """Each policy's candidates: they depend only on the policy and the clusters, so they are found once
    per plan, not per group."""
    if recall is None:
        return {policy.name: candidates.candidates(policy, clusters) for policy in policies}
    return {policy.name: recall.candidates(policy, clusters) for policy in policies}


@dataclass(frozen=True, slots=True)
class _Decided:
    """Each workload's decision: its policy's workloads, the annotated ones with their intent, those no
    policy matches, and the warnings of those several match."""

    by_policy: Mapping[str, Sequence[Manifest]]
    annotated: Sequence[tuple[Manifest, intents.Pin | intents.SpreadOnto]]
    unscheduled: Sequence[Unscheduled]
    overlaps: Sequence[str]


def _decide_all(source: SourceSet, policies: Sequence[SchedulePolicy], recall: Recall | None) -> _Decided:
    """Match every workload: an annotation's intent, else the policy that matches it."""
    matcher = matching.Matcher(policies, source.namespace_labels)

    def decide(manifest: Manifest) -> memory.Decision:
        intent = intents.intent(manifest)
        if intent is not None:
            return (intent, None, None)
        found = matcher.match(manifest)
        return (None, found.policy.name if found.policy else None, found.overlap_warning)

    by_policy: dict[str, list[Manifest]] = {}
    annotated: list[tuple[Manifest, intents.Pin | intents.SpreadOnto]] = []
    unscheduled: list[Unscheduled] = []
    overlaps: list[str] = []
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
    return _Decided(by_policy, annotated, unscheduled, overlaps)


def _measure_all(
    source: SourceSet, policies: Sequence[SchedulePolicy], decided: _Decided, recall: Recall | None
) -> list[Work]:
    """Every group, each policy's in name order and then each annotated workload's own, with its pods;
    raises ``InputError`` for objects whose resource requests cannot be read."""

    def groups_of(policy: SchedulePolicy) -> list[grouping.Group]:
        found = decided.by_policy.get(policy.name, ())
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
        for manifest, intent in decided.annotated
    ]
    if problems:
        raise InputError(sorted(problems))
    return work


def _not_followed(
    unscheduled: Sequence[Unscheduled], followed: Sequence[FollowedNamespace]
) -> list[Unscheduled]:
    """The unscheduled objects but the Namespaces that follow the objects placed in them."""
    followed_keys = {(namespace.manifest.kind, namespace.manifest.name) for namespace in followed}
    return [
        entry
        for entry in unscheduled
        if not (
            entry.key.kind == "Namespace"
            and entry.key.group == ""
            and ("Namespace", entry.key.name) in followed_keys
        )
    ]


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
