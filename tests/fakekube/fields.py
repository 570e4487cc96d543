"""Field ownership: which manager set which fields (`metadata.managedFields`), as server-side apply needs.

A reasonable approximation of structured-merge-diff's fieldsV1: an object's fields are its leaf paths, each
path a tuple of fieldsV1 keys — `f:<field>` for map fields, `k:{"containerPort":80,"protocol":"TCP"}` for
items of keyed lists and `v:"x"` for elements of sets, as `listtypes` says each list is; every other list is
atomic (one leaf). Leaves are scalars, atomic lists, set elements, and empty maps. Identity fields
(apiVersion, kind, metadata.name/namespace) and server-set metadata are owned by nobody, as upstream.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tests.fakekube import listtypes

Path = tuple[str, ...]
ATOMIC_LISTS: listtypes.Resolver = lambda names: listtypes.ATOMIC  # noqa: E731

MISSING: Any = object()
SERVER_METADATA = frozenset(
    {
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "managedFields",
        "selfLink",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
    }
)


@dataclass(frozen=True, slots=True)
class ManagerEntry:
    """One `managedFields` entry: a manager, its operation (Apply or Update) and the paths it owns."""

    manager: str
    operation: str
    subresource: str
    api_version: str
    time: str
    paths: frozenset[Path]

    @property
    def identity(self) -> tuple[str, str, str]:
        return (self.manager, self.operation, self.subresource)


def key_element(key: dict[str, Any]) -> str:
    """A keyed list item's fieldsV1 key: `k:{"containerPort":80,"protocol":"TCP"}` (fields sorted)."""
    return "k:" + json.dumps(key, separators=(",", ":"), sort_keys=True)


def value_element(value: Any) -> str:
    """A set element's fieldsV1 key: `v:"example.com/hold"`."""
    return "v:" + json.dumps(value, separators=(",", ":"))


def list_elements(value: list[Any], list_type: listtypes.ListType) -> list[str] | None:
    """The path element of each item of a keyed list or set, or None when it must be treated as atomic (not
    such a list, an item without its key, or duplicates, which apply refuses and updates track whole)."""
    kind, keys = list_type
    if kind == "map":
        found = [listtypes.item_key(item, keys) for item in value]
        elements = [key_element(key) for key in found if key is not None]
        if len(elements) != len(value):
            return None
    elif kind == "set":
        if not all(isinstance(item, (str, int, float, bool)) for item in value):
            return None
        elements = [value_element(item) for item in value]
    else:
        return None
    return elements if len(set(elements)) == len(elements) else None


def _walk(
    value: Any,
    prefix: Path,
    names: listtypes.Names,
    lists: listtypes.Resolver,
    leaves: dict[Path, Any],
) -> None:
    if isinstance(value, dict) and value:
        for key, child in value.items():
            _walk(child, (*prefix, f"f:{key}"), (*names, key), lists, leaves)
        return
    if isinstance(value, list):
        list_type = lists(names)
        if not value and list_type[0] != "atomic":
            return  # an empty keyed list or set owns no item, and conflicts with nobody's
        elements = list_elements(value, list_type)
        if elements is not None:
            for element, item in zip(elements, value, strict=True):
                if list_type[0] == "set":
                    leaves[(*prefix, element)] = item
                else:
                    _walk(item, (*prefix, element), names, lists, leaves)
            return
    leaves[prefix] = value


def leaf_paths(
    obj: Mapping[str, Any], scope: str, lists: listtypes.Resolver = ATOMIC_LISTS
) -> dict[Path, Any]:
    """Leaf paths and their values. scope: "main" (all but status), "status" (only status) or "all"."""
    leaves: dict[Path, Any] = {}
    for key, value in obj.items():
        if key in ("apiVersion", "kind") or (scope == "main" and key == "status"):
            continue
        if scope == "status" and key != "status":
            continue
        if key == "metadata" and isinstance(value, dict):
            for meta_key, meta_value in value.items():
                if meta_key not in SERVER_METADATA:
                    _walk(meta_value, ("f:metadata", f"f:{meta_key}"), ("metadata", meta_key), lists, leaves)
            continue
        _walk(value, (f"f:{key}",), (key,), lists, leaves)
    return leaves


def _matches(item: Any, wanted: dict[str, Any]) -> bool:
    return isinstance(item, dict) and all(
        item.get(k, listtypes.KEY_DEFAULTS.get(k)) == v for k, v in wanted.items()
    )


def value_at(obj: Any, path: Path) -> Any:
    """The value at a path, or MISSING."""
    node = obj
    for element in path:
        if element.startswith("f:") and isinstance(node, dict):
            node = node.get(element[2:], MISSING)
        elif element.startswith("k:") and isinstance(node, list):
            wanted = json.loads(element[2:])
            node = next((item for item in node if _matches(item, wanted)), MISSING)
        elif element.startswith("v:") and isinstance(node, list):
            wanted = json.loads(element[2:])
            node = wanted if wanted in node else MISSING
        else:
            return MISSING
        if node is MISSING:
            return MISSING
    return node


def display(path: Path) -> str:
    """A path as structured-merge-diff prints it: `.spec.containers[name="web"].image`."""
    text = ""
    for element in path:
        if element.startswith("f:"):
            text += "." + element[2:]
        elif element.startswith("v:"):
            text += "[" + element[2:] + "]"
        else:
            text += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in json.loads(element[2:]).items()) + "]"
    return text


def to_fields_v1(paths: Iterable[Path]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    for path in sorted(paths):
        node = root
        for element in path:
            node = node.setdefault(element, {})
            if element.startswith("k:"):
                node.setdefault(".", {})
    return root


def from_fields_v1(fields: Any, prefix: Path = ()) -> set[Path]:
    paths: set[Path] = set()
    children = (
        {key: value for key, value in (fields or {}).items() if key != "."}
        if isinstance(fields, dict)
        else {}
    )
    if not children:
        return {prefix} if prefix else set()
    for key, child in children.items():
        paths |= from_fields_v1(child, (*prefix, key))
    return paths


def read_entries(obj: Mapping[str, Any]) -> list[ManagerEntry]:
    entries = []
    for raw in obj.get("metadata", {}).get("managedFields") or []:
        entries.append(
            ManagerEntry(
                manager=str(raw.get("manager", "")),
                operation=str(raw.get("operation", "Update")),
                subresource=str(raw.get("subresource", "")),
                api_version=str(raw.get("apiVersion", "")),
                time=str(raw.get("time", "")),
                paths=frozenset(from_fields_v1(raw.get("fieldsV1"))),
            )
        )
    return entries


def write_entries(obj: dict[str, Any], entries: Iterable[ManagerEntry]) -> None:
    raw_entries = []
    for entry in entries:
        if not entry.paths:
            continue
        raw: dict[str, Any] = {
            "manager": entry.manager,
            "operation": entry.operation,
            "apiVersion": entry.api_version,
            "time": entry.time,
            "fieldsType": "FieldsV1",
            "fieldsV1": to_fields_v1(entry.paths),
        }
        if entry.subresource:
            raw["subresource"] = entry.subresource
        raw_entries.append(raw)
    metadata = obj.setdefault("metadata", {})
    if raw_entries:
        metadata["managedFields"] = raw_entries
    else:
        metadata.pop("managedFields", None)


def _replace(entry: ManagerEntry, paths: Iterable[Path], time: str) -> ManagerEntry:
    kept = frozenset(paths)
    return ManagerEntry(
        entry.manager,
        entry.operation,
        entry.subresource,
        entry.api_version,
        entry.time if kept == entry.paths else time,
        kept,
    )


def track_update(
    old: Mapping[str, Any] | None,
    new: dict[str, Any],
    manager: str,
    api_version: str,
    subresource: str,
    scope: str,
    time: str,
    lists: listtypes.Resolver = ATOMIC_LISTS,
) -> None:
    """Record a non-apply write (create, update, patch): the manager takes the fields it changed, from
    everyone else, without conflicts (as upstream); fields gone from the object leave every entry."""
    entries = read_entries(old) if old is not None else []
    old_leaves = leaf_paths(old, scope, lists) if old is not None else {}
    new_leaves = leaf_paths(new, scope, lists)
    all_leaves = leaf_paths(new, "all", lists)
    changed = {path for path, value in new_leaves.items() if old_leaves.get(path, MISSING) != value}
    updated: list[ManagerEntry] = []
    found = False
    for entry in entries:
        if entry.identity == (manager, "Update", subresource):
            found = True
            updated.append(_replace(entry, (entry.paths | changed) & all_leaves.keys(), time))
        else:
            updated.append(_replace(entry, (entry.paths - changed) & all_leaves.keys(), time))
    if not found and changed:
        updated.append(ManagerEntry(manager, "Update", subresource, api_version, time, frozenset(changed)))
    write_entries(new, updated)
