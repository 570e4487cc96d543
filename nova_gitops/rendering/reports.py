"""The fleet as people and programs read it at the root: placement.yaml, PLACEMENT.md, .gitattributes.

Each group's decision is a file of its own (``schedulegroups``: ``placement/<policy>/<group>.yaml``), and each
policy's groups × clusters table is its folder's page (``policypages``). What stays at the root is what is
fleet-wide and small (docs/design.md §4), O(policies + clusters), never O(groups):

- ``placement.yaml``, the index: the source and its revision, the format version (``FORMAT``), totals, one
  entry per policy (its folder and its groups' counts by status), the unscheduled objects, the warnings that
  are no group's (policies overlapping on an object), and each cluster's allocatable, available and placed
  totals as Kubernetes quantity strings. Every list is sorted, so equal plans give identical bytes. Its
  ``source`` and ``clusters`` sections describe rather than decide (``diffs.VOLATILE_SECTIONS``).
- ``PLACEMENT.md``, the summary for reviewers: counts, a table of the policies linking to their pages, the
  capacity table (with a RolloutStrategy, each cluster's wave: the order a change reaches them; without one
  it is as it was, so renders without rollouts keep their bytes), the fleet-wide warnings, the
  unscheduled objects and, when the render was asked for it (``--headroom``: one plan per cluster), the
  failover headroom: one line per cluster saying what its loss would strand (``failovers``).
- ``.gitattributes`` collapses the summaries in code-host diffs; the group files and manifests stay visible,
  since they are what a reviewer reviews.

Names, reasons and warnings in PLACEMENT.md are data (a source, agents' reports): names go in code spans
(``api.texts.md_code``), the rest is escaped prose (``api.texts.md_text``), so the page a reviewer reads
shows every hidden character as an escape and makes no mention, image, link or HTML of the data.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from nova_gitops.api import labels, quantities, texts
from nova_gitops.api.objects import ObjectKey
from nova_gitops.rendering import failovers, layout, policypages
from nova_gitops.rendering.policypages import cell, count, name_cell
from nova_gitops.rollouts.waves import Wave
from nova_gitops.scheduling.planparts import ClusterUsage, GroupPlan, Status
from nova_gitops.scheduling.plans import Plan, PreviousPlacement

FORMAT: Final = 2
"""The rendered repository's layout: 2 is one file per group with this index (1, unwritten, the single
file that held every group)."""
GITATTRIBUTES: Final = (
    "placement.yaml linguist-generated=true\n"
    "PLACEMENT.md linguist-generated=true\n"
    "placement/*/README.md linguist-generated=true\n"
)
"""Collapses the generated summaries in GitHub/GitLab diffs; group files and manifests stay visible."""
_FIRST_RESOURCES: Final = ("cpu", "memory")
_STATUSES: Final[tuple[Status, ...]] = ("scheduled", "delegated", "unschedulable")


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """Where the rendered source came from: a URL or path, and a commit (None for a work tree)."""

    repo: str
    revision: str | None


@dataclass(frozen=True, slots=True)
class PolicyCounts:
    """One policy's groups by status (``policy`` None: the groups placed by an annotation)."""

    policy: str | None
    groups: int
    scheduled: int
    delegated: int
    unschedulable: int


def policy_counts(groups: Iterable[GroupPlan]) -> list[PolicyCounts]:
    """Per policy, its groups' counts; policies by name, the annotation-placed groups last."""
    counted: dict[str | None, dict[str, int]] = {}
    for group in groups:
        numbers = counted.setdefault(group.policy, dict.fromkeys(_STATUSES, 0))
        numbers[group.status] += 1
    order = sorted(counted, key=lambda policy: (policy is None, policy or ""))
    return [PolicyCounts(policy, sum(counted[policy].values()), **counted[policy]) for policy in order]


def group_warnings(groups: Iterable[GroupPlan]) -> list[str]:
    """Each group's warnings, prefixed with the group's name, as the plan lists them."""
    return [f"{group.name}: {warning}" for group in groups for warning in group.warnings]


def fleet_warnings(plan: Plan) -> list[str]:
    """The plan's warnings that are no group's (those are in the group's file and page)."""
    own = set(group_warnings(plan.groups))
    return [warning for warning in dict.fromkeys(plan.warnings) if warning not in own]


def placement_document(plan: Plan, source: SourceInfo) -> dict[str, Any]:
    """``placement.yaml``, the index, as data, in the key order of docs/design.md §4."""
    policies = policy_counts(plan.groups)
    return {
        "apiVersion": labels.PLACEMENT_API_VERSION,
        "kind": "Placement",
        "format": FORMAT,
        "source": {"repo": source.repo, "revision": source.revision},
        "totals": {
            "groups": len(plan.groups),
            **{status: sum(getattr(entry, status) for entry in policies) for status in _STATUSES},
            "unscheduledObjects": len(plan.unscheduled),
            "clusters": len(cluster_names(plan)),
        },
        "policies": [
            {
                "name": entry.policy,
                "folder": layout.placement_folder(entry.policy),
                "groups": entry.groups,
                **{status: getattr(entry, status) for status in _STATUSES},
            }
            for entry in policies
        ],
        "unscheduled": [
            {**_identity(item.api_version, item.key), "policy": item.policy, "reason": item.reason}
            for item in sorted(plan.unscheduled, key=lambda item: item.key)
        ],
        "warnings": fleet_warnings(plan),
        "clusters": [
            _cluster_entry(usage) for usage in sorted(plan.clusters, key=lambda usage: usage.cluster)
        ],
    }


def cluster_names(plan: Plan) -> list[str]:
    """Every cluster of the plan: its inventory and any a group was placed on, sorted."""
    return sorted({usage.cluster for usage in plan.clusters} | {c for g in plan.groups for c in g.clusters})


def previous_of(plan: Plan) -> PreviousPlacement:
    """What reading this plan's group files back gives (``schedulegroups.previous_from_files``), without
    writing and parsing them."""
    return PreviousPlacement(
        groups={group.name: tuple(sorted(group.clusters)) for group in plan.groups},
        reasons={group.name: group.reason for group in plan.groups},
        requests={group.name: dict(group.requests) for group in plan.groups if group.requests},
    )


def placement_markdown(plan: Plan, source: SourceInfo, *, waves: Sequence[Wave] = ()) -> str:
    """``PLACEMENT.md``: summary, policies (linking to their pages), capacity, the fleet-wide warnings,
    unscheduled objects, and the failover headroom when the plan carries it. With ``waves`` (the source
    has a RolloutStrategy), the capacity table says each cluster's wave."""
    usages = sorted(plan.clusters, key=lambda usage: usage.cluster)
    policies = policy_counts(plan.groups)
    warnings = fleet_warnings(plan)
    in_groups = len(dict.fromkeys(group_warnings(plan.groups)))
    lines = ["# Placement", "", f"Source: {texts.md_code(source.repo)} at {_revision(source.revision)}", ""]
    totals = {status: sum(getattr(entry, status) for entry in policies) for status in _STATUSES}
    clusters, unscheduled = count(len(cluster_names(plan)), "cluster"), count(len(plan.unscheduled), "object")
    lines.append(
        f"{count(len(plan.groups), 'group')} ({totals['scheduled']} scheduled, {totals['delegated']} "
        f"delegated, {totals['unschedulable']} unschedulable) on {clusters}; {unscheduled} unscheduled; "
        f"{count(len(warnings) + in_groups, 'warning')}."
    )
    lines += ["", "## Policies", ""]
    if not policies:
        lines.append("No groups.")
    else:
        lines += [
            "| Policy | Groups | Scheduled | Delegated | Unschedulable |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        for entry in policies:
            numbers = [str(getattr(entry, field)) for field in ("groups", *_STATUSES)]
            lines.append(f"| {_policy_link(entry.policy)} | " + " | ".join(numbers) + " |")
        lines += [
            "",
            "A policy's page shows its groups × clusters; each group's decision is a file beside it.",
        ]
    lines += ["", "## Capacity", ""]
    lines += _capacity(usages, plan.groups, waves) if usages else ["No cluster reported capacity."]
    if warnings or in_groups:
        lines += ["", "## Warnings", ""] + [f"- {texts.md_text(warning)}" for warning in warnings]
        for policy, number in _warned_policies(plan.groups).items():
            lines.append(f"- {_policy_link(policy)}: {count(number, 'warning')} of its groups, on its page")
    if plan.unscheduled:
        lines += ["", "## Unscheduled objects", "", "| Object | Policy | Reason |", "| --- | --- | --- |"]
        for item in sorted(plan.unscheduled, key=lambda item: item.key):
            lines.append(f"| {name_cell(str(item.key))} | {cell(item.policy or '—')} | {cell(item.reason)} |")
    if plan.failover is not None:  # ``--headroom``: one plan per cluster, so only when asked
        lines += ["", *failovers.placement_section(plan.failover, plan.settings.headroom_domain)]
    return "\n".join(lines) + "\n"


def _policy_link(policy: str | None) -> str:
    """The policy's name (a code span; annotation-placed groups: "(annotation)") linking to its page; not
    linked when the name is not a plain file name (policy names are DNS-1123: never, but it is data)."""
    if policy is None:
        return f"[(annotation)]({layout.placement_folder(None)}/{layout.PAGE_FILE})"
    if not policypages.linkable(policy):
        return name_cell(policy)
    return f"[{name_cell(policy)}]({layout.placement_folder(policy)}/{layout.PAGE_FILE})"


def _warned_policies(groups: Iterable[GroupPlan]) -> dict[str | None, int]:
    """How many distinct warnings each policy's groups have, policies as ``policy_counts`` orders them."""
    found: dict[str | None, dict[str, None]] = {}
    for group in groups:
        for warning in group.warnings:
            found.setdefault(group.policy, {})[f"{group.name}: {warning}"] = None
    order = sorted(found, key=lambda policy: (policy is None, policy or ""))
    return {policy: len(found[policy]) for policy in order}


def _identity(api_version: str, key: ObjectKey) -> dict[str, Any]:
    """apiVersion, kind, namespace (only for namespaced objects), name."""
    entry: dict[str, Any] = {"apiVersion": api_version, "kind": key.kind}
    if key.namespace:
        entry["namespace"] = key.namespace
    entry["name"] = key.name
    return entry


def _cluster_entry(usage: ClusterUsage) -> dict[str, Any]:
    return {
        "name": usage.cluster,
        "allocatable": _quantities(usage.allocatable),
        "available": _quantities(usage.available),
        "placed": _quantities(usage.placed),
    }


def _quantities(resources: Mapping[str, int]) -> dict[str, str]:
    return {name: quantities.format_quantity(name, resources[name]) for name in _resource_order(resources)}


def _resource_order(names: Iterable[str]) -> list[str]:
    """cpu, memory, then the others by name."""
    return sorted(set(names), key=lambda name: (name not in _FIRST_RESOURCES, _rank(name), name))


def _rank(name: str) -> int:
    return _FIRST_RESOURCES.index(name) if name in _FIRST_RESOURCES else 0


def _capacity(usages: list[ClusterUsage], groups: Iterable[GroupPlan], waves: Sequence[Wave]) -> list[str]:
    """One row per cluster: its wave (only with waves), its groups, each resource used and free."""
    resources = _resource_order(name for usage in usages for name in usage.allocatable)
    group_counts: dict[str, int] = {}
    for group in groups:
        for cluster in set(group.clusters):
            group_counts[cluster] = group_counts.get(cluster, 0) + 1
    wave_of = {
        cluster: f"{index}. {cell(wave.name)}"
        for index, wave in enumerate(waves, 1)
        for cluster in wave.clusters
    }
    wave_head, wave_rule = ("Wave | ", "--- | ") if waves else ("", "")
    header = (
        f"| Cluster | {wave_head}Groups | " + " | ".join(f"{name} used / free" for name in resources) + " |"
    )
    rows = [header, f"| --- | {wave_rule}---: | " + " | ".join("---:" for _ in resources) + " |"]
    for usage in usages:
        cells = [name_cell(usage.cluster), str(group_counts.get(usage.cluster, 0))]
        if waves:
            cells.insert(1, wave_of.get(usage.cluster, "—"))
        for name in resources:
            if name not in usage.allocatable:
                cells.append("—")
                continue
            allocatable = usage.allocatable[name]
            available = usage.available.get(name, 0)
            placed = usage.placed.get(name, 0)
            used = allocatable - available + placed
            free = available - placed
            cells.append(
                f"{quantities.format_quantity(name, used)} / {quantities.format_quantity(name, free)}"
            )
        rows.append("| " + " | ".join(cells) + " |")
    rows += [
        "",
        "Used: requests of other pods plus what this plan placed. Free: what is left for new groups.",
    ]
    if waves:
        rows.append("")
        rows.append(
            "Wave: the RolloutStrategy wave that releases a change to the cluster, in order (`others`: the "
            "clusters no wave selects, released last)."
        )
    return rows


def _revision(revision: str | None) -> str:
    return texts.md_code(revision) if revision else "the working tree (no commit)"
