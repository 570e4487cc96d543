"""CustomResourceDefinitions on the fake API server, through the real client.

Behaviours covered:
- a created CRD gets NamesAccepted and Established conditions (after the configured delay) and only then
  appears in discovery and serves its objects, namespaced or cluster-scoped, in every served version;
- create/update of a custom object prune unknown fields (with a warning) and answer 422 Invalid for wrong
  types and missing required fields; x-kubernetes-preserve-unknown-fields keeps unknown fields;
- server-side apply of a body that does not fit the schema answers 500 "failed to create typed patch
  object" (as kube-apiserver does), while create of the same body answers 422;
- the status subresource of a CRD with `subresources.status`; an invalid CRD is 422;
- deleting a CRD removes its resources from discovery and its objects.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client, dynamic

from tests.fakekube.clienting import apply, request, status_of
from tests.fakekube.fixtures import KubeTarget, client_for
from tests.fakekube.server import FakeKubeServer

GROUP = "widgets.nova.example"


def widget_crd(scope: str = "Namespaced", group: str = GROUP) -> dict[str, Any]:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["size"],
                "properties": {
                    "size": {"type": "integer"},
                    "color": {"type": "string", "enum": ["red", "blue"]},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                },
            },
            "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
        },
    }
    version = {
        "name": "v1",
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": schema},
        "subresources": {"status": {}},
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
            "versions": [version],
        },
    }


def widget(name: str, spec: dict[str, Any], group: str = GROUP) -> dict[str, Any]:
    return {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec}


@pytest.fixture
def group(kube: KubeTarget) -> Iterator[str]:
    """The Widget group of one test: a real server keeps a CRD beyond the test that made it (a second
    test would find it "already exists"), so each test has its own, deleted at the end."""
    name = f"{kube.namespace}.nova.example"
    yield name
    try:
        client.ApiextensionsV1Api(kube.api_client).delete_custom_resource_definition(f"widgets.{name}")
    except client.ApiException as error:
        if error.status != 404:
            raise


def _established(api_client: client.ApiClient, name: str) -> bool:
    crd = client.ApiextensionsV1Api(api_client).read_custom_resource_definition(name)
    conditions = {c.type: c.status for c in (crd.status.conditions if crd.status else None) or []}
    return conditions.get("Established") == "True" and conditions.get("NamesAccepted") == "True"


def _install(kube: KubeTarget, crd: dict[str, Any]) -> None:
    client.ApiextensionsV1Api(kube.api_client).create_custom_resource_definition(crd)
    deadline = time.monotonic() + 10
    while not _established(kube.api_client, crd["metadata"]["name"]):
        assert time.monotonic() < deadline, "CRD never became Established"
        time.sleep(0.05)


@pytest.mark.fake_only("delays CRD establishment by 1 s (the fake's crd_established_delay)")
def test_crd_is_established_after_the_delay_and_then_served() -> None:
    fake = FakeKubeServer(crd_established_delay=1.0)
    api_client = client_for(fake)
    try:
        client.ApiextensionsV1Api(api_client).create_custom_resource_definition(widget_crd())
        assert not _established(api_client, f"widgets.{GROUP}")
        groups = {group.name for group in client.ApisApi(api_client).get_api_versions().groups}
        assert GROUP not in groups
        deadline = time.monotonic() + 10
        while not _established(api_client, f"widgets.{GROUP}"):
            assert time.monotonic() < deadline, "CRD never became Established"
            time.sleep(0.05)
        resources = request(api_client, "GET", f"/apis/{GROUP}/v1")["resources"]
        assert {r["name"] for r in resources} == {"widgets", "widgets/status"}
        assert resources[0]["shortNames"] == ["wd"]
    finally:
        api_client.close()
        fake.stop()


def test_custom_objects_are_served_namespaced_and_through_the_dynamic_client(
    kube: KubeTarget, group: str, tmp_path: Any
) -> None:
    _install(kube, widget_crd(group=group))
    custom = client.CustomObjectsApi(kube.api_client)
    custom.create_namespaced_custom_object(
        group, "v1", kube.namespace, "widgets", widget("w1", {"size": 3}, group)
    )
    got = custom.get_namespaced_custom_object(group, "v1", kube.namespace, "widgets", "w1")
    assert got["spec"] == {"size": 3} and got["metadata"]["generation"] == 1
    dyn = dynamic.DynamicClient(kube.api_client, cache_file=str(tmp_path / "discovery.json"))
    widgets = dyn.resources.get(api_version=f"{group}/v1", kind="Widget")
    assert [item.metadata.name for item in widgets.get(namespace=kube.namespace).items] == ["w1"]


def test_cluster_scoped_crd_serves_cluster_scoped_objects(kube: KubeTarget, group: str) -> None:
    _install(kube, widget_crd(scope="Cluster", group=group))
    custom = client.CustomObjectsApi(kube.api_client)
    created = custom.create_cluster_custom_object(
        group, "v1", "widgets", widget("global", {"size": 1}, group)
    )
    assert "namespace" not in created["metadata"]
    custom.delete_cluster_custom_object(group, "v1", "widgets", "global")


def test_unknown_fields_are_pruned_and_preserved_where_the_schema_says(kube: KubeTarget, group: str) -> None:
    _install(kube, widget_crd(group=group))
    custom = client.CustomObjectsApi(kube.api_client)
    body = widget("w", {"size": 1, "bogus": True, "extra": {"anything": {"goes": 1}}}, group)
    created = custom.create_namespaced_custom_object(group, "v1", kube.namespace, "widgets", body)
    assert created["spec"] == {"size": 1, "extra": {"anything": {"goes": 1}}}


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"size": "three"}, "spec.size"),
        ({"color": "red"}, "spec.size"),
        ({"size": 1, "color": "green"}, "spec.color"),
        ({"size": 1, "tags": [1]}, "spec.tags[0]"),
    ],
)
def test_schema_violations_on_create_are_422(
    kube: KubeTarget, group: str, spec: dict[str, Any], field: str
) -> None:
    _install(kube, widget_crd(group=group))
    with pytest.raises(client.ApiException) as caught:
        client.CustomObjectsApi(kube.api_client).create_namespaced_custom_object(
            group, "v1", kube.namespace, "widgets", widget("bad", spec, group)
        )
    body = status_of(caught.value)
    assert (caught.value.status, body["reason"]) == (422, "Invalid")
    assert field in {cause["field"] for cause in body["details"]["causes"]}


def test_apply_of_a_body_that_does_not_fit_the_schema_is_500_but_create_is_422(
    kube: KubeTarget, group: str
) -> None:
    _install(kube, widget_crd(group=group))
    path = f"/apis/{group}/v1/namespaces/{kube.namespace}/widgets/w"
    with pytest.raises(client.ApiException) as applied:
        apply(kube.api_client, path, widget("w", {"size": "big"}, group), "nova-agent")
    assert applied.value.status == 500
    assert "failed to create typed patch object" in status_of(applied.value)["message"]
    with pytest.raises(client.ApiException) as unknown:
        apply(kube.api_client, path, widget("w", {"size": 1, "bogus": 1}, group), "nova-agent")
    assert unknown.value.status == 500
    with pytest.raises(client.ApiException) as created:
        client.CustomObjectsApi(kube.api_client).create_namespaced_custom_object(
            group, "v1", kube.namespace, "widgets", widget("w", {"size": "big"}, group)
        )
    assert created.value.status == 422
    fitting = apply(kube.api_client, path, widget("w", {"size": 2}, group), "nova-agent")
    assert fitting["spec"] == {"size": 2}


def test_custom_status_subresource(kube: KubeTarget, group: str) -> None:
    _install(kube, widget_crd(group=group))
    custom = client.CustomObjectsApi(kube.api_client)
    custom.create_namespaced_custom_object(
        group, "v1", kube.namespace, "widgets", widget("w", {"size": 1}, group)
    )
    custom.patch_namespaced_custom_object(
        group, "v1", kube.namespace, "widgets", "w", {"status": {"ready": True}}
    )
    assert "status" not in custom.get_namespaced_custom_object(group, "v1", kube.namespace, "widgets", "w")
    patched = custom.patch_namespaced_custom_object_status(
        group, "v1", kube.namespace, "widgets", "w", {"status": {"ready": True}}
    )
    assert patched["status"] == {"ready": True} and patched["metadata"]["generation"] == 1


def test_invalid_crd_is_422(kube: KubeTarget, group: str) -> None:
    crd = widget_crd(group=group)
    crd["metadata"]["name"] = "wrong-name"
    crd["spec"]["scope"] = "Everywhere"
    with pytest.raises(client.ApiException) as caught:
        request(kube.api_client, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    fields = {cause["field"] for cause in status_of(caught.value)["details"]["causes"]}
    assert {"metadata.name", "spec.scope"} <= fields


def test_deleting_a_crd_removes_its_resources_and_objects(kube: KubeTarget, group: str) -> None:
    _install(kube, widget_crd(group=group))
    custom = client.CustomObjectsApi(kube.api_client)
    custom.create_namespaced_custom_object(
        group, "v1", kube.namespace, "widgets", widget("w", {"size": 1}, group)
    )
    client.ApiextensionsV1Api(kube.api_client).delete_custom_resource_definition(f"widgets.{group}")
    deadline = time.monotonic() + 30
    while True:
        try:
            custom.list_namespaced_custom_object(group, "v1", kube.namespace, "widgets")
        except client.ApiException as error:
            assert error.status == 404
            break
        assert time.monotonic() < deadline
        time.sleep(0.2)
