"""The status report: a Cluster object (``cluster.elotl.co/v1alpha1``, docs/design.md §2) plus the agent's
fields.

The scheduler reads these files as its cluster inventory (``nova-gitops render --clusters status/``), so the
document has exactly the shape its Cluster parser accepts: ``metadata.labels`` and ``spec`` as Nova has them,
and a ``status`` with conditions, per-node capacity/available/labels/taints, ``autoscaled`` and
``lastUpdateTime``; then ours: ``syncedRevision``, ``workloads`` (each with the ``revision`` it reflects),
``rescheduleRequests``, ``lastError``, ``adoptedObjects``, ``driftedObjects`` and ``heartbeat`` (the format
and its bounds are defined once, for the agent and the controller, in ``nova_gitops.api.statusreports``).
Quantities are Kubernetes quantity strings.

A report stays within what the controller reads, by construction (:func:`build_status_report`; how it is
cut: ``reportcutting``). As a file, and when a new one is worth a commit: ``reportfiles``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from nova_agent import reportcutting
from nova_agent.capacity import NodeCapacity
from nova_agent.drifting import DriftedObject
from nova_agent.health import Health
from nova_agent.reportfiles import StatusReport, keep_update_time, report_changed
from nova_agent.resources import Body, ObjectRef
from nova_gitops.api import labels as nova_labels
from nova_gitops.api import quantities
from nova_gitops.api.statusreports import MAX_REPORT_BYTES, AgentFields, RescheduleRequest
from nova_gitops.api.times import rfc3339

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
    keep_update_time(document, previous)
    if (
        previous is not None
        and previous_size is not None
        and previous_size <= MAX_REPORT_BYTES - reportcutting.BYTES_SLACK
        and not report_changed(previous, document)
    ):
        return StatusReport(document)  # what was read back within the bounds, but for its times
    noted = reportcutting.note_time(previous) or rfc3339(now)
    return reportcutting.bounded(document, reportcutting.node_order(observation.nodes), noted, previous)


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
        # a note of the previous cut is dropped: written anew if this report is cut too
        status["conditions"] = [c for c in status["conditions"] if not reportcutting.is_note(c)]
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
