"""Cascading deletion by propagationPolicy, through the real client (fake or real cluster).

Behaviours covered:
- Background (the default): the owner goes at once, its dependents a moment later; a dependent another live
  owner still owns stays and only loses the reference to the deleted owner;
- Orphan: the dependents stay, without the reference;
- Foreground: DELETE answers the owner marked (deletionTimestamp, foregroundDeletion finalizer), then the
  dependents and the owner go;
- an unknown policy, or one together with orphanDependents, is 422 Invalid (DeleteOptions validation,
  before the object is looked up).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client

from tests.fakekube.clienting import request, status_of
from tests.fakekube.fixtures import KubeTarget


def _configmap(kube: KubeTarget, name: str, *owners: dict[str, Any]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if owners:
        metadata["ownerReferences"] = [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "name": o["metadata"]["name"],
                "uid": o["metadata"]["uid"],
            }
            for o in owners
        ]
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": {"a": "1"}}
    created: dict[str, Any] = request(
        kube.api_client, "POST", f"/api/v1/namespaces/{kube.namespace}/configmaps", body
    )
    return created


def _get(kube: KubeTarget, name: str) -> dict[str, Any] | None:
    try:
        found: dict[str, Any] = request(
            kube.api_client, "GET", f"/api/v1/namespaces/{kube.namespace}/configmaps/{name}"
        )
    except client.ApiException as error:
        assert error.status == 404
        return None
    return found


def _eventually(condition: Callable[[], bool], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {timeout} s: {what}")
        time.sleep(0.1)


def _delete(kube: KubeTarget, name: str, policy: str | None) -> Any:
    body = {"apiVersion": "v1", "kind": "DeleteOptions", **({"propagationPolicy": policy} if policy else {})}
    return request(kube.api_client, "DELETE", f"/api/v1/namespaces/{kube.namespace}/configmaps/{name}", body)


def test_background_deletes_dependents_after_the_owner(kube: KubeTarget) -> None:
    owner, other = _configmap(kube, "owner"), _configmap(kube, "other")
    _configmap(kube, "dependent", owner)
    _configmap(kube, "shared", owner, other)
    _delete(kube, "owner", None)
    assert _get(kube, "owner") is None
    _eventually(lambda: _get(kube, "dependent") is None, "the dependent is collected")
    _eventually(
        lambda: (
            [ref["name"] for ref in (_get(kube, "shared") or {})["metadata"].get("ownerReferences", [])]
            == ["other"]
        ),
        "the shared dependent loses its reference to the deleted owner",
    )


def test_orphan_keeps_dependents_without_the_reference(kube: KubeTarget) -> None:
    owner = _configmap(kube, "owner")
    _configmap(kube, "dependent", owner)
    _delete(kube, "owner", "Orphan")
    _eventually(lambda: _get(kube, "owner") is None, "the owner goes")
    dependent = _get(kube, "dependent")
    assert dependent is not None and "ownerReferences" not in dependent["metadata"]


def test_foreground_marks_the_owner_until_its_dependents_are_gone(kube: KubeTarget) -> None:
    owner = _configmap(kube, "owner")
    _configmap(kube, "dependent", owner)
    answered = _delete(kube, "owner", "Foreground")
    assert answered["metadata"]["deletionTimestamp"]
    assert "foregroundDeletion" in answered["metadata"]["finalizers"]
    _eventually(lambda: _get(kube, "owner") is None, "the owner goes after its dependents")
    assert _get(kube, "dependent") is None


def test_an_unknown_policy_is_invalid(kube: KubeTarget) -> None:
    _configmap(kube, "owner")
    with pytest.raises(client.ApiException) as caught:
        _delete(kube, "owner", "Sideways")
    assert caught.value.status == 422 and status_of(caught.value)["message"] == (
        'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": '
        'supported values: "Foreground", "Background", "Orphan", "nil"'
    )


def test_delete_options_are_validated_before_the_object_is_looked_up(kube: KubeTarget) -> None:
    path = f"/api/v1/namespaces/{kube.namespace}/configmaps/missing"
    with pytest.raises(client.ApiException) as caught:
        request(kube.api_client, "DELETE", path, {"propagationPolicy": "Sideways"})
    assert caught.value.status == 422
    both = {"propagationPolicy": "Orphan", "orphanDependents": True}
    with pytest.raises(client.ApiException) as caught:
        request(kube.api_client, "DELETE", path, both)
    assert caught.value.status == 422 and status_of(caught.value)["message"].endswith(
        "orphanDependents and deletionPropagation cannot be both set"
    )
