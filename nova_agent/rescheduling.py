"""Pending pods become reschedule requests.

A workload that is short of replicas because its pods have stayed unscheduled longer than
``--pending-timeout`` asks the scheduler to place its group elsewhere, in Nova's wording ("deployment ns/name
does not have minimum replicas available"). Pure: takes the live workloads, the pods and the time.

When a pod is Pending counts from its ``PodScheduled=False`` transition, else from its creation, so a one-shot
``nova-agent sync`` sees the same thing as the long-running loop. Pods that are scheduled but still Pending
(pulling images) are not a placement problem and are not counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Final

from nova_agent.health import find_condition
from nova_agent.resources import Body, ObjectRef, annotations_of, labels_of, ref_of
from nova_agent.selecting import selector_matches
from nova_gitops.api import labels as nova_labels
from nova_gitops.api.statusreports import RescheduleRequest
from nova_gitops.api.times import parse_rfc3339, rfc3339

RESCHEDULABLE_KINDS: Final = frozenset(
    {("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "ReplicaSet"), ("batch", "Job")}
)


def request_for(ref: ObjectRef, group: str, reason: str, since: str) -> RescheduleRequest:
    """The reschedule request of the workload ``ref`` (``api.statusreports``: the report's format)."""
    return RescheduleRequest(ref.api_version, ref.kind, ref.namespace, ref.name, group, reason, since)


def pending_since(pod: Mapping[str, Any]) -> datetime | None:
    """When an unscheduled Pending pod started waiting; None when the pod is not waiting for a node."""
    status = pod.get("status") if isinstance(pod.get("status"), Mapping) else {}
    if not isinstance(status, Mapping) or status.get("phase", "Pending") != "Pending":
        return None
    scheduled = find_condition(pod, "PodScheduled")
    if scheduled is not None:
        if scheduled.get("status") == "True":
            return None
        moment = parse_rfc3339(scheduled.get("lastTransitionTime"))
        if moment is not None:
            return moment
    return parse_rfc3339(pod.get("metadata", {}).get("creationTimestamp"))


def _short_of_replicas(workload: Mapping[str, Any]) -> bool:
    spec, status = workload.get("spec") or {}, workload.get("status") or {}
    kind = workload.get("kind")
    if kind == "Job":
        return True
    wanted = spec.get("replicas", 1)
    have = status.get("availableReplicas" if kind == "Deployment" else "readyReplicas", 0) or 0
    return isinstance(wanted, int) and isinstance(have, int) and have < wanted


def _is_reschedulable(body: Mapping[str, Any]) -> bool:
    return (
        str(body.get("apiVersion", "")).rpartition("/")[0],
        str(body.get("kind", "")),
    ) in RESCHEDULABLE_KINDS


def reschedule_reason(ref: ObjectRef) -> str:
    return f"{ref.kind.lower()} {ref.namespace}/{ref.name} does not have minimum replicas available"


def reschedule_requests(
    workloads: Iterable[Body], pods: Sequence[Body], now: datetime, pending_timeout: timedelta
) -> list[RescheduleRequest]:
    pods_by_namespace: dict[str, list[Body]] = {}
    for pod in pods:
        pods_by_namespace.setdefault(str(pod.get("metadata", {}).get("namespace", "")), []).append(pod)
    requests: list[RescheduleRequest] = []
    for workload in workloads:
        if not _is_reschedulable(workload) or not _short_of_replicas(workload):
            continue
        ref = ref_of(workload)
        selector = (workload.get("spec") or {}).get("selector")
        waiting = [
            since
            for pod in pods_by_namespace.get(ref.namespace, [])
            if selector_matches(selector, labels_of(pod)) and (since := pending_since(pod)) is not None
        ]
        overdue = [since for since in waiting if now - since >= pending_timeout]
        if overdue:
            group = annotations_of(workload).get(nova_labels.SCHEDULE_GROUP, "")
            requests.append(request_for(ref, str(group), reschedule_reason(ref), rfc3339(min(overdue))))
    return sorted(requests, key=_workload_of)


def _workload_of(request: RescheduleRequest) -> tuple[str, str, str, str]:
    """The order of ``ObjectRef``: apiVersion, kind, namespace, name."""
    return (request.api_version, request.kind, request.namespace, request.name)
