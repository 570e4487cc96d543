"""URL paths to what they address: a discovery document, or a resource collection, object or subresource.

Paths follow kube-apiserver's layout: `/api/v1/...` for the core group, `/apis/<group>/<version>/...` for
the others, `namespaces/<ns>/` before namespaced resources, and `/<name>/status` for the status subresource.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.fakekube import resources, statuses
from tests.fakekube.resources import ResourceTable, ResourceType

VERSION_INFO = {
    "major": "1",
    "minor": "31",
    "gitVersion": "v1.31.0-fakekube",
    "gitCommit": "0" * 40,
    "gitTreeState": "clean",
    "buildDate": "2024-08-13T00:00:00Z",
    "goVersion": "go1.22.5",
    "compiler": "gc",
    "platform": "linux/amd64",
}


@dataclass(frozen=True, slots=True)
class ResourceRoute:
    resource_type: ResourceType
    namespace: str
    name: str
    subresource: str

    @property
    def is_collection(self) -> bool:
        return not self.name


def discovery(segments: list[str], table: ResourceTable, server_address: str) -> dict[str, Any] | None:
    """The discovery document at a path, None when the path is not a discovery path."""
    if segments == ["version"]:
        return dict(VERSION_INFO)
    if segments == ["api"]:
        return resources.api_versions_document(server_address)
    if segments == ["apis"]:
        return resources.api_group_list_document(table)
    if segments == ["api", "v1"]:
        return resources.resource_list_document(table, "", "v1")
    if len(segments) == 2 and segments[0] == "apis":
        return resources.api_group_document(table, segments[1]) or _raise_unknown()
    if len(segments) == 3 and segments[0] == "apis":
        return resources.resource_list_document(table, segments[1], segments[2]) or _raise_unknown()
    return None


def _raise_unknown() -> dict[str, Any]:
    raise statuses.unknown_path()


def resource_route(segments: list[str], table: ResourceTable) -> ResourceRoute:
    """The resource a path addresses; 404 for anything the server does not serve."""
    if segments[:2] == ["api", "v1"]:
        group, version, rest = "", "v1", segments[2:]
    elif len(segments) > 3 and segments[0] == "apis":
        group, version, rest = segments[1], segments[2], segments[3:]
    else:
        raise statuses.unknown_path()
    namespace = ""
    if len(rest) >= 3 and rest[0] == "namespaces" and rest[2] not in ("status", "finalize"):
        namespace, rest = rest[1], rest[2:]
    resource_type = table.find(group, version, rest[0]) if rest else None
    if resource_type is None or len(rest) > 3 or (namespace and not resource_type.namespaced):
        raise statuses.unknown_path()
    if resource_type.namespaced and not namespace and len(rest) > 1:
        raise statuses.unknown_path()
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if subresource and not (subresource == "status" and resource_type.has_status):
        raise statuses.unknown_path()
    return ResourceRoute(resource_type, namespace, name, subresource)
