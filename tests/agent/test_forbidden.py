"""Narrowed RBAC (fake API server, injected 403s): a kind the agent may not list cluster-wide is listed in the
namespaces of its objects instead, so the pass succeeds and a second pass writes nothing; a kind that cannot
be listed at all is that kind's error (exit 1, named in the failures) while the other kinds are applied and
listed; the pass is never aborted as "unreachable"."""

from __future__ import annotations

import pytest

from nova_agent.resources import ObjectRef
from nova_agent.running import EXIT_OBJECT_FAILURES, EXIT_OK
from nova_agent.syncing import SyncResult
from tests.agent.conftest import AgentFactory
from tests.agent.gitrepos_helpers import RenderedRepo
from tests.agent.manifests import configmap, deployment, layout
from tests.fakekube.fixtures import KubeTarget

FORBIDDEN = "configmaps is forbidden: User cannot list resource configmaps at the cluster scope"
CLUSTER_WIDE_CONFIGMAPS = r"^/api/v1/configmaps$"


def live_names(result: SyncResult | None) -> set[str]:
    assert result is not None
    return {body["metadata"]["name"] for body in result.live}


@pytest.mark.fake_only("injects a 403 on the cluster-wide list of ConfigMaps")
def test_a_kind_forbidden_cluster_wide_is_listed_per_namespace(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    assert kube.fake is not None
    ns = kube.namespace
    rendered.commit(layout("c1", configmap("c1", ns, "a"), deployment("c1", ns, "web")))
    kube.fake.fail_next("GET", CLUSTER_WIDE_CONFIGMAPS, 403, FORBIDDEN, times=100)
    agent = make_agent(report_enabled=False)
    first = agent.pass_once()
    assert first.exit_code == EXIT_OK, first.message
    assert live_names(first.sync) == {"a", "web"}
    writes_before = len(kube.fake.write_requests())
    second = agent.pass_once()
    assert second.exit_code == EXIT_OK and second.sync is not None and second.sync.unchanged == 2
    assert len(kube.fake.write_requests()) == writes_before


@pytest.mark.fake_only("injects a 403 on every list of ConfigMaps")
def test_a_kind_that_cannot_be_listed_is_its_own_error(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    assert kube.fake is not None
    ns = kube.namespace
    rendered.commit(layout("c1", configmap("c1", ns, "a"), deployment("c1", ns, "web")))
    kube.fake.fail_next("GET", r"^/api/v1/(namespaces/[^/]+/)?configmaps$", 403, FORBIDDEN, times=100)
    outcome = make_agent(report_enabled=False).pass_once()
    assert outcome.exit_code == EXIT_OBJECT_FAILURES, outcome.message
    assert outcome.sync is not None
    assert outcome.sync.failed.keys() == {ObjectRef("v1", "ConfigMap", "", "*")}
    assert "cannot list configmaps: 403" in outcome.sync.failed[ObjectRef("v1", "ConfigMap", "", "*")]
    assert {r.name for r in outcome.sync.applied} == {"a", "web"}
    assert live_names(outcome.sync) == {"web"}


@pytest.mark.fake_only("injects a 403 on the apply of a Deployment")
def test_an_apply_refused_by_rbac_names_the_role_that_grants_it(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    assert kube.fake is not None
    ns = kube.namespace
    rendered.commit(layout("c1", configmap("c1", ns, "a"), deployment("c1", ns, "web")))
    refused = (
        'deployments.apps "web" is forbidden: User "system:serviceaccount:nova-agent:nova-agent" cannot '
        f'patch resource "deployments" in API group "apps" in the namespace "{ns}"'
    )
    kube.fake.fail_next("PATCH", r"/deployments/web$", 403, refused)
    outcome = make_agent(report_enabled=False).pass_once()
    assert outcome.exit_code == EXIT_OBJECT_FAILURES and outcome.sync is not None
    message = outcome.sync.failed[ObjectRef("apps/v1", "Deployment", ns, "web")]
    assert f"nova-agent may not patch deployments.apps in namespace {ns}" in message
    assert "nova-agent-apply" in message
    assert [ref.name for ref in outcome.sync.applied] == ["a"]  # the others are applied
