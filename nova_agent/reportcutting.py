"""Cutting a status report to what the controller reads.

The controller refuses a whole report of more than 4 MiB, with a list or mapping of more than 20,000 items, or
with more than 400,000 values (``api.statusreports``), so a cluster of 25,000 workloads (or ~14,000 with
ordinary entries, by bytes) would otherwise lose its report: capacity, health and all. The document is
written and counted with the controller's own check; when it does not fit, what it lists is cut to fit —
the workloads that matter most kept first (with a reschedule request, unhealthy, not yet reflecting the
synced revision, then the rest; by name within each), nodes ready first, then by name — and a
``ReportComplete`` condition (status False) says how many of each were not reported.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from nova_agent.capacity import NodeCapacity
from nova_agent.reportfiles import StatusReport, dump_status, keep_update_time
from nova_agent.resources import Body
from nova_gitops.api import loading
from nova_gitops.api.statusreports import (
    MAX_REPORT_BYTES,
    MAX_REQUESTS_PER_REPORT,
    REPORT_BOUNDS,
    REPORT_COMPLETE,
)

_NODE_MAPS: Final = ("capacityResources", "availableResources", "nodeLabels", "nodeTaints")
_LISTS: Final = ("workloads", "rescheduleRequests", "driftedObjects", "adoptedObjects")
_TIERS: Final = (("nodes", "workloads", "rescheduleRequests"), ("driftedObjects", "adoptedObjects"))
"""What scheduling and rollout gates read shares the room first; what is for people shares the rest."""
_SECTION_NAMES: Final = {
    "nodes": "nodes",
    "workloads": "workloads",
    "rescheduleRequests": "reschedule requests",
    "driftedObjects": "drifted objects",
    "adoptedObjects": "adopted objects",
}
BYTES_SLACK: Final = 4096
"""Bytes kept free when cutting, for the few that ``lastUpdateTime`` may still change."""
_YAML_PER_JSON: Final = 2
"""At most this many bytes of YAML (``dump_status``) per byte of JSON (``ensure_ascii=False``) of a string:
a single-quoted one doubles its quotes, a double-quoted one writes a C1 control or U+FFFE in 4-6 bytes."""
_YAML_PER_VALUE: Final = 16
"""At most this many bytes of YAML layout (indentation, ``- ``, ``: ``, a line end) per value, beyond JSON's
own, at the report's depth (indentation of at most 12); and per line break in a string (a single-quoted
one writes it as two line ends and the indentation)."""


def fits(data: bytes) -> bool:
    """Whether the controller reads ``data`` whole: within its byte cap and its bounds, counted as it
    counts them (``loading.bounds_problem``)."""
    if len(data) > MAX_REPORT_BYTES:
        return False
    return loading.bounds_problem(data.decode("utf-8"), REPORT_BOUNDS) is None


def size_bound(document: Body) -> int | None:
    """An upper bound of the bytes ``dump_status`` writes for ``document``, from its JSON (fast, in C);
    None when a list or mapping holds more items, or the whole more values, than the controller reads."""
    values = 0
    stack: list[Any] = [document]
    while stack:
        item = stack.pop()
        values += 1
        if isinstance(item, Mapping):
            if len(item) > REPORT_BOUNDS.items:
                return None
            values += len(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            if len(item) > REPORT_BOUNDS.items:
                return None
            stack.extend(item)
    if values > REPORT_BOUNDS.values:
        return None
    text = json.dumps(document, ensure_ascii=False, default=str)
    breaks = text.count("\\n") + text.count("\x85") + text.count("\u2028") + text.count("\u2029")
    json_bytes = len(text.encode("utf-8", "surrogatepass"))
    return _YAML_PER_JSON * json_bytes + _YAML_PER_VALUE * (values + breaks)


def node_order(nodes: Sequence[NodeCapacity]) -> dict[str, int]:
    """Rank of each node when nodes must be cut: ready ones first, then by name."""
    ranked = sorted(nodes, key=lambda node: (not node.ready, node.name))
    return {node.name: rank for rank, node in enumerate(ranked)}


def bounded(document: Body, node_order: Mapping[str, int], noted: str, previous: Body | None) -> StatusReport:
    """``document``, or, when the controller would refuse it, a copy cut to fit (module doc), with
    ``previous``'s ``lastUpdateTime`` when the cut is what ``previous`` was."""
    bound = size_bound(document)
    if bound is not None and bound <= MAX_REPORT_BYTES:  # reports of up to some thousand workloads
        return StatusReport(document)  # written only to commit
    data = dump_status(document)
    if fits(data):
        return StatusReport(document, data)
    sections = _sections(document["status"], node_order, data.decode("utf-8"))
    bytes_room = MAX_REPORT_BYTES - BYTES_SLACK
    for _ in range(8):  # the costs are exact: a second round only absorbs what the note adds
        fixed = _with_sections(
            document, {}, _note_for({n: (len(u), len(u)) for n, u in sections.items()}, noted)
        )
        room = (bytes_room - len(dump_status(fixed)), REPORT_BOUNDS.values - _values(fixed))
        kept = _cut(sections, room)
        counts = {name: (len(units) - len(kept[name]), len(units)) for name, units in sections.items()}
        bounded = _with_sections(document, kept, _note_for(counts, noted))
        keep_update_time(bounded, previous)
        data = dump_status(bounded)
        if fits(data):
            return StatusReport(bounded, data)
        bytes_room -= max(len(data) - MAX_REPORT_BYTES, 0) + bytes_room // 20
    counts = {name: (len(units), len(units)) for name, units in sections.items()}
    return StatusReport(_with_sections(document, {}, _note_for(counts, noted)))  # capacity kept, no listing


@dataclass(frozen=True, slots=True)
class _Unit:
    """One thing a report lists: a workload (or request, drifted or adopted object) entry, or a node with
    its entries in the node maps. ``parts``: (status field, list item or mapping ``(key, value)``)."""

    parts: tuple[tuple[str, Any], ...]
    size: int
    """Bytes it adds to the report as written."""
    values: int
    """Values it adds, as the controller counts them."""


def _sections(status: Mapping[str, Any], node_order: Mapping[str, int], text: str) -> dict[str, list[_Unit]]:
    """Each listing of ``status`` as units in the order they are kept (the first matter most), their sizes
    read off ``text``, the report written whole."""
    sizes = _entry_sizes(status, text)
    synced = status.get("syncedRevision")
    pending = {
        _ref_key(entry) for entry in status.get("rescheduleRequests") or [] if isinstance(entry, Mapping)
    }

    def rank(entry: tuple[Mapping[str, Any], int]) -> int:
        if _ref_key(entry[0]) in pending:
            return 0
        if entry[0].get("healthy") is not True:
            return 1
        return 2 if entry[0].get("revision") != synced else 3

    sections: dict[str, list[_Unit]] = {}
    nodes: dict[str, list[tuple[str, Any]]] = {}
    node_sizes: dict[str, int] = {}
    node_values: dict[str, int] = {}
    for field_name in _NODE_MAPS:
        for (name, value), size in zip(
            (status.get(field_name) or {}).items(), sizes[field_name], strict=True
        ):
            nodes.setdefault(name, []).append((field_name, (name, value)))
            node_sizes[name] = node_sizes.get(name, 0) + size
            node_values[name] = node_values.get(name, 0) + 1 + _values(value)
    ordered = sorted(nodes, key=lambda name: (node_order.get(name, len(node_order)), name))
    sections["nodes"] = [_Unit(tuple(nodes[name]), node_sizes[name], node_values[name]) for name in ordered]
    for field_name in _LISTS:
        entries = list(zip(status.get(field_name) or [], sizes[field_name], strict=True))
        if field_name == "workloads":
            entries.sort(key=rank)  # stable: in name order within a rank
        sections[field_name] = [
            _Unit(((field_name, entry),), size, _values(entry)) for entry, size in entries
        ]
    return sections


def _entry_sizes(status: Mapping[str, Any], text: str) -> dict[str, list[int]]:
    """The bytes of each entry of each listing of ``status`` in ``text`` (``dump_status`` of the document
    holding it), in order. Block style writes ``status``'s fields at column 2, a listing's items at
    ``  - `` (lists) or its keys at column 4 (the node maps; a key too long for a simple key is ``? ``,
    its value ``: ``); an entry runs to the next one. Where the text is not so (it always is), each entry
    is written alone instead."""
    lines = text.splitlines(keepends=True)
    first = lines.index("status:\n") if "status:\n" in lines else len(lines)  # the last top-level field
    starts = {
        line: index
        for index, line in enumerate(lines[first:], start=first)
        if line.startswith("  ") and line[2] not in " -"
    }
    found: dict[str, list[int]] = {}
    for field_name in (*_NODE_MAPS, *_LISTS):
        entries = status.get(field_name) or ()
        index = starts.get(f"  {field_name}:\n")
        sizes: list[int] = []
        if entries and index is not None:
            is_map = field_name in _NODE_MAPS
            for line in lines[index + 1 :]:
                if not line.startswith("    " if is_map else ("  - ", "   ")):
                    break
                opens = line[4] not in " -:" if is_map else line.startswith("  - ")
                if opens:
                    sizes.append(0)
                if sizes:
                    sizes[-1] += len(line.encode("utf-8"))
        if len(sizes) != len(entries):
            sizes = [_written_size(field_name, entry, field_name in _NODE_MAPS) for entry in _items(entries)]
        found[field_name] = sizes
    return found


def _items(entries: Any) -> list[Any]:
    return list(entries.items()) if isinstance(entries, Mapping) else list(entries)


def _written_size(field_name: str, entry: Any, is_map: bool) -> int:
    alone = {entry[0]: entry[1]} if is_map else [entry]
    head = f"status:\n  {field_name}:\n".encode()
    return len(dump_status({"status": {field_name: alone}})) - len(head)


def _ref_key(entry: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(str(entry.get(key, "")) for key in ("apiVersion", "kind", "namespace", "name"))


def _values(value: Any) -> int:
    """Scalars and collections in ``value``, keys included, as ``loading.bounds_problem`` counts them."""
    count = 0
    stack = [value]
    while stack:
        item = stack.pop()
        count += 1
        if isinstance(item, Mapping):
            count += len(item)  # the keys
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return count


def _cut(sections: Mapping[str, list[_Unit]], room: tuple[int, int]) -> dict[str, list[_Unit]]:
    """The units of each section kept within ``room`` (bytes, values). The sections of a tier share it,
    each taking what it needs up to an equal share of what the others leave (max-min fair); within a
    section the first units are kept; no list or mapping gets more items than the controller reads."""
    kept: dict[str, list[_Unit]] = {}
    left = list(room)
    for tier in _TIERS:
        needs = {
            name: (sum(u.size for u in sections[name]), sum(u.values for u in sections[name]))
            for name in tier
        }
        size_shares = _fair_shares({name: need[0] for name, need in needs.items()}, left[0])
        value_shares = _fair_shares({name: need[1] for name, need in needs.items()}, left[1])
        for name in tier:
            limit = MAX_REQUESTS_PER_REPORT if name == "rescheduleRequests" else REPORT_BOUNDS.items
            kept[name] = _prefix(sections[name], size_shares[name], value_shares[name], limit)
            left[0] -= sum(unit.size for unit in kept[name])
            left[1] -= sum(unit.values for unit in kept[name])
    return kept


def _fair_shares(needs: Mapping[str, int], room: int) -> dict[str, int]:
    """Max-min fair shares of ``room``: the smallest needs are met whole, the others split what is left."""
    shares: dict[str, int] = {}
    left = max(room, 0)
    waiting = sorted(needs, key=lambda name: needs[name])
    while waiting:
        name = waiting.pop(0)
        shares[name] = min(needs[name], left // (len(waiting) + 1))
        left -= shares[name]
    return shares


def _prefix(units: Sequence[_Unit], size_room: int, value_room: int, limit: int) -> list[_Unit]:
    kept: list[_Unit] = []
    size = values = 0
    for unit in units[:limit]:
        size += unit.size
        values += unit.values
        if size > size_room or values > value_room:
            break
        kept.append(unit)
    return kept


def _with_sections(document: Body, sections: Mapping[str, Sequence[_Unit]], note: Mapping[str, str]) -> Body:
    """``document`` listing only ``sections`` (none for a section not given): workloads in name order,
    nodes in the order written; ``note`` among its conditions."""
    full = document["status"]
    status = dict(full)
    for field_name in (*_NODE_MAPS, *_LISTS):
        if field_name in status:
            status[field_name] = {} if field_name in _NODE_MAPS else []
    for units in sections.values():
        for unit in units:
            for field_name, entry in unit.parts:
                if field_name in _NODE_MAPS:
                    status[field_name][entry[0]] = entry[1]
                else:
                    status[field_name].append(entry)
    for field_name in _NODE_MAPS:
        if field_name in status:
            kept = status[field_name]
            status[field_name] = {name: kept[name] for name in full[field_name] if name in kept}
    status["workloads"] = sorted(status.get("workloads") or [], key=_ref_key)
    status["conditions"] = [*(c for c in full.get("conditions") or [] if not is_note(c)), dict(note)]
    return {**document, "status": status}


def is_note(condition: object) -> bool:
    return isinstance(condition, Mapping) and condition.get("type") == REPORT_COMPLETE


def _note_for(counts: Mapping[str, tuple[int, int]], noted: str) -> dict[str, str]:
    """The ``ReportComplete`` condition: of each listing cut, how many of how many were left out."""
    left_out = [
        f"{omitted:,} of {total:,} {_SECTION_NAMES[name]}"
        for name, (omitted, total) in counts.items()
        if omitted
    ]
    message = (
        f"not reported: {', '.join(left_out) or 'nothing'}; a report holds what the controller reads "
        f"(at most {REPORT_BOUNDS.items:,} items a list, {REPORT_BOUNDS.values:,} values, "
        f"{MAX_REPORT_BYTES // (1024 * 1024)} MiB); kept first: workloads with a reschedule request, "
        "unhealthy, not yet at the synced revision, then by name; ready nodes, then by name"
    )
    return {
        "type": REPORT_COMPLETE,
        "status": "False",
        "reason": "OverReportBounds",
        "message": message,
        "lastTransitionTime": noted,
    }


def note_time(previous: Body | None) -> str | None:
    """When the previous report's ``ReportComplete`` note was first written (it stays while reports are
    cut, so an unchanged cluster does not commit a new time every pass)."""
    conditions = ((previous or {}).get("status") or {}).get("conditions")
    for condition in conditions if isinstance(conditions, list) else []:
        if is_note(condition) and isinstance(condition.get("lastTransitionTime"), str):
            return str(condition["lastTransitionTime"])
    return None
