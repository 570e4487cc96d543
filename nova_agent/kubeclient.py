"""The one implementation of :class:`~nova_agent.kubeports.KubePort`, over ``kubernetes.client.ApiClient``.

It talks REST through ``ApiClient.call_api`` (discovery, server-side apply with content type
``application/apply-patch+yaml``, get/list/delete) rather than the generated typed APIs, because the agent
handles arbitrary kinds as plain dicts. The client is always built explicitly from a kubeconfig/context or the
in-cluster service account (:func:`build_api_client`) and passed in; the library's process-wide default
configuration is never read or set: one process may talk to several clusters (tests do).

``kubernetes`` is imported lazily: importing it costs about 225 ms, which ``nova-agent --help`` must not
pay.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from nova_agent.kubeports import FIELD_MANAGER, KubeApiError, KubeUnavailable, Resource
from nova_agent.resources import Body


def build_api_client(kubeconfig: str | None, context: str | None) -> Any:
    """An ApiClient for ``kubeconfig``/``context``; the in-cluster service account when neither is given."""
    from kubernetes import client, config

    if kubeconfig or context:
        return config.new_client_from_config(  # type: ignore[no-untyped-call]
            config_file=kubeconfig, context=context, persist_config=False
        )
    configuration = client.Configuration()
    loader = config.incluster_config.InClusterConfigLoader(  # type: ignore[no-untyped-call]
        token_filename=config.incluster_config.SERVICE_TOKEN_FILENAME,
        cert_filename=config.incluster_config.SERVICE_CERT_FILENAME,
    )
    loader.load_and_set(client_configuration=configuration)  # type: ignore[no-untyped-call]
    return client.ApiClient(configuration)


def _status_message(body: str | bytes | None) -> tuple[str, str]:
    try:
        status = json.loads(body or b"{}")
    except ValueError:
        return "", (body.decode(errors="replace") if isinstance(body, bytes) else str(body or ""))
    if isinstance(status, dict):
        return str(status.get("reason", "")), str(status.get("message", ""))
    return "", str(status)


def _object(answer: Any, path: str) -> Body:
    """``answer`` when it is a JSON object; a server answering anything else is at fault, not the agent."""
    if not isinstance(answer, dict):
        raise KubeApiError(502, "BadGateway", f"the answer to {path} is not a Kubernetes object")
    return answer


def _resource(group: str, version: str, item: dict[str, Any]) -> Resource:
    return Resource(group, version, item["name"], item["kind"], bool(item.get("namespaced")))


class ApiClientKube:
    """KubePort over an explicitly built ``ApiClient``."""

    def __init__(self, api_client: Any, request_timeout: float = 30.0) -> None:
        self._api_client = api_client
        self._timeout = request_timeout
        self._groups: dict[str, list[Resource]] | None = None
        self._listable: set[Resource] = set()
        self._undiscovered: list[str] = []
        """Group versions whose discovery failed in the last discovery (an aggregated API down)."""
        self._may_refresh = False
        """Whether a discovery miss may rediscover (once per pass)."""

    def _call(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]] | None = None,
        body: Any = None,
        content_type: str | None = None,
    ) -> Any:
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        try:
            method, url, headers, body, _ = self._api_client.param_serialize(
                method=method,
                resource_path=path,
                query_params=query or [],
                header_params=headers,
                body=body,
                auth_settings=["BearerToken"],
            )
            response = self._api_client.call_api(
                method, url, header_params=headers, body=body, _request_timeout=self._timeout
            )
            data = response.read()
        except ApiException as error:  # raised for TLS failures, with status 0
            raise KubeUnavailable(f"the Kubernetes API server cannot be reached: {error.reason}") from error
        except (HTTPError, OSError) as error:
            raise KubeUnavailable(f"the Kubernetes API server cannot be reached: {error}") from error
        if not 200 <= response.status <= 299:
            reason, message = _status_message(data)
            raise KubeApiError(int(response.status), reason or str(response.reason or ""), message)
        return json.loads(data) if data else None

    # discovery -------------------------------------------------------------------------------------------

    def _discover(self) -> dict[str, list[Resource]]:
        groups: dict[str, list[Resource]] = {}
        self._undiscovered = []
        versions = [("", "v1", "/api/v1")]
        for group in (self._call("GET", "/apis") or {}).get("groups", []):
            for version in group.get("versions", []):
                name, number = group["name"], version["version"]
                versions.append((name, number, f"/apis/{name}/{number}"))
        for group_name, version, path in versions:
            try:
                listing = self._call("GET", path) or {}
            except KubeApiError:
                self._undiscovered.append(path)
                continue  # a group whose aggregated API is down must not break the agent
            api_version = f"{group_name}/{version}" if group_name else version
            served = [(item, _resource(group_name, version, item)) for item in listing.get("resources", [])]
            groups[api_version] = [resource for item, resource in served if "/" not in item["name"]]
            self._listable.update(
                resource
                for item, resource in served
                if "/" not in item["name"] and "list" in item.get("verbs", [])
            )
        return groups

    def resource_for(self, api_version: str, kind: str) -> Resource | None:
        """From cached discovery; a miss rediscovers once per pass (see :meth:`new_pass`), so a CRD installed
        by someone else, or discovery lagging behind ``Established``, is found without a restart, while a
        kind that is really not served costs at most one rediscovery per pass."""
        if self._groups is None:
            self._groups, self._may_refresh = self._discover(), False
        found = self._cached(api_version, kind)
        if found is None and self._may_refresh:
            self._groups, self._may_refresh = self._discover(), False
            found = self._cached(api_version, kind)
        return found

    def _cached(self, api_version: str, kind: str) -> Resource | None:
        for resource in (self._groups or {}).get(api_version, []):
            if resource.kind == kind:
                return resource
        return None

    def forget_discovery(self) -> None:
        self._groups = None

    def namespaced_resources(self) -> Sequence[Resource]:
        if self._groups is None:
            self._groups, self._may_refresh = self._discover(), False
        if self._undiscovered:
            raise KubeApiError(503, "ServiceUnavailable", f"discovery of {', '.join(self._undiscovered)}")
        first: dict[tuple[str, str], Resource] = {}
        for resources in self._groups.values():  # discovery lists a group's preferred version first
            for resource in resources:
                if resource.namespaced and resource in self._listable:
                    first.setdefault((resource.group, resource.plural), resource)
        return list(first.values())

    def new_pass(self) -> None:
        self._may_refresh = True

    # objects ---------------------------------------------------------------------------------------------

    def apply(self, resource: Resource, body: Body, *, force: bool, dry_run: bool = False) -> Body:
        metadata = body.get("metadata") or {}
        query = [("fieldManager", FIELD_MANAGER), ("force", "true" if force else "false")]
        if dry_run:
            query.append(("dryRun", "All"))
        path = resource.path(metadata.get("namespace"), metadata["name"])
        return _object(self._call("PATCH", path, query, body, "application/apply-patch+yaml"), path)

    def delete(self, resource: Resource, namespace: str, name: str, *, uid: str = "") -> None:
        options: Body = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"}
        if uid:
            options["preconditions"] = {"uid": uid}
        try:
            self._call(
                "DELETE", resource.path(namespace, name), body=options, content_type="application/json"
            )
        except KubeApiError as error:
            if error.status != 404:
                raise

    def get(self, resource: Resource, namespace: str, name: str) -> Body | None:
        path = resource.path(namespace, name)
        try:
            found = self._call("GET", path)
        except KubeApiError as error:
            if error.status == 404:
                return None
            raise
        return _object(found, path)

    def list(
        self, resource: Resource, namespace: str | None = None, label_selector: str = ""
    ) -> Sequence[Body]:
        query = [("labelSelector", label_selector)] if label_selector else []
        path = resource.path(namespace)
        items = _object(self._call("GET", path, query) or {}, path).get("items") or []
        if not isinstance(items, list):
            raise KubeApiError(502, "BadGateway", f"the answer to GET {path} has no list of items")
        objects: list[Body] = [item for item in items if isinstance(item, dict)]
        for item in objects:
            item.setdefault("apiVersion", resource.api_version)
            item.setdefault("kind", resource.kind)
        return objects

    def server_version(self) -> str:
        version = self._call("GET", "/version") or {}
        return str(version.get("gitVersion", ""))
