"""Capacity: per-node allocatable, labels and taints; available = allocatable − requests of running pods NOT
managed by nova-gitops (own label, or owned through a ReplicaSet/Job by a labelled object); finished pods hold
nothing; init containers and overhead count like the kube-scheduler counts them; limits stand in for missing
requests; each unmanaged running pod takes one ``pods`` slot; sidecar init containers (restartPolicy: Always)
add to the containers and to every later init container, as Kubernetes counts them; NotReady or cordoned
nodes have nothing available; autoscaler detection."""

from __future__ import annotations

from typing import Any

import pytest

from nova_agent import capacity
from nova_gitops.api import labels as nova_labels


def node(name: str, cpu: str = "4", memory: str = "8Gi", **extra: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"zone": "a"}},
        "spec": extra.get("spec", {}),
        "status": {
            "allocatable": {"cpu": cpu, "memory": memory, "pods": "110"},
            "conditions": [{"type": "Ready", "status": extra.get("ready", "True")}],
        },
    }


def pod(
    node_name: str,
    cpu: str,
    *,
    labels: dict[str, str] | None = None,
    owner: str = "",
    phase: str = "Running",
    init_cpu: str = "",
    limits_only: bool = False,
) -> dict[str, Any]:
    resources = {"limits": {"cpu": cpu}} if limits_only else {"requests": {"cpu": cpu}}
    spec: dict[str, Any] = {"nodeName": node_name, "containers": [{"name": "c", "resources": resources}]}
    if init_cpu:
        spec["initContainers"] = [{"name": "i", "resources": {"requests": {"cpu": init_cpu}}}]
    metadata: dict[str, Any] = {"name": "p", "namespace": "ns", "labels": labels or {}}
    if owner:
        metadata["ownerReferences"] = [{"uid": owner}]
    return {"metadata": metadata, "spec": spec, "status": {"phase": phase}}


def test_available_subtracts_only_unmanaged_running_pods() -> None:
    deployment = {"metadata": {"uid": "dep-1", "labels": {nova_labels.TARGET_CLUSTER: "c1"}}}
    replicaset = {"metadata": {"uid": "rs-1", "ownerReferences": [{"uid": "dep-1"}]}}
    managed = capacity.managed_uids([deployment], [replicaset])
    pods = [
        pod("n1", "500m"),  # unmanaged: counts
        pod("n1", "1", owner="rs-1"),  # managed through its ReplicaSet
        pod("n1", "1", labels={nova_labels.TARGET_CLUSTER: "c1"}),  # managed directly
        pod("n1", "2", phase="Succeeded"),  # finished
        pod("n2", "250m", init_cpu="1"),  # init container is larger
        pod("n2", "100m", limits_only=True),
    ]
    nodes = capacity.node_capacities([node("n2"), node("n1")], pods, managed)
    assert [n.name for n in nodes] == ["n1", "n2"]
    assert nodes[0].allocatable["cpu"] == 4000 and nodes[0].available["cpu"] == 3500
    assert nodes[1].available["cpu"] == 4000 - 1000 - 100
    assert nodes[0].available["memory"] == nodes[0].allocatable["memory"]
    assert nodes[0].labels == {"zone": "a"}
    assert nodes[0].available["pods"] == 110_000 - 1000 and nodes[1].available["pods"] == 110_000 - 2000


def container(cpu: str, *, sidecar: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {"name": "c", "resources": {"requests": {"cpu": cpu}}}
    if sidecar:
        body["restartPolicy"] = "Always"
    return body


@pytest.mark.parametrize(
    ("containers", "init_containers", "cpu"),
    [
        (["1"], [], 1000),
        (["1", "500m"], [("2", False)], 2000),  # a regular init container runs alone
        (["1"], [("500m", True)], 1500),  # a sidecar runs next to the containers
        (["1"], [("500m", True), ("2", False)], 2500),  # ... and next to a later init container
        (["1"], [("2", False), ("500m", True)], 2000),  # an earlier init container runs before it
        (["100m"], [("200m", True), ("300m", True)], 600),
    ],
)
def test_sidecars_count_as_kubernetes_counts_them(
    containers: list[str], init_containers: list[tuple[str, bool]], cpu: int
) -> None:
    spec = {
        "containers": [container(c) for c in containers],
        "initContainers": [container(c, sidecar=sidecar) for c, sidecar in init_containers],
    }
    assert capacity.pod_request({"spec": spec}) == {"cpu": cpu, "pods": 1000}


def test_not_ready_and_cordoned_nodes_have_nothing_available() -> None:
    taint = {"key": "gpu", "value": "true", "effect": "NoSchedule"}
    nodes = capacity.node_capacities(
        [node("down", ready="False"), node("cordoned", spec={"unschedulable": True, "taints": [taint]})],
        [],
        set(),
    )
    assert all(n.available["cpu"] == 0 and n.allocatable["cpu"] == 4000 for n in nodes)
    assert nodes[0].taints == (taint,) and not nodes[1].ready


def test_unparseable_quantities_are_ignored_not_fatal() -> None:
    nodes = capacity.node_capacities([node("n", cpu="lots")], [], set())
    assert "cpu" not in nodes[0].allocatable and nodes[0].allocatable["pods"] == 110_000


def test_autoscaler_detection() -> None:
    assert capacity.detect_autoscaler([{"metadata": {"name": "cluster-autoscaler-aws"}}])
    assert capacity.detect_autoscaler(
        [{"metadata": {"name": "x", "labels": {"app.kubernetes.io/name": "elotl-luna"}}}]
    )
    assert not capacity.detect_autoscaler([{"metadata": {"name": "web"}}])
