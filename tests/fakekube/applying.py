"""Server-side apply (PATCH with `application/apply-patch+yaml`) over the field sets of `fields`.

What the agent relies on, and what this reproduces:
- applying a field another manager owns with a different value is a 409 Conflict listing each conflict, unless
  `force=true`, which moves ownership to the applier; the same value is shared ownership, not a conflict;
- fields this manager applied before and omits now are removed from the object, unless another manager
  also owns them;
- maps merge; keyed lists merge item by item by their keys and sets element by element (`listtypes` says
  which list is which, as the OpenAPI schema does upstream); atomic lists and scalars are replaced;
- an applied keyed list with an item missing every key field, or two items with one key, is refused (500
  from building the typed patch, as upstream; `key_problems`); an item with some of its key fields is
  keyed by those, and validation says what is missing.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from tests.fakekube import fields, listtypes
from tests.fakekube.fields import ManagerEntry, Path
from tests.fakekube.resources import ResourceType
from tests.fakekube.statuses import ApiError


def _merge(live: Any, applied: Any, names: listtypes.Names, lists: listtypes.Resolver) -> Any:
    if isinstance(live, dict) and isinstance(applied, dict):
        merged = dict(live)
        for key, value in applied.items():
            merged[key] = (
                _merge(live[key], value, (*names, key), lists) if key in live else copy.deepcopy(value)
            )
        return merged
    if isinstance(live, list) and isinstance(applied, list):
        list_type = lists(names)
        live_elements = fields.list_elements(live, list_type)
        applied_elements = fields.list_elements(applied, list_type)
        if live_elements is not None and applied_elements is not None:
            return _merge_items(live, live_elements, applied, applied_elements, names, lists)
    return copy.deepcopy(applied)


def _merge_items(
    live: list[Any],
    live_keys: list[str],
    applied: list[Any],
    applied_keys: list[str],
    names: listtypes.Names,
    lists: listtypes.Resolver,
) -> list[Any]:
    """structured-merge-diff's order for a keyed list or set: items only the live object has keep their
    place, items both have follow the applied order, new items come where the applied list puts them."""
    live_by, applied_by = (
        dict(zip(live_keys, live, strict=True)),
        dict(zip(applied_keys, applied, strict=True)),
    )
    shared = [key for key in applied_keys if key in live_by]
    merged: list[Any] = []
    done: set[str] = set()
    left = right = 0
    while left < len(live_keys) or right < len(applied_keys):
        if left < len(live_keys) and right < len(applied_keys) and live_keys[left] == applied_keys[right]:
            key = live_keys[left]
            merged.append(_merge(live_by[key], applied_by[key], names, lists))
            done.add(key)
            shared = shared[1:] if shared and shared[0] == key else shared
            left, right = left + 1, right + 1
            continue
        if left < len(live_keys):
            key = live_keys[left]
            if key not in applied_by:
                merged.append(copy.deepcopy(live_by[key]))
                left += 1
                continue
            if key in done or (shared and shared[0] != key):
                left += 1
                continue
        if right < len(applied_keys):
            key = applied_keys[right]
            item = applied_by[key]
            merged.append(_merge(live_by[key], item, names, lists) if key in live_by else copy.deepcopy(item))
            done.add(key)
            shared = shared[1:] if shared and shared[0] == key else shared
            right += 1
    return merged


def key_problems(value: Any, names: listtypes.Names, lists: listtypes.Resolver, where: str = "") -> list[str]:
    """What structured-merge-diff refuses in an applied body's keyed lists: an item without a key field
    (that has no default), and two items with the same key."""
    problems: list[str] = []
    if isinstance(value, dict):
        for key, child in value.items():
            problems += key_problems(child, (*names, key), lists, f"{where}.{key}")
    elif isinstance(value, list):
        kind, keys = lists(names)
        seen: set[str] = set()
        for index, item in enumerate(value):
            if kind == "map":
                key = listtypes.item_key(item, keys)
                if key is None:
                    listed = json.dumps(list(keys), separators=(",", ":"))
                    problems.append(
                        f"{where}: element {index}: associative list with keys has an element that omits all "
                        f"key fields {listed} (and doesn't have default values for any key fields)"
                    )
                    continue
                element = fields.key_element(key)
                if element in seen:
                    shown = ",".join(f"{k}={json.dumps(v)}" for k, v in key.items())
                    problems.append(f"{where}: duplicate entries for key [{shown}]")
                seen.add(element)
                problems += key_problems(item, names, lists, f"{where}[{index}]")
    return problems


def list_resolver(resource_type: ResourceType) -> listtypes.Resolver:
    if resource_type.custom:
        return listtypes.custom(resource_type.schema)
    return listtypes.builtin(resource_type.kind)


def _owned_under(prefix: Path, owned: set[Path]) -> bool:
    return any(path[: len(prefix)] == prefix for path in owned)


def _remove(obj: dict[str, Any], path: Path, owned: set[Path]) -> None:
    """Remove a field its applier dropped. A keyed list item nobody else owns anything in goes whole (with
    the fields the server defaulted in it); otherwise only the leaf goes, never an item's key fields. Set
    elements go alone. Maps the removal leaves empty go too."""
    for index, element in enumerate(path):
        if element.startswith("k:") and not _owned_under(path[: index + 1], owned):
            path = path[: index + 1]
            break
    else:
        if len(path) >= 2 and path[-2].startswith("k:") and path[-1][2:] in json.loads(path[-2][2:]):
            return  # an item's key fields stay while someone owns the item
    for depth in range(len(path), 0, -1):
        parent = fields.value_at(obj, path[: depth - 1]) if depth > 1 else obj
        element = path[depth - 1]
        target = fields.value_at(obj, path[:depth])
        if target is fields.MISSING or (depth < len(path) and target not in ({}, [])):
            return
        if element.startswith("f:") and isinstance(parent, dict):
            del parent[element[2:]]
        elif element[:2] in ("k:", "v:") and isinstance(parent, list):
            parent.remove(target)


def _conflict_error(
    resource_type: ResourceType, name: str, conflicts: list[tuple[ManagerEntry, Path]]
) -> ApiError:
    by_manager: dict[str, list[str]] = {}
    for entry, path in conflicts:
        where = f' with subresource "{entry.subresource}"' if entry.subresource else ""
        by_manager.setdefault(f'"{entry.manager}"{where} using {entry.api_version}', []).append(
            fields.display(path)
        )
    if len(conflicts) == 1:
        ((manager, paths),) = by_manager.items()
        summary = f"conflict with {manager}: {paths[0]}"
    else:
        summary = "\n".join(
            f"conflicts with {manager}:\n" + "\n".join(f"- {path}" for path in paths)
            for manager, paths in by_manager.items()
        )
    count = len(conflicts)
    message = f"Apply failed with {count} conflict{'s' if count > 1 else ''}: {summary}"
    details: dict[str, Any] = {"name": name}
    if resource_type.group:
        details["group"] = resource_type.group
    details["kind"] = resource_type.plural
    details["causes"] = [
        {
            "reason": "FieldManagerConflict",
            "message": f'conflict with "{entry.manager}" using {entry.api_version}',
            "field": fields.display(path),
        }
        for entry, path in conflicts
    ]
    return ApiError(409, "Conflict", message, details)


def apply(
    live: dict[str, Any],
    applied: dict[str, Any],
    resource_type: ResourceType,
    manager: str,
    force: bool,
    subresource: str,
    time: str,
) -> dict[str, Any]:
    """The object after `manager` applies `applied` onto `live` (an empty object for a create)."""
    scope = "status" if subresource == "status" else ("main" if resource_type.has_status else "all")
    lists = list_resolver(resource_type)
    applied_leaves = fields.leaf_paths(applied, scope, lists)
    entries = fields.read_entries(live)
    own_identity = (manager, "Apply", subresource)
    previous = next((entry.paths for entry in entries if entry.identity == own_identity), frozenset())

    conflicts = [
        (entry, path)
        for entry in entries
        if entry.identity != own_identity
        for path in sorted(entry.paths & applied_leaves.keys())
        if fields.value_at(live, path) != applied_leaves[path]
    ]
    if conflicts and not force:
        raise _conflict_error(resource_type, str(applied.get("metadata", {}).get("name", "")), conflicts)
    taken = {path for _, path in conflicts}

    body = {key: value for key, value in applied.items() if key not in ("apiVersion", "kind")}
    if scope == "status":
        body = {"status": applied["status"]} if "status" in applied else {}
    result: dict[str, Any] = _merge(live, body, (), lists)
    if scope == "main":
        result.pop("status", None)
        if "status" in live:
            result["status"] = copy.deepcopy(live["status"])
    kept_entries = [
        ManagerEntry(e.manager, e.operation, e.subresource, e.api_version, e.time, e.paths - taken)
        for e in entries
        if e.identity != own_identity
    ]
    still_owned = set(applied_leaves).union(*(entry.paths for entry in kept_entries))
    for path in sorted(previous - still_owned, key=len, reverse=True):
        _remove(result, path, still_owned)

    all_leaves = fields.leaf_paths(result, "all", lists).keys()
    new_entries = [
        ManagerEntry(e.manager, e.operation, e.subresource, e.api_version, e.time, e.paths & all_leaves)
        for e in kept_entries
    ]
    own_paths = frozenset(applied_leaves)
    own_time = next((e.time for e in entries if e.identity == own_identity and e.paths == own_paths), time)
    position = next(
        (index for index, e in enumerate(entries) if e.identity == own_identity), len(new_entries)
    )
    new_entries.insert(
        position, ManagerEntry(manager, "Apply", subresource, resource_type.api_version, own_time, own_paths)
    )
    fields.write_entries(result, new_entries)
    return result
