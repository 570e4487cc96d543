"""The agent's report says Degraded as soon as a workload's current pods are stuck (issue 23, item 5), on a
cluster whose pods run: the fake's simulated cluster, or a real kube-apiserver with the stand-in kubelet
(``NOVA_TEST_KUBECONFIG``). Pods are asked to fail by image name (``tests/kubelets.py``).

Behaviours covered:
- a Deployment whose pods wait in ``CrashLoopBackOff``, ``ImagePullBackOff``, ``ErrImagePull``,
  ``CreateContainerConfigError`` or ``InvalidImageName`` is reported unhealthy with that reason, naming
  the pod and container, in the first pass after the kubelet says so — not ``MinimumReplicasUnavailable``
  until the progress deadline;
- so are a StatefulSet, a DaemonSet and a Job whose pods crash-loop or cannot pull their image (a Job was
  ``JobActive``, healthy, for as long as its pods waited);
- a workload whose pods run is healthy, as before;
- cost (fake only: it counts the requests): a pass lists pods once, cluster-wide, as it did for capacity —
  with stuck pods or without; no read of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from kubernetes import client

from nova_agent.running import EXIT_OK
from tests.agent.conftest import AgentFactory
from tests.agent.gitrepos_helpers import RenderedRepo
from tests.agent.manifests import deployment, layout, rendered
from tests.fakekube.fixtures import KubeTarget
from tests.kubelets import Running, running_node


@pytest.fixture
def cluster(kube: KubeTarget) -> Iterator[Running]:
    with running_node(kube) as running:
        yield running


def workloads(repo: RenderedRepo) -> dict[str, dict[str, Any]]:
    status = yaml.safe_load(repo.show("nova-status", "status/c1.yaml"))["status"]
    return {f"{entry['kind']}/{entry['name']}": entry for entry in status["workloads"]}


def with_image(body: dict[str, Any], image: str) -> dict[str, Any]:
    body["spec"]["template"]["spec"]["containers"][0]["image"] = image
    return body


def pod_template(name: str, image: str, restart_policy: str = "Always") -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": name}},
        "spec": {
            "restartPolicy": restart_policy,
            "containers": [{"name": "app", "image": image, "resources": {"requests": {"cpu": "10m"}}}],
        },
    }


def statefulset(namespace: str, image: str) -> dict[str, Any]:
    return rendered(
        "c1",
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": namespace},
            "spec": {
                "replicas": 1,
                "serviceName": "db",
                "selector": {"matchLabels": {"app": "db"}},
                "template": pod_template("db", image),
            },
        },
    )


def daemonset(namespace: str, image: str) -> dict[str, Any]:
    return rendered(
        "c1",
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "agent", "namespace": namespace},
            "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": pod_template("agent", image)},
        },
    )


def job(namespace: str, image: str) -> dict[str, Any]:
    return rendered(
        "c1",
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "migrate", "namespace": namespace},
            "spec": {"backoffLimit": 0, "template": pod_template("migrate", image, "Never")},
        },
    )


def stuck_pods(kube: KubeTarget, reason: str) -> list[str]:
    pods = client.CoreV1Api(kube.api_client).list_namespaced_pod(kube.namespace).items
    return sorted(
        pod.metadata.name
        for pod in pods
        if any(
            status.state.waiting is not None and status.state.waiting.reason == reason
            for status in pod.status.container_statuses or []
        )
    )


def running_pods(kube: KubeTarget) -> list[str]:
    pods = client.CoreV1Api(kube.api_client).list_namespaced_pod(kube.namespace).items
    return sorted(pod.metadata.name for pod in pods if pod.status.phase == "Running")


@pytest.mark.parametrize(
    ("image", "reason"),
    [
        ("registry.example/web:crashloop", "CrashLoopBackOff"),
        ("registry.example/imagepullbackoff:1", "ImagePullBackOff"),
        ("registry.example/errimagepull:1", "ErrImagePull"),
        ("registry.example/createcontainerconfigerror:1", "CreateContainerConfigError"),
        ("registry.example/invalidimagename", "InvalidImageName"),
    ],
)
def test_a_deployment_whose_pods_are_stuck_is_degraded_at_the_next_pass(
    kube: KubeTarget,
    rendered: RenderedRepo,
    make_agent: AgentFactory,
    cluster: Running,
    image: str,
    reason: str,
) -> None:
    revision = rendered.commit(layout("c1", with_image(deployment("c1", kube.namespace, "web"), image)))
    agent = make_agent()
    assert agent.pass_once().exit_code == EXIT_OK
    cluster.until(lambda: bool(stuck_pods(kube, reason)), f"a pod waiting in {reason}")
    [pod] = stuck_pods(kube, reason)
    assert agent.pass_once().exit_code == EXIT_OK
    entry = workloads(rendered)["Deployment/web"]
    assert (entry["healthy"], entry["revision"], entry["reason"]) == (False, revision, reason)
    assert entry["message"].startswith(f"container app of pod {pod}")


@pytest.mark.parametrize(
    ("make", "key", "reason"),
    [
        (statefulset, "StatefulSet/db", "CrashLoopBackOff"),
        (daemonset, "DaemonSet/agent", "CrashLoopBackOff"),
        (job, "Job/migrate", "ImagePullBackOff"),
    ],
)
def test_other_workloads_whose_pods_are_stuck_are_degraded_at_the_next_pass(
    kube: KubeTarget,
    rendered: RenderedRepo,
    make_agent: AgentFactory,
    cluster: Running,
    make: Any,
    key: str,
    reason: str,
) -> None:
    image = (
        "registry.example/app:crashloop"
        if reason == "CrashLoopBackOff"
        else "registry.example/imagepullbackoff"
    )
    revision = rendered.commit(layout("c1", make(kube.namespace, image)))
    agent = make_agent()
    assert agent.pass_once().exit_code == EXIT_OK
    cluster.until(lambda: bool(stuck_pods(kube, reason)), f"a pod waiting in {reason}")
    assert agent.pass_once().exit_code == EXIT_OK
    entry = workloads(rendered)[key]
    assert (entry["healthy"], entry["revision"], entry["reason"]) == (False, revision, reason)
    assert "container app of pod " in entry["message"]


def test_a_workload_whose_pods_run_stays_healthy(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory, cluster: Running
) -> None:
    revision = rendered.commit(layout("c1", deployment("c1", kube.namespace, "web")))
    agent = make_agent()
    assert agent.pass_once().exit_code == EXIT_OK
    cluster.until(lambda: bool(running_pods(kube)), "a running pod")

    def available() -> bool:
        live = client.AppsV1Api(kube.api_client).read_namespaced_deployment("web", kube.namespace)
        return bool(live.status.available_replicas == 1)

    cluster.until(available, "web to be available")
    assert agent.pass_once().exit_code == EXIT_OK
    entry = workloads(rendered)["Deployment/web"]
    assert (entry["healthy"], entry["revision"], entry["reason"]) == (
        True,
        revision,
        "MinimumReplicasAvailable",
    )


@pytest.mark.fake_only  # counts the requests a pass makes: the fake records them
def test_a_pass_lists_pods_once_with_stuck_pods_or_without(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory, cluster: Running
) -> None:
    assert kube.fake is not None
    rendered.commit(
        layout(
            "c1",
            deployment("c1", kube.namespace, "web"),
            with_image(deployment("c1", kube.namespace, "api"), "registry.example/api:crashloop"),
        )
    )
    agent = make_agent()
    assert agent.pass_once().exit_code == EXIT_OK
    cluster.until(lambda: bool(stuck_pods(kube, "CrashLoopBackOff")), "a crash-looping pod")
    kube.fake.requests.clear()
    assert agent.pass_once().exit_code == EXIT_OK
    pod_reads = [r for r in kube.fake.requests if r.method == "GET" and "/pods" in r.path]
    assert [r.path for r in pod_reads] == ["/api/v1/pods"]
    found = workloads(rendered)
    assert (found["Deployment/web"]["healthy"], found["Deployment/api"]["reason"]) == (
        True,
        "CrashLoopBackOff",
    )
