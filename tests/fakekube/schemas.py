"""CustomResourceDefinition `openAPIV3Schema` checks: types, required, enum, and structural pruning.

The real server treats schema problems differently by verb, and clients meet both behaviours:
- create/update/merge patch prune unknown fields (unless `x-kubernetes-preserve-unknown-fields`) and answer
  422 Invalid for type, enum and required problems;
- server-side apply first builds a "typed patch" from the schema, and a body that does not fit (wrong type,
  or a field the schema does not declare) fails there with 500 "failed to create typed patch object", an
  open upstream bug that agents must survive. `typed_patch_problems` reproduces that first step.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

Problem = tuple[str, str]

_ROOT_FIELDS = ("apiVersion", "kind", "metadata")


def _type_matches(value: Any, schema: Mapping[str, Any]) -> bool:
    expected = schema.get("type")
    if value is None:
        return bool(schema.get("nullable"))
    if schema.get("x-kubernetes-int-or-string"):
        return isinstance(value, (int, str)) and not isinstance(value, bool)
    if expected is None:
        return True
    checks = {
        "object": lambda: isinstance(value, dict),
        "array": lambda: isinstance(value, list),
        "string": lambda: isinstance(value, str),
        "boolean": lambda: isinstance(value, bool),
        "integer": lambda: isinstance(value, int) and not isinstance(value, bool),
        "number": lambda: isinstance(value, (int, float)) and not isinstance(value, bool),
    }
    return checks.get(str(expected), lambda: True)()


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number" if isinstance(value, float) else "integer"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _child_schema(schema: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    properties = schema.get("properties") or {}
    if key in properties:
        child: Mapping[str, Any] = properties[key]
        return child
    additional = schema.get("additionalProperties")
    if isinstance(additional, Mapping):
        return additional
    if additional is True or schema.get("x-kubernetes-preserve-unknown-fields"):
        return {"x-kubernetes-preserve-unknown-fields": True}
    return None


def validation_problems(
    value: Any, schema: Mapping[str, Any], path: str = "", root: bool = True
) -> list[Problem]:
    """Every type, enum and required problem, as (field, message) in the real server's wording."""
    problems: list[Problem] = []
    field = path.lstrip(".") or "<root>"
    if not _type_matches(value, schema):
        shown = json.dumps(_json_type(value))
        message = f"Invalid value: {shown}: {field} in body must be of type {schema.get('type')}: {shown}"
        return [(field, message)]
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(json.dumps(option) for option in schema["enum"])
        problems.append((field, f"Unsupported value: {json.dumps(value)}: supported values: {allowed}"))
    if isinstance(value, dict):
        for required in schema.get("required") or []:
            if required not in value:
                problems.append((f"{path}.{required}".lstrip("."), "Required value"))
        for key, child_value in value.items():
            if root and key in _ROOT_FIELDS:
                continue
            child = _child_schema(schema, key)
            if child is not None:
                problems.extend(validation_problems(child_value, child, f"{path}.{key}", root=False))
    elif isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for index, item in enumerate(value):
            problems.extend(validation_problems(item, schema["items"], f"{path}[{index}]", root=False))
    return problems


def prune(value: Any, schema: Mapping[str, Any], path: str = "", root: bool = True) -> tuple[Any, list[str]]:
    """The value without fields the schema does not declare, and the dotted paths that were dropped."""
    if schema.get("x-kubernetes-preserve-unknown-fields") and not schema.get("properties"):
        return value, []
    dropped: list[str] = []
    if isinstance(value, dict):
        kept: dict[str, Any] = {}
        for key, child_value in value.items():
            if root and key in _ROOT_FIELDS:
                kept[key] = child_value
                continue
            child = _child_schema(schema, key)
            if child is None:
                dropped.append(f"{path}.{key}".lstrip("."))
                continue
            kept[key], child_dropped = prune(child_value, child, f"{path}.{key}", root=False)
            dropped.extend(child_dropped)
        return kept, dropped
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        items = []
        for index, item in enumerate(value):
            pruned, child_dropped = prune(item, schema["items"], f"{path}[{index}]", root=False)
            items.append(pruned)
            dropped.extend(child_dropped)
        return items, dropped
    return value, dropped


def _smd_type_name(schema: Mapping[str, Any]) -> str:
    names = {
        "integer": "numeric (int or float)",
        "number": "numeric (int or float)",
        "object": "map",
        "array": "list",
        "string": "string",
        "boolean": "boolean",
    }
    return names.get(str(schema.get("type")), str(schema.get("type")))


def typed_patch_problems(
    value: Any, schema: Mapping[str, Any], path: str = "", root: bool = True
) -> list[str]:
    """What structured-merge-diff reports when an applied body does not fit the schema (wrong type, or a
    field the schema does not declare); `required` is not checked here, as upstream."""
    if value is None:
        return []
    if not _type_matches(value, schema):
        return [f"{path or '.'}: expected {_smd_type_name(schema)}, got {_json_type(value)}"]
    problems: list[str] = []
    if isinstance(value, dict):
        for key, child_value in value.items():
            if root and key in _ROOT_FIELDS:
                continue
            child = _child_schema(schema, key)
            if child is None:
                problems.append(f"{path}.{key}: field not declared in schema")
            else:
                problems.extend(typed_patch_problems(child_value, child, f"{path}.{key}", root=False))
    elif isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for index, item in enumerate(value):
            problems.extend(typed_patch_problems(item, schema["items"], f"{path}[{index}]", root=False))
    return problems
