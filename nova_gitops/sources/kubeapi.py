"""The controller's Kubernetes port, for the control-plane source and its write-back.

Over the REST client the agent shares (``nova_gitops.clients.kuberest``: building the client, one request,
errors), this adds what the controller needs: discovery in each group's preferred version, paginated lists
(every page of one list shares the first page's resourceVersion, so a list is one consistent snapshot),
watches as a stream of JSON lines, server-side apply, create/replace/merge-patch/delete.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from nova_gitops.clients.kuberest import KubeApiError, KubeRest, KubeUnavailable, status_message

Body = dict[str, Any]
APPLY_PATCH = "application/apply-patch+yaml"
MERGE_PATCH = "application/merge-patch+json"


@dataclass(frozen=True, slots=True, order=True)
class ResourceKind:
    """One served resource: where it lives in the REST tree and what can be done with it."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    verbs: frozenset[str] = frozenset()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str = "", name: str = "", subresource: str = "") -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        if name:
            base += f"/{name}"
        if subresource:
            base += f"/{subresource}"
        return base


class KubeApi(KubeRest):
    """The controller's calls over one explicitly built ``ApiClient``; errors are :class:`KubeApiError` or
    :class:`KubeUnavailable`, never the library's exceptions."""

    def __init__(self, api_client: Any, request_timeout: float = 30.0, page_size: int = 500) -> None:
        super().__init__(api_client, request_timeout)
        self.page_size = page_size

    # discovery -------------------------------------------------------------------------------------------

    def discover(self) -> list[ResourceKind]:
        """Every served resource (not subresources), in the preferred version of each group."""
        found: list[ResourceKind] = []
        versions = [("", "v1")]
        for group in (self.request("GET", "/apis") or {}).get("groups", []):
            preferred = (group.get("preferredVersion") or {}).get("version")
            listed = [v["version"] for v in group.get("versions", [])]
            if listed:
                chosen = preferred if preferred in listed else listed[0]
                versions.append((str(group["name"]), str(chosen)))
        for group_name, version in versions:
            path = f"/apis/{group_name}/{version}" if group_name else "/api/v1"
            try:
                listing = self.request("GET", path) or {}
            except KubeApiError:
                continue  # an aggregated API that is down must not stop the source
            for item in listing.get("resources", []):
                if "/" in item["name"]:
                    continue
                found.append(
                    ResourceKind(
                        group_name,
                        version,
                        item["name"],
                        item["kind"],
                        bool(item.get("namespaced")),
                        frozenset(item.get("verbs") or ()),
                    )
                )
        return sorted(found)

    # reading ---------------------------------------------------------------------------------------------

    def list(self, kind: ResourceKind, label_selector: str = "") -> tuple[list[Body], str]:
        """All objects of a kind (every namespace) and the list's resourceVersion. Pages are fetched with
        ``limit``/``continue``; all pages belong to the first page's snapshot (the server guarantees it, or
        answers 410 when the snapshot expired, and then the whole list starts again)."""
        for _attempt in range(3):
            items: list[Body] = []
            query: list[tuple[str, str]] = [("limit", str(self.page_size))]
            if label_selector:
                query.append(("labelSelector", label_selector))
            version = ""
            token = ""
            try:
                while True:
                    page = self.request("GET", kind.path(), query + ([("continue", token)] if token else []))
                    version = version or str((page.get("metadata") or {}).get("resourceVersion", ""))
                    for item in page.get("items") or []:
                        item.setdefault("apiVersion", kind.api_version)
                        item.setdefault("kind", kind.kind)
                        items.append(item)
                    token = str((page.get("metadata") or {}).get("continue") or "")
                    if not token:
                        return items, version
            except KubeApiError as error:
                if error.status != 410:
                    raise
        raise KubeUnavailable(f"listing {kind.plural} kept expiring between pages; try again")

    def get(self, kind: ResourceKind, namespace: str, name: str) -> Body | None:
        try:
            found: Body = self.request("GET", kind.path(namespace, name))
        except KubeApiError as error:
            if error.status == 404:
                return None
            raise
        return found

    def watch(self, kind: ResourceKind, resource_version: str, timeout_seconds: int = 300) -> Iterator[Body]:
        """Watch events (``{"type", "object"}``, bookmarks included) after ``resource_version``, until the
        server ends the stream. A 410 (expired version) arrives as an ``ERROR`` event or a KubeApiError."""
        from urllib3.exceptions import HTTPError

        query = [
            ("watch", "true"),
            ("allowWatchBookmarks", "true"),
            ("resourceVersion", resource_version),
            ("timeoutSeconds", str(timeout_seconds)),
        ]
        response = self.send(
            "GET", kind.path(), query, None, None, (self.request_timeout, timeout_seconds + 30.0)
        )
        if not 200 <= response.status <= 299:
            reason, message = status_message(response.read())
            raise KubeApiError(int(response.status), reason, message)
        stream = response.response
        try:
            for line in stream:
                if line.strip():
                    yield json.loads(line)
        except (HTTPError, OSError) as error:
            raise KubeUnavailable(f"the watch of {kind.plural} was cut: {error}") from error
        finally:
            stream.release_conn()

    # writing ---------------------------------------------------------------------------------------------

    def apply(
        self, kind: ResourceKind, body: Body, manager: str, *, force: bool = True, subresource: str = ""
    ) -> Body:
        """Server-side apply of ``body`` (which names the object) under field manager ``manager``."""
        metadata = body.get("metadata") or {}
        path = kind.path(metadata.get("namespace", ""), metadata["name"], subresource)
        query = [("fieldManager", manager), ("force", "true" if force else "false")]
        result: Body = self.request("PATCH", path, query, body, APPLY_PATCH)
        return result

    def merge_patch(
        self, kind: ResourceKind, namespace: str, name: str, patch: Body, manager: str, subresource: str = ""
    ) -> Body:
        path = kind.path(namespace, name, subresource)
        result: Body = self.request("PATCH", path, [("fieldManager", manager)], patch, MERGE_PATCH)
        return result

    def create(self, kind: ResourceKind, namespace: str, body: Body, manager: str) -> Body:
        result: Body = self.request(
            "POST", kind.path(namespace), [("fieldManager", manager)], body, "application/json"
        )
        return result

    def replace(self, kind: ResourceKind, body: Body, manager: str, subresource: str = "") -> Body:
        """PUT ``body``; with ``metadata.resourceVersion`` set it only succeeds on that version (else 409)."""
        metadata = body.get("metadata") or {}
        path = kind.path(metadata.get("namespace", ""), metadata["name"], subresource)
        result: Body = self.request("PUT", path, [("fieldManager", manager)], body, "application/json")
        return result

    def delete(self, kind: ResourceKind, namespace: str, name: str) -> None:
        try:
            self.request("DELETE", kind.path(namespace, name), [("propagationPolicy", "Background")])
        except KubeApiError as error:
            if error.status != 404:
                raise
