"""The one implementation of :class:`~nova_agent.kubeports.KubePort`, over ``kubernetes.client.ApiClient``.

It talks REST (discovery, server-side apply with content type ``application/apply-patch+yaml``,
get/list/delete) through the client the controller uses too, ``nova_gitops.clients.kuberest``: the
``ApiClient`` is built explicitly by its ``build_api_client`` and passed in, and every failure arrives as
its ``KubeApiError`` or ``KubeUnavailable``. What is the agent's own is here: discovery of every version of
every group, with one rediscovery per pass on a miss.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nova_agent.kubeports import FIELD_MANAGER, Resource
from nova_agent.resources import Body
from nova_gitops.clients.kuberest import KubeApiError, KubeRest


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
        self._rest = KubeRest(api_client, request_timeout)
        self._groups: dict[str, list[Resource]] | None = None
        self._listable: set[Resource] = set()
        self._undiscovered: list[str] = []
        """Group versions whose discovery failed in the last discovery (an aggregated API down)."""
        self._may_refresh = False
        """Whether a discovery miss may rediscover (once per pass)."""

    # discovery -------------------------------------------------------------------------------------------

    def _discover(self) -> dict[str, list[Resource]]:
        groups: dict[str, list[Resource]] = {}
        self._undiscovered = []
        versions = [("", "v1", "/api/v1")]
        for group in (self._rest.request("GET", "/apis") or {}).get("groups", []):
            for version in group.get("versions", []):
                name, number = group["name"], version["version"]
                versions.append((name, number, f"/apis/{name}/{number}"))
        for group_name, version, path in versions:
            try:
                listing = self._rest.request("GET", path) or {}
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
        return _object(self._rest.request("PATCH", path, query, body, "application/apply-patch+yaml"), path)

    def delete(self, resource: Resource, namespace: str, name: str, *, uid: str = "") -> None:
        options: Body = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"}
        if uid:
            options["preconditions"] = {"uid": uid}
        try:
            self._rest.request(
                "DELETE", resource.path(namespace, name), body=options, content_type="application/json"
            )
        except KubeApiError as error:
            if error.status != 404:
                raise

    def get(self, resource: Resource, namespace: str, name: str) -> Body | None:
        path = resource.path(namespace, name)
        try:
            found = self._rest.request("GET", path)
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
        items = _object(self._rest.request("GET", path, query) or {}, path).get("items") or []
        if not isinstance(items, list):
            raise KubeApiError(502, "BadGateway", f"the answer to GET {path} has no list of items")
        objects: list[Body] = [item for item in items if isinstance(item, dict)]
        for item in objects:
            item.setdefault("apiVersion", resource.api_version)
            item.setdefault("kind", resource.kind)
        return objects

    def server_version(self) -> str:
        version = self._rest.request("GET", "/version") or {}
        return str(version.get("gitVersion", ""))
