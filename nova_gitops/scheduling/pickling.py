"""How the plan memory's many small values pickle."""

from __future__ import annotations

from typing import Any


def by_fields(value: Any) -> tuple[type[Any], tuple[object, ...]]:
    """How a frozen, slotted dataclass the plan memory holds thousands of is pickled (its ``__reduce__``):
    its class and its fields in order, so that unpickling calls the class. The ``__setstate__`` that
    ``dataclasses`` gives looks the fields up again for every object, which costs several times more."""
    return (type(value), tuple(getattr(value, name) for name in value.__slots__))
