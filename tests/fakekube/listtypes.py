"""How server-side apply treats each list: merged by its keys (`map`), by value (`set`), or replaced whole
(`atomic`), as structured-merge-diff does from the OpenAPI schema.

Built-in kinds: the `x-kubernetes-list-type`/`-list-map-keys` (or patch merge keys) of upstream's OpenAPI
for the lists an applier meets: containers, init and ephemeral containers, volumes, image pull secrets,
resource claims and scheduling gates by `name`; container ports by `containerPort`+`protocol`, env by `name`,
volumeMounts by `mountPath`, volumeDevices by `devicePath`; host aliases by `ip`; topology spread
constraints by `topologyKey`+`whenUnsatisfiable`; Service ports by `port`+`protocol`; conditions by `type`;
ownerReferences by `uid`; finalizers a set. Every other list of a built-in kind (tolerations, args, command,
envFrom, accessModes, RBAC rules and subjects, ...) is atomic, as upstream.
Custom resources: the CRD schema's `x-kubernetes-list-type` (atomic when absent, as upstream).
A key field an item omits takes its OpenAPI default (`protocol: TCP`); other defaults are not modelled. An
item with none of its key fields is refused; one with some is keyed by those.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

ListType = tuple[str, tuple[str, ...]]
"""("map", key fields) | ("set", ()) | ("atomic", ())."""
Names = tuple[str, ...]
"""The field names from the object's root to a list, list keys left out: ("spec", "containers", "ports")."""
Resolver = Callable[[Names], ListType]

ATOMIC: ListType = ("atomic", ())
SET: ListType = ("set", ())
KEY_DEFAULTS: Mapping[str, Any] = {"protocol": "TCP"}


def _map(*keys: str) -> ListType:
    return ("map", keys)


_CONTAINERS = ("containers", "initContainers", "ephemeralContainers")
_POD_SPEC: dict[Names, ListType] = {
    **{(name,): _map("name") for name in _CONTAINERS},
    **{(name, "ports"): _map("containerPort", "protocol") for name in _CONTAINERS},
    **{(name, "env"): _map("name") for name in _CONTAINERS},
    **{(name, "volumeMounts"): _map("mountPath") for name in _CONTAINERS},
    **{(name, "volumeDevices"): _map("devicePath") for name in _CONTAINERS},
    ("volumes",): _map("name"),
    ("imagePullSecrets",): _map("name"),
    ("resourceClaims",): _map("name"),
    ("schedulingGates",): _map("name"),
    ("hostAliases",): _map("ip"),
    ("topologySpreadConstraints",): _map("topologyKey", "whenUnsatisfiable"),
}
_POD_SPEC_AT: dict[str, Names] = {
    "Pod": ("spec",),
    "PodTemplate": ("template", "spec"),
    "Deployment": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicationController": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}
_METADATA: dict[Names, ListType] = {
    ("metadata", "ownerReferences"): _map("uid"),
    ("metadata", "finalizers"): SET,
}
_CONDITIONS_BY_TYPE = frozenset(
    {
        "Pod",
        "Deployment",
        "ReplicaSet",
        "StatefulSet",
        "DaemonSet",
        "ReplicationController",
        "Namespace",
        "PersistentVolumeClaim",
        "Service",
        "Node",
    }
)  # a Job's conditions are atomic upstream
_BY_KIND: dict[str, dict[Names, ListType]] = {
    "Service": {("spec", "ports"): _map("port", "protocol")},
    "Pod": {("status", "conditions"): _map("type")},
    "Node": {("status", "conditions"): _map("type")},  # addresses are atomic (dual-stack repeats a type)
}


def builtin(kind: str) -> Resolver:
    """The list types of a built-in kind."""
    pod_spec = _POD_SPEC_AT.get(kind)
    table = {**_METADATA, **_BY_KIND.get(kind, {})}
    if pod_spec is not None:
        table.update({(*pod_spec, *names): list_type for names, list_type in _POD_SPEC.items()})
    conditions_keyed = kind in _CONDITIONS_BY_TYPE

    def resolve(names: Names) -> ListType:
        if names in table:
            return table[names]
        if conditions_keyed and names == ("status", "conditions"):
            return _map("type")
        return ATOMIC

    return resolve


def _schema_at(schema: Mapping[str, Any], names: Names) -> Mapping[str, Any] | None:
    node: Mapping[str, Any] | None = schema
    for name in names:
        if node is None:
            return None
        while node is not None and node.get("type") == "array":
            node = node.get("items")
        if node is None:
            return None
        properties = node.get("properties") or {}
        additional = node.get("additionalProperties")
        node = properties.get(name) or (additional if isinstance(additional, Mapping) else None)
    return node


def custom(schema: Mapping[str, Any] | None) -> Resolver:
    """The list types a CRD's openAPIV3Schema declares (metadata lists as for every kind)."""

    def resolve(names: Names) -> ListType:
        if names in _METADATA:
            return _METADATA[names]
        node = _schema_at(schema, names) if schema is not None else None
        if node is None:
            return ATOMIC
        list_type = node.get("x-kubernetes-list-type")
        if list_type == "map":
            return _map(*(node.get("x-kubernetes-list-map-keys") or ()))
        return SET if list_type == "set" else ATOMIC

    return resolve


def item_key(item: Any, keys: tuple[str, ...]) -> dict[str, Any] | None:
    """An item's key fields (defaults filled in), or None when it has none of them (nor a default for any):
    structured-merge-diff (v1.36) takes an item with some of its key fields by those, and validation then
    refuses what is missing (a container port without `containerPort` is a 422, not a typed-patch 500)."""
    if not isinstance(item, dict):
        return None
    key: dict[str, Any] = {}
    for field in sorted(keys):
        if field in item:
            key[field] = item[field]
        elif field in KEY_DEFAULTS:
            key[field] = KEY_DEFAULTS[field]
    return key or None
