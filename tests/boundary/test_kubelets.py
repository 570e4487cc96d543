"""Nodes whose pods run, on the fake and on a real cluster (``kubelet`` fixture, ``tests/realkube``): the same
test bodies run against the fake's simulated cluster and, with ``NOVA_TEST_KUBECONFIG``, against a real
kube-apiserver with its controller-manager and scheduler and our stand-in kubelet.

Behaviours covered:
- a node is registered with the capacity, labels and taints asked for, Ready; a Deployment's pods are bound
  to it by the scheduler and run: Running, Ready, a running container, pod and host IPs, a start time; the
  Deployment becomes available;
- an image name asks for a state: CrashLoopBackOff (Running, restarted, last exit 1), ImagePullBackOff,
  ErrImagePull, CreateContainerConfigError, InvalidImageName (Pending), an unready container; the
  ``stand-in.nova.test/state`` annotation wins over the image;
- Job pods that exit 0 complete their Job, and exit 1 fails it (``backoffLimit: 0``);
- paused, bound pods wait (not Running) and run once resumed;
- a pod deleted with the default grace period is gone without waiting for it (the kubelet confirms);
- a node whose kubelet reports NotReady gets the ``not-ready`` taints and no new pod;
- the kubelet removes its nodes and their pods when it ends;
- (real clusters only) pods keep running across watches that end every second (the kubelet resumes them).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client

from tests.fakekube.fixtures import KUBECONFIG_VARIABLE, KubeTarget
from tests.realkube import kubelets, podstates
from tests.realkube.kubelets import Kubelet

SMALL = {"cpu": "2", "memory": "4Gi", "pods": "20"}


def deployment(name: str, image: str, replicas: int = 1, annotations: dict[str, str] | None = None) -> Any:
    template: dict[str, Any] = {
        "metadata": {"labels": {"app": name}},
        "spec": {"containers": [{"name": "app", "image": image, "resources": {"requests": {"cpu": "100m"}}}]},
    }
    if annotations:
        template["metadata"]["annotations"] = annotations
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}, "template": template},
    }


def job(name: str, image: str) -> Any:
    container = {"name": "work", "image": image}
    spec = {"restartPolicy": "Never", "containers": [container]}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {"backoffLimit": 0, "template": {"spec": spec}},
    }


def pods(kube: KubeTarget, app: str) -> list[dict[str, Any]]:
    core = client.CoreV1Api(kube.api_client)
    listed = core.list_namespaced_pod(kube.namespace, label_selector=f"app={app}")
    return [kube.api_client.sanitize_for_serialization(pod) for pod in listed.items]


def one_pod(kube: KubeTarget, app: str) -> dict[str, Any] | None:
    found = pods(kube, app)
    return found[0] if len(found) == 1 else None


def condition(body: dict[str, Any], kind: str) -> str | None:
    for item in (body.get("status") or {}).get("conditions") or []:
        if item.get("type") == kind:
            return str(item.get("status"))
    return None


def waiting_reason(kube: KubeTarget, app: str) -> Callable[[], str | None]:
    def reason() -> str | None:
        pod = one_pod(kube, app)
        statuses = ((pod or {}).get("status") or {}).get("containerStatuses") or []
        waiting = (statuses[0].get("state") or {}).get("waiting") if statuses else None
        return str(waiting["reason"]) if waiting else None

    return reason


def test_a_node_runs_the_pods_the_scheduler_binds_to_it(kube: KubeTarget, kubelet: Kubelet) -> None:
    node = kubelet.add_node(
        "n1",
        allocatable=SMALL,
        labels={"pool": "web"},
        taints=[{"key": "dedicated", "value": "web", "effect": "PreferNoSchedule"}],
    )
    assert node == f"{kube.namespace}-n1" and kubelet.nodes == [node]
    live = client.CoreV1Api(kube.api_client).read_node(node)
    assert live.metadata.labels["pool"] == "web" and live.status.allocatable["cpu"] == "2"
    assert [(t.key, t.effect) for t in live.spec.taints or []] == [("dedicated", "PreferNoSchedule")]
    assert condition(kube.api_client.sanitize_for_serialization(live), "Ready") == "True"

    apps = client.AppsV1Api(kube.api_client)
    apps.create_namespaced_deployment(kube.namespace, deployment("web", "registry.example/web:1", replicas=2))

    def available() -> bool:
        status = apps.read_namespaced_deployment("web", kube.namespace).status
        return status is not None and (status.available_replicas or 0) == 2

    kubelet.until(available, "web available")
    for pod in pods(kube, "web"):
        status = pod["status"]
        assert pod["spec"]["nodeName"] == node and status["phase"] == "Running"
        assert condition(pod, "Ready") == "True" and condition(pod, "ContainersReady") == "True"
        [container] = status["containerStatuses"]
        assert container["ready"] is True and "running" in container["state"]
        assert status["podIP"] and status["hostIP"] and status["startTime"]


@pytest.mark.parametrize(
    ("image", "reason", "phase"),
    [
        ("registry.example/web:crashloop", "CrashLoopBackOff", "Running"),
        ("registry.example/imagepullbackoff:1", "ImagePullBackOff", "Pending"),
        ("registry.example/errimagepull:1", "ErrImagePull", "Pending"),
        ("registry.example/createcontainerconfigerror:1", "CreateContainerConfigError", "Pending"),
        ("registry.example/invalidimagename", "InvalidImageName", "Pending"),
    ],
)
def test_an_image_name_asks_for_a_waiting_container(
    kube: KubeTarget, kubelet: Kubelet, image: str, reason: str, phase: str
) -> None:
    kubelet.add_node("n1")
    client.AppsV1Api(kube.api_client).create_namespaced_deployment(kube.namespace, deployment("w", image))
    reason_now = waiting_reason(kube, "w")
    kubelet.until(lambda: reason_now() == reason, f"a pod waiting in {reason}")
    pod = one_pod(kube, "w")
    assert pod is not None and pod["status"]["phase"] == phase
    assert condition(pod, "Ready") == "False"
    [container] = pod["status"]["containerStatuses"]
    assert container["ready"] is False
    if reason == "CrashLoopBackOff":
        assert container["restartCount"] >= 1
        assert container["lastState"]["terminated"]["exitCode"] == 1


def test_the_annotation_wins_over_the_image_and_unready_never_gets_ready(
    kube: KubeTarget, kubelet: Kubelet
) -> None:
    kubelet.add_node("n1")
    apps = client.AppsV1Api(kube.api_client)
    annotated = {podstates.STATE_ANNOTATION: "imagepullbackoff"}
    apps.create_namespaced_deployment(
        kube.namespace, deployment("a", "registry.example/crashloop:1", annotations=annotated)
    )
    apps.create_namespaced_deployment(kube.namespace, deployment("u", "registry.example/unready:1"))
    reason_of_a = waiting_reason(kube, "a")

    def unready_running() -> bool:
        pod = one_pod(kube, "u")
        return pod is not None and (pod.get("status") or {}).get("phase") == "Running"

    kubelet.until(lambda: reason_of_a() == "ImagePullBackOff" and unready_running(), "both pods started")
    unready = one_pod(kube, "u")
    assert unready is not None and condition(unready, "Ready") == "False"
    [container] = unready["status"]["containerStatuses"]
    assert container["started"] is True and container["ready"] is False


def test_job_pods_exit_as_their_image_says(kube: KubeTarget, kubelet: Kubelet) -> None:
    kubelet.add_node("n1")
    batch = client.BatchV1Api(kube.api_client)
    batch.create_namespaced_job(kube.namespace, job("ok", "registry.example/task:exit-0"))
    batch.create_namespaced_job(kube.namespace, job("bad", "registry.example/task:exit-1"))

    def finished(name: str, kind: str) -> bool:
        status = kube.api_client.sanitize_for_serialization(batch.read_namespaced_job(name, kube.namespace))
        return condition(status, kind) == "True"

    kubelet.until(lambda: finished("ok", "Complete") and finished("bad", "Failed"), "both Jobs finished")
    core = client.CoreV1Api(kube.api_client)

    def phases() -> dict[str, str]:
        listed = core.list_namespaced_pod(kube.namespace).items
        return {pod.metadata.labels["job-name"]: pod.status.phase for pod in listed}

    kubelet.until(lambda: phases() == {"ok": "Succeeded", "bad": "Failed"}, "one pod succeeded, one failed")
    [bad] = [
        pod for pod in core.list_namespaced_pod(kube.namespace).items if pod.metadata.name.startswith("bad")
    ]
    assert bad.status.container_statuses[0].state.terminated.exit_code == 1


def test_paused_pods_wait_until_resumed(kube: KubeTarget, kubelet: Kubelet) -> None:
    node = kubelet.add_node("n1")
    kubelet.pause()
    apps = client.AppsV1Api(kube.api_client)
    apps.create_namespaced_deployment(kube.namespace, deployment("web", "registry.example/web:1"))

    def bound() -> bool:
        pod = one_pod(kube, "web")
        return pod is not None and pod["spec"].get("nodeName") == node

    kubelet.until(bound, "the pod bound to the node")
    pod = one_pod(kube, "web")
    assert pod is not None and (pod.get("status") or {}).get("phase") == "Pending"
    kubelet.resume()

    def running() -> bool:
        pod = one_pod(kube, "web")
        return pod is not None and pod["status"].get("phase") == "Running"

    kubelet.until(running, "the pod running once resumed")


def test_a_graceful_deletion_is_confirmed(kube: KubeTarget, kubelet: Kubelet) -> None:
    kubelet.add_node("n1")
    core = client.CoreV1Api(kube.api_client)
    kubelet.occupy("n1", kube.namespace, {"cpu": "100m", "memory": "64Mi"}, name="lone")
    kubelet.until(
        lambda: core.read_namespaced_pod("lone", kube.namespace).status.phase == "Running", "running"
    )
    core.delete_namespaced_pod("lone", kube.namespace)  # the default grace period: 30 s

    def gone() -> bool:
        return not [
            pod for pod in core.list_namespaced_pod(kube.namespace).items if pod.metadata.name == "lone"
        ]

    kubelet.until(gone, "the pod deleted", timeout=20)


def test_a_node_that_is_not_ready_is_tainted_and_takes_no_new_pod(kube: KubeTarget, kubelet: Kubelet) -> None:
    node = kubelet.add_node("n1")
    kubelet.set_node_ready("n1", False)
    core = client.CoreV1Api(kube.api_client)

    def tainted() -> bool:
        taints = core.read_node(node).spec.taints or []
        return {(t.key, t.effect) for t in taints} >= {("node.kubernetes.io/not-ready", "NoSchedule")}

    kubelet.until(tainted, "the not-ready taint")
    client.AppsV1Api(kube.api_client).create_namespaced_deployment(
        kube.namespace, deployment("web", "registry.example/web:1")
    )

    def unschedulable() -> bool:
        pod = one_pod(kube, "web")
        return pod is not None and condition(pod, "PodScheduled") == "False"

    kubelet.until(unschedulable, "the pod unschedulable")
    pod = one_pod(kube, "web")
    assert pod is not None and "1 node(s) had untolerated taint(s)" in next(
        c["message"] for c in pod["status"]["conditions"] if c["type"] == "PodScheduled"
    )
    kubelet.set_node_ready("n1", True)
    kubelet.until(lambda: not tainted(), "the taint lifted")


def test_the_kubelet_removes_its_nodes_and_their_pods_when_it_ends(kube: KubeTarget) -> None:
    core = client.CoreV1Api(kube.api_client)
    with kubelets.for_target(kube.api_client, kube.fake, f"{kube.namespace}-own") as own:
        node = own.add_node("n1")
        own.occupy("n1", kube.namespace, {"cpu": "100m", "memory": "64Mi"}, name="p")
        assert [n.metadata.name for n in core.list_node().items if n.metadata.name == node] == [node]
    assert not [n for n in core.list_node().items if n.metadata.name == node]
    assert not [p for p in core.list_namespaced_pod(kube.namespace).items if p.spec.node_name == node]


@pytest.mark.skipif(
    not os.environ.get(KUBECONFIG_VARIABLE), reason="real clusters only: the fake has no kubelet watch"
)
def test_pods_run_across_watches_that_end(kube: KubeTarget) -> None:
    core = client.CoreV1Api(kube.api_client)
    with kubelets.RealKubelet(kube.api_client, prefix=kube.namespace, watch_timeout=1) as stand_in:
        stand_in.add_node("n1")
        for index in range(3):
            resumed = stand_in.reconnects
            # the watch ends every second: each pod is seen by a resumed watch, and runs (occupy waits)
            stand_in.wait_for(lambda since=resumed: stand_in.reconnects > since, "the watch to resume")
            stand_in.occupy("n1", kube.namespace, {"cpu": "10m", "memory": "16Mi"}, name=f"p{index}")
        assert {pod.status.phase for pod in core.list_namespaced_pod(kube.namespace).items} == {"Running"}
        stand_in.check()
