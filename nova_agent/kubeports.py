"""The port to a Kubernetes API: the few operations the agent needs, as a ``Protocol``.

Everything above this port (syncing, pruning, reporting) is written against :class:`KubePort`; the one real
implementation is :class:`nova_agent.kubeclient.ApiClientKube`. Its failures are the shared client's
``nova_gitops.clients.kuberest.KubeApiError`` (an error status) and ``KubeUnavailable`` (no answer). Tests
drive the real implementation against the fake API server in ``tests/fakekube``; nothing mocks the
``kubernetes`` library.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from nova_agent.resources import Body

FIELD_MANAGER: Final = "nova-agent"


@dataclass(frozen=True, slots=True)
class Resource:
    """An API resource as discovery describes it."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        """The REST path: a collection (all namespaces when ``namespace`` is None) or one object."""
        prefix = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        where = f"/namespaces/{namespace}" if self.namespaced and namespace else ""
        tail = f"/{name}" if name else ""
        return f"{prefix}{where}/{self.plural}{tail}"


class KubePort(Protocol):
    def resource_for(self, api_version: str, kind: str) -> Resource | None:
        """The resource serving ``kind`` at ``api_version``, or None when the server does not serve it (after
        at most one rediscovery per pass)."""
        ...

    def forget_discovery(self) -> None:
        """Drop cached discovery (after CRDs were applied)."""
        ...

    def new_pass(self) -> None:
        """A pass starts: the next discovery miss may refresh the cached discovery once."""
        ...

    def apply(self, resource: Resource, body: Body, *, force: bool, dry_run: bool = False) -> Body:
        """Server-side apply with field manager ``nova-agent``."""
        ...

    def delete(self, resource: Resource, namespace: str, name: str, *, uid: str = "") -> None:
        """Delete with background propagation; a missing object is not an error. With ``uid``, only that
        object (a precondition: the server answers 409 when the live object has another uid)."""
        ...

    def get(self, resource: Resource, namespace: str, name: str) -> Body | None: ...

    def list(
        self, resource: Resource, namespace: str | None = None, label_selector: str = ""
    ) -> Sequence[Body]:
        """A collection's items (all namespaces when ``namespace`` is None), with apiVersion and kind set."""
        ...

    def namespaced_resources(self) -> Sequence[Resource]:
        """Every namespaced resource the server lists (one version per group and resource), from discovery."""
        ...

    def server_version(self) -> str:
        """``gitVersion`` of the server, e.g. ``v1.30.2``."""
        ...
