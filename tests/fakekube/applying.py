"""Server-side apply (PATCH with `application/apply-patch+yaml`) over the field sets of `fields`.

What the agent relies on, and what this reproduces:
- applying a field another manager owns with a different value is a 409 Conflict listing each conflict, unless
  `force=true`, which moves ownership to the applier; the same value is shared ownership, not a conflict;
- fields this manager applied before and omits now are removed from the object, unless another manager
  also owns them;
- maps merge, lists of named items merge by `name`, other lists and scalars are replaced.
"""

from __future__ import annotations

import copy
from typing import Any

from tests.fakekube import fields
from tests.fakekube.fields import ManagerEntry, Path
from tests.fakekube.resources import ResourceType
from tests.fakekube.statuses import ApiError


def _merge(live: Any, applied: Any) -> Any:
    if isinstance(live, dict) and isinstance(applied, dict):
        merged = dict(live)
        for key, value in applied.items():
            merged[key] = _merge(live.get(key), value) if key in live else copy.deepcopy(value)
        return merged
    if fields._is_named_list(live) and fields._is_named_list(applied):
        live_by_name = {item["name"]: item for item in live}
        applied_names = {item["name"] for item in applied}
        result = [
            _merge(live_by_name.get(item["name"]), item)
            if item["name"] in live_by_name
            else copy.deepcopy(item)
            for item in applied
        ]
        return result + [item for item in live if item["name"] not in applied_names]
    return copy.deepcopy(applied)


def _owned_under(prefix: Path, owned: set[Path]) -> bool:
    return any(path[: len(prefix)] == prefix for path in owned)


def _remove(obj: dict[str, Any], path: Path, owned: set[Path]) -> None:
    """Remove a field its applier dropped. A named list item nobody else owns anything in goes whole (with
    the fields the server defaulted in it); otherwise only the leaf goes, never an item's `name`. Maps the
    removal leaves empty go too."""
    for index, element in enumerate(path):
        if element.startswith("k:") and not _owned_under(path[: index + 1], owned):
            path = path[: index + 1]
            break
    else:
        if len(path) >= 2 and path[-1] == "f:name" and path[-2].startswith("k:"):
            return
    for depth in range(len(path), 0, -1):
        parent = fields.value_at(obj, path[: depth - 1]) if depth > 1 else obj
        element = path[depth - 1]
        target = fields.value_at(obj, path[:depth])
        if target is fields.MISSING or (depth < len(path) and target not in ({}, [])):
            return
        if element.startswith("f:") and isinstance(parent, dict):
            del parent[element[2:]]
        elif element.startswith("k:") and isinstance(parent, list):
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
    applied_leaves = fields.leaf_paths(applied, scope)
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
    result: dict[str, Any] = _merge(live, body)
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

    all_leaves = fields.leaf_paths(result, "all").keys()
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
