"""``--follow-release`` (issue 12, progressive rollouts): the agent applies the commit the controller released
to its cluster (branch ``nova/clusters/<cluster>``), not the head of main; before anything is released it
changes nothing and says so, with exit 0 (waiting is not an outage)."""

from __future__ import annotations

from nova_agent.kubeports import Resource
from nova_agent.running import EXIT_OK
from tests.agent.conftest import AgentFactory
from tests.agent.gitrepos_helpers import RenderedRepo, git
from tests.agent.manifests import configmap, layout
from tests.fakekube.fixtures import KubeTarget

CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap", True)


def release(rendered: RenderedRepo, cluster: str, commit: str) -> None:
    """What the controller does: point the cluster's release branch at a commit of main (no new commit)."""
    git(rendered.remote, "update-ref", f"refs/heads/nova/clusters/{cluster}", commit)


def test_the_agent_applies_what_was_released_to_it_not_mains_head(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    first = rendered.commit(layout("c1", configmap("c1", ns, "settings", "1")))
    agent = make_agent(report_enabled=False, follow_release=True)
    waiting = agent.pass_once()
    assert waiting.exit_code == EXIT_OK and waiting.sync is None
    assert agent.kube.get(CONFIGMAPS, ns, "settings") is None  # nothing released: nothing applied
    release(rendered, "c1", first)
    rendered.commit(layout("c1", configmap("c1", ns, "settings", "2")))  # rendered, not released
    outcome = agent.pass_once()
    assert outcome.sync is not None and outcome.sync.synced_revision == first
    live = agent.kube.get(CONFIGMAPS, ns, "settings")
    assert live is not None and live["data"] == {"v": "1"}
