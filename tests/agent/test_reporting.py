"""Reporting against the fake API server (or a real one, with the stand-in kubelet) and a real git remote:
the status file is a Cluster document with per-node capacity and available (unmanaged pods subtracted),
node labels/taints, workload health and the synced revision; it is committed on change only; a Pending pod
past --pending-timeout becomes a reschedule request (none with --no-rescheduling-enabled); delegated mode
makes zero writes to the cluster and reports the health of objects labelled nova.elotl.co/schedule=true;
with --status-repo the report goes to that repository."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from nova_agent.clocks import FakeClock
from nova_agent.kubeports import Resource
from nova_agent.running import EXIT_OK
from nova_gitops.api import labels as nova_labels
from tests.agent.conftest import AgentFactory
from tests.agent.gitrepos_helpers import RenderedRepo, git
from tests.agent.manifests import configmap, deployment, layout
from tests.agent.pods import bound, unschedulable
from tests.fakekube.fixtures import KubeTarget
from tests.realkube.kubelets import Kubelet

DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment", True)


def status_of(repo: RenderedRepo, cluster: str = "c1") -> dict:  # type: ignore[type-arg]
    return yaml.safe_load(repo.show("nova-status", f"status/{cluster}.yaml"))  # type: ignore[no-any-return]


def later(minutes: float) -> FakeClock:
    """A fake clock ``minutes`` after the real now (the fake server stamps objects with the real time)."""
    return FakeClock(datetime.now(UTC) + timedelta(minutes=minutes))


def test_status_file_reports_capacity_health_and_revision(
    kube: KubeTarget, kubelet: Kubelet, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    n1 = kubelet.add_node(
        "n1", allocatable={"cpu": "4", "memory": "16Gi", "pods": "110"}, labels={"gpu": "no"}
    )
    n2 = kubelet.add_node("n2", taints=[{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}])
    kubelet.occupy("n1", ns, {"cpu": "1500m"}, name="unmanaged")
    kubelet.occupy("n1", ns, {"cpu": "1"}, name="ours", labels={nova_labels.TARGET_CLUSTER: "c1"})
    kubelet.pause()  # web's pods are bound and never start: web is not healthy, whatever the timing
    revision = rendered.commit(
        layout("c1", deployment("c1", ns, "web", replicas=2), configmap("c1", ns, "cfg"))
    )
    clock = FakeClock()
    agent = make_agent(clock=clock, provider="aws", region="eu-west-1")
    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_OK, outcome.message
    assert outcome.report_pushed
    document = status_of(rendered)
    assert document["kind"] == "Cluster" and document["metadata"]["name"] == "c1"
    assert document["spec"]["provider"] == "aws" and document["spec"]["kubernetesversion"].startswith("v1.")
    status = document["status"]
    assert status["capacityResources"][n1]["cpu"] == "4"
    assert status["availableResources"][n1]["cpu"] == "2500m"  # 4 - the unmanaged 1500m; ours and web's not
    assert status["nodeLabels"][n1]["gpu"] == "no"
    ours = {node: taints for node, taints in status["nodeTaints"].items() if node in kubelet.nodes}
    assert ours == {n2: [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}]}
    assert status["syncedRevision"] == revision and status["lastError"] == ""
    [web] = status["workloads"]
    assert web["name"] == "web" and web["healthy"] is False and web["condition"]
    kubelet.until(lambda: bound(kube, "web") == 2, "web's pods bound (and its controller done)")
    agent.pass_once()  # what the controllers wrote since (a real cluster's take their time)
    commits = git(rendered.remote, "rev-list", "--count", "nova-status")
    clock.advance(60)
    assert not agent.pass_once().report_pushed  # nothing changed, heartbeat not due
    assert git(rendered.remote, "rev-list", "--count", "nova-status") == commits
    clock.advance(600)
    assert agent.pass_once().report_pushed  # heartbeat due


@pytest.mark.parametrize("rescheduling", [True, False])
def test_pending_pods_become_a_reschedule_request(
    kube: KubeTarget, kubelet: Kubelet, rendered: RenderedRepo, make_agent: AgentFactory, rescheduling: bool
) -> None:
    ns = kube.namespace
    rendered.commit(layout("c1", deployment("c1", ns, "web", replicas=2)))
    agent = make_agent(clock=later(3), rescheduling_enabled=rescheduling)
    assert agent.pass_once().exit_code == EXIT_OK
    kubelet.until(lambda: unschedulable(kube, "web") == 2, "web's pods Unschedulable (no node)")
    assert agent.pass_once().exit_code == EXIT_OK
    requests = status_of(rendered)["status"]["rescheduleRequests"]
    if not rescheduling:
        assert requests == []
        return
    [request] = requests
    assert request["reason"] == f"deployment {ns}/web does not have minimum replicas available"
    assert request["group"] == "demo-policy-1a2b3c4d" and request["kind"] == "Deployment"


def test_delegated_mode_never_writes_and_reports_labelled_workloads(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    external = deployment("c1", ns, "applied-by-argo")
    external["metadata"]["labels"][nova_labels.SCHEDULE] = "true"
    rendered.commit(layout("c1", configmap("c1", ns, "would-be-applied"), external))
    agent = make_agent(orchestration_enabled=False)
    agent.kube.apply(DEPLOYMENTS, external, force=True)
    if kube.fake is not None:
        kube.fake.requests.clear()
    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_OK, outcome.message
    if kube.fake is not None:
        assert kube.fake.write_requests() == []
    assert agent.kube.get(Resource("", "v1", "configmaps", "ConfigMap", True), ns, "would-be-applied") is None
    names = [w["name"] for w in status_of(rendered)["status"]["workloads"]]
    assert "applied-by-argo" in names


def test_status_repo_of_its_own(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory, tmp_path: Path
) -> None:
    status_remote = tmp_path / "status.git"
    git(tmp_path, "init", "--quiet", "--bare", str(status_remote))
    rendered.commit(layout("c1", configmap("c1", kube.namespace, "x")))
    agent = make_agent(status_repo=f"file://{status_remote}")
    assert agent.pass_once().exit_code == EXIT_OK
    assert "kind: Cluster" in git(status_remote, "show", "nova-status:status/c1.yaml")
    assert git(rendered.remote, "branch", "--list", "nova-status") == ""
