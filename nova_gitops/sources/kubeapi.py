"""A small REST port over ``kubernetes.client.ApiClient`` for the control-plane source and its write-back.

The control plane holds arbitrary kinds (every workload kind users place, plus Nova's CRDs), so we speak REST
through ``ApiClient.call_api`` with plain dicts rather than the generated typed APIs: discovery, paginated
lists (every page of one list shares the first page's resourceVersion, so a list is one consistent
snapshot), watches as a stream of JSON lines, server-side apply, create/replace/merge-patch/delete.

The client is built explicitly from ``--kubeconfig``/``--context`` (or the in-cluster service account) by
:func:`build_api_client` and passed in; the library's process-wide default configuration is never read or
set. ``kubernetes`` is imported inside functions: it costs ~225 ms, which ``nova-gitops --help`` must not pay.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from nova_gitops import errors

Body = dict[str, Any]
APPLY_PATCH = "application/apply-patch+yaml"
MERGE_PATCH = "application/merge-patch+json"


class KubeApiError(errors.ClusterError):
    """The API server answered with an error status (``status`` 404, 409, 410, 422, ...)."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(f"the Kubernetes API refused the request ({status} {reason}): {message}")
        self.status = status
        self.reason = reason


class KubeUnavailable(errors.ClusterError):
    """The API server could not be reached (network, TLS, timeout)."""


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


def _status_message(data: bytes | None) -> tuple[str, str]:
    try:
        status = json.loads(data or b"{}")
    except ValueError:
        return "", (data or b"").decode(errors="replace")[:500]
    if isinstance(status, dict):
        return str(status.get("reason", "")), str(status.get("message", ""))
    return "", str(status)[:500]


class KubeApi:
    """REST calls over one explicitly built ``ApiClient``; errors become :class:`KubeApiError` or
    :class:`KubeUnavailable`, never the library's exceptions."""

    def __init__(self, api_client: Any, request_timeout: float = 30.0, page_size: int = 500) -> None:
        self.api_client = api_client
        self.request_timeout = request_timeout
        self.page_size = page_size

    def _send(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]] | None,
        body: Any,
        content_type: str | None,
        timeout: float | tuple[float, float] | None,
    ) -> Any:
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        try:
            method, url, headers, payload, _ = self.api_client.param_serialize(
                method=method,
                resource_path=path,
                query_params=query or [],
                header_params=headers,
                body=body,
                auth_settings=["BearerToken"],
            )
            return self.api_client.call_api(
                method, url, header_params=headers, body=payload, _request_timeout=timeout
            )
        except ApiException as error:  # TLS and connection failures surface with status 0
            raise KubeUnavailable(f"the Kubernetes API server cannot be reached: {error.reason}") from error
        except (HTTPError, OSError) as error:
            raise KubeUnavailable(f"the Kubernetes API server cannot be reached: {error}") from error

    def request(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]] | None = None,
        body: Any = None,
        content_type: str | None = None,
    ) -> Any:
        """One request; the decoded JSON answer (None when empty)."""
        from urllib3.exceptions import HTTPError

        response = self._send(method, path, query, body, content_type, self.request_timeout)
        try:
            data = response.read()
        except (HTTPError, OSError) as error:
            raise KubeUnavailable(f"the Kubernetes API server cannot be reached: {error}") from error
        if not 200 <= response.status <= 299:
            reason, message = _status_message(data)
            raise KubeApiError(int(response.status), reason or str(response.reason or ""), message)
        return json.loads(data) if data else None

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
        response = self._send(
            "GET", kind.path(), query, None, None, (self.request_timeout, timeout_seconds + 30.0)
        )
        if not 200 <= response.status <= 299:
            reason, message = _status_message(response.read())
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
