"""The status report: a Cluster object (``cluster.elotl.co/v1alpha1``, DESIGN §2) plus the agent's fields.

The scheduler reads these files as its cluster inventory (``nova-gitops render --clusters status/``), so the
document has exactly the shape its Cluster parser accepts: ``metadata.labels`` and ``spec`` as Nova has them,
and a ``status`` with conditions, per-node capacity/available/labels/taints, ``autoscaled`` and
``lastUpdateTime``; then ours: ``syncedRevision``, ``workloads`` (each with the ``revision`` it reflects),
``rescheduleRequests``, ``lastError``, ``adoptedObjects``, ``driftedObjects`` and ``heartbeat`` (the format
and its bounds are defined once, for the agent and the controller, in ``nova_gitops.api.statusreports``).
Quantities are Kubernetes quantity strings.

Two fields change every pass (``heartbeat``) or on every change (``lastUpdateTime``); :func:`should_commit`
ignores them so that a quiet cluster commits once per heartbeat interval and not once per pass.

A report stays within what the controller reads, by construction (:func:`build_status_report`): the
controller refuses a whole report of more than 4 MiB, with a list or mapping of more than 20,000 items, or
with more than 400,000 values (``loading.REPORT_BOUNDS``), so a cluster of 25,000 workloads (or ~14,000
with ordinary entries, by bytes) would otherwise lose its report: capacity, health and all. The document is
written and counted with the controller's own check; when it does not fit, what it lists is cut to fit —
the workloads that matter most kept first (with a reschedule request, unhealthy, not yet reflecting the
synced revision, then the rest; by name within each), nodes ready first, then by name — and a
``ReportComplete`` condition (status False) says how many of each were not reported.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final

import yaml

from nova_agent.capacity import NodeCapacity
from nova_agent.drifting import DriftedObject
from nova_agent.health import Health
from nova_agent.resources import Body, ObjectRef
from nova_gitops.api import labels as nova_labels
from nova_gitops.api import loading, quantities
from nova_gitops.api.statusreports import (
    MAX_REPORT_BYTES,
    MAX_REQUESTS_PER_REPORT,
    REPORT_BOUNDS,
    REPORT_COMPLETE,
    VOLATILE_FIELDS,
    AgentFields,
    RescheduleRequest,
)
from nova_gitops.api.times import parse_rfc3339, rfc3339

MAX_ADOPTED_LISTED: Final = 1000
MAX_LAST_ERROR_CHARS: Final = 8192
"""``lastError`` is cut here (its start names the revision a gate looks for; a reason shows 300 of it)."""
REGION_LABEL: Final = "topology.kubernetes.io/region"
ZONE_LABEL: Final = "topology.kubernetes.io/zone"


@dataclass(frozen=True, slots=True)
class ClusterIdentity:
    """What the cluster says about itself; empty strings are filled from node labels where possible."""

    name: str
    provider: str = ""
    region: str = ""
    zone: str = ""
    kubernetes_version: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class WorkloadHealth:
    ref: ObjectRef
    health: Health
    revision: str = ""
    """The rendered commit whose manifest the live object reflects ("" when unknown: delegated mode, or an
    entry of an older agent); ``healthy`` is for ``syncedRevision``, never for an older one."""

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.ref.as_dict(),
            "revision": self.revision,
            "healthy": self.health.healthy,
            "condition": self.health.condition,
            "reason": self.health.reason,
            "message": self.health.message,
        }


@dataclass(frozen=True, slots=True)
class Observation:
    """Everything one pass measured, ready to be written down."""

    identity: ClusterIdentity
    nodes: Sequence[NodeCapacity]
    autoscaled: bool
    workloads: Sequence[WorkloadHealth] = ()
    reschedule_requests: Sequence[RescheduleRequest] = ()
    synced_revision: str = ""
    last_error: str = ""
    adopted: Sequence[ObjectRef] = ()
    """Objects of the render that existed before the agent applied them (it releases them, never deletes)."""
    drifted: Sequence[DriftedObject] = ()
    """Objects whose live state departed from git's in the last pass (docs/agent.md, "Drift")."""
    capacity_measured: bool = True
    """False when nodes or pods could not be listed: the report then keeps the last measured capacity."""


def _quantities(resources: Mapping[str, int]) -> dict[str, str]:
    return {name: quantities.format_quantity(name, value) for name, value in sorted(resources.items())}


def _unanimous(nodes: Sequence[NodeCapacity], label: str) -> str:
    values = {node.labels.get(label, "") for node in nodes}
    return values.pop() if len(values) == 1 else ""


def _ready_condition(nodes: Sequence[NodeCapacity]) -> dict[str, str]:
    ready = sum(1 for node in nodes if node.ready)
    if ready:
        return {
            "type": "Ready",
            "status": "True",
            "reason": "NodesReady",
            "message": f"{ready}/{len(nodes)} nodes ready",
        }
    message = "the cluster has no nodes" if not nodes else f"none of {len(nodes)} nodes is ready"
    return {"type": "Ready", "status": "False", "reason": "NoReadyNodes", "message": message}


def _cluster_labels(identity: ClusterIdentity, spec: Mapping[str, str]) -> dict[str, str]:
    labels = {nova_labels.METADATA_NAME: identity.name}
    for label, value in (
        (nova_labels.CLUSTER_PROVIDER, spec["provider"]),
        (nova_labels.CLUSTER_REGION, spec["region"]),
        (nova_labels.CLUSTER_ZONE, spec["zone"]),
        (nova_labels.CLUSTER_VERSION, spec.get("kubernetesversion", "")),
    ):
        if value:
            labels[label] = value
    labels.update(identity.labels)
    return labels


def build_status_document(observation: Observation, now: datetime, previous: Body | None = None) -> Body:
    """The Cluster document for ``status/<cluster>.yaml`` (:func:`build_status_report`)."""
    return build_status_report(observation, now, previous).document


def build_status_report(
    observation: Observation, now: datetime, previous: Body | None = None, previous_size: int | None = None
) -> StatusReport:
    """The Cluster document for ``status/<cluster>.yaml`` and its bytes, cut to what the controller reads
    when it would hold more (module doc); ``previous`` keeps transition times stable. ``previous_size``: the
    bytes ``previous`` was read from (read under the controller's bounds, ``load_status``); when nothing
    but its times changed and it was within the byte cap, the report is not written or counted again."""
    document = _full_document(observation, now, previous)
    _keep_update_time(document, previous)
    if (
        previous is not None
        and previous_size is not None
        and previous_size <= MAX_REPORT_BYTES - _BYTES_SLACK
        and not report_changed(previous, document)
    ):
        return StatusReport(document)  # what was read back within the bounds, but for its times
    return _bounded(document, _node_order(observation.nodes), _note_time(previous) or rfc3339(now), previous)


def _keep_update_time(document: Body, previous: Body | None) -> bool:
    """Give ``document`` the previous report's ``lastUpdateTime`` when nothing else changed; whether that
    changed it."""
    if previous is None or report_changed(previous, document):
        return False
    status = document["status"]
    kept = str((previous.get("status") or {}).get("lastUpdateTime", status["lastUpdateTime"]))
    changed: bool = kept != status["lastUpdateTime"]
    status["lastUpdateTime"] = kept
    return changed


def _note_time(previous: Body | None) -> str | None:
    """When the previous report's ``ReportComplete`` note was first written (it stays while reports are
    cut, so an unchanged cluster does not commit a new time every pass)."""
    conditions = ((previous or {}).get("status") or {}).get("conditions")
    for condition in conditions if isinstance(conditions, list) else []:
        if _is_note(condition) and isinstance(condition.get("lastTransitionTime"), str):
            return str(condition["lastTransitionTime"])
    return None


def _full_document(observation: Observation, now: datetime, previous: Body | None) -> Body:
    """Everything the observation says, before any bound."""
    identity, nodes = observation.identity, observation.nodes
    spec = {
        "name": identity.name,
        "provider": identity.provider,
        "region": identity.region or _unanimous(nodes, REGION_LABEL),
        "zone": identity.zone or _unanimous(nodes, ZONE_LABEL),
    }
    if identity.kubernetes_version:
        spec["kubernetesversion"] = identity.kubernetes_version
    condition = _ready_condition(nodes)
    previous_status = (previous or {}).get("status") or {}
    previous_condition = next(
        (
            c
            for c in previous_status.get("conditions") or []
            if isinstance(c, Mapping) and c.get("type") == "Ready"
        ),
        None,
    )
    same = previous_condition is not None and previous_condition.get("status") == condition["status"]
    condition["lastTransitionTime"] = (
        str(previous_condition.get("lastTransitionTime")) if same and previous_condition else rfc3339(now)
    )
    status: dict[str, Any] = {
        "conditions": [condition],
        "capacityResources": {node.name: _quantities(node.allocatable) for node in nodes},
        "availableResources": {node.name: _quantities(node.available) for node in nodes},
        "nodeLabels": {node.name: dict(sorted(node.labels.items())) for node in nodes},
        "nodeTaints": {node.name: [dict(taint) for taint in node.taints] for node in nodes if node.taints},
        "autoscaled": observation.autoscaled,
    }
    if not observation.capacity_measured:
        spec = _last_measured(previous, spec, status, now)
        status["conditions"] = [c for c in status["conditions"] if not _is_note(c)]  # written anew if cut
    status |= AgentFields(
        last_update_time=rfc3339(now),
        synced_revision=observation.synced_revision,
        workloads=[workload.as_dict() for workload in sorted(observation.workloads, key=lambda w: w.ref)],
        reschedule_requests=observation.reschedule_requests,
        last_error=observation.last_error[:MAX_LAST_ERROR_CHARS],
        adopted_objects=[ref.as_dict() for ref in sorted(observation.adopted)[:MAX_ADOPTED_LISTED]],
        drifted_objects=[
            found.as_dict() for found in sorted(observation.drifted, key=lambda d: d.ref)[:MAX_ADOPTED_LISTED]
        ],
        heartbeat=rfc3339(now),
    ).as_status()
    return {
        "apiVersion": nova_labels.CLUSTER_API_VERSION,
        "kind": "Cluster",
        "metadata": {"name": identity.name, "labels": _cluster_labels(identity, spec)},
        "spec": spec,
        "status": status,
    }


# --- staying within what the controller reads ---------------------------------------------------------------

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
_BYTES_SLACK: Final = 4096
"""Bytes kept free when cutting, for the few that ``lastUpdateTime`` may still change."""
_YAML_PER_JSON: Final = 2
"""At most this many bytes of YAML (``dump_status``) per byte of JSON (``ensure_ascii=False``) of a string:
a single-quoted one doubles its quotes, a double-quoted one writes a C1 control or U+FFFE in 4-6 bytes."""
_YAML_PER_VALUE: Final = 16
"""At most this many bytes of YAML layout (indentation, ``- ``, ``: ``, a line end) per value, beyond JSON's
own, at the report's depth (indentation of at most 12); and per line break in a string (a single-quoted
one writes it as two line ends and the indentation)."""


class StatusReport:
    """A report as written: its document, and its bytes (``dump_status``, written when first asked for)."""

    __slots__ = ("_data", "document")

    def __init__(self, document: Body, data: bytes | None = None) -> None:
        self.document = document
        self._data = data

    @property
    def data(self) -> bytes:
        if self._data is None:
            self._data = dump_status(self.document)
        return self._data


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


def _node_order(nodes: Sequence[NodeCapacity]) -> dict[str, int]:
    """Rank of each node when nodes must be cut: ready ones first, then by name."""
    ranked = sorted(nodes, key=lambda node: (not node.ready, node.name))
    return {node.name: rank for rank, node in enumerate(ranked)}


def _bounded(
    document: Body, node_order: Mapping[str, int], noted: str, previous: Body | None
) -> StatusReport:
    """``document``, or, when the controller would refuse it, a copy cut to fit (module doc), with
    ``previous``'s ``lastUpdateTime`` when the cut is what ``previous`` was."""
    bound = size_bound(document)
    if bound is not None and bound <= MAX_REPORT_BYTES:  # reports of up to some thousand workloads
        return StatusReport(document)  # written only to commit
    data = dump_status(document)
    if fits(data):
        return StatusReport(document, data)
    sections = _sections(document["status"], node_order, data.decode("utf-8"))
    bytes_room = MAX_REPORT_BYTES - _BYTES_SLACK
    for _ in range(8):  # the costs are exact: a second round only absorbs what the note adds
        fixed = _with_sections(
            document, {}, _note_for({n: (len(u), len(u)) for n, u in sections.items()}, noted)
        )
        room = (bytes_room - len(dump_status(fixed)), REPORT_BOUNDS.values - _values(fixed))
        kept = _cut(sections, room)
        counts = {name: (len(units) - len(kept[name]), len(units)) for name, units in sections.items()}
        bounded = _with_sections(document, kept, _note_for(counts, noted))
        _keep_update_time(bounded, previous)
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
    status["conditions"] = [*(c for c in full.get("conditions") or [] if not _is_note(c)), dict(note)]
    return {**document, "status": status}


def _is_note(condition: object) -> bool:
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


_MEASURED_FIELDS: Final = (
    "conditions",
    "capacityResources",
    "availableResources",
    "nodeLabels",
    "nodeTaints",
    "autoscaled",
)


def _last_measured(
    previous: Body | None, spec: dict[str, str], status: dict[str, Any], now: datetime
) -> dict[str, str]:
    """Capacity could not be measured this pass (a forbidden list, one API blip): an empty cluster must not
    be reported, or the scheduler would move every group away. The previous report's capacity, node facts,
    Ready condition and spec stand (``lastError`` says why); without one, Ready is Unknown."""
    previous_status = (previous or {}).get("status")
    previous_spec = (previous or {}).get("spec")
    if not isinstance(previous_status, Mapping) or not isinstance(previous_spec, Mapping):
        status["conditions"] = [
            {
                "type": "Ready",
                "status": "Unknown",
                "reason": "CapacityNotMeasured",
                "message": "nova-agent could not list the cluster's nodes and pods (see lastError)",
                "lastTransitionTime": rfc3339(now),
            }
        ]
        return spec
    for name in _MEASURED_FIELDS:
        if name in previous_status:
            status[name] = previous_status[name]
    return {**spec, **{str(key): str(value) for key, value in previous_spec.items()}}


def _without_volatile(document: Mapping[str, Any]) -> dict[str, Any]:
    status = dict(document.get("status") or {})
    for name in VOLATILE_FIELDS:
        status.pop(name, None)
    return {**document, "status": status}


def report_changed(previous: Mapping[str, Any] | None, current: Mapping[str, Any]) -> bool:
    """Whether anything but the heartbeat and update time differs."""
    return previous is None or _without_volatile(previous) != _without_volatile(current)


def should_commit(
    previous: Mapping[str, Any] | None,
    current: Mapping[str, Any],
    now: datetime,
    heartbeat_interval: timedelta,
) -> bool:
    """Commit on change, or when the last heartbeat written is older than the heartbeat interval."""
    if report_changed(previous, current):
        return True
    assert previous is not None
    last_beat = parse_rfc3339((previous.get("status") or {}).get("heartbeat"))
    return last_beat is None or now - last_beat >= heartbeat_interval


def dump_status(document: Mapping[str, Any]) -> bytes:
    """Block-style YAML in document order, with libyaml's C dumper."""
    text: str = yaml.dump(
        document,
        Dumper=yaml.CSafeDumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=1000,
    )
    return text.encode()


def load_status(data: bytes) -> Body | None:
    """A previously written report, or None when it is missing or unreadable (then it is simply rewritten).

    The status branch is shared with other agents, so the file is read with the loader's bounds: a hostile
    one (nested deep enough to crash libyaml, a 5,000-digit integer, a million list items) is rewritten,
    never a crash; what it holds is counted while it is read (``loading.REPORT_BOUNDS``, as the controller
    reads it)."""
    try:
        loaded = loading.load_one(data, bounds=loading.REPORT_BOUNDS)
    except loading.YamlRefused:
        return None
    return loaded if isinstance(loaded, dict) else None
