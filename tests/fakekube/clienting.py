"""Client-side helpers for tests against the fake (or a real) API server: server-side apply through
ApiClient.call_api (the typed APIs of kubernetes 37 have no apply method), Status bodies, object builders."""

from __future__ import annotations

import json
from typing import Any

from kubernetes import client


def apply(
    api_client: client.ApiClient,
    path: str,
    body: dict[str, Any],
    manager: str,
    force: bool = False,
    dry_run: bool = False,
    subresource: str = "",
) -> dict[str, Any]:
    """PATCH application/apply-patch+yaml; raises client.ApiException on failure."""
    query: list[tuple[str, str]] = [("fieldManager", manager)] if manager else []
    if force:
        query.append(("force", "true"))
    if dry_run:
        query.append(("dryRun", "All"))
    method, url, headers, payload, _ = api_client.param_serialize(
        "PATCH",
        path + (f"/{subresource}" if subresource else ""),
        query_params=query,
        header_params={"Content-Type": "application/apply-patch+yaml", "Accept": "application/json"},
        body=body,
    )
    response = api_client.call_api(method, url, header_params=headers, body=payload)
    response.read()  # type: ignore[no-untyped-call]
    result: Any = api_client.response_deserialize(response, {"200": "object", "201": "object"}).data
    return dict(result)


def request(
    api_client: client.ApiClient,
    method: str,
    path: str,
    body: Any = None,
    content_type: str = "application/json",
    query: list[tuple[str, str]] | None = None,
) -> Any:
    """A raw request (for bodies the typed client would refuse to send); raises client.ApiException."""
    method, url, headers, payload, _ = api_client.param_serialize(
        method, path, query_params=query or [], header_params={"Content-Type": content_type}, body=body
    )
    response = api_client.call_api(method, url, header_params=headers, body=payload)
    response.read()  # type: ignore[no-untyped-call]
    return api_client.response_deserialize(response, {"200": "object", "201": "object"}).data


def status_of(error: client.ApiException) -> dict[str, Any]:
    """The Status body of a failed request."""
    body: dict[str, Any] = json.loads(error.body or "{}")
    return body


def configmap(name: str, data: dict[str, str], labels: dict[str, str] | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if labels:
        metadata["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data}


def deployment(name: str, replicas: int = 1, image: str = "registry.example/web:1") -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "web", "image": image}]},
            },
        },
    }
