"""What a test waits for on the cluster (``kubelet.until``): a Deployment's available replicas, a workload's
Unschedulable pods, read through the API as the agent reads them, on the fake or a real cluster."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from tests.fakekube.fixtures import KubeTarget


def available(kube: KubeTarget, name: str, namespace: str = "") -> int:
    """The Deployment's ``availableReplicas`` for its current spec (0 while its status is older)."""
    try:
        body: Any = client.AppsV1Api(kube.api_client).read_namespaced_deployment(
            name, namespace or kube.namespace
        )
    except client.ApiException as error:
        if error.status == 404:
            return 0
        raise
    status = body.status
    if status is None or (status.observed_generation or 0) < (body.metadata.generation or 0):
        return 0
    return int(status.available_replicas or 0)


def unschedulable(kube: KubeTarget, app: str, namespace: str = "") -> int:
    """How many pods labelled ``app=<app>`` the scheduler found no node for (PodScheduled False)."""
    listed = client.CoreV1Api(kube.api_client).list_namespaced_pod(
        namespace or kube.namespace, label_selector=f"app={app}"
    )
    return sum(
        1
        for pod in listed.items
        if any(
            c.type == "PodScheduled" and c.status == "False" and c.reason == "Unschedulable"
            for c in (pod.status.conditions if pod.status else None) or []
        )
    )


def bound(kube: KubeTarget, app: str, namespace: str = "") -> int:
    """How many pods labelled ``app=<app>`` are bound to a node."""
    listed = client.CoreV1Api(kube.api_client).list_namespaced_pod(
        namespace or kube.namespace, label_selector=f"app={app}"
    )
    return sum(1 for pod in listed.items if pod.spec.node_name)
