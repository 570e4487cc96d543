"""Discovery that changes under a running agent: a CRD installed by someone else after the agent's first
pass is found on the next pass (a discovery miss rediscovers, at most once per pass), and an inventory entry
whose kind is not (yet) discovered is kept, not forgotten, so the object is pruned once its kind is served
again. Each test has a CRD group of its own (a real cluster keeps CRDs beyond a test's namespace), deleted
afterwards."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest

from nova_agent.applying import CRD_RESOURCE, wait_for_crds
from nova_agent.clocks import SystemClock
from nova_agent.kubeclient import ApiClientKube
from nova_agent.kubeports import Resource
from nova_agent.running import EXIT_OK
from nova_agent.syncing import read_inventory
from tests.agent.conftest import AgentFactory
from tests.agent.gitrepos_helpers import RenderedRepo
from tests.agent.manifests import configmap, layout, widget, widget_crd
from tests.fakekube.fixtures import KubeTarget


@pytest.fixture
def group(kube: KubeTarget) -> Iterator[str]:
    """A Widget API group no other test uses; its CRD is deleted at the end."""
    name = f"t{secrets.token_hex(3)}.example.com"
    yield name
    from kubernetes import client

    try:
        client.ApiextensionsV1Api(kube.api_client).delete_custom_resource_definition(f"widgets.{name}")
    except client.ApiException as error:
        if error.status != 404:
            raise


def widgets(group: str) -> Resource:
    return Resource(group, "v1", "widgets", "Widget", True)


class HidingKube(ApiClientKube):
    """Our own port with discovery that does not (yet) list one kind, as a lagging discovery does."""

    hidden: str = ""

    def resource_for(self, api_version: str, kind: str) -> Resource | None:
        return None if kind == self.hidden else super().resource_for(api_version, kind)


def test_a_crd_installed_by_someone_else_is_discovered_on_the_next_pass(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory, group: str
) -> None:
    ns = kube.namespace
    rendered.commit(layout("c1", configmap("c1", ns, "a")))
    agent = make_agent(report_enabled=False)
    assert agent.pass_once().exit_code == EXIT_OK  # discovery is now cached, without widgets
    someone_else = ApiClientKube(kube.api_client)
    someone_else.apply(CRD_RESOURCE, widget_crd("c1", group), force=True)
    assert wait_for_crds(someone_else, [f"widgets.{group}"], SystemClock(), 10.0) == []
    rendered.commit(layout("c1", configmap("c1", ns, "a"), widget("c1", ns, "w1", group=group)))
    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_OK, outcome.message
    assert outcome.sync is not None and [r.name for r in outcome.sync.applied] == ["w1"]
    assert agent.kube.get(widgets(group), ns, "w1") is not None


def test_an_undiscovered_kind_keeps_its_inventory_entries_until_it_can_be_pruned(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory, group: str
) -> None:
    ns = kube.namespace
    cms = [configmap("c1", ns, f"cm-{i}") for i in range(4)]
    rendered.commit(layout("c1", widget_crd("c1", group), widget("c1", ns, "w1", group=group), *cms))
    kube_port = HidingKube(kube.api_client)
    agent = make_agent(api_client=kube.api_client, report_enabled=False)
    agent.kube = kube_port
    assert agent.pass_once().exit_code == EXIT_OK
    rendered.commit({f"clusters/c1/{ns}/widget-w1.yaml": None})
    kube_port.hidden = "Widget"
    lagging = agent.pass_once()
    assert lagging.sync is not None and lagging.sync.pruned == []
    inventory, _ = read_inventory(kube_port, agent.settings)
    assert any(entry.ref.name == "w1" for entry in inventory.entries.values())
    kube_port.hidden = ""
    caught_up = agent.pass_once()
    assert caught_up.sync is not None and [r.name for r in caught_up.sync.pruned] == ["w1"]
    assert kube_port.get(widgets(group), ns, "w1") is None


class LaggingKube(ApiClientKube):
    """Our own port whose discovery lists one kind only from the ``lag``-th discovery on, as kube-apiserver
    publishes a new CRD's discovery a moment after the CRD is ``Established``."""

    lagging: str = ""
    lag: int = 3

    def resource_for(self, api_version: str, kind: str) -> Resource | None:
        if kind == self.lagging and self.lag > 0:
            self.lag -= 1
            return None
        return super().resource_for(api_version, kind)


def test_a_crd_and_its_objects_apply_in_one_pass_though_discovery_lags_behind_established(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory, group: str
) -> None:
    """The pass waits (bounded, as for Established) until discovery serves the CRD's kinds: the Widget was
    'not served' for a pass when discovery lagged (CI's real clusters under load)."""
    ns = kube.namespace
    rendered.commit(layout("c1", widget_crd("c1", group), widget("c1", ns, "w1", group=group)))
    agent = make_agent(api_client=kube.api_client, report_enabled=False)
    agent.kube = LaggingKube(kube.api_client)
    agent.kube.lagging = "Widget"
    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_OK, outcome.message
    assert agent.kube.get(widgets(group), ns, "w1") is not None
