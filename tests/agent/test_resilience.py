"""Resilience and the whole loop: a git remote that is down leaves the cluster as it is, reports exit 4 and
backs off (growing delays); an agent killed mid-apply converges on the next pass and still prunes what it had
applied before the kill; custom resources wait for their CRD to be Established; the API server's injected 500s
fail one object, not the pass; two agents on two clusters (fakes, or the two real clusters) sync one
rendered repo, report, and prune after a change; ``nova-agent sync`` via the CLI with --kubeconfig/--context;
``run`` sleeps the interval between passes until stopped; --dry-run persists nothing (server-side
dryRun=All, no inventory, no report push)."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from nova_agent import cli
from nova_agent.clocks import FakeClock, SystemClock
from nova_agent.kubeclient import ApiClientKube
from nova_agent.kubeports import Resource
from nova_agent.resources import Body
from nova_agent.running import EXIT_OBJECT_FAILURES, EXIT_OK, EXIT_UNREACHABLE, Agent
from nova_agent.settings import AgentSettings
from tests.agent.conftest import AgentFactory
from tests.agent.gitrepos_helpers import RenderedRepo, git
from tests.agent.manifests import configmap, layout, widget, widget_crd
from tests.fakekube.fixtures import KubeTarget, client_for
from tests.fakekube.server import FakeKubeServer
from tests.realkube import kubelets

CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap", True)


class Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs."""


class DyingKube(ApiClientKube):
    """Our own port, dying after ``applies`` object applies (the inventory write is not counted)."""

    def __init__(self, api_client: Any, applies: int) -> None:
        super().__init__(api_client)
        self.remaining = applies

    def apply(self, resource: Resource, body: Body, *, force: bool, dry_run: bool = False) -> Body:
        if resource.kind != "ConfigMap" or not body["metadata"]["name"].startswith("nova-agent-inventory"):
            if self.remaining == 0:
                raise Killed
            self.remaining -= 1
        return super().apply(resource, body, force=force, dry_run=dry_run)


def test_git_down_keeps_the_cluster_and_backs_off(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    rendered.commit(layout("c1", configmap("c1", ns, "a")))
    agent = make_agent(interval=10.0)
    assert agent.pass_once().exit_code == EXIT_OK
    shutil.rmtree(rendered.remote)
    if kube.fake is not None:
        kube.fake.requests.clear()
    delays = []
    for _ in range(3):
        outcome = agent.pass_once()
        assert outcome.exit_code == EXIT_UNREACHABLE and "check the URL" in outcome.message
        delays.append(agent.next_delay(outcome))
    assert delays == sorted(delays) and delays[0] >= 10.0 and delays[-1] > delays[0]
    if kube.fake is not None:
        assert kube.fake.write_requests() == []
    assert agent.kube.get(CONFIGMAPS, ns, "a") is not None


def test_killed_mid_apply_converges_next_pass(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    names = [f"cm-{i}" for i in range(10)]
    rendered.commit(layout("c1", *(configmap("c1", ns, n) for n in names)))
    dying = make_agent(report_enabled=False, api_client=None)
    dying.kube = DyingKube(kube.api_client, applies=4)
    with pytest.raises(Killed):
        dying.pass_once()
    agent = make_agent(report_enabled=False)
    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_OK and outcome.sync is not None
    assert len(outcome.sync.applied) == 10  # digests of the 4 sent before the kill were never recorded
    assert all(agent.kube.get(CONFIGMAPS, ns, n) is not None for n in names)
    rendered.commit({f"clusters/c1/{ns}/configmap-cm-0.yaml": None})  # applied before the kill
    pruned = agent.pass_once()
    assert pruned.sync is not None and [r.name for r in pruned.sync.pruned] == ["cm-0"]


@pytest.mark.fake_only("delays CRD establishment and injects a 500 on one apply")
def test_custom_resources_wait_for_their_crd_and_injected_500_fails_one_object(
    rendered: RenderedRepo, tmp_path: Path
) -> None:
    server = FakeKubeServer(crd_established_delay=0.3)
    try:
        rendered.commit(
            layout(
                "c1",
                widget_crd("c1"),
                widget("c1", "default", "w1"),
                configmap("c1", "default", "flaky"),
                configmap("c1", "default", "fine"),
            )
        )
        server.fail_next("PATCH", r"/configmaps/flaky$", 500, "etcdserver: request timed out")
        settings = AgentSettings(
            "c1", rendered.url, tmp_path / "cache", namespace="default", report_enabled=False
        )
        agent = Agent(settings, ApiClientKube(client_for(server)), SystemClock())
        outcome = agent.pass_once()
        assert outcome.exit_code == EXIT_OBJECT_FAILURES and outcome.sync is not None
        assert [r.name for r in outcome.sync.applied] == ["widgets.example.com", "fine", "w1"]
        assert "etcdserver: request timed out" in outcome.sync.failed[next(iter(outcome.sync.failed))]
        assert [o["metadata"]["name"] for o in server.objects("widgets.example.com")] == ["w1"]
    finally:
        server.stop()


def test_two_agents_on_two_clusters_sync_report_and_prune(
    rendered: RenderedRepo, tmp_path: Path, kube_pair: tuple[KubeTarget, KubeTarget]
) -> None:
    targets = dict(zip(("c1", "c2"), kube_pair, strict=True))
    with contextlib.ExitStack() as stack:
        for name, target in targets.items():
            kubelet = stack.enter_context(
                kubelets.for_target(target.api_client, target.fake, target.namespace)
            )
            kubelet.add_node(f"{name}-node")
        one, two = targets["c1"].namespace, targets["c2"].namespace
        files = layout("c1", configmap("c1", one, "a"), configmap("c1", one, "b"))
        files |= layout("c2", *(configmap("c2", two, f"x{i}") for i in range(4)))
        rendered.commit(files)
        agents = {
            name: Agent(
                AgentSettings(name, rendered.url, tmp_path / f"cache-{name}", namespace=target.namespace),
                ApiClientKube(target.api_client),
                FakeClock(),
            )
            for name, target in targets.items()
        }
        for agent in agents.values():
            assert agent.pass_once().exit_code == EXIT_OK

        def configmaps(name: str) -> list[str]:
            target = targets[name]
            listed = ApiClientKube(target.api_client).list(CONFIGMAPS, target.namespace)
            names = (str(body["metadata"]["name"]) for body in listed)
            return sorted(n for n in names if "inventory" not in n and n != "kube-root-ca.crt")

        assert configmaps("c1") == ["a", "b"]
        assert configmaps("c2") == ["x0", "x1", "x2", "x3"]
        rendered.commit({f"clusters/c2/{two}/configmap-x0.yaml": None})
        outcomes = {name: agent.pass_once() for name, agent in agents.items()}
        assert outcomes["c1"].sync is not None and outcomes["c1"].sync.pruned == []
        assert outcomes["c2"].sync is not None and [r.name for r in outcomes["c2"].sync.pruned] == ["x0"]
        assert configmaps("c2") == ["x1", "x2", "x3"]
        for name in targets:
            report = rendered.show("nova-status", f"status/{name}.yaml")
            assert f"name: {name}" in report and f"{name}-node" in report


def test_cli_sync_uses_the_kubeconfig_and_says_what_happened(
    kube: KubeTarget, rendered: RenderedRepo, tmp_path: Path
) -> None:
    rendered.commit(layout("c1", configmap("c1", kube.namespace, "from-cli")))
    args: Sequence[str] = [
        "sync", "--cluster", "c1", "--repo", rendered.url, "--kubeconfig", str(kube.kubeconfig_path),
        "--context", kube.context, "--namespace", kube.namespace, "--cache-dir", str(tmp_path / "cache"),
        "--no-report",
    ]  # fmt: skip
    result = CliRunner().invoke(cli.main, list(args))
    assert result.exit_code == EXIT_OK, result.output
    assert ApiClientKube(kube.api_client).get(CONFIGMAPS, kube.namespace, "from-cli") is not None
    bad = CliRunner().invoke(
        cli.main, ["sync", "--cluster", "c1", "--repo", rendered.url, "--interval", "soon"]
    )
    assert bad.exit_code == 2 and "not a duration" in bad.output


def test_run_loops_at_the_interval_until_stopped(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    rendered.commit(layout("c1", configmap("c1", kube.namespace, "a")))
    clock = FakeClock(stop_after_sleeps=3)
    agent = make_agent(clock=clock, interval=15.0, report_enabled=False)
    assert agent.run() == EXIT_OK
    assert clock.sleeps == [15.0, 15.0, 15.0]


def test_dry_run_persists_nothing(kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory) -> None:
    ns = kube.namespace
    rendered.commit(layout("c1", configmap("c1", ns, "a"), configmap("c1", ns, "b")))
    outcome = make_agent(dry_run=True).pass_once()
    assert outcome.exit_code == EXIT_OK, outcome.message
    assert outcome.sync is not None and len(outcome.sync.applied) == 2 and not outcome.report_pushed
    assert ApiClientKube(kube.api_client).get(CONFIGMAPS, ns, "a") is None
    assert git(rendered.remote, "branch", "--list", "nova-status") == ""
    if kube.fake is not None:
        assert all(r.query.get("dryRun") == "All" for r in kube.fake.write_requests())
