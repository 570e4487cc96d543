"""The three non-apply PATCH content types.

- `application/merge-patch+json`: RFC 7386 (null deletes, maps merge, lists replace).
- `application/strategic-merge-patch+json`: a SIMPLIFICATION of Kubernetes' strategic merge. Like merge patch,
  except that a list whose items are all maps with a `name` key, in both the patch and the live object, is
  merged item by item by `name` (containers, env, ports, volumes, ...). The real server keys lists by the
  `patchMergeKey` of each Go field (e.g. `containerPort`, `mountPath`) and honours `$patch`/`$retainKeys`
  directives; this fake does not.
- `application/json-patch+json`: RFC 6902 (add, remove, replace, move, copy, test).
"""

from __future__ import annotations

import copy
from typing import Any

from tests.fakekube.statuses import ApiError, bad_request


def merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _is_named_list(items: Any) -> bool:
    return isinstance(items, list) and all(isinstance(item, dict) and "name" in item for item in items)


def strategic_merge_patch(target: Any, patch: Any) -> Any:
    if isinstance(patch, list) and _is_named_list(patch) and _is_named_list(target) and patch:
        merged = [copy.deepcopy(item) for item in target]
        index = {item["name"]: position for position, item in enumerate(merged)}
        for item in patch:
            if item["name"] in index:
                merged[index[item["name"]]] = strategic_merge_patch(merged[index[item["name"]]], item)
            else:
                merged.append(strategic_merge_patch(None, item))
        return merged
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = strategic_merge_patch(result.get(key), value)
    return result


def _pointer(path: Any) -> list[str]:
    if not isinstance(path, str) or (path and not path.startswith("/")):
        raise bad_request(f"invalid JSON pointer: {path!r}")
    return [part.replace("~1", "/").replace("~0", "~") for part in path.split("/")[1:]]


def _unprocessable(message: str) -> ApiError:
    return ApiError(422, "Invalid", message)


def _parent(document: Any, parts: list[str], path: str) -> tuple[Any, str]:
    node = document
    for part in parts[:-1]:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise _unprocessable(f"doc is missing path: {path!r}: missing value")
    return node, parts[-1]


def _get(document: Any, path: str) -> Any:
    parts = _pointer(path)
    if not parts:
        return document
    parent, last = _parent(document, parts, path)
    if isinstance(parent, dict) and last in parent:
        return parent[last]
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        return parent[int(last)]
    raise _unprocessable(f"doc is missing path: {path!r}: missing value")


def _remove(document: Any, path: str) -> Any:
    parts = _pointer(path)
    parent, last = _parent(document, parts, path)
    if isinstance(parent, dict) and last in parent:
        return parent.pop(last)
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        return parent.pop(int(last))
    raise _unprocessable(f"doc is missing path: {path!r}: missing value")


def _add(document: Any, path: str, value: Any, replace: bool) -> Any:
    parts = _pointer(path)
    if not parts:
        return value
    parent, last = _parent(document, parts, path)
    if isinstance(parent, dict):
        if replace and last not in parent:
            raise _unprocessable(f"doc is missing key: {path!r}: missing value")
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-" and not replace:
            parent.append(value)
        elif last.isdigit() and int(last) <= len(parent) - (1 if replace else 0):
            if replace:
                parent[int(last)] = value
            else:
                parent.insert(int(last), value)
        else:
            raise _unprocessable(f"index out of range: {path!r}")
    else:
        raise _unprocessable(f"doc is missing path: {path!r}: missing value")
    return document


def json_patch(target: Any, operations: Any) -> Any:
    if not isinstance(operations, list):
        raise bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    document = copy.deepcopy(target)
    for operation in operations:
        if not isinstance(operation, dict) or "op" not in operation or "path" not in operation:
            raise bad_request(f"invalid JSON patch operation: {operation!r}")
        op, path = operation["op"], operation["path"]
        if op in ("add", "replace", "test") and "value" not in operation:
            raise bad_request(f"missing value for {op} operation at {path!r}")
        if op == "add":
            document = _add(document, path, copy.deepcopy(operation["value"]), replace=False)
        elif op == "replace":
            document = _add(document, path, copy.deepcopy(operation["value"]), replace=True)
        elif op == "remove":
            _remove(document, path)
        elif op in ("move", "copy"):
            source = operation.get("from")
            if not isinstance(source, str):
                raise bad_request(f"missing from for {op} operation at {path!r}")
            value = _remove(document, source) if op == "move" else copy.deepcopy(_get(document, source))
            document = _add(document, path, value, replace=False)
        elif op == "test":
            if _get(document, path) != operation["value"]:
                raise _unprocessable(f"testing value {path!r} failed: test failed")
        else:
            raise bad_request(f"unexpected operation {op!r}")
    return document
