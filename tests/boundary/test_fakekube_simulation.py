"""The fake API server's simulated-cluster mode (kwok-like), driven through the real kubernetes client.

Behaviours covered:
- a Deployment gets a ReplicaSet and Running pods bound to nodes; its status reaches readyReplicas and
  availableReplicas with Available=True/MinimumReplicasAvailable and Progressing=NewReplicaSetAvailable, and
  the agent's health rule calls it healthy;
- pods that fit no node stay Pending with PodScheduled=False, reason Unschedulable and kube-scheduler's
  message; the Deployment is then Available=False;
- nodeSelector, required node affinity and taints/tolerations decide the node (table);
- deleting a Deployment deletes its ReplicaSet and pods; scaling down removes unscheduled pods first;
- StatefulSets make ordinal pods; DaemonSets one pod per eligible node; Jobs complete after `job_duration`
  on the injected clock;
- `fill_nodes` leaves the replacements Pending since the clock's time, and `release` lets them run;
- a Deployment making no progress past its deadline turns Progressing=False/ProgressDeadlineExceeded;
- background mode: `start()` reacts to API writes and `settle()` waits until it has caught up;
- property: the scheduler never binds more than a node's allocatable.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kubernetes import client

from nova_agent import health
from tests.fakekube import simulation_scheduling as scheduling
from tests.fakekube.fixtures import client_for
from tests.fakekube.server import FakeKubeServer
from tests.fakekube.simulation import SimulatedCluster

NAMESPACE = "demo"


class Clock:
    def __init__(self) -> None:
        self.current = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.current

    def advance(self, seconds: float) -> None:
        self.current += timedelta(seconds=seconds)


@pytest.fixture
def server() -> Iterator[FakeKubeServer]:
    fake = FakeKubeServer()
    yield fake
    fake.stop()


@pytest.fixture
def api(server: FakeKubeServer) -> Iterator[Any]:
    api_client = client_for(server)
    core: Any = client.CoreV1Api(api_client)
    core.create_namespace({"metadata": {"name": NAMESPACE}})
    yield api_client
    api_client.close()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def sim(server: FakeKubeServer, clock: Clock) -> SimulatedCluster:
    return SimulatedCluster(server, clock, job_duration=timedelta(minutes=1))


def template(cpu: str = "500m", **spec: Any) -> dict[str, Any]:
    container = {"name": "app", "image": "registry.example/app:1", "resources": {"requests": {"cpu": cpu}}}
    return {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [container], **spec}}


def deployment(replicas: int, cpu: str = "500m", name: str = "web", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": template(cpu, **spec),
        },
    }


def apps_api(api: Any) -> Any:
    """Typed clients, used with plain dict bodies (which the client accepts) in these tests."""
    return client.AppsV1Api(api)


def batch_api(api: Any) -> Any:
    return client.BatchV1Api(api)


def pods(server: FakeKubeServer) -> list[dict[str, Any]]:
    return [pod for pod in server.objects("pods") if pod["metadata"]["namespace"] == NAMESPACE]


def conditions(body: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c.get("reason", "")) for c in body["status"].get("conditions", [])}


def test_a_deployment_gets_running_pods_and_an_available_status(
    server: FakeKubeServer, api: Any, sim: SimulatedCluster
) -> None:
    server.add_node("node-1")
    apps_api(api).create_namespaced_deployment(NAMESPACE, deployment(3))
    sim.step()
    [replicaset] = server.objects("replicasets.apps")
    assert replicaset["status"]["readyReplicas"] == 3
    assert [(p["spec"]["nodeName"], p["status"]["phase"]) for p in pods(server)] == [
        ("node-1", "Running")
    ] * 3
    assert all(p["metadata"]["labels"]["pod-template-hash"] for p in pods(server))
    [live] = server.objects("deployments.apps")
    status = live["status"]
    assert (status["readyReplicas"], status["availableReplicas"], status["updatedReplicas"]) == (3, 3, 3)
    assert status["observedGeneration"] == live["metadata"]["generation"]
    assert conditions(live) == {
        "Available": ("True", "MinimumReplicasAvailable"),
        "Progressing": ("True", "NewReplicaSetAvailable"),
    }
    assert health.deployment_health(live).healthy
    assert sim.step() == 0, "a settled cluster writes nothing"


def test_pods_that_fit_no_node_stay_pending_unschedulable(
    server: FakeKubeServer, api: Any, sim: SimulatedCluster, clock: Clock
) -> None:
    server.add_node("node-1", allocatable={"cpu": "1", "memory": "4Gi", "pods": "110"})
    apps_api(api).create_namespaced_deployment(NAMESPACE, deployment(3))
    sim.step()
    phases = sorted(p["status"]["phase"] for p in pods(server))
    assert phases == ["Pending", "Running", "Running"]
    [pending] = [p for p in pods(server) if p["status"]["phase"] == "Pending"]
    [scheduled] = pending["status"]["conditions"]
    assert scheduled["type"] == "PodScheduled" and scheduled["status"] == "False"
    assert scheduled["reason"] == "Unschedulable"
    assert scheduled["message"] == (  # kube-scheduler v1.36's words, as a real cluster writes them
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    assert scheduled["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    [live] = server.objects("deployments.apps")
    assert conditions(live)["Available"] == ("False", "MinimumReplicasUnavailable")
    assert not health.deployment_health(live).healthy


LABELLED = {"disk": "ssd"}
TAINT = {"key": "dedicated", "value": "ml", "effect": "NoSchedule"}
TOLERATION = {"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"}
AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}
            ]
        }
    }
}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, "plain"),
        ({"nodeSelector": LABELLED}, "labelled"),
        ({"affinity": AFFINITY}, "labelled"),
        ({"nodeSelector": {"disk": "nvme"}}, None),
        ({"nodeSelector": {"gpu": "yes"}, "tolerations": [TOLERATION]}, "tainted"),
        ({"nodeSelector": {"gpu": "yes"}}, None),
    ],
)
def test_selectors_affinity_and_taints_choose_the_node(
    server: FakeKubeServer, api: Any, sim: SimulatedCluster, spec: dict[str, Any], expected: str | None
) -> None:
    server.add_node("plain", allocatable={"cpu": "8", "memory": "16Gi", "pods": "110"})
    server.add_node("labelled", labels=LABELLED, allocatable={"cpu": "2", "memory": "16Gi", "pods": "110"})
    server.add_node("tainted", labels={"gpu": "yes"}, taints=[TAINT])
    apps_api(api).create_namespaced_deployment(NAMESPACE, deployment(1, **spec))
    sim.step()
    [pod] = pods(server)
    assert pod["spec"].get("nodeName") == expected
    if expected is None:
        assert pod["status"]["conditions"][0]["message"].startswith("0/3 nodes are available: ")


def test_deleting_a_deployment_deletes_its_replicaset_and_pods(
    server: FakeKubeServer, api: Any, sim: SimulatedCluster
) -> None:
    server.add_node("node-1")
    apps = apps_api(api)
    apps.create_namespaced_deployment(NAMESPACE, deployment(2))
    sim.step()
    assert len(pods(server)) == 2
    apps.delete_namespaced_deployment("web", NAMESPACE)
    sim.step()
    assert server.objects("replicasets.apps") == [] and pods(server) == []


def test_scaling_down_removes_unscheduled_pods_first(
    server: FakeKubeServer, api: Any, sim: SimulatedCluster
) -> None:
    server.add_node("node-1", allocatable={"cpu": "1", "memory": "4Gi", "pods": "110"})
    apps = apps_api(api)
    apps.create_namespaced_deployment(NAMESPACE, deployment(4))
    sim.step()
    running_before = {p["metadata"]["name"] for p in pods(server) if p["status"]["phase"] == "Running"}
    apps.patch_namespaced_deployment("web", NAMESPACE, {"spec": {"replicas": 2}})
    sim.step()
    assert {p["metadata"]["name"] for p in pods(server)} == running_before
    [live] = server.objects("deployments.apps")
    assert conditions(live)["Available"] == ("True", "MinimumReplicasAvailable")


def test_statefulsets_daemonsets_and_jobs_get_their_pods(
    server: FakeKubeServer, api: Any, sim: SimulatedCluster, clock: Clock
) -> None:
    server.add_node("node-1")
    server.add_node("node-2")
    server.add_node("gpu", taints=[TAINT])
    apps = apps_api(api)
    selector = {"matchLabels": {"app": "web"}}
    apps.create_namespaced_stateful_set(
        NAMESPACE,
        {
            "metadata": {"name": "db"},
            "spec": {"replicas": 3, "serviceName": "db", "selector": selector, "template": template()},
        },
    )
    apps.create_namespaced_daemon_set(
        NAMESPACE,
        {"metadata": {"name": "agent"}, "spec": {"selector": selector, "template": template("10m")}},
    )
    batch_api(api).create_namespaced_job(
        NAMESPACE,
        {
            "metadata": {"name": "etl"},
            "spec": {"parallelism": 2, "completions": 2, "template": template(restartPolicy="Never")},
        },
    )
    sim.step()
    names = sorted(p["metadata"]["name"] for p in pods(server))
    assert [n for n in names if n.startswith("db-")] == ["db-0", "db-1", "db-2"]
    daemon_nodes = sorted(
        p["spec"]["nodeName"] for p in pods(server) if p["metadata"]["name"].startswith("agent-")
    )
    assert daemon_nodes == ["node-1", "node-2"], "the tainted node is not eligible"
    [statefulset] = server.objects("statefulsets.apps")
    assert statefulset["status"]["readyReplicas"] == 3
    [daemonset] = server.objects("daemonsets.apps")
    assert (daemonset["status"]["desiredNumberScheduled"], daemonset["status"]["numberReady"]) == (2, 2)
    [job] = server.objects("jobs.batch")
    assert job["status"]["active"] == 2 and "conditions" not in job["status"]
    clock.advance(61)
    sim.step()
    [job] = server.objects("jobs.batch")
    assert job["status"]["succeeded"] == 2
    assert conditions(job)["Complete"] == ("True", "CompletionsReached")
    assert health.job_health(job).healthy


def test_fill_nodes_leaves_replacements_pending_and_release_runs_them(
    server: FakeKubeServer, api: Any, sim: SimulatedCluster, clock: Clock
) -> None:
    server.add_node("node-1")
    apps_api(api).create_namespaced_deployment(NAMESPACE, deployment(2))
    sim.step()
    clock.advance(30)
    evicted = sim.fill_nodes()
    sim.step()
    assert len(evicted) == 2
    waiting = pods(server)
    assert [p["status"]["phase"] for p in waiting] == ["Pending", "Pending"]
    assert {p["status"]["conditions"][0]["lastTransitionTime"] for p in waiting} == {"2026-01-01T00:00:30Z"}
    assert not {p["metadata"]["name"] for p in waiting} & {e.split("/")[1] for e in evicted}
    clock.advance(30)
    sim.step()
    assert {p["status"]["conditions"][0]["lastTransitionTime"] for p in pods(server)} == {
        "2026-01-01T00:00:30Z"
    }
    assert sim.release() == 1
    sim.step()
    assert [p["status"]["phase"] for p in pods(server)] == ["Running", "Running"]


def test_no_progress_past_the_deadline_is_reported(
    server: FakeKubeServer, api: Any, sim: SimulatedCluster, clock: Clock
) -> None:
    server.add_node("node-1", allocatable={"cpu": "1", "memory": "4Gi", "pods": "110"})
    apps_api(api).create_namespaced_deployment(NAMESPACE, deployment(3))
    sim.step()
    clock.advance(601)
    sim.step()
    [live] = server.objects("deployments.apps")
    assert conditions(live)["Progressing"] == ("False", "ProgressDeadlineExceeded")
    assert health.deployment_health(live).reason == "ProgressDeadlineExceeded"


def test_background_mode_reacts_to_api_writes(server: FakeKubeServer, api: Any) -> None:
    server.add_node("node-1")
    sim = SimulatedCluster(server).start()
    try:
        apps_api(api).create_namespaced_deployment(NAMESPACE, deployment(2))
        assert sim.settle(timeout=10)
        [live] = server.objects("deployments.apps")
        assert live["status"]["availableReplicas"] == 2
    finally:
        sim.stop()


def _node(name: str, cpu: int, pods: int) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {}},
        "spec": {},
        "status": {
            "allocatable": {"cpu": f"{cpu}m", "memory": "1Gi", "pods": str(pods)},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


@settings(max_examples=100, deadline=None)
@given(
    nodes=st.lists(st.tuples(st.integers(0, 4000), st.integers(0, 5)), min_size=0, max_size=4),
    requests=st.lists(st.integers(0, 3000), max_size=15),
)
def test_the_scheduler_never_oversubscribes_a_node(nodes: list[tuple[int, int]], requests: list[int]) -> None:
    states = scheduling.node_states([_node(f"n{i}", cpu, slots) for i, (cpu, slots) in enumerate(nodes)], [])
    bound: dict[str, list[int]] = {}
    for cpu in requests:
        pod = {"spec": {"containers": [{"resources": {"requests": {"cpu": f"{cpu}m"}}}]}}
        decision = scheduling.schedule(pod, states)
        if decision.node is not None:
            bound.setdefault(decision.node, []).append(cpu)
        else:
            assert decision.message
    for i, (cpu, slots) in enumerate(nodes):
        assert sum(bound.get(f"n{i}", [])) <= cpu
        assert len(bound.get(f"n{i}", [])) <= slots
