"""Observing the cluster for the report: health of our workloads, reschedule requests, and capacity.

Reads only (lists of nodes, pods, ReplicaSets, Jobs and Deployments, cluster-wide), so it is the same in both
modes: with orchestration the workloads are what this agent applied (the target-cluster label); in delegated
mode they are the objects an external orchestrator applied with ``nova.elotl.co/schedule: "true"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from nova_agent import capacity, health
from nova_agent.drifting import DriftedObject
from nova_agent.kubeports import KubePort, Resource
from nova_agent.reports import ClusterIdentity, Observation, WorkloadHealth
from nova_agent.rescheduling import reschedule_requests
from nova_agent.resources import Body, ObjectRef, ref_of
from nova_agent.settings import AgentSettings
from nova_gitops.api import labels as nova_labels

NODES = Resource("", "v1", "nodes", "Node", False)
PODS = Resource("", "v1", "pods", "Pod", True)
REPLICASETS = Resource("apps", "v1", "replicasets", "ReplicaSet", True)
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment", True)
JOBS = Resource("batch", "v1", "jobs", "Job", True)
DELEGATED_RESOURCES = (
    DEPLOYMENTS,
    Resource("apps", "v1", "statefulsets", "StatefulSet", True),
    Resource("apps", "v1", "daemonsets", "DaemonSet", True),
    REPLICASETS,
    JOBS,
    PODS,
    Resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True),
)
"""What delegated mode watches: the kinds with a health rule of their own."""


def delegated_workloads(kube: KubePort) -> list[Body]:
    selector = f"{nova_labels.SCHEDULE}=true"
    return [item for resource in DELEGATED_RESOURCES for item in kube.list(resource, None, selector)]


def workload_health(workloads: Sequence[Body]) -> list[WorkloadHealth]:
    reports = []
    for body in workloads:
        verdict = health.health_of(body)
        if verdict is not None:
            reports.append(WorkloadHealth(ref_of(body), verdict))
    return reports


def identity_of(settings: AgentSettings, kubernetes_version: str) -> ClusterIdentity:
    return ClusterIdentity(
        settings.cluster,
        settings.provider,
        settings.region,
        settings.zone,
        kubernetes_version,
        dict(settings.cluster_labels),
    )


def observe(
    kube: KubePort,
    settings: AgentSettings,
    workloads: Sequence[Body],
    now: datetime,
    *,
    synced_revision: str,
    last_error: str,
    adopted: Sequence[ObjectRef] = (),
    drifted: Sequence[DriftedObject] = (),
) -> Observation:
    """Measure the cluster: five cluster-wide lists and ``/version``."""
    nodes = kube.list(NODES)
    pods = kube.list(PODS)
    owned = [*kube.list(REPLICASETS), *kube.list(JOBS)]
    deployments = kube.list(DEPLOYMENTS)
    if settings.orchestration_enabled:
        labelled = workloads
    else:
        labelled = [
            b for b in workloads if nova_labels.SCHEDULE in (b.get("metadata") or {}).get("labels", {})
        ]
    managed = capacity.managed_uids(
        [
            *labelled,
            *(d for d in deployments if nova_labels.TARGET_CLUSTER in (d["metadata"].get("labels") or {})),
        ],
        owned,
    )
    autoscaled = (
        settings.autoscaled if settings.autoscaled is not None else capacity.detect_autoscaler(deployments)
    )
    requests = (
        reschedule_requests(workloads, pods, now, settings.pending_timeout)
        if settings.rescheduling_enabled
        else []
    )
    return Observation(
        identity=identity_of(settings, kube.server_version()),
        nodes=capacity.node_capacities(nodes, pods, managed),
        autoscaled=autoscaled,
        workloads=workload_health(workloads),
        reschedule_requests=requests,
        synced_revision=synced_revision,
        last_error=last_error,
        adopted=adopted,
        drifted=drifted,
    )
