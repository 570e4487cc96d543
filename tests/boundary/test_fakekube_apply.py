"""Server-side apply and the other PATCH types on the fake API server, through the real client.

Behaviours covered:
- apply creates a missing object (201) and records an Apply entry in managedFields (fieldsV1, list items keyed
  by name); re-applying the same body writes nothing (same resourceVersion);
- fieldManager is required (422, the PatchOptions are invalid, as kube-apiserver says); apiVersion/kind are
  required; a name that differs from the URL is 400;
- a field owned by another manager with a different value is a 409 Conflict naming manager and field;
  the same value is shared ownership; force=true takes ownership;
- fields the same manager applied before and omits now are removed, unless another manager owns them;
  containers merge by name;
- an apply into a missing namespace is 404; dryRun=All applies nothing; a stale resourceVersion is 409;
- merge patch (null deletes), strategic merge patch (containers merged by name), JSON patch (a failed
  test is 422).
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client

from tests.fakekube.clienting import apply, configmap, deployment, request, status_of
from tests.fakekube.fixtures import KubeTarget


def _cm_path(kube: KubeTarget, name: str) -> str:
    return f"/api/v1/namespaces/{kube.namespace}/configmaps/{name}"


def _deploy_path(kube: KubeTarget, name: str) -> str:
    return f"/apis/apps/v1/namespaces/{kube.namespace}/deployments/{name}"


def _apply_error(*args: Any, **kwargs: Any) -> client.ApiException:
    with pytest.raises(client.ApiException) as caught:
        apply(*args, **kwargs)
    return caught.value


def _managers(obj: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e["manager"], e["operation"]): e["fieldsV1"] for e in obj["metadata"].get("managedFields", [])}


def test_apply_creates_and_records_field_ownership(kube: KubeTarget) -> None:
    created = apply(kube.api_client, _deploy_path(kube, "web"), deployment("web", replicas=2), "nova-agent")
    assert created["metadata"]["uid"] and created["spec"]["replicas"] == 2
    fields = _managers(created)[("nova-agent", "Apply")]
    assert "f:replicas" in fields["f:spec"]
    containers = fields["f:spec"]["f:template"]["f:spec"]["f:containers"]
    assert 'k:{"name":"web"}' in containers
    assert "f:image" in containers['k:{"name":"web"}']


def test_reapplying_the_same_body_writes_nothing(kube: KubeTarget) -> None:
    body = configmap("same", {"a": "1"})
    first = apply(kube.api_client, _cm_path(kube, "same"), body, "nova-agent")
    second = apply(kube.api_client, _cm_path(kube, "same"), body, "nova-agent")
    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert second["metadata"]["managedFields"] == first["metadata"]["managedFields"]


def test_apply_requires_a_field_manager_and_a_matching_body(kube: KubeTarget) -> None:
    no_manager = _apply_error(kube.api_client, _cm_path(kube, "x"), configmap("x", {}), "")
    assert (no_manager.status, status_of(no_manager)["reason"]) == (422, "Invalid")  # the PatchOptions'
    assert status_of(no_manager)["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'
    )
    no_kind = _apply_error(kube.api_client, _cm_path(kube, "x"), {"metadata": {"name": "x"}}, "m")
    assert no_kind.status == 400
    other_name = _apply_error(kube.api_client, _cm_path(kube, "x"), configmap("y", {}), "m")
    assert other_name.status == 400


def test_conflicting_apply_is_409_and_force_takes_ownership(kube: KubeTarget) -> None:
    path = _deploy_path(kube, "web")
    apply(kube.api_client, path, deployment("web", replicas=2), "nova-agent")
    error = _apply_error(kube.api_client, path, deployment("web", replicas=5), "autoscaler")
    body = status_of(error)
    assert (error.status, body["reason"]) == (409, "Conflict")
    assert body["message"].startswith("Apply failed with 1 conflict")
    assert 'conflict with "nova-agent"' in body["message"]
    assert {cause["field"] for cause in body["details"]["causes"]} == {".spec.replicas"}
    assert (
        client.AppsV1Api(kube.api_client).read_namespaced_deployment("web", kube.namespace).spec.replicas == 2
    )

    forced = apply(kube.api_client, path, deployment("web", replicas=5), "autoscaler", force=True)
    assert forced["spec"]["replicas"] == 5
    managers = _managers(forced)
    assert "f:replicas" in managers[("autoscaler", "Apply")]["f:spec"]
    assert "f:replicas" not in managers[("nova-agent", "Apply")]["f:spec"]


def test_applying_the_same_value_shares_ownership_without_conflict(kube: KubeTarget) -> None:
    path = _cm_path(kube, "shared")
    apply(kube.api_client, path, configmap("shared", {"a": "1"}), "first")
    shared = apply(kube.api_client, path, configmap("shared", {"a": "1"}), "second")
    managers = _managers(shared)
    assert "f:a" in managers[("first", "Apply")]["f:data"]
    assert "f:a" in managers[("second", "Apply")]["f:data"]


def test_update_managers_conflict_with_apply_too(kube: KubeTarget) -> None:
    client.CoreV1Api(kube.api_client).create_namespaced_config_map(
        kube.namespace, configmap("edited", {"a": "1"}), field_manager="kubectl-edit"
    )
    error = _apply_error(
        kube.api_client, _cm_path(kube, "edited"), configmap("edited", {"a": "2"}), "nova-agent"
    )
    assert error.status == 409
    assert 'conflict with "kubectl-edit"' in status_of(error)["message"]


def test_fields_omitted_by_their_applier_are_removed_unless_someone_else_owns_them(kube: KubeTarget) -> None:
    path = _cm_path(kube, "shrink")
    apply(
        kube.api_client,
        path,
        configmap("shrink", {"a": "1", "b": "2", "c": "3"}, {"keep": "x"}),
        "nova-agent",
    )
    apply(kube.api_client, path, configmap("shrink", {"c": "3"}), "other")
    shrunk = apply(kube.api_client, path, configmap("shrink", {"a": "1"}), "nova-agent")
    assert shrunk["data"] == {"a": "1", "c": "3"}
    assert "labels" not in shrunk["metadata"]


def test_containers_merge_by_name_and_omitted_containers_go(kube: KubeTarget) -> None:
    path = _deploy_path(kube, "web")
    body = deployment("web")
    body["spec"]["template"]["spec"]["containers"].append(
        {"name": "sidecar", "image": "registry.example/side:1"}
    )
    apply(kube.api_client, path, body, "nova-agent")
    apply(kube.api_client, path, deployment("web", image="registry.example/web:2"), "nova-agent")
    live = client.AppsV1Api(kube.api_client).read_namespaced_deployment("web", kube.namespace)
    containers = live.spec.template.spec.containers
    assert [(c.name, c.image) for c in containers] == [("web", "registry.example/web:2")]


def test_apply_status_is_ignored_on_the_main_resource(kube: KubeTarget) -> None:
    body = deployment("web")
    body["status"] = {"replicas": 9}
    applied = apply(kube.api_client, _deploy_path(kube, "web"), body, "nova-agent")
    assert applied.get("status", {}).get("replicas") != 9
    assert "f:status" not in _managers(applied)[("nova-agent", "Apply")]


def test_apply_into_a_missing_namespace_is_404(kube: KubeTarget) -> None:
    error = _apply_error(kube.api_client, "/api/v1/namespaces/absent/configmaps/x", configmap("x", {}), "m")
    assert error.status == 404
    assert status_of(error)["details"]["kind"] == "namespaces"


def test_dry_run_apply_persists_nothing(kube: KubeTarget) -> None:
    dry = apply(kube.api_client, _cm_path(kube, "dry"), configmap("dry", {"a": "1"}), "m", dry_run=True)
    assert dry["data"] == {"a": "1"}
    with pytest.raises(client.ApiException) as caught:
        client.CoreV1Api(kube.api_client).read_namespaced_config_map("dry", kube.namespace)
    assert caught.value.status == 404


def test_apply_with_a_stale_resource_version_is_409(kube: KubeTarget) -> None:
    first = apply(kube.api_client, _cm_path(kube, "rv"), configmap("rv", {"a": "1"}), "m")
    apply(kube.api_client, _cm_path(kube, "rv"), configmap("rv", {"a": "2"}), "m")
    stale = configmap("rv", {"a": "3"})
    stale["metadata"]["resourceVersion"] = first["metadata"]["resourceVersion"]
    assert _apply_error(kube.api_client, _cm_path(kube, "rv"), stale, "m").status == 409


def test_merge_patch_sets_and_deletes_keys(kube: KubeTarget) -> None:
    core = client.CoreV1Api(kube.api_client)
    core.create_namespaced_config_map(kube.namespace, configmap("mp", {"a": "1", "b": "2"}))
    patched = request(
        kube.api_client,
        "PATCH",
        _cm_path(kube, "mp"),
        {"data": {"a": None, "c": "3"}},
        "application/merge-patch+json",
    )
    assert patched["data"] == {"b": "2", "c": "3"}


def test_strategic_merge_patch_merges_containers_by_name(kube: KubeTarget) -> None:
    apps = client.AppsV1Api(kube.api_client)
    body = deployment("web")
    body["spec"]["template"]["spec"]["containers"].append(
        {"name": "sidecar", "image": "registry.example/side:1"}
    )
    apps.create_namespaced_deployment(kube.namespace, body)
    patch = {
        "spec": {"template": {"spec": {"containers": [{"name": "web", "image": "registry.example/web:9"}]}}}
    }
    patched = apps.patch_namespaced_deployment("web", kube.namespace, patch)
    images = {c.name: c.image for c in patched.spec.template.spec.containers}
    assert images == {"web": "registry.example/web:9", "sidecar": "registry.example/side:1"}


def test_json_patch_applies_operations_and_a_failed_test_is_422(kube: KubeTarget) -> None:
    core = client.CoreV1Api(kube.api_client)
    core.create_namespaced_config_map(kube.namespace, configmap("jp", {"a": "1"}))
    patched = core.patch_namespaced_config_map(
        "jp",
        kube.namespace,
        [{"op": "test", "path": "/data/a", "value": "1"}, {"op": "add", "path": "/data/b", "value": "2"}],
    )
    assert patched.data == {"a": "1", "b": "2"}
    with pytest.raises(client.ApiException) as caught:
        core.patch_namespaced_config_map(
            "jp", kube.namespace, [{"op": "test", "path": "/data/a", "value": "9"}]
        )
    assert caught.value.status == 422


def test_patch_of_a_missing_object_is_404(kube: KubeTarget) -> None:
    with pytest.raises(client.ApiException) as caught:
        client.CoreV1Api(kube.api_client).patch_namespaced_config_map(
            "none", kube.namespace, {"data": {"a": "1"}}
        )
    assert caught.value.status == 404
