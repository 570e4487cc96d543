"""The simulated cluster's kubelet leaves containers waiting by image name (``simulation_kubelet``), as the
stand-in kubelet for real API servers does, so a test naming such an image runs the same on both.

Behaviours covered:
- an image whose name contains ``crashloop``, ``imagepullbackoff``, ``errimagepull``,
  ``createcontainerconfigerror`` or ``invalidimagename`` leaves its container waiting with that reason and
  the kubelet's message; a crash loop's pod is Running with ``lastState.terminated`` (exit 1), the others'
  Pending; Ready and ContainersReady are False with ``ContainersNotReady``;
- the Deployment of such pods is not available, and the cluster settles (a second step writes nothing);
- a failing init container leaves the pod Pending and not Initialized, its app containers in
  ``PodInitializing``; an init container that works completes and the failing app container waits;
- an ordinary image still runs and is Ready.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from tests.fakekube.fixtures import client_for
from tests.fakekube.server import FakeKubeServer
from tests.fakekube.simulation import SimulatedCluster

NAMESPACE = "demo"


@pytest.fixture
def server() -> Iterator[FakeKubeServer]:
    fake = FakeKubeServer()
    fake.add_node("node-1")
    yield fake
    fake.stop()


@pytest.fixture
def apps(server: FakeKubeServer) -> Iterator[Any]:
    api_client = client_for(server)
    core: Any = client.CoreV1Api(api_client)
    core.create_namespace({"metadata": {"name": NAMESPACE}})
    yield client.AppsV1Api(api_client)
    api_client.close()


def deployment(image: str, init_image: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "web", "image": image}]}
    if init_image:
        spec["initContainers"] = [{"name": "migrate", "image": init_image}]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": spec},
        },
    }


def only_pod(server: FakeKubeServer) -> dict[str, Any]:
    [pod] = server.objects("pods")
    return pod


def conditions(pod: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c.get("reason", "")) for c in pod["status"]["conditions"]}


@pytest.mark.parametrize(
    ("image", "reason", "phase", "message"),
    [
        ("registry.example/web:crashloop", "CrashLoopBackOff", "Running", "back-off 10s restarting failed"),
        ("registry.example/imagepullbackoff:1", "ImagePullBackOff", "Pending", "Back-off pulling image"),
        ("registry.example/ErrImagePull:1", "ErrImagePull", "Pending", "failed to pull and unpack image"),
        ("registry.example/createcontainerconfigerror", "CreateContainerConfigError", "Pending", "not found"),
        ("registry.example/invalidimagename", "InvalidImageName", "Pending", "invalid reference format"),
    ],
)
def test_an_image_name_leaves_its_container_waiting(
    server: FakeKubeServer, apps: Any, image: str, reason: str, phase: str, message: str
) -> None:
    apps.create_namespaced_deployment(NAMESPACE, deployment(image))
    sim = SimulatedCluster(server)
    sim.step()
    pod = only_pod(server)
    assert pod["status"]["phase"] == phase
    [container] = pod["status"]["containerStatuses"]
    waiting = container["state"]["waiting"]
    assert (container["name"], container["ready"], waiting["reason"]) == ("web", False, reason)
    assert message in waiting["message"]
    assert ("lastState" in container) == (reason == "CrashLoopBackOff")
    assert conditions(pod)["Ready"] == ("False", "ContainersNotReady")
    assert conditions(pod)["ContainersReady"] == ("False", "ContainersNotReady")
    [live] = server.objects("deployments.apps")
    assert live["status"].get("availableReplicas", 0) == 0
    assert sim.step() == 0, "a stuck pod's status is written once: the cluster settles"


def test_a_failing_init_container_keeps_the_pod_initializing(server: FakeKubeServer, apps: Any) -> None:
    apps.create_namespaced_deployment(
        NAMESPACE, deployment("registry.example/web:1", init_image="registry.example/migrate:crashloop")
    )
    SimulatedCluster(server).step()
    pod = only_pod(server)
    assert pod["status"]["phase"] == "Pending"
    assert conditions(pod)["Initialized"] == ("False", "ContainersNotInitialized")
    [init] = pod["status"]["initContainerStatuses"]
    assert (init["name"], init["state"]["waiting"]["reason"]) == ("migrate", "CrashLoopBackOff")
    [app] = pod["status"]["containerStatuses"]
    assert app["state"]["waiting"]["reason"] == "PodInitializing"


def test_a_working_init_container_completes_and_the_app_container_waits(
    server: FakeKubeServer, apps: Any
) -> None:
    apps.create_namespaced_deployment(
        NAMESPACE, deployment("registry.example/web:imagepullbackoff", init_image="registry.example/init:1")
    )
    SimulatedCluster(server).step()
    pod = only_pod(server)
    [init] = pod["status"]["initContainerStatuses"]
    assert init["state"]["terminated"]["reason"] == "Completed"
    assert conditions(pod)["Initialized"] == ("True", "")
    [app] = pod["status"]["containerStatuses"]
    assert app["state"]["waiting"]["reason"] == "ImagePullBackOff"


def test_an_ordinary_image_runs(server: FakeKubeServer, apps: Any) -> None:
    apps.create_namespaced_deployment(NAMESPACE, deployment("registry.example/web:1"))
    SimulatedCluster(server).step()
    pod = only_pod(server)
    assert pod["status"]["phase"] == "Running"
    assert conditions(pod)["Ready"] == ("True", "")
