"""Kubernetes field paths (``spec.containers[0].name``, ``data[.config.yml]``,
``metadata.annotations['x/y']``), used by SchedulePolicy overrides.

Syntax (the Nova configuration page, seeds/001): JavaScript-like access without the leading dot. Brackets hold
an index (digits), a quoted key, or a bare key. Invalid: leading, doubled or trailing periods, empty brackets,
a period before an opening bracket.

Why a parser of our own: an override is applied to every copy of an object a cluster receives, so a typo must
be reported once, at validation, with the character it is at, rather than failing silently per object. And
``set_value`` is copy-on-write because one source object is rendered into many clusters: copying only the
containers on the path costs about a microsecond, where ``copy.deepcopy`` of a manifest costs about 40.

Decisions the Nova page leaves open:

- Bracketed digits (``[0]``) index a list; on a mapping they are the text key (``"0"``). Digits with a
  leading zero (``[007]``) are a text key only, so every index has exactly one spelling.
- A quoted key (``['a.b']`` or ``["it's"]``) ends at the first matching quote; there are no escapes, so a
  key holding both quote characters cannot be written.
- Positions in error messages are 1-based characters of the path text.
- A path has at most ``MAX_SEGMENTS`` segments (issue 21 item 4): ``set_value`` copies one container per
  segment, by recursion, and 2,000 segments raised RecursionError while rendering. A ``staticValue`` is
  copied without recursion, whatever its depth.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from nova_gitops.api.problems import excerpt

Segment = str | int
"""A key (str) or an index (int). A bracketed number on a mapping is treated as the key of that text."""

_INDEX = re.compile(r"0|[1-9][0-9]*")
MAX_SEGMENTS = 64
"""Segments of one path (``spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.name`` has 9)."""
_QUOTES = "'\""


class FieldPathError(ValueError):
    """A field path is malformed, or cannot be applied to an object (say which and why)."""


@dataclass(frozen=True, slots=True)
class FieldPath:
    text: str
    segments: tuple[Segment, ...]

    def __str__(self) -> str:
        return self.text


def _malformed(text: str, defect: str, index: int) -> FieldPathError:
    return FieldPathError(f"invalid field path {excerpt(text)}: {defect} at character {index + 1}")


def parse(text: str) -> FieldPath:
    """Parse ``text``; raise FieldPathError naming the defect."""
    if not isinstance(text, str):
        raise FieldPathError(f"a field path must be text, got {type(text).__name__} {excerpt(text)}")
    if not text:
        raise FieldPathError("invalid field path '': the path is empty")
    segments: list[Segment] = []
    after = "start"  # what the previous token was: start | period | segment
    index = 0
    while index < len(text):
        if len(segments) > MAX_SEGMENTS:
            raise FieldPathError(f"invalid field path {excerpt(text)}: more than {MAX_SEGMENTS} segments")
        char = text[index]
        if char == ".":
            if after == "start":
                raise _malformed(text, "leading period", index)
            if after == "period":
                raise _malformed(text, "double period", index)
            after = "period"
            index += 1
        elif char == "[":
            if after == "period":
                raise _malformed(text, "period before '['", index - 1)
            segment, index = _parse_bracket(text, index)
            segments.append(segment)
            after = "segment"
        elif char == "]":
            raise _malformed(text, "']' without a matching '['", index)
        else:
            if after == "segment":
                raise _malformed(text, "expected '.' or '[' after ']'", index)
            end = index
            while end < len(text) and text[end] not in ".[]":
                end += 1
            segments.append(text[index:end])
            after = "segment"
            index = end
    if after == "period":
        raise _malformed(text, "trailing period", len(text) - 1)
    if len(segments) > MAX_SEGMENTS:
        raise FieldPathError(f"invalid field path {excerpt(text)}: more than {MAX_SEGMENTS} segments")
    return FieldPath(text, tuple(segments))


def _parse_bracket(text: str, start: int) -> tuple[Segment, int]:
    """The segment of the bracket opening at ``start`` and the index just after its ``]``."""
    inner = start + 1
    if inner < len(text) and text[inner] in _QUOTES:
        quote = text[inner]
        close = text.find(quote, inner + 1)
        if close == -1:
            raise _malformed(text, f"unclosed quote {quote}", inner)
        if close + 1 >= len(text):
            raise _malformed(text, "unclosed bracket", start)
        if text[close + 1] != "]":
            raise _malformed(text, "expected ']' after the quoted key", close + 1)
        return text[inner + 1 : close], close + 2
    close = inner
    while close < len(text) and text[close] != "]":
        if text[close] == "[":
            raise _malformed(text, "'[' inside brackets", close)
        close += 1
    if close >= len(text):
        raise _malformed(text, "unclosed bracket", start)
    key = text[inner:close]
    if not key:
        raise _malformed(text, "empty brackets", start)
    return (int(key) if _INDEX.fullmatch(key) else key), close + 1


def format_path(segments: tuple[Segment, ...]) -> str:
    """The text that ``parse`` reads back as ``segments``: plain names dotted, indexes and awkward keys in
    brackets (``spec.containers[0]``, ``data[.config.yml]``, ``metadata.annotations['a[b]']``)."""
    if not segments:
        raise FieldPathError("a field path needs at least one segment")
    parts: list[str] = []
    for segment in segments:
        if isinstance(segment, bool) or not isinstance(segment, int | str):
            raise FieldPathError(f"a field path segment must be text or an index, got {excerpt(segment)}")
        if isinstance(segment, int):
            if segment < 0:
                raise FieldPathError(f"a list index cannot be negative: {segment}")
            parts.append(f"[{segment}]")
        elif segment and not any(char in ".[]" for char in segment):
            parts.append(f".{segment}" if parts else segment)
        elif segment and "[" not in segment and "]" not in segment and segment[0] not in _QUOTES:
            parts.append(f"[{segment}]" if not _INDEX.fullmatch(segment) else f"['{segment}']")
        else:
            quote = next((q for q in _QUOTES if q not in segment), None)
            if quote is None:
                raise FieldPathError(
                    f"a key holding both quote characters cannot be written: {excerpt(segment)}"
                )
            parts.append(f"[{quote}{segment}{quote}]")
    return "".join(parts)


def _describe(path: FieldPath, depth: int) -> str:
    """The text of the first ``depth`` segments of ``path`` ("the object" for none), for messages."""
    if depth == 0:
        return "the object"
    try:
        return format_path(path.segments[:depth])
    except FieldPathError:  # pragma: no cover - parse() never yields unwritable segments
        return repr(path.segments[:depth])


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float):
        return "a number"
    return f"a {type(value).__name__}"


def get(obj: Any, path: FieldPath) -> Any:
    """The value at ``path``; raise KeyError/IndexError-derived FieldPathError when absent."""
    node = obj
    for depth, segment in enumerate(path.segments):
        if isinstance(node, dict):
            key = str(segment)
            if key not in node:
                raise FieldPathError(f"{path}: {_describe(path, depth)} has no key {excerpt(key)}")
            node = node[key]
        elif isinstance(node, list):
            if not isinstance(segment, int):
                raise FieldPathError(
                    f"{path}: {_describe(path, depth)} is a list, "
                    f"index it with a number, not {excerpt(segment)}"
                )
            if segment >= len(node):
                raise FieldPathError(
                    f"{path}: index {segment} is out of range, {_describe(path, depth)} has {len(node)} items"
                )
            node = node[segment]
        else:
            raise FieldPathError(f"{path}: {_describe(path, depth)} is {_kind(node)}, not a mapping or list")
    return node


def set_value(obj: dict[str, Any], path: FieldPath, value: Any) -> dict[str, Any]:
    """A copy of ``obj`` with ``value`` at ``path``. Copy-on-write: only the containers on the path are
    copied, ``obj`` is never mutated. Missing mappings are created; an out-of-range index raises
    FieldPathError."""
    if not isinstance(obj, dict):
        raise FieldPathError(f"{path}: the object is {_kind(obj)}, not a mapping")
    if not path.segments:
        raise FieldPathError("a field path needs at least one segment")
    if isinstance(value, dict | list):
        value = copied(value)  # the same staticValue lands in many clusters' copies
    result = _set(obj, path, 0, value)
    assert isinstance(result, dict)
    return result


def copied(value: Any) -> Any:
    """A copy of plain data (mappings, lists and immutable scalars), as ``copy.deepcopy`` makes it — a
    container met twice (a YAML alias) is copied once and shared the same way — but without recursion: a
    value nested a few hundred levels deep made ``deepcopy`` raise RecursionError."""
    if not isinstance(value, dict | list):
        return value
    made: dict[int, Any] = {}  # id of an original container → its copy
    keep: list[Any] = []  # the originals, alive while their ids are keys
    pending: list[Any] = [value]
    while pending:
        node = pending.pop()
        if id(node) in made:
            continue
        keep.append(node)
        made[id(node)] = {} if isinstance(node, dict) else []
        children = node.values() if isinstance(node, dict) else node
        pending += [child for child in children if isinstance(child, dict | list)]
    for node in keep:
        copy_of = made[id(node)]
        if isinstance(node, dict):
            copy_of.update(
                (key, made[id(child)] if isinstance(child, dict | list) else child)
                for key, child in node.items()
            )
        else:
            copy_of.extend(made[id(child)] if isinstance(child, dict | list) else child for child in node)
    return made[id(value)]


def _set(node: Any, path: FieldPath, depth: int, value: Any) -> Any:
    """A copy of ``node`` (the container at ``depth``) with ``value`` set below it."""
    segment = path.segments[depth]
    last = depth + 1 == len(path.segments)
    if isinstance(node, dict):
        key = str(segment)
        copied = dict(node)
        if last:
            copied[key] = value
            return copied
        child = node.get(key)
        if child is None:
            following = path.segments[depth + 1]
            if isinstance(following, int):
                raise FieldPathError(
                    f"{path}: index {following} is out of range, {_describe(path, depth + 1)} is absent"
                )
            child = {}
        copied[key] = _set(child, path, depth + 1, value)
        return copied
    if isinstance(node, list):
        if not isinstance(segment, int):
            raise FieldPathError(
                f"{path}: {_describe(path, depth)} is a list, index it with a number, not {excerpt(segment)}"
            )
        if segment >= len(node):
            raise FieldPathError(
                f"{path}: index {segment} is out of range, {_describe(path, depth)} has {len(node)} items"
            )
        items = list(node)
        items[segment] = value if last else _set(node[segment], path, depth + 1, value)
        return items
    raise FieldPathError(f"{path}: {_describe(path, depth)} is {_kind(node)}, not a mapping or list")
