"""Kubernetes resource quantities as exact integers of milli-units (``"1.5"`` cpu → 1500, ``"1Gi"`` →
1073741824000). Never floats: sums and comparisons must be exact."""

from __future__ import annotations

from collections.abc import Mapping

ResourceList = Mapping[str, int]
"""Resource name → milli-units."""


class QuantityError(ValueError):
    """Text that is not a Kubernetes quantity."""


def parse_quantity(value: object) -> int:
    """Milli-units of a quantity given as text (``"500m"``, ``"2Gi"``, ``"1e3"``) or a YAML number."""
    raise NotImplementedError


def format_quantity(resource: str, milli: int) -> str:
    """Human text: cpu in millicores (``"1500m"``, ``"2"``), memory in binary units, others as counts."""
    raise NotImplementedError
