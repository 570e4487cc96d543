"""The agent deletes only what it created (the fake API server; a real cluster with NOVA_TEST_KUBECONFIG):

- a user's Namespace that namespace-follow renders is adopted (reported), and released, never deleted, when
  the last rendered object leaves it: the user's ConfigMap `precious` in it survives (the issue's
  reproduction, 2 of 13 objects: under the mass-prune guard);
- a Namespace the agent created is not deleted while it holds an object the agent did not create; the
  refusal names it, and the next pass after that object is gone deletes the Namespace;
- an existing object is adopted without force: a field another manager owns with another value is a
  reported conflict with the fix, the object unchanged; `gitops.nova.elotl.co/adopt: force` takes it over;
- an adopted object that leaves git is released, not deleted;
- an object the agent created, deleted by hand and re-created by someone else under the same name (another
  uid), is released, not deleted;
- the cluster's own Namespaces and the agent's own are never applied nor deleted, even when an inventory
  written by hand or an older agent lists them.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from typing import Any

import pytest

from nova_agent import inventories
from nova_agent.inventories import Inventory, InventoryEntry
from nova_agent.kubeports import Resource
from nova_agent.ownership import Ownership
from nova_agent.resources import ObjectRef
from nova_agent.running import EXIT_OBJECT_FAILURES, EXIT_OK
from nova_agent.syncing import write_inventory
from tests.agent.conftest import AgentFactory
from tests.agent.gitrepos_helpers import RenderedRepo
from tests.agent.manifests import configmap, layout, rendered, widget, widget_crd
from tests.fakekube.fixtures import KubeTarget

CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap", True)
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", False)


def namespace(cluster: str, name: str) -> dict[str, Any]:
    return rendered(cluster, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


def users_configmap(kube: KubeTarget, ns: str, name: str, value: str = "mine") -> None:
    """A ConfigMap someone made with kubectl: another field manager, none of our labels."""
    from kubernetes import client

    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name), data={"v": value})
    client.CoreV1Api(kube.api_client).create_namespaced_config_map(ns, body, field_manager="kubectl-create")


def exists(kube: KubeTarget, resource: Resource, ns: str, name: str) -> bool:
    """Whether the object exists and is not being deleted (a real Namespace terminates for a while)."""
    from nova_agent.kubeclient import ApiClientKube

    live = ApiClientKube(kube.api_client).get(resource, ns, name)
    return live is not None and not live["metadata"].get("deletionTimestamp")


@pytest.fixture
def scratch_namespace(kube: KubeTarget) -> Iterator[str]:
    """A namespace name for the agent to create; removed afterwards on a real cluster."""
    name = f"{kube.namespace}-app-{secrets.token_hex(2)}"
    yield name
    _remove_namespace(kube, name)


@pytest.fixture
def users_namespace(kube: KubeTarget) -> Iterator[str]:
    """A namespace someone created with kubectl before the agent ran."""
    from kubernetes import client

    name = f"{kube.namespace}-team-{secrets.token_hex(2)}"
    body = client.V1Namespace(metadata=client.V1ObjectMeta(name=name))
    client.CoreV1Api(kube.api_client).create_namespace(body, field_manager="kubectl-create")
    yield name
    _remove_namespace(kube, name)


def _remove_namespace(kube: KubeTarget, name: str) -> None:
    if kube.fake is None:
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        try:
            client.CoreV1Api(kube.api_client).delete_namespace(name)
        except ApiException as error:
            if error.status != 404:
                raise


def test_a_users_namespace_is_adopted_and_released_never_deleted(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory, users_namespace: str
) -> None:
    ns = users_namespace
    users_configmap(kube, ns, "precious")
    others = [configmap("c1", kube.namespace, f"stays-{i}") for i in range(11)]
    rendered.commit(layout("c1", namespace("c1", ns), configmap("c1", ns, "app"), *others))
    agent = make_agent(report_enabled=False)
    first = agent.pass_once()
    assert first.exit_code == EXIT_OK, first.message
    assert first.sync is not None and ObjectRef("v1", "Namespace", "", ns) in first.sync.adopted

    rendered.commit(
        {f"clusters/c1/{ns}/configmap-app.yaml": None, f"clusters/c1/_cluster/namespace-{ns}.yaml": None}
    )
    second = agent.pass_once()
    assert second.exit_code == EXIT_OK, second.message
    assert second.sync is not None
    assert [ref.name for ref in second.sync.pruned] == ["app"]
    assert second.sync.released == [ObjectRef("v1", "Namespace", "", ns)]
    assert exists(kube, NAMESPACES, "", ns) and exists(kube, CONFIGMAPS, ns, "precious")
    assert exists(kube, CONFIGMAPS, kube.namespace, "stays-0")


def test_a_created_namespace_holding_a_users_object_is_kept_until_it_is_empty(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory, scratch_namespace: str
) -> None:
    ns, app = kube.namespace, scratch_namespace
    others = [configmap("c1", ns, f"stays-{i}") for i in range(8)]
    rendered.commit(layout("c1", namespace("c1", app), configmap("c1", app, "app"), *others))
    agent = make_agent(report_enabled=False)
    first = agent.pass_once()
    assert first.exit_code == EXIT_OK, first.message
    assert first.sync is not None and first.sync.adopted == []
    users_configmap(kube, app, "precious")  # someone puts their own object in our namespace

    rendered.commit(
        {f"clusters/c1/{app}/configmap-app.yaml": None, f"clusters/c1/_cluster/namespace-{app}.yaml": None}
    )
    second = agent.pass_once()
    assert second.exit_code == EXIT_OBJECT_FAILURES
    assert second.sync is not None and [ref.name for ref in second.sync.pruned] == ["app"]
    refusal = second.sync.failed[ObjectRef("v1", "Namespace", "", app)]
    assert f"ConfigMap {app}/precious" in refusal and "was not deleted" in refusal
    assert exists(kube, NAMESPACES, "", app) and exists(kube, CONFIGMAPS, app, "precious")

    from kubernetes import client

    client.CoreV1Api(kube.api_client).delete_namespaced_config_map("precious", app)
    third = agent.pass_once()
    assert third.exit_code == EXIT_OK, third.message
    assert third.sync is not None and third.sync.pruned == [ObjectRef("v1", "Namespace", "", app)]
    assert not exists(kube, NAMESPACES, "", app)


def test_adoption_never_forces_other_managers_fields_unless_annotated(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    users_configmap(kube, ns, "shared", value="theirs")
    rendered.commit(layout("c1", configmap("c1", ns, "shared", value="ours")))
    agent = make_agent(report_enabled=False)
    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_OBJECT_FAILURES and outcome.sync is not None
    message = outcome.sync.failed[ObjectRef("v1", "ConfigMap", ns, "shared")]
    assert message.startswith("409") and "gitops.nova.elotl.co/adopt: force" in message
    live = agent.kube.get(CONFIGMAPS, ns, "shared")
    assert live is not None and live["data"] == {"v": "theirs"}

    forced = configmap("c1", ns, "shared", value="ours")
    forced["metadata"]["annotations"]["gitops.nova.elotl.co/adopt"] = "force"
    rendered.commit(layout("c1", forced))
    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_OK, outcome.message
    assert outcome.sync is not None and outcome.sync.adopted == [ObjectRef("v1", "ConfigMap", ns, "shared")]
    live = agent.kube.get(CONFIGMAPS, ns, "shared")
    assert live is not None and live["data"] == {"v": "ours"}


def test_an_adopted_object_leaving_git_is_released_not_deleted(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    users_configmap(kube, ns, "settings", value="1")  # same value as the render: shared, no conflict
    others = [configmap("c1", ns, f"stays-{i}") for i in range(5)]
    rendered.commit(layout("c1", configmap("c1", ns, "settings"), *others))
    agent = make_agent(report_enabled=False)
    first = agent.pass_once()
    assert first.exit_code == EXIT_OK and first.sync is not None
    assert first.sync.adopted == [ObjectRef("v1", "ConfigMap", ns, "settings")]

    rendered.commit({f"clusters/c1/{ns}/configmap-settings.yaml": None})
    second = agent.pass_once()
    assert second.exit_code == EXIT_OK and second.sync is not None
    assert second.sync.pruned == [] and second.sync.released == [ObjectRef("v1", "ConfigMap", ns, "settings")]
    assert exists(kube, CONFIGMAPS, ns, "settings")
    inventory, _ = inventories.decode_inventory(
        (agent.kube.get(CONFIGMAPS, ns, inventories.inventory_name("c1")) or {})["data"]
    )
    assert ("", "ConfigMap", ns, "settings") not in inventory.entries


def test_an_object_recreated_by_someone_else_is_released_not_deleted(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    others = [configmap("c1", ns, f"stays-{i}") for i in range(5)]
    rendered.commit(layout("c1", configmap("c1", ns, "web"), *others))
    agent = make_agent(report_enabled=False)
    assert agent.pass_once().exit_code == EXIT_OK
    agent.kube.delete(CONFIGMAPS, ns, "web")
    from kubernetes import client

    body = configmap("c1", ns, "web", value="by hand")  # with our label, as if `kubectl apply -f` of the file
    client.CoreV1Api(kube.api_client).create_namespaced_config_map(ns, body, field_manager="kubectl-create")

    rendered.commit({f"clusters/c1/{ns}/configmap-web.yaml": None})
    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_OK and outcome.sync is not None
    assert outcome.sync.pruned == [] and outcome.sync.released == [ObjectRef("v1", "ConfigMap", ns, "web")]
    live = agent.kube.get(CONFIGMAPS, ns, "web")
    assert live is not None and live["data"] == {"v": "by hand"}


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public", "kube-node-lease"])
def test_the_clusters_own_namespaces_are_never_applied(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory, name: str
) -> None:
    ns = kube.namespace
    rendered.commit(layout("c1", namespace("c1", name), configmap("c1", ns, "app")))
    if kube.fake is not None:
        kube.fake.requests.clear()
    outcome = make_agent(report_enabled=False).pass_once()
    assert outcome.exit_code == EXIT_OBJECT_FAILURES and outcome.sync is not None
    assert "belongs to the cluster" in outcome.sync.failed[ObjectRef("v1", "Namespace", "", name)]
    assert [ref.name for ref in outcome.sync.applied] == ["app"]
    if kube.fake is not None:
        assert not [r for r in kube.fake.write_requests() if r.path.endswith(f"/namespaces/{name}")]


def test_protected_namespaces_in_an_inventory_are_released_never_deleted(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    agent = make_agent(report_enabled=False)
    listed = [ObjectRef("v1", "Namespace", "", name) for name in ("default", "kube-system", ns)]
    entries = [InventoryEntry(ref, "d", Ownership.CREATED) for ref in listed]
    write_inventory(agent.kube, agent.settings, Inventory("old", {e.ref.key: e for e in entries}))
    try:
        for name in ("default", "kube-system", ns):  # our label on them, as an older agent's apply left it
            agent.kube.apply(NAMESPACES, namespace("c1", name), force=False)
        rendered.commit(
            layout("c1", *[configmap("c1", ns, f"cm-{i}") for i in range(3)]),
            trailers="Nova-Allow-Mass-Prune: true",
        )
        outcome = agent.pass_once()
        assert outcome.exit_code == EXIT_OK, outcome.message
        assert outcome.sync is not None and outcome.sync.pruned == []
        assert sorted(outcome.sync.released) == sorted(listed)
        assert all(exists(kube, NAMESPACES, "", name) for name in ("default", "kube-system", ns))
    finally:  # take our label off again (a real cluster's own namespaces)
        for name in ("default", "kube-system"):
            bare = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
            agent.kube.apply(NAMESPACES, bare, force=False)


def secret_manifest(cluster: str, ns: str, **fields: Any) -> dict[str, Any]:
    body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds", "namespace": ns}, **fields}
    return rendered(cluster, body)


def test_a_secret_whose_values_are_not_strings_is_refused_without_quoting_them(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory, caplog: pytest.LogCaptureFixture
) -> None:
    ns = kube.namespace
    bad = secret_manifest("c1", ns, stringData={"token": {"nested": "s3cr3t-token-value"}})
    rendered.commit(layout("c1", bad, configmap("c1", ns, "app")))
    agent = make_agent()
    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_OBJECT_FAILURES and outcome.sync is not None
    assert (
        "stringData.token: the value must be text"
        in outcome.sync.failed[ObjectRef("v1", "Secret", ns, "creds")]
    )
    assert [ref.name for ref in outcome.sync.applied] == ["app"]
    report = rendered.show("nova-status", "status/c1.yaml")
    assert "stringData.token" in report and "s3cr3t" not in report
    assert "s3cr3t" not in outcome.message and "s3cr3t" not in caplog.text


@pytest.mark.fake_only("injects a 500 whose message echoes a Secret's value")
def test_a_secret_value_echoed_by_the_server_is_redacted_everywhere(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory, caplog: pytest.LogCaptureFixture
) -> None:
    assert kube.fake is not None
    ns = kube.namespace
    rendered.commit(layout("c1", secret_manifest("c1", ns, stringData={"token": "s3cr3t-token-value"})))
    kube.fake.fail_next(
        "PATCH",
        "/secrets/creds$",
        500,
        "failed to create typed patch object (/v1, Kind=Secret) ns/creds: .stringData.token: "
        'Invalid value: "s3cr3t-token-value": not allowed',
    )
    agent = make_agent()
    outcome = agent.pass_once()
    from nova_agent.running import log_outcome

    log_outcome(outcome)
    assert outcome.exit_code == EXIT_OBJECT_FAILURES and outcome.sync is not None
    message = outcome.sync.failed[ObjectRef("v1", "Secret", ns, "creds")]
    assert "500" in message and "[redacted]" in message and "s3cr3t" not in message
    report = rendered.show("nova-status", "status/c1.yaml")
    assert "[redacted]" in report and "s3cr3t" not in report
    assert "s3cr3t" not in caplog.text


def test_a_created_crd_whose_kind_has_objects_of_someone_else_is_kept(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    group = f"t{secrets.token_hex(3)}.example.com"  # a group of its own: a real cluster keeps CRDs around
    rendered.commit(layout("c1", widget_crd("c1", group), widget("c1", ns, "ours", group=group)))
    agent = make_agent(report_enabled=False)
    first = agent.pass_once()
    assert first.exit_code == EXIT_OK, first.message
    widgets = Resource(group, "v1", "widgets", "Widget", True)
    theirs = {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "theirs", "namespace": ns}}
    from kubernetes import client

    try:
        client.CustomObjectsApi(kube.api_client).create_namespaced_custom_object(
            group, "v1", ns, "widgets", theirs, field_manager="kubectl-create"
        )
        rendered.commit(
            {
                f"clusters/c1/_cluster/customresourcedefinition-widgets.{group}.yaml": None,
                f"clusters/c1/{ns}/widget-ours.yaml": None,
            },
            trailers="Nova-Allow-Mass-Prune: true",
        )
        outcome = agent.pass_once()
        assert outcome.sync is not None and [ref.name for ref in outcome.sync.pruned] == ["ours"]
        crd = ObjectRef("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", f"widgets.{group}")
        assert f"Widget {ns}/theirs" in outcome.sync.failed[crd]
        assert exists(kube, widgets, ns, "theirs")
    finally:
        if kube.fake is None:
            client.ApiextensionsV1Api(kube.api_client).delete_custom_resource_definition(f"widgets.{group}")


def test_a_secret_refused_by_a_later_commit_is_kept_not_pruned(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    others = [configmap("c1", ns, f"stays-{i}") for i in range(5)]
    rendered.commit(layout("c1", secret_manifest("c1", ns, stringData={"user": "app"}), *others))
    agent = make_agent(report_enabled=False)
    assert agent.pass_once().exit_code == EXIT_OK
    broken = secret_manifest("c1", ns, stringData={"user": "app", "port": 5432})  # a YAML slip: a number
    rendered.commit(layout("c1", broken))
    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_OBJECT_FAILURES and outcome.sync is not None
    assert outcome.sync.pruned == [] and ObjectRef("v1", "Secret", ns, "creds") in outcome.sync.failed
    assert exists(kube, Resource("", "v1", "secrets", "Secret", True), ns, "creds")


def test_a_render_may_not_write_the_agents_inventory(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    forged = configmap("c1", ns, inventories.inventory_name("c1"))
    forged["data"] = {
        "revision": "x",
        "objects": '{"apiVersion":"v1","kind":"ConfigMap","name":"precious"}\n',
    }
    rendered.commit(layout("c1", forged, configmap("c1", ns, "app")))
    outcome = make_agent(report_enabled=False).pass_once()
    assert outcome.sync is not None and [ref.name for ref in outcome.sync.applied] == ["app"]
    assert (
        "inventory" in outcome.sync.failed[ObjectRef("v1", "ConfigMap", ns, inventories.inventory_name("c1"))]
    )
    inventory, _ = inventories.decode_inventory(
        (make_agent(report_enabled=False).kube.get(CONFIGMAPS, ns, inventories.inventory_name("c1")) or {})[
            "data"
        ]
    )
    assert {key[3] for key in inventory.entries} == {"app"}


def test_a_kind_installed_after_discovery_is_still_checked_before_a_namespace_goes(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory, scratch_namespace: str
) -> None:
    ns, app = kube.namespace, scratch_namespace
    others = [configmap("c1", ns, f"stays-{i}") for i in range(6)]
    rendered.commit(layout("c1", namespace("c1", app), configmap("c1", app, "app"), *others))
    agent = make_agent(report_enabled=False)
    assert agent.pass_once().exit_code == EXIT_OK  # the agent has cached discovery now
    from kubernetes import client

    group = f"t{secrets.token_hex(3)}.example.com"
    crd = widget_crd("c1", group)
    crd["metadata"]["labels"] = {}
    extensions = client.ApiextensionsV1Api(kube.api_client)
    extensions.create_custom_resource_definition(crd, field_manager="kubectl-create")
    try:
        theirs = {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "theirs"}}
        for _ in range(100):  # bounded: a real server serves a new CRD once it is established
            try:
                client.CustomObjectsApi(kube.api_client).create_namespaced_custom_object(
                    group, "v1", app, "widgets", theirs, field_manager="kubectl-create"
                )
                break
            except client.exceptions.ApiException as error:
                if error.status != 404:
                    raise
                time.sleep(0.1)
        rendered.commit(
            {
                f"clusters/c1/{app}/configmap-app.yaml": None,
                f"clusters/c1/_cluster/namespace-{app}.yaml": None,
            }
        )
        outcome = agent.pass_once()
        assert outcome.sync is not None
        assert f"Widget {app}/theirs" in outcome.sync.failed[ObjectRef("v1", "Namespace", "", app)]
        assert exists(kube, NAMESPACES, "", app)
    finally:
        if kube.fake is None:
            extensions.delete_custom_resource_definition(f"widgets.{group}")


def test_an_adoption_that_conflicted_is_not_forced_on_a_later_pass(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    from kubernetes import client

    theirs = configmap(
        "c1", ns, "shared", value="theirs"
    )  # carries our label, as `kubectl apply -f` of a file
    client.CoreV1Api(kube.api_client).create_namespaced_config_map(ns, theirs, field_manager="kubectl-create")
    rendered.commit(layout("c1", configmap("c1", ns, "shared", value="ours")))
    agent = make_agent(report_enabled=False)
    assert agent.pass_once().exit_code == EXIT_OBJECT_FAILURES
    changed = configmap("c1", ns, "shared", value="ours")
    changed["data"]["more"] = "x"  # a new digest: no backoff holds the next apply back
    rendered.commit(layout("c1", changed))
    assert agent.pass_once().exit_code == EXIT_OBJECT_FAILURES
    live = agent.kube.get(CONFIGMAPS, ns, "shared")
    assert live is not None and live["data"]["v"] == "theirs"


def test_an_adopted_object_is_never_forced_later_either(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    from kubernetes import client

    body = {"metadata": {"name": "shared"}, "data": {"v": "1", "theirs": "keep"}}
    client.CoreV1Api(kube.api_client).create_namespaced_config_map(ns, body, field_manager="kubectl-create")
    rendered.commit(layout("c1", configmap("c1", ns, "shared")))
    agent = make_agent(report_enabled=False)
    assert agent.pass_once().exit_code == EXIT_OK
    changed = configmap("c1", ns, "shared")
    changed["data"]["theirs"] = "ours"
    rendered.commit(layout("c1", changed))
    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_OBJECT_FAILURES and outcome.sync is not None
    assert (
        "gitops.nova.elotl.co/adopt: force" in outcome.sync.failed[ObjectRef("v1", "ConfigMap", ns, "shared")]
    )
    live = agent.kube.get(CONFIGMAPS, ns, "shared")
    assert live is not None and live["data"]["theirs"] == "keep"


def test_a_first_sync_of_many_objects_still_sees_which_ones_existed(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    users_configmap(kube, ns, "cm-07", value="1")  # one of many: found by one list, not a read each
    rendered.commit(layout("c1", *[configmap("c1", ns, f"cm-{i:02}") for i in range(40)]))
    if kube.fake is not None:
        kube.fake.requests.clear()
    outcome = make_agent(report_enabled=False).pass_once()
    assert outcome.exit_code == EXIT_OK and outcome.sync is not None
    assert outcome.sync.adopted == [ObjectRef("v1", "ConfigMap", ns, "cm-07")]
    if kube.fake is not None:
        reads = [r for r in kube.fake.requests if r.method == "GET" and "/configmaps/cm-" in r.path]
        assert reads == []


def test_the_status_report_lists_what_the_agent_adopted(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    import yaml

    ns = kube.namespace
    users_configmap(kube, ns, "settings", value="1")
    rendered.commit(layout("c1", configmap("c1", ns, "settings"), configmap("c1", ns, "app")))
    assert make_agent().pass_once().exit_code == EXIT_OK
    status = yaml.safe_load(rendered.show("nova-status", "status/c1.yaml"))["status"]
    assert status["adoptedObjects"] == [
        {"apiVersion": "v1", "kind": "ConfigMap", "namespace": ns, "name": "settings"}
    ]
