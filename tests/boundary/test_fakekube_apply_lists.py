"""Server-side apply of lists by their real keys, through the real client (fake or real cluster).

Behaviours covered:
- container ports are keyed by containerPort+protocol (protocol defaulting to TCP): two managers each own
  their own port of one container, a manager's dropped port goes while the other's stays, and
  managedFields name the items `k:{"containerPort":80,"protocol":"TCP"}`;
- volumeMounts are keyed by mountPath: two mounts of one volume are two items;
- a RoleBinding's subjects are atomic although each has a name: another manager's different list is a
  conflict, and force replaces the list whole;
- finalizers are a set: two managers' finalizers both stay, each goes when its manager drops it;
- an applied container port without its containerPort (keyed by the defaulted protocol alone) passes the
  typed patch and validation refuses it (422 naming the field), as kube-apiserver v1.36 does;
- a CRD's `x-kubernetes-list-type: map` list merges by its keys; a list without a list type is atomic; an
  item with none of its key fields is refused (500 from building the typed patch: "omits all key fields").
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from kubernetes import client

from tests.fakekube.clienting import apply, status_of
from tests.fakekube.fixtures import KubeTarget


def _apply_error(*args: Any, **kwargs: Any) -> client.ApiException:
    with pytest.raises(client.ApiException) as caught:
        apply(*args, **kwargs)
    return caught.value


def _deployment(
    containers: list[dict[str, Any]], volumes: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    labels = {"app": "web"}
    pod_spec: dict[str, Any] = {"containers": containers}
    if volumes:
        pod_spec["volumes"] = volumes
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": pod_spec},
        },
    }


def _fields_of(obj: dict[str, Any], manager: str) -> dict[str, Any]:
    entries = [e for e in obj["metadata"]["managedFields"] if e["manager"] == manager]
    assert len(entries) == 1, obj["metadata"]["managedFields"]
    fields_v1: dict[str, Any] = entries[0]["fieldsV1"]
    return fields_v1


def _ports(obj: dict[str, Any]) -> list[tuple[int, str]]:
    container = obj["spec"]["template"]["spec"]["containers"][0]
    return [(port["containerPort"], port["protocol"]) for port in container.get("ports") or []]


def test_container_ports_merge_by_container_port_and_protocol(kube: KubeTarget) -> None:
    path = f"/apis/apps/v1/namespaces/{kube.namespace}/deployments/web"
    image = "registry.example/web:1"
    apply(
        kube.api_client,
        path,
        _deployment([{"name": "web", "image": image, "ports": [{"containerPort": 80}]}]),
        "a",
    )
    extra = {
        "name": "web",
        "ports": [{"containerPort": 8080, "protocol": "TCP"}, {"containerPort": 8080, "protocol": "UDP"}],
    }
    merged = apply(kube.api_client, path, _deployment([extra]), "b")
    assert _ports(merged) == [(80, "TCP"), (8080, "TCP"), (8080, "UDP")]
    container = _fields_of(merged, "b")["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"web"}']
    assert set(container["f:ports"]) - {"."} == {
        'k:{"containerPort":8080,"protocol":"TCP"}',
        'k:{"containerPort":8080,"protocol":"UDP"}',
    }
    dropped = apply(kube.api_client, path, _deployment([{"name": "web", "image": image}]), "a")
    assert _ports(dropped) == [(8080, "TCP"), (8080, "UDP")]


def test_volume_mounts_are_keyed_by_mount_path(kube: KubeTarget) -> None:
    path = f"/apis/apps/v1/namespaces/{kube.namespace}/deployments/web"
    mounts = [{"name": "data", "mountPath": "/a"}, {"name": "data", "mountPath": "/b", "subPath": "b"}]
    container = {"name": "web", "image": "registry.example/web:1", "volumeMounts": mounts}
    applied = apply(kube.api_client, path, _deployment([container], [{"name": "data", "emptyDir": {}}]), "a")
    fields = _fields_of(applied, "a")["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"web"}']
    assert set(fields["f:volumeMounts"]) - {"."} == {'k:{"mountPath":"/a"}', 'k:{"mountPath":"/b"}'}
    one = apply(
        kube.api_client,
        path,
        _deployment([{**container, "volumeMounts": mounts[1:]}], [{"name": "data", "emptyDir": {}}]),
        "a",
    )
    assert one["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] == [mounts[1]]


def test_role_binding_subjects_are_atomic(kube: KubeTarget) -> None:
    path = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{kube.namespace}/rolebindings/readers"

    def binding(*users: str) -> dict[str, Any]:
        return {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "readers"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": u} for u in users],
        }

    apply(kube.api_client, path, binding("alice"), "a")
    error = _apply_error(kube.api_client, path, binding("bob"), "b")
    assert error.status == 409 and status_of(error)["details"]["causes"][0]["field"] == ".subjects"
    forced = apply(kube.api_client, path, binding("bob"), "b", force=True)
    assert [s["name"] for s in forced["subjects"]] == ["bob"]


def test_finalizers_are_a_set(kube: KubeTarget) -> None:
    path = f"/api/v1/namespaces/{kube.namespace}/configmaps/held"

    def held(*finalizers: str) -> dict[str, Any]:
        metadata: dict[str, Any] = {"name": "held", "finalizers": list(finalizers)}
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}

    apply(kube.api_client, path, held("example.com/a"), "a")
    both = apply(kube.api_client, path, held("example.com/b"), "b")
    assert both["metadata"]["finalizers"] == ["example.com/a", "example.com/b"]
    assert set(_fields_of(both, "b")["f:metadata"]["f:finalizers"]) == {'v:"example.com/b"'}
    assert apply(kube.api_client, path, held(), "a")["metadata"]["finalizers"] == ["example.com/b"]
    assert "finalizers" not in apply(kube.api_client, path, held(), "b")["metadata"]


def test_a_keyed_item_without_one_of_its_keys_is_refused_by_validation(kube: KubeTarget) -> None:
    path = f"/apis/apps/v1/namespaces/{kube.namespace}/deployments/web"
    container = {"name": "web", "image": "registry.example/web:1", "ports": [{"name": "http"}]}
    error = _apply_error(kube.api_client, path, _deployment([container]), "a")
    # kube-apiserver v1.36: keyed by the defaulted protocol alone, the item passes the typed patch and
    # validation refuses it
    assert error.status == 422
    assert [cause["field"] for cause in status_of(error)["details"]["causes"]] == [
        "spec.template.spec.containers[0].ports[0].containerPort"
    ]


def _gadget_crd(group: str) -> dict[str, Any]:
    item = {"type": "object", "properties": {"id": {"type": "string"}, "size": {"type": "integer"}}}
    spec = {
        "type": "object",
        "properties": {
            "parts": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["id"],
                "items": {**item, "required": ["id"]},
            },
            "named": {
                "type": "array",
                "items": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gadgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "properties": {"spec": spec}},
                    },
                }
            ],
        },
    }


def test_crd_list_types_decide_how_lists_merge(kube: KubeTarget) -> None:
    group = f"{kube.namespace}.nova.example"
    extensions = client.ApiextensionsV1Api(kube.api_client)
    extensions.create_custom_resource_definition(_gadget_crd(group))
    try:
        path = f"/apis/{group}/v1/namespaces/{kube.namespace}/gadgets/g"

        def gadget(spec: dict[str, Any]) -> dict[str, Any]:
            return {"apiVersion": f"{group}/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": spec}

        deadline = time.monotonic() + 30
        while True:
            try:
                apply(
                    kube.api_client,
                    path,
                    gadget({"parts": [{"id": "x", "size": 1}], "named": [{"name": "n1"}]}),
                    "a",
                )
                break
            except client.ApiException as error:
                assert error.status == 404 and time.monotonic() < deadline
                time.sleep(0.2)
        merged = apply(kube.api_client, path, gadget({"parts": [{"id": "y", "size": 2}]}), "b")
        assert merged["spec"]["parts"] == [{"id": "x", "size": 1}, {"id": "y", "size": 2}]
        error = _apply_error(kube.api_client, path, gadget({"named": [{"name": "n2"}]}), "b")
        assert error.status == 409 and status_of(error)["details"]["causes"][0]["field"] == ".spec.named"
        keyless = _apply_error(kube.api_client, path, gadget({"parts": [{"size": 3}]}), "c")
        assert keyless.status == 500
        assert 'omits all key fields ["id"]' in status_of(keyless)["message"]
    finally:
        extensions.delete_custom_resource_definition(f"gadgets.{group}")
