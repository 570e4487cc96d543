"""A failover headroom (``scheduling.headroom.Headroom``) as text for a terminal, Markdown for a pull-request
comment, or JSON for tools; and the words and amounts a what-if's stranded groups are told in, which
``whatifformats`` shares.

Names, reasons and verdicts are data (a source, agents' reports): the text shows their hidden characters
as escapes (``api.texts.one_line``), the Markdown puts names in code spans and escapes the rest
(``api.texts.md_code``, ``md_text``), the JSON writes them as JSON escapes. Amounts are written as a
person reads them: cpu in millicores, bytes rounded up to a whole Mi, counts rounded up.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from nova_gitops.api import quantities, texts
from nova_gitops.scheduling.headroom import Headroom, Loss
from nova_gitops.scheduling.stranding import Stranded

MEBI_MILLI = 2**20 * 1000
MARKDOWN_LIST_LIMIT = 50
WHY: Mapping[str, str] = {
    "no-room": "no candidate has room",
    "no-candidate": "its policy selects no cluster that is left",
    "pinned": "an annotation pins it to a cluster that is gone",
    "share": "a share no longer fits its cluster",
}
PINNED_SHORT = "it no longer fits the cluster it is pinned to"
"""A pinned group's ``share``: it is rendered there as asked, and its pods would stay Pending."""


def amount(resource: str, milli: int) -> str:
    """``milli`` of ``resource`` for a person: cpu in millicores (as the planner's reasons), bytes rounded
    up to a whole Mi, other counts rounded up to a whole one."""
    if resource == "cpu":
        return quantities.in_words(resource, milli)
    if quantities.is_byte_resource(resource):
        return quantities.format_quantity(resource, -(-milli // MEBI_MILLI) * MEBI_MILLI)
    return quantities.format_quantity(resource, -(-milli // 1000) * 1000)


def resource_order(names: Iterable[str]) -> list[str]:
    """cpu, memory, then the others by name (as PLACEMENT.md's capacity table)."""
    first = ("cpu", "memory")
    return sorted(set(names), key=lambda name: (first.index(name) if name in first else len(first), name))


def amounts(resources: Mapping[str, int]) -> str:
    """``4800m cpu, 512Mi memory``; ``nothing`` when empty."""
    shown = [f"{amount(name, resources[name])} {name}" for name in resource_order(resources)]
    return ", ".join(shown) or "nothing"


def stranded_line(item: Stranded) -> str:
    """One stranded group in words: what it is, why, what it needs and what would rescue it."""
    policy = f"policy {item.policy}" if item.policy else "placed by annotation"
    why = PINNED_SHORT if item.why == "share" and item.mode == "single" else WHY[item.why]
    parts = [f"{item.group} ({policy}; {', '.join(item.objects) or 'no objects'}): {why}"]
    parts.append(f"needs {amounts(item.requests)}")
    scarce = {name: free for name, free in item.free_elsewhere.items() if free < item.requests.get(name, 0)}
    if scarce:
        parts.append(f"{amounts(scarce)} free elsewhere")
    if item.why in ("no-room", "share"):
        parts.append(f"short {amounts(item.lacks)}" if item.lacks else "short on one node only")
    parts += [
        f"{'closest' if item.why == 'no-room' else 'on'} {closest.cluster}: "
        + (f"lacks {amounts(closest.lacks)}" if closest.lacks else "enough in total")
        + (f" ({closest.verdict})" if closest.verdict else "")
        for closest in item.closest
    ]
    return "; ".join(texts.one_line(part) for part in parts)


def loss_row(loss: Loss) -> list[str]:
    moved = len(loss.moved)
    stranded = f"{len(loss.stranded)}" + (f" (+{len(loss.accepted)} accepted)" if loss.accepted else "")
    return [loss.name, str(moved), stranded, shortfall_words(loss)]


def shortfall_words(loss: Loss) -> str:
    """What would rescue what ``loss`` strands: the room in total, and the groups whose closest cluster
    has room enough in total but no node that fits them (a bigger node; not "nothing")."""
    if not loss.stranded:
        return "–"
    per_node = sum(1 for item in loss.stranded if item.why == "no-room" and not item.lacks)
    parts = [amounts(loss.shortfall)] if loss.shortfall else []
    if per_node:
        parts.append(f"a bigger node for {_counted(per_node, 'group')}")
    return "; ".join(parts) or amounts({})


HEADERS = ("LOSS", "MOVED", "STRANDED", "SHORTFALL")


def title(report: Headroom) -> str:
    what = "each cluster in turn" if report.domain is None else f"every cluster of each {report.domain} value"
    clusters, groups = _counted(report.clusters, "cluster"), _counted(report.groups, "group")
    return f"Failover headroom of {clusters}, {groups}: the loss of {what}, worst first"


def _counted(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def to_text(report: Headroom) -> str:
    rows = [list(HEADERS), *(loss_row(loss) for loss in report.losses)]
    rows = [[texts.one_line(cell) for cell in row] for row in rows]
    widths = [max(len(row[index]) for row in rows) for index in range(len(HEADERS))]
    out = [title(report) + ".\n", "\n"]
    out += [
        "   ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() + "\n"
        for row in rows
    ]
    out += _text_section("Stranded", [(loss.name, item) for loss in report.losses for item in loss.stranded])
    out += _text_section(
        "Accepted (--ignore)", [(loss.name, item) for loss in report.losses for item in loss.accepted]
    )
    out += _notes(report, texts.one_line)
    verdict = "some loss strands a group" if report.strands else "no loss strands a group"
    out.append(f"\n{verdict}.\n")
    return "".join(out)


def _text_section(name: str, items: list[tuple[str, Stranded]]) -> list[str]:
    if not items:
        return []
    return [
        f"\n{name}:\n",
        *(f"  losing {texts.one_line(loss)} strands {stranded_line(item)}\n" for loss, item in items),
    ]


def _notes(report: Headroom, show: Any) -> list[str]:
    out: list[str] = []
    scale_ups = [(loss.name, loss.scale_ups) for loss in report.losses if loss.scale_ups]
    if scale_ups:
        out.append("\nWould make an autoscaled cluster scale up (placed, not stranded):\n")
        out += [
            f"  losing {show(loss)}: {', '.join(show(name) for name in names)}\n" for loss, names in scale_ups
        ]
    if report.unschedulable_today:
        names = ", ".join(show(name) for name in report.unschedulable_today)
        out.append(f"\nUnschedulable today, so stranded by no loss: {names}\n")
    if report.unlabelled:
        names = ", ".join(show(name) for name in report.unlabelled)
        out.append(f"\nWithout the label {show(report.domain or '')}, never lost: {names}\n")
    return out


def to_markdown(report: Headroom) -> str:
    out = [f"### Failover headroom\n\n{texts.md_text(title(report))}.\n\n"]
    out.append("| loss | moved | stranded | shortfall |\n|---|---:|---:|---|\n")
    for loss in report.losses:
        name, moved, stranded, shortfall = loss_row(loss)
        shown = (":x: " if loss.stranded else "") + texts.md_code(name, table=True)
        out.append(f"| {shown} | {moved} | {stranded} | {texts.md_text(shortfall)} |\n")
    sections = (
        ("Stranded", [(loss.name, item) for loss in report.losses for item in loss.stranded]),
        ("Accepted (`--ignore`)", [(loss.name, item) for loss in report.losses for item in loss.accepted]),
    )
    for heading, items in sections:
        lines = [
            f"- losing {texts.md_code(name)} strands {texts.md_text(stranded_line(item))}"
            for name, item in items
        ]
        if len(lines) > MARKDOWN_LIST_LIMIT:
            lines = [*lines[:MARKDOWN_LIST_LIMIT], f"- … and {len(lines) - MARKDOWN_LIST_LIMIT} more"]
        if lines:
            out.append(f"\n#### {heading}\n\n" + "\n".join(lines) + "\n")
    notes = _notes(report, texts.md_code)
    if notes:
        out.append("\n" + "".join(notes).replace("\n  ", "\n- ").strip() + "\n")
    return "".join(out)


def stranded_data(item: Stranded) -> dict[str, Any]:
    return {
        "group": item.group,
        "policy": item.policy,
        "mode": item.mode,
        "why": item.why,
        "reason": item.reason,
        "objects": list(item.objects),
        "before": list(item.before),
        "requests": quantities_data(item.requests),
        "lacks": quantities_data(item.lacks),
        "freeElsewhere": quantities_data(item.free_elsewhere),
        "closest": [
            {"cluster": closest.cluster, "lacks": quantities_data(closest.lacks), "verdict": closest.verdict}
            for closest in item.closest
        ],
    }


def quantities_data(resources: Mapping[str, int]) -> dict[str, str]:
    """Resources as Kubernetes quantity strings (exact, as placement.yaml writes them)."""
    return {name: quantities.format_quantity(name, resources[name]) for name in resource_order(resources)}


def json_data(report: Headroom) -> dict[str, Any]:
    return {
        "domain": report.domain,
        "clusters": report.clusters,
        "groups": report.groups,
        "strands": report.strands,
        "ignore": list(report.ignore),
        "unschedulableToday": list(report.unschedulable_today),
        "unlabelled": list(report.unlabelled),
        "losses": [
            {
                "name": loss.name,
                "clusters": list(loss.clusters),
                "moved": [
                    {
                        "group": move.group,
                        "kind": move.kind,
                        "before": list(move.before),
                        "after": list(move.after),
                    }
                    for move in loss.moved
                ],
                "stranded": [stranded_data(item) for item in loss.stranded],
                "accepted": [stranded_data(item) for item in loss.accepted],
                "scaleUps": list(loss.scale_ups),
                "shortfall": quantities_data(loss.shortfall),
            }
            for loss in report.losses
        ],
    }


def to_json(report: Headroom) -> str:
    return texts.visible(json.dumps(json_data(report), indent=2, ensure_ascii=False), keep="\n") + "\n"


FORMATTERS = {"text": to_text, "markdown": to_markdown, "json": to_json}
