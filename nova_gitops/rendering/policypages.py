"""``placement/<policy>/README.md``: one policy's groups × clusters table, for reviewers and for browsing.

A code host shows a folder's README.md under its listing, so browsing ``placement/web-spread/`` shows where
that policy's groups went, next to their files. The page is proportional to the policy: its groups' rows,
their warnings and the reasons of the ones left unschedulable; the fleet's summary and capacity are the root
``PLACEMENT.md``'s (``reports``). Groups placed by an annotation have the folder ``_annotations``.

The table must stay readable from 2 clusters to 100, so the groups × clusters matrix is used only while the
fleet's clusters fit on a screen (``MATRIX_MAX_CLUSTERS``); beyond that each group row lists its clusters
compactly. Its columns are the fleet's clusters (not only the policy's), so the table's form and "all N
clusters" mean the same on every page. It is generated in code rather than from a template: the pure
rendering package reads no files.

Names in the page are code spans (``api.texts.md_code``) and reasons and warnings escaped prose
(``api.texts.md_text``): the data makes no mention, image, link or HTML. The links are ours: each group to
its file (a name validated as a path segment), the page to the root summary.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from nova_gitops.api import texts
from nova_gitops.rendering import layout, schedulegroups
from nova_gitops.scheduling.planparts import GroupPlan

MATRIX_MAX_CLUSTERS: Final = 12
"""Up to this many clusters a page draws a groups × clusters matrix; beyond, a compact list."""
_LINKABLE: Final = re.compile(r"[A-Za-z0-9._-]+")
COMPACT_MAX_NAMES: Final = 8
"""In the compact form, a group row names at most this many clusters, then says how many more."""


@dataclass(frozen=True, slots=True)
class GroupTable:
    """The form of a page's groups table: a matrix with a column per cluster (``matrix``), or one compact
    cell per group, where a group on every cluster says so (``clusters``: every cluster's name)."""

    matrix: bool
    clusters: tuple[str, ...]


Row = Callable[[GroupPlan, GroupTable], str]


def linkable(name: str) -> bool:
    """Whether a file named after ``name`` is linked as it is: nothing in it a Markdown link target would
    read otherwise, and a valid path segment."""
    return _LINKABLE.fullmatch(name) is not None and name not in (".", "..")


def group_table(cluster_names: Sequence[str]) -> GroupTable:
    """The matrix while ``MATRIX_MAX_CLUSTERS`` columns fit, else the compact form."""
    return GroupTable(len(cluster_names) <= MATRIX_MAX_CLUSTERS, tuple(cluster_names))


def page(policy: str | None, groups: Sequence[GroupPlan], table: GroupTable, row: Row | None = None) -> str:
    """The page of ``policy``'s folder (None: the annotation-placed groups), ``groups`` sorted by name.
    ``row`` gives each group's row (``group_row`` when None): an incremental render passes one that returns
    the row it kept for a group that did not change."""
    title = f"policy {texts.md_code(policy)}" if policy is not None else "groups placed by annotations"
    statuses = [group.status for group in groups]
    lines = [
        f"# Placement: {title}",
        "",
        f"{count(len(groups), 'group')} ({statuses.count('scheduled')} scheduled, "
        f"{statuses.count('delegated')} delegated, {statuses.count('unschedulable')} unschedulable); "
        "each group's decision is its file in this folder. The fleet's summary and capacity: "
        "[PLACEMENT.md](../../PLACEMENT.md).",
        "",
        "## Groups",
        "",
    ]
    lines += groups_table(groups, table, row or group_row)
    warnings = [f"{group.name}: {warning}" for group in groups for warning in group.warnings]
    if warnings:
        lines += ["", "## Warnings", ""] + [f"- {texts.md_text(warning)}" for warning in warnings]
    unschedulable = [group for group in groups if group.status == "unschedulable"]
    if unschedulable:
        lines += ["", "## Unschedulable groups", "", "| Group | Reason |", "| --- | --- |"]
        lines += [f"| {name_cell(group.name)} | {cell(group.reason)} |" for group in unschedulable]
    return "\n".join(lines) + "\n"


def groups_table(groups: Sequence[GroupPlan], table: GroupTable, row: Row) -> list[str]:
    if table.matrix:
        rows = [
            "| Group | Mode | Status | " + " | ".join(name_cell(name) for name in table.clusters) + " |",
            "| --- | --- | --- | " + " | ".join(":---:" for _ in table.clusters) + " |",
        ]
    else:
        rows = ["| Group | Mode | Status | Clusters (replicas) |", "| --- | --- | --- | --- |"]
    rows += [row(group, table) for group in groups]
    if table.matrix:
        rows += ["", "Cells: replicas placed on the cluster, or ✓ for a group without replicated objects."]
    return rows


def group_row(group: GroupPlan, table: GroupTable) -> str:
    """One group's row of the groups table: it depends on the group plan and ``table`` alone. The group's
    name links to its file, beside the page."""
    cells = group_cells(group)
    name = name_cell(group.name)
    if linkable(group.name):
        name = f"[{name}]({layout.group_file_name(group.name)})"
    row = [name, group.mode, group.status]
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
    return "| " + " | ".join([*row, cell(where or "—")]) + " |"


def group_cells(group: GroupPlan) -> dict[str, str]:
    """Cluster → what the group has there: total replicas of its replicated objects, or ✓."""
    totals: dict[str, int] = {}
    for object_plan in group.objects:
        for cluster, replicas in schedulegroups.effective_replicas(object_plan).items():
            totals[cluster] = totals.get(cluster, 0) + replicas
    return {cluster: str(totals[cluster]) if cluster in totals else "✓" for cluster in group.clusters}


def count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def cell(value: str) -> str:
    """Data as prose in a table cell (``api.texts.md_text``): one line, pipes escaped."""
    return texts.md_text(value, table=True)


def name_cell(value: str) -> str:
    """A name in a table cell, as code (``api.texts.md_code``)."""
    return texts.md_code(value, table=True)
