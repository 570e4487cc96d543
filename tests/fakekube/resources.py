"""The resource types the fake API server serves, and the discovery documents that describe them.

Clients find out what a server serves from discovery (`/api`, `/apis`, `/apis/<group>/<version>`): the
dynamic client, kubectl and our agent all depend on it, so discovery is built from the same table that routes
requests, and a CRD adds rows to that table only once it is Established, as on a real server.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
SUBRESOURCE_VERBS = ("get", "patch", "update")


@dataclass(frozen=True, slots=True)
class ResourceType:
    """One served resource, e.g. `deployments` in `apps/v1`."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    has_status: bool = False
    verbs: tuple[str, ...] = ALL_VERBS
    schema: Mapping[str, Any] | None = field(default=None, compare=False)
    custom: bool = False

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def group_resource(self) -> str:
        """How error messages name the resource: `configmaps`, `deployments.apps`."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def store_key(self) -> tuple[str, str]:
        """Objects are stored per group and plural, whatever version they were written in."""
        return (self.group, self.plural)


def _core(
    plural: str,
    kind: str,
    namespaced: bool = True,
    short: tuple[str, ...] = (),
    status: bool = False,
    verbs: tuple[str, ...] = ALL_VERBS,
) -> ResourceType:
    return ResourceType("", "v1", plural, kind, namespaced, short, status, verbs)


def _grouped(
    group_version: str,
    plural: str,
    kind: str,
    namespaced: bool = True,
    short: tuple[str, ...] = (),
    status: bool = False,
) -> ResourceType:
    group, version = group_version.split("/")
    return ResourceType(group, version, plural, kind, namespaced, short, status)


BUILTIN_TYPES: tuple[ResourceType, ...] = (
    _core(
        "namespaces",
        "Namespace",
        False,
        ("ns",),
        True,
        ("create", "delete", "get", "list", "patch", "update", "watch"),
    ),
    _core("nodes", "Node", False, ("no",), True),
    _core("pods", "Pod", True, ("po",), True),
    _core(
        "services",
        "Service",
        True,
        ("svc",),
        True,
        ("create", "delete", "get", "list", "patch", "update", "watch"),
    ),
    _core("configmaps", "ConfigMap", True, ("cm",)),
    _core("secrets", "Secret"),
    _core("serviceaccounts", "ServiceAccount", True, ("sa",)),
    _core("events", "Event", True, ("ev",)),
    _core("persistentvolumeclaims", "PersistentVolumeClaim", True, ("pvc",), True),
    _core("replicationcontrollers", "ReplicationController", True, ("rc",), True),
    _grouped("apps/v1", "deployments", "Deployment", True, ("deploy",), True),
    _grouped("apps/v1", "statefulsets", "StatefulSet", True, ("sts",), True),
    _grouped("apps/v1", "daemonsets", "DaemonSet", True, ("ds",), True),
    _grouped("apps/v1", "replicasets", "ReplicaSet", True, ("rs",), True),
    _grouped("batch/v1", "jobs", "Job", True, (), True),
    _grouped("batch/v1", "cronjobs", "CronJob", True, ("cj",), True),
    _grouped("autoscaling/v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True, ("hpa",), True),
    _grouped("rbac.authorization.k8s.io/v1", "roles", "Role"),
    _grouped("rbac.authorization.k8s.io/v1", "rolebindings", "RoleBinding"),
    _grouped("rbac.authorization.k8s.io/v1", "clusterroles", "ClusterRole", False),
    _grouped("rbac.authorization.k8s.io/v1", "clusterrolebindings", "ClusterRoleBinding", False),
    _grouped(
        "apiextensions.k8s.io/v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        False,
        ("crd", "crds"),
        True,
    ),
    _grouped(
        "admissionregistration.k8s.io/v1",
        "validatingwebhookconfigurations",
        "ValidatingWebhookConfiguration",
        False,
    ),
    _grouped(
        "admissionregistration.k8s.io/v1",
        "mutatingwebhookconfigurations",
        "MutatingWebhookConfiguration",
        False,
    ),
    _grouped("networking.k8s.io/v1", "ingresses", "Ingress", True, ("ing",), True),
    _grouped("networking.k8s.io/v1", "networkpolicies", "NetworkPolicy", True, ("netpol",)),
    _grouped("policy/v1", "poddisruptionbudgets", "PodDisruptionBudget", True, ("pdb",), True),
    _grouped("coordination.k8s.io/v1", "leases", "Lease"),
    _grouped("events.k8s.io/v1", "events", "Event", True, ("ev",)),
    _grouped("storage.k8s.io/v1", "storageclasses", "StorageClass", False, ("sc",)),
)


class ResourceTable:
    """Served resource types by (group, version, plural); not thread-safe: the store's lock guards it."""

    def __init__(self, types: Iterable[ResourceType] = BUILTIN_TYPES) -> None:
        self._types: dict[tuple[str, str, str], ResourceType] = {}
        for resource_type in types:
            self.add(resource_type)

    def add(self, resource_type: ResourceType) -> None:
        key = (resource_type.group, resource_type.version, resource_type.plural)
        self._types[key] = resource_type

    def remove_group_resource(self, group: str, plural: str) -> None:
        for key in [key for key in self._types if key[0] == group and key[2] == plural]:
            del self._types[key]

    def find(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._types.get((group, version, plural))

    def find_any_version(self, group: str, plural: str) -> ResourceType | None:
        """The first served version of a group/plural: for test hooks that name only the resource."""
        return next((t for t in self._types.values() if t.group == group and t.plural == plural), None)

    def group_versions(self) -> dict[str, list[str]]:
        """Groups (core excluded) with their versions, in the order they were added."""
        versions: dict[str, list[str]] = {}
        for resource_type in self._types.values():
            if resource_type.group and resource_type.version not in versions.setdefault(
                resource_type.group, []
            ):
                versions[resource_type.group].append(resource_type.version)
        return versions

    def of_group_version(self, group: str, version: str) -> list[ResourceType]:
        return [t for t in self._types.values() if t.group == group and t.version == version]


def _group_document(group: str, versions: list[str]) -> dict[str, Any]:
    listed = [{"groupVersion": f"{group}/{version}", "version": version} for version in versions]
    return {"name": group, "versions": listed, "preferredVersion": listed[0]}


def api_versions_document(server_address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def api_group_list_document(table: ResourceTable) -> dict[str, Any]:
    groups = [_group_document(group, versions) for group, versions in table.group_versions().items()]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group_document(table: ResourceTable, group: str) -> dict[str, Any] | None:
    versions = table.group_versions().get(group)
    if not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_document(group, versions)}


def resource_list_document(table: ResourceTable, group: str, version: str) -> dict[str, Any] | None:
    types = table.of_group_version(group, version)
    if not types:
        return None
    resources: list[dict[str, Any]] = []
    for t in types:
        entry: dict[str, Any] = {
            "name": t.plural,
            "singularName": t.singular,
            "namespaced": t.namespaced,
            "kind": t.kind,
            "verbs": list(t.verbs),
        }
        if t.short_names:
            entry["shortNames"] = list(t.short_names)
        resources.append(entry)
        if t.has_status:
            resources.append(
                {
                    "name": f"{t.plural}/status",
                    "singularName": "",
                    "namespaced": t.namespaced,
                    "kind": t.kind,
                    "verbs": list(SUBRESOURCE_VERBS),
                }
            )
    group_version = f"{group}/{version}" if group else version
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }
