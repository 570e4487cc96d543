"""A what-if as ``diff`` shows a change (``diffformats``: text, Markdown, JSON), then what becomes
unschedulable and what it lacks (``headroomformats.stranded_line``), then each cluster's capacity after.

The capacity table is PLACEMENT.md's, after the change: per cluster its groups, and per resource what is
used (the other pods' requests plus what the plan placed) and free (what is left for new groups), with
today's free room beside it where the change altered it; a cluster the change removed is listed as lost.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nova_gitops.api import texts
from nova_gitops.rendering import diffformats, headroomformats
from nova_gitops.rendering.diffs import RenderDiff
from nova_gitops.scheduling import stranding
from nova_gitops.scheduling.planparts import ClusterUsage
from nova_gitops.scheduling.plans import Plan
from nova_gitops.scheduling.whatif import WhatIf

LOST = "lost"


@dataclass(frozen=True, slots=True)
class CapacityRow:
    cluster: str
    groups: int | None  # None: the cluster is lost
    used: Mapping[str, int]
    free: Mapping[str, int]
    free_today: Mapping[str, int]  # today's free room of the resources whose free room changed


def capacity_rows(result: WhatIf) -> list[CapacityRow]:
    """Each cluster of today's or the what-if's inventory, by name, with its capacity after the change."""
    today = {usage.cluster: usage for usage in result.before.clusters}
    after = {usage.cluster: usage for usage in result.after.clusters}
    counts = _group_counts(result.after)
    rows: list[CapacityRow] = []
    for name in sorted(today.keys() | after.keys()):
        usage = after.get(name)
        if usage is None:
            rows.append(CapacityRow(name, None, {}, {}, {}))
            continue
        free = stranding.free_room(usage)
        before = stranding.free_room(today[name]) if name in today else None  # None: a new cluster
        changed = {
            resource: before.get(resource, 0)
            for resource in free
            if before is not None and before.get(resource) != free[resource]
        }
        rows.append(CapacityRow(name, counts.get(name, 0), _used(usage), free, changed))
    return rows


def _group_counts(plan: Plan) -> dict[str, int]:
    counts: dict[str, int] = {}
    for group in plan.groups:
        for cluster in group.clusters:
            counts[cluster] = counts.get(cluster, 0) + 1
    return counts


def _used(usage: ClusterUsage) -> dict[str, int]:
    """The other pods' requests plus what the plan placed."""
    resources = set(usage.allocatable) | set(usage.placed)
    return {
        name: usage.allocatable.get(name, 0) - usage.available.get(name, 0) + usage.placed.get(name, 0)
        for name in resources
    }


def _resources(rows: Sequence[CapacityRow]) -> list[str]:
    return headroomformats.resource_order({name for row in rows for name in row.free})


def _cell(row: CapacityRow, resource: str) -> str:
    if row.groups is None:
        return LOST
    if resource not in row.free:
        return "—"
    text = f"{_quantity(resource, row.used[resource])} / {_quantity(resource, row.free[resource])}"
    if resource in row.free_today:
        text += f" (was {_quantity(resource, row.free_today[resource])})"
    return text


def _quantity(resource: str, milli: int) -> str:
    sign = "-" if milli < 0 else ""
    return sign + headroomformats.amount(resource, abs(milli))


def capacity_table(rows: Sequence[CapacityRow]) -> tuple[list[str], list[list[str]]]:
    resources = _resources(rows)
    headers = ["CLUSTER", "GROUPS", *(f"{name.upper()} USED / FREE" for name in resources)]
    body = [
        [
            row.cluster,
            LOST if row.groups is None else str(row.groups),
            *(_cell(row, name) for name in resources),
        ]
        for row in rows
    ]
    return headers, body


def heading(result: WhatIf) -> str:
    return "What if " + " ".join(str(change) for change in result.changes)


def to_text(result: WhatIf, diff: RenderDiff, *, colour: bool = False) -> str:
    out = [
        texts.one_line(heading(result)) + "\n\n",
        diffformats.to_text(diff, colour=colour).rstrip("\n") + "\n",
    ]
    if result.unschedulable:
        out.append("\nBecomes unschedulable:\n")
        out += [f"  {headroomformats.stranded_line(item)}\n" for item in result.unschedulable]
    headers, body = capacity_table(capacity_rows(result))
    cells = [headers, *([texts.one_line(cell) for cell in row] for row in body)]
    widths = [max(len(row[index]) for row in cells) for index in range(len(headers))]
    out.append("\nCapacity after (used / free):\n")
    out += [
        "  " + "   ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() + "\n"
        for row in cells
    ]
    return "".join(out)


def to_markdown(result: WhatIf, diff: RenderDiff) -> str:
    out = [diffformats.to_markdown(diff, title=texts.md_text(heading(result))).rstrip("\n") + "\n"]
    if result.unschedulable:
        out.append("\n#### Becomes unschedulable\n\n")
        out += [
            f"- :x: {texts.md_text(headroomformats.stranded_line(item))}\n" for item in result.unschedulable
        ]
    headers, body = capacity_table(capacity_rows(result))
    out.append("\n#### Capacity after (used / free)\n\n")
    out.append("| " + " | ".join(headers) + " |\n|" + "---|" * len(headers) + "\n")
    for row in body:
        cells = [texts.md_code(row[0], table=True), *(texts.md_text(cell) for cell in row[1:])]
        out.append("| " + " | ".join(cells) + " |\n")
    return "".join(out)


def json_data(result: WhatIf, diff: RenderDiff) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(diffformats.to_json(diff))
    document["changes"] = [str(change) for change in result.changes]
    document["unschedulable"] = [headroomformats.stranded_data(item) for item in result.unschedulable]
    document["capacity"] = [
        {
            "cluster": row.cluster,
            "lost": row.groups is None,
            "groups": row.groups,
            "used": headroomformats.quantities_data(row.used),
            "free": headroomformats.quantities_data(row.free),
            "freeToday": headroomformats.quantities_data(row.free_today),
        }
        for row in capacity_rows(result)
    ]
    return document


def to_json(result: WhatIf, diff: RenderDiff) -> str:
    return texts.visible(json.dumps(json_data(result, diff), indent=2, ensure_ascii=False), keep="\n") + "\n"
