"""Cluster capacity from nodes and pods: per node allocatable, labels, taints, and what is available.

``available`` = allocatable − the requests of running pods that nova-gitops does **not** manage
(docs/design.md §7):
the scheduler accounts for its own placements itself, so counting them here would count them twice. A node
that is not Ready, or is cordoned, has nothing available (its allocatable is still reported).

A pod is managed by nova-gitops when it carries the target-cluster label, or when its owner chain (one or
two ``ownerReferences`` hops: Pod → ReplicaSet → Deployment, Pod → Job, Pod → StatefulSet) reaches an object
carrying that label. Pods that finished (Succeeded, Failed) hold no resources. A pod's request is what the
kube-scheduler counts: max(sum of containers and sidecars, largest init container plus the sidecars before
it) plus the pod overhead, taking a container's limit where it sets no request; and one ``pods`` slot, so
available ``pods`` goes down with every pod that is not ours.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nova_agent.resources import Body, labels_of
from nova_gitops.api import labels as nova_labels
from nova_gitops.api import quantities

Resources = dict[str, int]
"""Resource name → exact milli-units."""


@dataclass(frozen=True, slots=True)
class NodeCapacity:
    name: str
    allocatable: Mapping[str, int]
    available: Mapping[str, int]
    labels: Mapping[str, str]
    taints: tuple[Mapping[str, str], ...]
    ready: bool


@functools.lru_cache(maxsize=4096)
def _milli(value: str) -> int:
    return quantities.parse_quantity(value)


def milli_of(value: object) -> int | None:
    """Milli-units of a quantity (text or number); None when it is not a quantity."""
    try:
        return _milli(value) if isinstance(value, str) else quantities.parse_quantity(value)
    except (quantities.QuantityError, ValueError, TypeError):
        return None


def resource_list(raw: object) -> Resources:
    if not isinstance(raw, Mapping):
        return {}
    parsed = {str(name): milli_of(value) for name, value in raw.items()}
    return {name: value for name, value in parsed.items() if value is not None}


def container_request(container: Mapping[str, Any]) -> Resources:
    resources = container.get("resources") or {}
    requests = resource_list(resources.get("requests"))
    for name, value in resource_list(resources.get("limits")).items():
        requests.setdefault(name, value)
    return requests


def _add(total: Resources, more: Mapping[str, int]) -> Resources:
    return {name: total.get(name, 0) + more.get(name, 0) for name in {*total, *more}}


def pod_request(pod: Mapping[str, Any]) -> Resources:
    """What the kube-scheduler counts for a pod: one ``pods`` slot (1000 milli), and
    max(containers + sidecars, the largest init container plus the sidecars started before it) + overhead.

    A sidecar is an init container with ``restartPolicy: Always``: it keeps running next to the containers,
    so it adds to their total, and to every init container that starts after it."""
    spec = pod.get("spec") or {}
    total: Resources = {}
    for container in spec.get("containers") or []:
        total = _add(total, container_request(container))
    sidecars: Resources = {}
    init_peak: Resources = {}
    for container in spec.get("initContainers") or []:
        request = container_request(container)
        if isinstance(container, Mapping) and container.get("restartPolicy") == "Always":
            total = _add(total, request)
            sidecars = _add(sidecars, request)
            during = sidecars
        else:
            during = _add(request, sidecars)
        init_peak = {name: max(init_peak.get(name, 0), during.get(name, 0)) for name in {*init_peak, *during}}
    total = {name: max(total.get(name, 0), init_peak.get(name, 0)) for name in {*total, *init_peak}}
    total = _add(total, resource_list(spec.get("overhead")))
    total["pods"] = total.get("pods", 0) + 1000
    return total


def _uid(body: Mapping[str, Any]) -> str:
    return str((body.get("metadata") or {}).get("uid", ""))


def _owner_uids(body: Mapping[str, Any]) -> list[str]:
    owners = (body.get("metadata") or {}).get("ownerReferences") or []
    return [str(owner.get("uid", "")) for owner in owners if isinstance(owner, Mapping)]


def managed_uids(labelled: Iterable[Body], intermediates: Iterable[Body]) -> set[str]:
    """Uids of objects nova-gitops manages: the labelled ones, and ReplicaSets/Jobs they own."""
    uids = {_uid(body) for body in labelled} - {""}
    uids |= {_uid(body) for body in intermediates if any(uid in uids for uid in _owner_uids(body))} - {""}
    return uids


def is_managed_pod(pod: Mapping[str, Any], managed: set[str]) -> bool:
    if nova_labels.TARGET_CLUSTER in labels_of(pod):
        return True
    return any(uid in managed for uid in _owner_uids(pod))


def _node_ready(node: Mapping[str, Any]) -> bool:
    for condition in (node.get("status") or {}).get("conditions") or []:
        if isinstance(condition, Mapping) and condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False


def _taints(node: Mapping[str, Any]) -> tuple[Mapping[str, str], ...]:
    taints = (node.get("spec") or {}).get("taints") or []
    return tuple(
        {"key": str(t.get("key", "")), "value": str(t.get("value", "")), "effect": str(t.get("effect", ""))}
        for t in taints
        if isinstance(t, Mapping)
    )


def node_capacities(nodes: Sequence[Body], pods: Sequence[Body], managed: set[str]) -> list[NodeCapacity]:
    """Each node's capacity, sorted by name."""
    used: dict[str, Resources] = {}
    for pod in pods:
        node_name = (pod.get("spec") or {}).get("nodeName")
        phase = (pod.get("status") or {}).get("phase")
        if not node_name or phase in ("Succeeded", "Failed") or is_managed_pod(pod, managed):
            continue
        node_used = used.setdefault(str(node_name), {})
        for name, value in pod_request(pod).items():
            node_used[name] = node_used.get(name, 0) + value
    capacities = []
    for node in nodes:
        name = str((node.get("metadata") or {}).get("name", ""))
        allocatable = resource_list((node.get("status") or {}).get("allocatable"))
        node_used = used.get(name, {})
        ready = _node_ready(node)
        schedulable = ready and not (node.get("spec") or {}).get("unschedulable")
        available = {
            resource: max(0, value - node_used.get(resource, 0)) if schedulable else 0
            for resource, value in allocatable.items()
        }
        capacities.append(
            NodeCapacity(name, allocatable, available, dict(labels_of(node)), _taints(node), ready)
        )
    return sorted(capacities, key=lambda capacity: capacity.name)


AUTOSCALER_NAMES = frozenset({"cluster-autoscaler", "elotl-luna", "luna", "karpenter"})


def detect_autoscaler(deployments: Iterable[Body]) -> bool:
    """Whether a cluster-autoscaler, Luna or Karpenter deployment runs (by name or app label)."""
    for deployment in deployments:
        labels = labels_of(deployment)
        names = {
            str((deployment.get("metadata") or {}).get("name", "")),
            str(labels.get("app.kubernetes.io/name", "")),
            str(labels.get("app", "")),
        }
        if any(name in AUTOSCALER_NAMES or name.startswith("cluster-autoscaler") for name in names):
            return True
    return False
