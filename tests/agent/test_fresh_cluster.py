"""A fresh cluster: ``nova-agent sync`` where the inventory namespace does not exist yet creates it (and says
so), applies, records the inventory there and pushes the status report, exit 0. The namespace is labelled as
the agent's and is never pruned: it is not in the inventory. A dry run creates nothing: it says the namespace
would be created, and reads the missing inventory as empty."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from nova_agent import cli, inventories
from nova_agent.kubeclient import ApiClientKube
from nova_agent.kubeports import Resource
from nova_agent.running import EXIT_OK, EXIT_REFUSED
from tests.agent.conftest import AgentFactory
from tests.agent.gitrepos_helpers import RenderedRepo, git
from tests.agent.manifests import configmap, layout
from tests.fakekube.fixtures import KubeTarget

CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap", True)
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", False)


@pytest.fixture
def agent_namespace(kube: KubeTarget) -> Iterator[str]:
    """A namespace name that does not exist yet; deleted afterwards on a real cluster."""
    name = f"{kube.namespace}-agent"
    yield name
    if kube.fake is None:
        from kubernetes import client

        client.CoreV1Api(kube.api_client).delete_namespace(name)


def sync_args(kube: KubeTarget, rendered: RenderedRepo, tmp_path: Path, namespace: str) -> list[str]:
    args: Sequence[str] = [
        "sync", "--cluster", "c1", "--repo", rendered.url, "--kubeconfig", str(kube.kubeconfig_path),
        "--context", kube.context, "--namespace", namespace, "--cache-dir", str(tmp_path / "cache"),
    ]  # fmt: skip
    return list(args)


def test_sync_on_a_fresh_cluster_creates_the_inventory_namespace(
    kube: KubeTarget,
    rendered: RenderedRepo,
    tmp_path: Path,
    agent_namespace: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    rendered.commit(layout("c1", configmap("c1", kube.namespace, "first")))
    caplog.set_level("INFO", logger="nova_agent")
    result = CliRunner().invoke(cli.main, sync_args(kube, rendered, tmp_path, agent_namespace))
    assert result.exit_code == EXIT_OK, result.output + caplog.text
    assert f"created namespace {agent_namespace} for the inventory" in caplog.text
    port = ApiClientKube(kube.api_client)
    namespace = port.get(NAMESPACES, "", agent_namespace)
    assert namespace is not None
    assert namespace["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "nova-agent"
    assert port.get(CONFIGMAPS, kube.namespace, "first") is not None
    stored = port.get(CONFIGMAPS, agent_namespace, inventories.inventory_name("c1"))
    assert stored is not None
    inventory, problems = inventories.decode_inventory(stored.get("data"))
    assert problems == [] and {entry.ref.name for entry in inventory.entries.values()} == {"first"}
    report = yaml.safe_load(rendered.show("nova-status", "status/c1.yaml"))
    assert report["status"]["lastError"] == ""
    assert report["status"]["syncedRevision"] == git(rendered.remote, "rev-parse", "main")


def test_a_second_pass_finds_the_namespace_and_never_prunes_it(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory, agent_namespace: str
) -> None:
    rendered.commit(layout("c1", configmap("c1", kube.namespace, "first")))
    agent = make_agent(namespace=agent_namespace, report_enabled=False)
    assert agent.pass_once().exit_code == EXIT_OK
    rendered.commit({f"clusters/c1/{kube.namespace}/configmap-first.yaml": None}, trailers=MASS_PRUNE)
    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_OK, outcome.message
    assert outcome.sync is not None and [ref.name for ref in outcome.sync.pruned] == ["first"]
    assert agent.kube.get(NAMESPACES, "", agent_namespace) is not None


MASS_PRUNE = "Nova-Allow-Mass-Prune: true"


def test_a_dry_run_on_a_fresh_cluster_creates_nothing_and_says_so(
    kube: KubeTarget,
    rendered: RenderedRepo,
    make_agent: AgentFactory,
    agent_namespace: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    rendered.commit(layout("c1", configmap("c1", kube.namespace, "first")))
    caplog.set_level("INFO", logger="nova_agent")
    outcome = make_agent(namespace=agent_namespace, dry_run=True).pass_once()
    assert outcome.exit_code == EXIT_OK, outcome.message
    assert outcome.sync is not None and [ref.name for ref in outcome.sync.applied] == ["first"]
    assert f"namespace {agent_namespace} does not exist: nova-agent would create it" in caplog.text
    assert agent_namespace_absent(kube, agent_namespace)
    if kube.fake is None:  # nothing to delete afterwards
        from kubernetes import client

        client.CoreV1Api(kube.api_client).create_namespace(
            client.V1Namespace(metadata=client.V1ObjectMeta(name=agent_namespace))
        )


def agent_namespace_absent(kube: KubeTarget, name: str) -> bool:
    return ApiClientKube(kube.api_client).get(NAMESPACES, "", name) is None


@pytest.mark.fake_only("injects a 403 on the apply of the agent's namespace")
def test_a_namespace_the_agent_may_not_create_is_named_with_its_role_and_the_workaround(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory, agent_namespace: str
) -> None:
    assert kube.fake is not None
    rendered.commit(layout("c1", configmap("c1", kube.namespace, "first")))
    refusal = (
        f'namespaces "{agent_namespace}" is forbidden: User "system:serviceaccount:nova-agent:nova-agent" '
        'cannot patch resource "namespaces" in API group "" at the cluster scope'
    )
    kube.fake.fail_next("PATCH", rf"^/api/v1/namespaces/{agent_namespace}$", 403, refusal, times=100)
    outcome = make_agent(namespace=agent_namespace, report_enabled=False).pass_once()
    assert outcome.exit_code == EXIT_REFUSED
    assert outcome.message.startswith(
        f"the inventory namespace {agent_namespace} does not exist and nova-agent may not patch namespaces "
        "cluster-wide (as system:serviceaccount:nova-agent:nova-agent): granted by ClusterRole "
        "nova-agent-apply"
    )
    assert outcome.message.endswith(f"(kubectl create namespace {agent_namespace})")
    assert agent_namespace_absent(kube, agent_namespace)
