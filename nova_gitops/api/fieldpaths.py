"""Kubernetes field paths (``spec.containers[0].name``, ``data[.config.yml]``,
``metadata.annotations['x/y']``), used by SchedulePolicy overrides.

Syntax (the Nova configuration page, seeds/001): JavaScript-like access without the leading dot. Brackets hold
an index (digits), a quoted key, or a bare key. Invalid: leading, doubled or trailing periods, empty brackets,
a period before an opening bracket.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Segment = str | int
"""A key (str) or an index (int). A bracketed number on a mapping is treated as the key of that text."""


class FieldPathError(ValueError):
    """A field path is malformed, or cannot be applied to an object (say which and why)."""


@dataclass(frozen=True, slots=True)
class FieldPath:
    text: str
    segments: tuple[Segment, ...]

    def __str__(self) -> str:
        return self.text


def parse(text: str) -> FieldPath:
    """Parse ``text``; raise FieldPathError naming the defect."""
    raise NotImplementedError


def get(obj: Any, path: FieldPath) -> Any:
    """The value at ``path``; raise KeyError/IndexError-derived FieldPathError when absent."""
    raise NotImplementedError


def set_value(obj: dict[str, Any], path: FieldPath, value: Any) -> dict[str, Any]:
    """A copy of ``obj`` with ``value`` at ``path``. Copy-on-write: only the containers on the path are
    copied, ``obj`` is never mutated. Missing mappings are created; an out-of-range index raises
    FieldPathError."""
    raise NotImplementedError
