"""Observing the cluster for the report: health of our workloads, reschedule requests, and capacity.

Reads only (lists of nodes, pods, ReplicaSets, Jobs and Deployments, cluster-wide), so it is the same in both
modes: with orchestration the workloads are the live objects of this agent's inventory
(:mod:`nova_agent.owned`), each judged for the revision it reflects; in delegated mode they are the objects an
external orchestrator applied with ``nova.elotl.co/schedule: "true"``, narrowed to those of this cluster's
directory (:mod:`nova_agent.delegating`). A list that fails (forbidden, the API unreachable) leaves the
observation without capacity, and says why in ``last_error`` and :attr:`Observed.problem`: the report is still
written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from nova_agent import capacity, crashlooping, driftchecks, drifting, health
from nova_agent.drifting import DriftedObject
from nova_agent.kubeports import KubePort, Resource
from nova_agent.owned import OwnedObject
from nova_agent.permissions import explained
from nova_agent.reports import ClusterIdentity, Observation, WorkloadHealth
from nova_agent.rescheduling import reschedule_requests
from nova_agent.resources import Body, BodyError, ObjectRef, ref_of
from nova_agent.settings import AgentSettings
from nova_gitops.api import labels as nova_labels
from nova_gitops.clients.kuberest import KubeApiError, KubeUnavailable

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
DELEGATED_KINDS = frozenset((resource.group, resource.kind) for resource in DELEGATED_RESOURCES)


def delegated_workloads(kube: KubePort, agent_namespace: str) -> list[Body]:
    selector = f"{nova_labels.SCHEDULE}=true"
    items: list[Body] = []
    for resource in DELEGATED_RESOURCES:
        with explained("list", resource, "", agent_namespace):
            items += kube.list(resource, None, selector)
    return items


def autoscaled_in(kube: KubePort, live: Sequence[Body]) -> set[tuple[str, str, str]]:
    """(namespace, kind, name) of the ``live`` objects' autoscaling targets; HorizontalPodAutoscalers are
    only listed when something in ``live`` could be one's target."""
    namespaces: set[str] = set()
    for body in live:
        try:
            ref = ref_of(body)
        except BodyError:
            continue
        if (ref.group, ref.kind) in drifting.SCALED_KINDS:
            namespaces.add(ref.namespace)
    return driftchecks.autoscaled(kube, namespaces) if namespaces else set()


def workload_health(
    workloads: Sequence[OwnedObject],
    synced_revision: str = "",
    stuck: crashlooping.StuckPods | None = None,
) -> list[WorkloadHealth]:
    """Each workload's health for ``synced_revision`` (see :func:`health.health_at_revision`); Degraded
    when a pod of its current revision is stuck (``stuck``: see :mod:`nova_agent.crashlooping`)."""
    reports = []
    for item in workloads:
        verdict = health.health_at_revision(item.body, item.revision, item.generation, synced_revision)
        if stuck is not None:
            verdict = crashlooping.judged(verdict, item.body, stuck)
        if verdict is not None:
            reports.append(WorkloadHealth(ref_of(item.body), verdict, item.revision))
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


@dataclass(frozen=True, slots=True)
class Observed:
    observation: Observation
    problem: Exception | None = None
    """Why capacity could not be measured: the report is written without it, and says why in lastError."""


def _listed(kube: KubePort, resource: Resource, agent_namespace: str) -> Sequence[Body]:
    with explained("list", resource, "", agent_namespace):
        return kube.list(resource)


def _managed(
    settings: AgentSettings, bodies: Sequence[Body], deployments: Sequence[Body], owned: Sequence[Body]
) -> set[str]:
    """The uids of what Nova manages here (``capacity.managed_uids``): this agent's objects (only those
    labelled for Nova, when it does not orchestrate) and the Deployments that name a target cluster, with
    the ReplicaSets and Jobs they own."""
    if settings.orchestration_enabled:
        labelled = bodies
    else:
        labelled = [b for b in bodies if nova_labels.SCHEDULE in (b.get("metadata") or {}).get("labels", {})]
    return capacity.managed_uids(
        [
            *labelled,
            *(d for d in deployments if nova_labels.TARGET_CLUSTER in (d["metadata"].get("labels") or {})),
        ],
        owned,
    )


def observe(
    kube: KubePort,
    settings: AgentSettings,
    workloads: Sequence[OwnedObject],
    now: datetime,
    *,
    synced_revision: str,
    last_error: str,
    adopted: Sequence[ObjectRef] = (),
    drifted: Sequence[DriftedObject] = (),
) -> Observed:
    """Measure the cluster: five cluster-wide lists and ``/version``. ``workloads`` are this agent's own
    (health and reschedule requests cover nothing else); the pods and ReplicaSets listed for capacity also
    say which workloads' current pods are stuck (crash loops: :mod:`nova_agent.crashlooping`), at no read
    of their own. When any list fails (forbidden, the API unreachable), the observation has no capacity,
    health falls back to the workloads' own statuses, and ``last_error`` says why."""
    bodies = [item.body for item in workloads]
    problem: Exception | None = None
    try:
        nodes = _listed(kube, NODES, settings.namespace)
        pods = _listed(kube, PODS, settings.namespace)
        replicasets = _listed(kube, REPLICASETS, settings.namespace)
        owned = [*replicasets, *_listed(kube, JOBS, settings.namespace)]
        deployments = _listed(kube, DEPLOYMENTS, settings.namespace)
        version = kube.server_version()
    except (KubeApiError, KubeUnavailable) as error:
        problem = error
        nodes, pods, replicasets, owned, deployments, version = [], [], [], [], [], ""
        last_error = "; ".join(filter(None, [last_error, f"capacity not measured: {error}"]))
    managed = _managed(settings, bodies, deployments, owned)
    autoscaled = (
        settings.autoscaled if settings.autoscaled is not None else capacity.detect_autoscaler(deployments)
    )
    requests = (
        reschedule_requests(bodies, pods, now, settings.pending_timeout)
        if settings.rescheduling_enabled
        else []
    )
    observation = Observation(
        identity=identity_of(settings, version),
        nodes=capacity.node_capacities(nodes, pods, managed),
        autoscaled=autoscaled,
        workloads=workload_health(workloads, synced_revision, crashlooping.index(pods, replicasets)),
        reschedule_requests=requests,
        synced_revision=synced_revision,
        last_error=last_error,
        adopted=adopted,
        drifted=drifted,
        capacity_measured=problem is None,
    )
    return Observed(observation, problem)
