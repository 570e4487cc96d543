"""A crash-looping canary fails its wave within two agent passes (issue 23, item 5), with a real nova-agent
on a cluster whose pods run: the fake's simulated cluster, or a real kube-apiserver with the stand-in kubelet
(``NOVA_TEST_KUBECONFIG``).

The controller renders a Deployment for two clusters and releases it to the canary, ``wlc-1``, whose agent
follows its release branch and pushes its report to the status branch the controller reads. The Deployment
keeps Kubernetes' default ``progressDeadlineSeconds`` (600 s): before, a canary whose new pods crash-looped
was only "not healthy yet" (``RolloutInProgress`` while the old pods served, or
``MinimumReplicasUnavailable``) and failed its wave ten minutes later, at ``ProgressDeadlineExceeded``.

Behaviours covered:
- a good image is applied, runs, and is reported healthy for its commit;
- a new render whose image crash-loops is released to the canary only; its agent applies it (pass 1), the
  new ReplicaSet's pod waits in ``CrashLoopBackOff`` — on a real cluster while the old pods still serve —,
  and the agent's next pass (2) reports the Deployment Degraded, naming the pod, the container and the
  kubelet's message; the controller's next step fails the wave (``onFailure: pause``): the record says
  why, and the later wave is never released the crash-looping commit.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from nova_agent.clocks import FakeClock
from nova_agent.kubeclient import ApiClientKube
from nova_agent.running import Agent
from nova_agent.settings import AgentSettings
from nova_gitops.controller.rolloutstep import RECORD_PATH, ROLLOUT_BRANCH
from tests.controller.helpers import Fleet, cluster_report, git, policy
from tests.controller.test_rollouts import SPREAD, STRATEGY, WallClock, released
from tests.fakekube.fixtures import KubeTarget, fake_kube, kube  # noqa: F401
from tests.kubelets import Running, running_node

CANARY = {"tier": "canary"}


@pytest.fixture
def apps(kube: KubeTarget) -> Iterator[str]:  # noqa: F811
    """The workload's namespace (the render carries it, the agent creates it); deleted afterwards on a real
    cluster."""
    name = f"{kube.namespace}-apps"
    yield name
    if kube.fake is None:
        try:
            client.CoreV1Api(kube.api_client).delete_namespace(name)
        except client.ApiException as error:
            if error.status != 404:
                raise


@pytest.fixture
def cluster(kube: KubeTarget) -> Iterator[Running]:  # noqa: F811
    with running_node(kube) as running:
        yield running


def web(namespace: str, image: str) -> dict[str, Any]:
    """Two replicas, Kubernetes' default rolling update (maxUnavailable 25%: none of 2, maxSurge 1) and
    progress deadline (600 s)."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": namespace, "labels": {"app": "web"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {"name": "app", "image": image, "resources": {"requests": {"cpu": "100m"}}}
                    ],
                },
            },
        },
    }


def canary_agent(fleet: Fleet, kube: KubeTarget) -> Agent:  # noqa: F811
    configured = AgentSettings(
        cluster="wlc-1",
        repo=fleet.url,
        cache_dir=fleet.root / "agent-cache",
        namespace=kube.namespace,
        follow_release=True,
        cluster_labels=CANARY,
    )
    return Agent(configured, ApiClientKube(kube.api_client), FakeClock())


def report_of(fleet: Fleet) -> dict[str, Any]:
    found: dict[str, Any] = yaml.safe_load(git(fleet.remote, "show", "nova-status:status/wlc-1.yaml"))
    return found["status"]  # type: ignore[no-any-return]


def waiting_pods(kube: KubeTarget, namespace: str, reason: str) -> list[str]:  # noqa: F811
    pods = client.CoreV1Api(kube.api_client).list_namespaced_pod(namespace).items
    return sorted(
        pod.metadata.name
        for pod in pods
        if any(
            status.state.waiting is not None and status.state.waiting.reason == reason
            for status in pod.status.container_statuses or []
        )
    )


def available(kube: KubeTarget, namespace: str) -> bool:  # noqa: F811
    live = client.AppsV1Api(kube.api_client).read_namespaced_deployment("web", namespace)
    return bool(
        (live.status.observed_generation or 0) >= live.metadata.generation
        and live.status.updated_replicas == 2
        and live.status.available_replicas == 2
    )


def test_a_crash_looping_canary_fails_its_wave_within_two_agent_passes(
    tmp_path: Path,
    kube: KubeTarget,  # noqa: F811
    cluster: Running,
    apps: str,
) -> None:
    fleet = Fleet(tmp_path)
    fleet.write_source("policy.yaml", policy(spreadConstraints=SPREAD))
    fleet.write_source("web.yaml", web(apps, "registry.example/web:1"))
    fleet.write_source("rollout.yaml", STRATEGY)
    fleet.report(cluster_report("wlc-1", labels=CANARY), cluster_report("wlc-2"))
    clock = WallClock()
    controller = fleet.controller(wall_clock=clock)
    controller.reconcile_once()
    good = fleet.head()
    assert released(fleet) == {"wlc-1": good}
    agent = canary_agent(fleet, kube)
    assert agent.pass_once().exit_code == 0
    cluster.until(lambda: available(kube, apps), "web to be available")
    assert agent.pass_once().exit_code == 0
    [entry] = report_of(fleet)["workloads"]
    assert (entry["name"], entry["healthy"], entry["revision"]) == ("web", True, good)

    fleet.write_source("web.yaml", web(apps, "registry.example/web:crashloop"))
    controller.reconcile_once()
    bad = fleet.head()
    assert bad != good and released(fleet)["wlc-1"] == bad
    assert agent.pass_once().exit_code == 0  # pass 1: applies the crash-looping revision
    cluster.until(lambda: bool(waiting_pods(kube, apps, "CrashLoopBackOff")), "a pod in CrashLoopBackOff")
    [crashing, *_] = waiting_pods(kube, apps, "CrashLoopBackOff")
    assert agent.pass_once().exit_code == 0  # pass 2: reports what the cluster shows
    [entry] = report_of(fleet)["workloads"]
    assert (entry["healthy"], entry["revision"], entry["reason"]) == (False, bad, "CrashLoopBackOff")
    assert f"container app of pod {crashing}" in entry["message"]
    assert "back-off" in entry["message"]

    controller.reconcile_once()
    record = yaml.safe_load(git(fleet.remote, "show", f"{ROLLOUT_BRANCH}:{RECORD_PATH}"))
    assert record["target"] == bad and record["outcome"] == "paused"
    [failure] = [wave["failure"] for wave in record["waves"] if wave["name"] == "canary"]
    assert failure.startswith("Deployment") and "Degraded on wlc-1 (CrashLoopBackOff" in failure
    assert crashing in failure
    assert released(fleet).get("wlc-2") != bad
