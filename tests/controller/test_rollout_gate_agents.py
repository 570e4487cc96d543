"""The gate with a real nova-agent on a cluster (the fake API server, or a real kube-apiserver with
``NOVA_TEST_KUBECONFIG``): a canary whose agent deployed nothing does not pass (issue 21 item 5).

The controller renders a Deployment for both clusters and releases it to the canary, ``wlc-1``; the agent
of ``wlc-1`` follows its release branch and pushes its report to the status branch the controller reads.

Behaviours covered:
- an agent started with a wrong ``--path`` that exists (``clusters/wlc-1/_cluster``: the Namespace only)
  syncs the released commit, applies no workload and reports ``syncedRevision`` with no workload and no
  error; the canary's bake does not start, the next wave is not released, ``rollout status`` names the
  Deployment it does not account for, and at ``healthTimeout`` the rollout pauses saying so;
- the same agent with the right path applies the Deployment, reports it healthy for the released commit,
  and after the bake the next wave is released: the gate still passes a cluster that deployed what was
  rendered.
"""

from __future__ import annotations

import time
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
from tests.controller.helpers import Fleet, cluster_report, deployment, git, policy
from tests.controller.test_rollout_commands import CANARY, rollout, status
from tests.controller.test_rollouts import SPREAD, STRATEGY, WallClock, released
from tests.fakekube.fixtures import KubeTarget, fake_kube, kube  # noqa: F401

NODE = "nova-gate-node-1"


@pytest.fixture
def node(kube: KubeTarget) -> Iterator[str]:  # noqa: F811
    """A Ready node with room, so the agent's report keeps wlc-1 a cluster the scheduler places on (a real
    cluster here has no kubelet: the Node object is registered by hand, as a stand-in)."""
    if kube.fake is not None:
        kube.fake.add_node(NODE)
        yield NODE
        return
    core = client.CoreV1Api(kube.api_client)
    core.create_node(client.V1Node(metadata=client.V1ObjectMeta(name=NODE)))
    allocatable = {"cpu": "4", "memory": "16Gi", "pods": "110"}
    ready = {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "stand-in"}
    core.patch_node_status(
        NODE, {"status": {"capacity": allocatable, "allocatable": allocatable, "conditions": [ready]}}
    )
    try:
        yield NODE
    finally:
        core.delete_node(NODE)


@pytest.fixture
def apps(kube: KubeTarget) -> Iterator[str]:  # noqa: F811
    """The workload's namespace (not the agent's own, which the agent never applies): the render carries
    it, the agent creates it; deleted afterwards on a real cluster."""
    name = f"{kube.namespace}-apps"
    yield name
    if kube.fake is None:
        try:
            client.CoreV1Api(kube.api_client).delete_namespace(name)
        except client.ApiException as error:
            if error.status != 404:
                raise


def canary_fleet(tmp_path: Path, namespace: str) -> Fleet:
    fleet = Fleet(tmp_path)
    fleet.write_source("policy.yaml", policy(spreadConstraints=SPREAD))
    web = deployment(namespace=namespace, replicas=0)  # healthy without a kubelet
    # the stand-in node has no kubelet: a real cluster soon taints it not-ready or unreachable
    web["spec"]["template"]["spec"]["tolerations"] = [{"operator": "Exists"}]
    fleet.write_source("web.yaml", web)
    fleet.write_source("rollout.yaml", STRATEGY)
    fleet.report(cluster_report("wlc-1", labels=CANARY), cluster_report("wlc-2"))
    return fleet


def canary_agent(fleet: Fleet, kube: KubeTarget, **settings: Any) -> Agent:  # noqa: F811
    configured = AgentSettings(
        cluster="wlc-1",
        repo=fleet.url,
        cache_dir=fleet.root / "agent-cache",
        namespace=kube.namespace,
        follow_release=True,
        cluster_labels=CANARY,
        **settings,
    )
    return Agent(configured, ApiClientKube(kube.api_client), FakeClock())


def settled(kube: KubeTarget, namespace: str, name: str = "web") -> None:  # noqa: F811
    """The Deployment's controller has observed it: the fake has none, so its status is written here; a
    real cluster's kube-controller-manager writes it (waited for, at most a minute)."""
    api = client.AppsV1Api(kube.api_client)
    if kube.fake is not None:
        live = api.read_namespaced_deployment(name, namespace)
        observed = {"observedGeneration": live.metadata.generation, "replicas": 0}
        conditions = [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"}]
        api.patch_namespaced_deployment_status(
            name, namespace, {"status": {**observed, "conditions": conditions}}
        )
        return
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        live = api.read_namespaced_deployment(name, namespace)
        if (live.status.observed_generation or 0) >= live.metadata.generation:
            return
        time.sleep(0.5)
    raise AssertionError(f"kube-controller-manager never observed deployment {name}")


def report_of(fleet: Fleet, cluster: str) -> dict[str, Any]:
    found: dict[str, Any] = yaml.safe_load(git(fleet.remote, "show", f"nova-status:status/{cluster}.yaml"))
    return found["status"]  # type: ignore[no-any-return]


def test_a_canary_whose_agent_deployed_nothing_does_not_pass(
    tmp_path: Path,
    kube: KubeTarget,  # noqa: F811
    node: str,
    apps: str,
) -> None:
    fleet = canary_fleet(tmp_path, apps)
    clock = WallClock()
    controller = fleet.controller(wall_clock=clock)
    controller.reconcile_once()
    target = fleet.head()
    assert released(fleet) == {"wlc-1": target}
    assert f"clusters/wlc-1/_cluster/namespace-{apps}.yaml" in fleet.files(target)
    agent = canary_agent(fleet, kube, path="clusters/wlc-1/_cluster")  # exists: the Namespace alone
    outcome = agent.pass_once()
    assert outcome.exit_code == 0
    report = report_of(fleet, "wlc-1")
    assert report["syncedRevision"] == target and report["workloads"] == [] and report["lastError"] == ""

    controller.reconcile_once()
    clock.advance(minutes=6)
    controller.reconcile_once()
    assert released(fleet) == {"wlc-1": target}  # the bake never started: nothing is accounted for
    found = status(fleet)
    [canary] = [item for item in found["clusters"] if item["name"] == "wlc-1"]  # type: ignore[attr-defined]
    assert canary["health"] == "waiting"
    assert canary["unaccounted"] == [f"Deployment {apps}/web"]
    assert "is its --path clusters/wlc-1?" in canary["reason"]
    table = rollout(fleet, "status")
    assert f"not Deployment {apps}/web rendered for it" in table.output

    clock.advance(minutes=10)
    agent.pass_once()
    controller.reconcile_once()
    record = yaml.safe_load(git(fleet.remote, "show", f"{ROLLOUT_BRANCH}:{RECORD_PATH}"))
    assert record["outcome"] == "paused"
    [failure] = [wave["failure"] for wave in record["waves"] if wave["name"] == "canary"]
    assert failure.startswith(f"not healthy after 15m: wlc-1 reports {target[:7]} synced but not Deployment")
    assert released(fleet) == {"wlc-1": target}


def test_a_canary_that_deployed_what_was_rendered_passes(
    tmp_path: Path,
    kube: KubeTarget,  # noqa: F811
    node: str,
    apps: str,
) -> None:
    fleet = canary_fleet(tmp_path, apps)
    clock = WallClock()
    controller = fleet.controller(wall_clock=clock)
    controller.reconcile_once()
    target = fleet.head()
    agent = canary_agent(fleet, kube)
    agent.pass_once()
    settled(kube, apps)
    agent.pass_once()
    [web] = report_of(fleet, "wlc-1")["workloads"]
    assert (web["name"], web["healthy"], web["revision"]) == ("web", True, target)
    controller.reconcile_once()
    clock.advance(minutes=6)
    controller.reconcile_once()
    assert released(fleet) == {"wlc-1": target, "wlc-2": target}
