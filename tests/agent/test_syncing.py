"""Sync against a Kubernetes API (the fake by default; a real cluster with NOVA_TEST_KUBECONFIG): apply in
rank order with server-side apply as field manager nova-agent; a no-op sync makes zero write calls; a removed
manifest field is removed from the live object; one invalid object (a schema-violating custom resource: 500
"failed to create typed patch object") is reported with the server's message while the others are applied, and
is retried only after its backoff; prune deletes only inventory objects still carrying our label; a mass prune
is refused (cluster untouched, reason reported) unless the commit carries the trailer; an object deleted by
hand is re-created; the inventory ConfigMap lists what the agent applied."""

from __future__ import annotations

from nova_agent import inventories
from nova_agent.clocks import FakeClock
from nova_agent.kubeports import Resource
from nova_agent.running import EXIT_OBJECT_FAILURES, EXIT_OK, EXIT_REFUSED
from nova_agent.syncing import CONFIGMAPS
from tests.agent.conftest import AgentFactory
from tests.agent.gitrepos_helpers import RenderedRepo
from tests.agent.manifests import configmap, deployment, layout, widget, widget_crd
from tests.fakekube.fixtures import KubeTarget

DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment", True)


def writes(kube: KubeTarget) -> list[tuple[str, str]]:
    assert kube.fake is not None
    return [(r.method, r.path) for r in kube.fake.write_requests()]


def test_first_sync_applies_in_order_and_second_sync_writes_nothing(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    rendered.commit(
        layout(
            "c1", deployment("c1", ns, "web"), configmap("c1", ns, "settings"), configmap("c1", ns, "more")
        )
    )
    agent = make_agent(report_enabled=False)
    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_OK, outcome.message
    assert outcome.sync is not None and len(outcome.sync.applied) == 3
    if kube.fake is not None:
        applies = [
            (r.path, r.query)
            for r in kube.fake.write_requests()
            if r.content_type.startswith("application/apply")
        ]
        object_paths = [path for path, _ in applies if "nova-agent-inventory" not in path]
        assert object_paths == [
            f"/api/v1/namespaces/{ns}/configmaps/more",
            f"/api/v1/namespaces/{ns}/configmaps/settings",
            f"/apis/apps/v1/namespaces/{ns}/deployments/web",
        ]
        assert all(query.get("fieldManager") == "nova-agent" for _, query in applies)
        kube.fake.requests.clear()
    second = make_agent(report_enabled=False).pass_once()  # a fresh process: state comes from the inventory
    assert second.exit_code == EXIT_OK and second.sync is not None
    assert second.sync.applied == [] and second.sync.unchanged == 3
    if kube.fake is not None:
        assert writes(kube) == []
    inventory, problems = inventories.decode_inventory(
        agent.kube.get(CONFIGMAPS, ns, inventories.inventory_name("c1"))["data"]  # type: ignore[index]
    )
    assert problems == [] and {entry.ref.name for entry in inventory.entries.values()} == {
        "web",
        "settings",
        "more",
    }


def test_changed_field_is_applied_and_removed_field_is_removed(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    body = deployment("c1", ns, "web")
    body["metadata"]["labels"]["tier"] = "front"
    rendered.commit(layout("c1", body))
    agent = make_agent(report_enabled=False)
    assert agent.pass_once().exit_code == EXIT_OK
    del body["metadata"]["labels"]["tier"]
    body["spec"]["replicas"] = 3
    rendered.commit(layout("c1", body))
    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_OK and outcome.sync is not None and len(outcome.sync.applied) == 1
    live = agent.kube.get(DEPLOYMENTS, ns, "web")
    assert live is not None and live["spec"]["replicas"] == 3 and "tier" not in live["metadata"]["labels"]


def test_object_deleted_by_hand_is_recreated(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    rendered.commit(layout("c1", configmap("c1", ns, "a"), configmap("c1", ns, "b")))
    agent = make_agent(report_enabled=False)
    agent.pass_once()
    resource = Resource("", "v1", "configmaps", "ConfigMap", True)
    agent.kube.delete(resource, ns, "a")
    outcome = agent.pass_once()
    assert outcome.sync is not None and [ref.name for ref in outcome.sync.applied] == ["a"]
    assert agent.kube.get(resource, ns, "a") is not None


def test_prune_deletes_only_what_this_agent_applied(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    resource = Resource("", "v1", "configmaps", "ConfigMap", True)
    names = [f"cm-{i}" for i in range(10)]
    rendered.commit(layout("c1", *(configmap("c1", ns, n) for n in names)))
    agent = make_agent(report_enabled=False)
    assert agent.pass_once().exit_code == EXIT_OK
    agent.kube.apply(
        resource, configmap("c1", ns, "hand-made"), force=True
    )  # our label, but not our inventory
    taken = configmap("c2", ns, "cm-1")  # another cluster's agent took it over
    agent.kube.apply(resource, taken, force=True)
    rendered.commit(
        {f"clusters/c1/{ns}/configmap-cm-0.yaml": None, f"clusters/c1/{ns}/configmap-cm-1.yaml": None}
    )
    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_OK, outcome.message
    assert outcome.sync is not None and [ref.name for ref in outcome.sync.pruned] == ["cm-0"]
    assert agent.kube.get(resource, ns, "cm-0") is None
    assert agent.kube.get(resource, ns, "cm-1") is not None
    assert agent.kube.get(resource, ns, "hand-made") is not None
    second = agent.pass_once()
    assert second.sync is not None and second.sync.pruned == [] and second.sync.applied == []


def test_mass_prune_is_refused_unless_the_commit_allows_it(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    resource = Resource("", "v1", "configmaps", "ConfigMap", True)
    files = layout("c1", *(configmap("c1", ns, f"cm-{i}") for i in range(4)))
    first = rendered.commit(files)
    agent = make_agent(report_enabled=False)
    assert agent.pass_once().exit_code == EXIT_OK
    if kube.fake is not None:
        kube.fake.requests.clear()
    objects = [path for path in files if not path.endswith("/kustomization.yaml")]
    rendered.commit({path: None for path in objects[:2]})
    refused = agent.pass_once()
    assert refused.exit_code == EXIT_REFUSED
    assert "would delete 2 of the 4" in refused.message and "Nova-Allow-Mass-Prune: true" in refused.message
    assert refused.sync is not None and refused.sync.synced_revision == first
    assert all(agent.kube.get(resource, ns, f"cm-{i}") is not None for i in range(4))
    if kube.fake is not None:
        assert writes(kube) == []
    rendered.commit(
        {f"clusters/c1/{ns}/README": "x"}, "render: prune on purpose", "Nova-Allow-Mass-Prune: true"
    )
    allowed = agent.pass_once()
    assert allowed.exit_code == EXIT_OK, allowed.message
    assert allowed.sync is not None and {r.name for r in allowed.sync.pruned} == {"cm-0", "cm-1"}


def test_invalid_object_is_reported_others_applied_and_retried_with_backoff(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    group = f"{ns}.example.com"
    bad = widget("c1", ns, "bad", size="three", group=group)
    rendered.commit(layout("c1", widget_crd("c1", group), configmap("c1", ns, "good"), bad))
    clock = FakeClock()
    agent = make_agent(clock=clock, report_enabled=False)
    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_OBJECT_FAILURES
    assert outcome.sync is not None
    assert [ref.name for ref in outcome.sync.applied] == [f"widgets.{group}", "good"]  # CRD first
    [(ref, message)] = outcome.sync.failed.items()
    assert ref.name == "bad" and ("422" in message or "failed to create typed patch object" in message)
    if kube.fake is not None:
        kube.fake.requests.clear()
    again = agent.pass_once()  # within the backoff: not sent
    assert again.sync is not None and again.sync.applied == [] and again.exit_code == EXIT_OK
    if kube.fake is not None:
        assert writes(kube) == []
    clock.advance(3600)
    retried = agent.pass_once()
    assert retried.exit_code == EXIT_OBJECT_FAILURES and retried.sync is not None and retried.sync.failed
