"""The plan as people and programs read it: ``placement.yaml``, ``PLACEMENT.md`` and ``.gitattributes``.

``placement.yaml`` is a contract (DESIGN §4): the next render reads it back for stickiness
(``parse_previous``), ``diff`` compares two of them, and tools outside this project may read it. Its shape is
the one DESIGN §4 shows, plus a ``clusters`` section (each cluster's allocatable, available and placed
totals as Kubernetes quantity strings) appended last so the documented keys keep their order. Every list is
sorted here, whatever order the plan holds, so equivalent plans give identical bytes.

``PLACEMENT.md`` is for reviewers of a pull request. It must stay readable from 2 clusters to 100 clusters ×
2,000 groups, so the clusters × groups matrix is used only while it fits on a screen
(``MATRIX_MAX_CLUSTERS``); beyond that each group row lists its clusters compactly, and capacity is a table
of its own. It is generated in code rather than from a template: the pure rendering package reads no files.
With a RolloutStrategy, the capacity table also names each cluster's wave (the order a change reaches
them); without one it is as it was, so renders without rollouts keep their bytes.

Names, reasons and warnings in PLACEMENT.md are data (a source, agents' reports): names go in code spans
(``api.texts.md_code``), the rest is escaped prose (``api.texts.md_text``), so the page a reviewer reads
shows every hidden character as an escape and makes no mention, image, link or HTML of the data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from nova_gitops.api import labels, loading, quantities, texts
from nova_gitops.api.objects import ObjectKey
from nova_gitops.rendering import manifests, oldlayout
from nova_gitops.rollouts.waves import Wave
from nova_gitops.scheduling.plans import ClusterUsage, GroupPlan, ObjectPlan, Plan, PreviousPlacement

GITATTRIBUTES: Final = "placement.yaml linguist-generated=true\nPLACEMENT.md linguist-generated=true\n"
"""Collapses the two generated reports in GitHub/GitLab diffs; the manifests stay visible for review."""

MATRIX_MAX_CLUSTERS: Final = 12
"""Up to this many clusters PLACEMENT.md draws a groups × clusters matrix; beyond, a compact list."""
COMPACT_MAX_NAMES: Final = 8
"""In the compact form, a group row names at most this many clusters, then says how many more."""
_FIRST_RESOURCES: Final = ("cpu", "memory")
_PLACEMENT_GROUP: Final = labels.PLACEMENT_API_VERSION.split("/")[0]


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """Where the rendered source came from: a URL or path, and a commit (None for a work tree)."""

    repo: str
    revision: str | None


def placement_document(plan: Plan, source: SourceInfo) -> dict[str, Any]:
    """``placement.yaml`` as data, in the key order of DESIGN §4."""
    head, groups, tail = placement_parts(plan, source)
    return {**head, "groups": groups, **tail}


def placement_parts(
    plan: Plan, source: SourceInfo
) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """``placement.yaml`` in three parts: the keys before ``groups``, the group entries, the keys after.
    Group entries are most of the file and rarely change, so a renderer may emit them one by one."""
    groups = [group_entry(group) for group in sorted(plan.groups, key=lambda group: group.name)]
    return placement_head(source), groups, placement_tail(plan)


def placement_head(source: SourceInfo) -> dict[str, Any]:
    """The keys of ``placement.yaml`` before ``groups``."""
    return {
        "apiVersion": labels.PLACEMENT_API_VERSION,
        "kind": "Placement",
        "source": {"repo": source.repo, "revision": source.revision},
    }


def placement_tail(plan: Plan) -> dict[str, Any]:
    """The keys of ``placement.yaml`` after ``groups``."""
    return {
        "unscheduled": [
            {
                **_identity(item.api_version, item.key),
                "policy": item.policy,
                "reason": item.reason,
            }
            for item in sorted(plan.unscheduled, key=lambda item: item.key)
        ],
        "warnings": list(plan.warnings),
        "clusters": [
            _cluster_entry(usage) for usage in sorted(plan.clusters, key=lambda usage: usage.cluster)
        ],
    }


def parse_previous(text: str) -> PreviousPlacement:
    """The group → clusters decisions of a previous ``placement.yaml``. Unknown fields are ignored; a
    document that is not a Placement raises ValueError saying what is wrong."""
    try:
        document = oldlayout.load(text)
    except loading.YamlRefused as error:
        raise ValueError(f"previous placement.yaml is not valid YAML: {error}") from None
    if not isinstance(document, dict):
        raise ValueError("previous placement.yaml must be a mapping with kind: Placement")
    if document.get("kind") != "Placement":
        raise ValueError(f"previous placement.yaml has kind {document.get('kind')!r}, expected 'Placement'")
    api_version = document.get("apiVersion")
    if not isinstance(api_version, str) or not api_version.startswith(_PLACEMENT_GROUP + "/"):
        expected = labels.PLACEMENT_API_VERSION
        raise ValueError(f"previous placement.yaml has apiVersion {api_version!r}, expected {expected!r}")
    groups = document.get("groups")
    groups = [] if groups is None else groups
    if not isinstance(groups, list):
        raise ValueError("previous placement.yaml: groups must be a list")
    decided: dict[str, tuple[str, ...]] = {}
    reasons: dict[str, str] = {}
    requests: dict[str, dict[str, int]] = {}
    for index, entry in enumerate(groups):
        where = f"previous placement.yaml: groups[{index}]"
        if not isinstance(entry, dict):
            raise ValueError(f"{where} must be a mapping")
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"{where}.name must be a non-empty string")
        clusters = entry.get("clusters")
        clusters = [] if clusters is None else clusters
        if not isinstance(clusters, list) or not all(isinstance(c, str) and c for c in clusters):
            raise ValueError(f"{where}.clusters must be a list of cluster names")
        if name in decided:
            raise ValueError(f"{where}: group {name!r} is listed twice")
        decided[name] = tuple(clusters)
        if isinstance(entry.get("reason"), str):
            reasons[name] = entry["reason"]
        raw_requests = entry.get("requests")
        if isinstance(raw_requests, dict):
            try:
                requests[name] = {str(res): quantities.parse_quantity(v) for res, v in raw_requests.items()}
            except quantities.QuantityError as error:
                raise ValueError(f"{where}.requests: {error}") from None
    return PreviousPlacement(groups=decided, reasons=reasons, requests=requests)


def previous_of(plan: Plan) -> PreviousPlacement:
    """What ``parse_previous`` reads back from this plan's placement.yaml, without writing and parsing it."""
    return PreviousPlacement(
        groups={group.name: tuple(sorted(group.clusters)) for group in plan.groups},
        reasons={group.name: group.reason for group in plan.groups},
        requests={group.name: dict(group.requests) for group in plan.groups if group.requests},
    )


def effective_replicas(object_plan: ObjectPlan) -> dict[str, int]:
    """Replicas per cluster as rendered (the copy's, else the source's, unless an override sets them);
    empty for kinds without replicas."""
    manifest = object_plan.manifest
    field = manifests.replica_field(manifest)
    if field is None:
        return {}
    default = manifests.source_replicas(manifest)
    replicas: dict[str, int] = {}
    for copy in sorted(object_plan.copies, key=lambda copy: copy.cluster):
        count = copy.replicas if copy.replicas is not None else default
        for override in copy.overrides:
            value = override.value
            if override.path.segments == field and isinstance(value, int) and not isinstance(value, bool):
                count = value
        if count is not None:
            replicas[copy.cluster] = count
    return replicas


def placement_markdown(
    plan: Plan,
    source: SourceInfo,
    *,
    waves: Sequence[Wave] = (),
    row: Callable[[GroupPlan, GroupTable], str] | None = None,
) -> str:
    """``PLACEMENT.md``: summary, groups (matrix or compact), capacity, warnings, unscheduled objects.
    With ``waves`` (the source has a RolloutStrategy), the capacity table says each cluster's wave.

    ``row`` gives each group's row of the groups table (``group_row`` when None): an incremental render
    passes one that returns the row it kept from the previous render for a group that did not change."""
    groups = sorted(plan.groups, key=lambda group: group.name)
    usages = sorted(plan.clusters, key=lambda usage: usage.cluster)
    cluster_names = sorted({usage.cluster for usage in usages} | {c for g in groups for c in g.clusters})
    lines = ["# Placement", "", f"Source: {texts.md_code(source.repo)} at {_revision(source.revision)}", ""]
    statuses = [group.status for group in groups]
    warnings = _warnings(plan, groups)
    lines.append(
        f"{_count(len(groups), 'group')} ({statuses.count('scheduled')} scheduled, "
        f"{statuses.count('delegated')} delegated, {statuses.count('unschedulable')} unschedulable) "
        f"on {_count(len(cluster_names), 'cluster')}; {_count(len(plan.unscheduled), 'object')} unscheduled; "
        f"{_count(len(warnings), 'warning')}."
    )
    lines += ["", "## Groups", ""]
    if not groups:
        lines.append("No groups.")
    else:
        lines += _groups_table(groups, group_table(cluster_names), row or group_row)
    lines += ["", "## Capacity", ""]
    lines += _capacity(usages, groups, waves) if usages else ["No cluster reported capacity."]
    if warnings:
        lines += ["", "## Warnings", ""] + [f"- {texts.md_text(warning)}" for warning in warnings]
    unschedulable = [group for group in groups if group.status == "unschedulable"]
    if unschedulable:
        lines += ["", "## Unschedulable groups", "", "| Group | Policy | Reason |", "| --- | --- | --- |"]
        lines += [
            f"| {_name(g.name)} | {_cell(g.policy or '(annotation)')} | {_cell(g.reason)} |"
            for g in unschedulable
        ]
    if plan.unscheduled:
        lines += ["", "## Unscheduled objects", "", "| Object | Policy | Reason |", "| --- | --- | --- |"]
        for item in sorted(plan.unscheduled, key=lambda item: item.key):
            lines.append(f"| {_name(str(item.key))} | {_cell(item.policy or '—')} | {_cell(item.reason)} |")
    return "\n".join(lines) + "\n"


def group_entry(group: GroupPlan) -> dict[str, Any]:
    """One group's entry in ``placement.yaml``: it depends only on the group plan (its name, policy, groupBy,
    mode, status, clusters, reason, objects and their copies, requests and warnings)."""
    entry: dict[str, Any] = {
        "name": group.name,
        "policy": group.policy,
        "groupBy": {"key": group.group_by[0], "value": group.group_by[1]} if group.group_by else None,
        "mode": group.mode,
        "status": group.status,
        "clusters": sorted(group.clusters),
        "reason": group.reason,
        "objects": [
            _object_entry(plan) for plan in sorted(group.objects, key=lambda plan: plan.manifest.key)
        ],
    }
    if group.requests:
        entry["requests"] = {
            resource: quantities.format_quantity(resource, amount)
            for resource, amount in sorted(group.requests.items())
        }
    if group.warnings:
        entry["warnings"] = list(group.warnings)
    return entry


def _object_entry(object_plan: ObjectPlan) -> dict[str, Any]:
    manifest = object_plan.manifest
    entry = _identity(manifest.api_version, manifest.key)
    replicas = effective_replicas(object_plan)
    if replicas:
        entry["replicas"] = replicas
    return entry


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


def _group_cells(group: GroupPlan) -> dict[str, str]:
    """Cluster → what the group has there: total replicas of its replicated objects, or ✓."""
    totals: dict[str, int] = {}
    for object_plan in group.objects:
        for cluster, count in effective_replicas(object_plan).items():
            totals[cluster] = totals.get(cluster, 0) + count
    return {cluster: str(totals[cluster]) if cluster in totals else "✓" for cluster in group.clusters}


@dataclass(frozen=True, slots=True)
class GroupTable:
    """The form of PLACEMENT.md's groups table: a matrix with a column per cluster (``matrix``), or one
    compact cell per group, where a group on every cluster says so (``clusters``: every cluster's name)."""

    matrix: bool
    clusters: tuple[str, ...]


def group_table(cluster_names: Sequence[str]) -> GroupTable:
    """The matrix while ``MATRIX_MAX_CLUSTERS`` columns fit, else the compact form."""
    return GroupTable(len(cluster_names) <= MATRIX_MAX_CLUSTERS, tuple(cluster_names))


def group_row(group: GroupPlan, table: GroupTable) -> str:
    """One group's row of the groups table: it depends on the group plan and ``table`` alone."""
    cells = _group_cells(group)
    row = [_name(group.name), _cell(group.policy or "(annotation)"), group.mode, group.status]
    if table.matrix:
        row += [cells.get(name, "") for name in table.clusters]
        return "| " + " | ".join(row) + " |"
    names = sorted(cells)
    if len(names) > 1 and tuple(names) == table.clusters:  # both sorted, without repeats
        where = f"all {len(names)} clusters"
    else:
        shown = [name if cells[name] == "✓" else f"{name} ({cells[name]})" for name in names]
        more = len(shown) - COMPACT_MAX_NAMES
        where = ", ".join(shown[:COMPACT_MAX_NAMES]) + (f", … and {more} more" if more > 0 else "")
    return "| " + " | ".join([*row, _cell(where or "—")]) + " |"


def _groups_table(
    groups: list[GroupPlan], table: GroupTable, row: Callable[[GroupPlan, GroupTable], str]
) -> list[str]:
    if table.matrix:
        rows = [
            "| Group | Policy | Mode | Status | " + " | ".join(_name(name) for name in table.clusters) + " |",
            "| --- | --- | --- | --- | " + " | ".join(":---:" for _ in table.clusters) + " |",
        ]
    else:
        rows = ["| Group | Policy | Mode | Status | Clusters (replicas) |", "| --- | --- | --- | --- | --- |"]
    rows += [row(group, table) for group in groups]
    if table.matrix:
        rows += ["", "Cells: replicas placed on the cluster, or ✓ for a group without replicated objects."]
    return rows


def _capacity(usages: list[ClusterUsage], groups: list[GroupPlan], waves: Sequence[Wave]) -> list[str]:
    """One row per cluster: its wave (only with waves), its groups, each resource used and free."""
    resources = _resource_order(name for usage in usages for name in usage.allocatable)
    group_counts: dict[str, int] = {}
    for group in groups:
        for cluster in set(group.clusters):
            group_counts[cluster] = group_counts.get(cluster, 0) + 1
    wave_of = {
        cluster: f"{index}. {_cell(wave.name)}"
        for index, wave in enumerate(waves, 1)
        for cluster in wave.clusters
    }
    wave_head, wave_rule = ("Wave | ", "--- | ") if waves else ("", "")
    header = (
        f"| Cluster | {wave_head}Groups | " + " | ".join(f"{name} used / free" for name in resources) + " |"
    )
    rows = [header, f"| --- | {wave_rule}---: | " + " | ".join("---:" for _ in resources) + " |"]
    for usage in usages:
        cells = [_name(usage.cluster), str(group_counts.get(usage.cluster, 0))]
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


def _warnings(plan: Plan, groups: list[GroupPlan]) -> list[str]:
    """Plan warnings, then each group's own ones (prefixed with the group), without repeats."""
    seen: dict[str, None] = dict.fromkeys(plan.warnings)
    for group in groups:
        for warning in group.warnings:
            seen.setdefault(f"{group.name}: {warning}")
    return list(seen)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _revision(revision: str | None) -> str:
    return texts.md_code(revision) if revision else "the working tree (no commit)"


def _cell(value: str) -> str:
    """Data as prose in a table cell (``api.texts.md_text``): one line, pipes escaped."""
    return texts.md_text(value, table=True)


def _name(value: str) -> str:
    """A name in a table cell, as code (``api.texts.md_code``)."""
    return texts.md_code(value, table=True)
