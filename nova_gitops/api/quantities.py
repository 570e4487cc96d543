"""Kubernetes resource quantities as exact integers of milli-units (``"1.5"`` cpu → 1500, ``"1Gi"`` →
1073741824000). Never floats: sums and comparisons must be exact.

Why milli-units: the finest unit a scheduler compares is the millicore, and Kubernetes itself rounds every
request *up* to the milli (``1n`` cpu is ``1m`` to the scheduler). Integers make "does it fit" a comparison
that cannot be off by one float ulp, and make Divide's replica arithmetic and capacity sums exact.

The grammar is kube-apiserver's (``resource.ParseQuantity``)::

    <quantity> ::= <sign>? <number> <suffix>
    <number>   ::= <digits> | <digits> "." <digits>? | "." <digits>
    <suffix>   ::= "" | n | u | m | k | M | G | T | P | E          decimal SI
                 | Ki | Mi | Gi | Ti | Pi | Ei                     binary SI
                 | (e | E) <sign>? <digits>                        decimal exponent

YAML numbers are accepted too: an int as is, a float through its shortest decimal text (``0.1`` is exactly
one tenth, not the binary float nearest to it).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from typing import Any

from nova_gitops.api.problems import Problem, SourceLocation, excerpt

ResourceList = Mapping[str, int]
"""Resource name → milli-units."""

MAX_MILLI = (2**63 - 1) * 1000
"""The largest magnitude accepted, in milli-units: an int64 of whole units, as Kubernetes' ``Value()``."""

_MAX_TEXT = 64  # no real quantity is longer; bounds the work done on hostile input

_DECIMAL_SUFFIXES: dict[str, int] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SUFFIXES: dict[str, int] = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_BINARY_UNITS = sorted(((2**power, suffix) for suffix, power in _BINARY_SUFFIXES.items()), reverse=True)

_QUANTITY = re.compile(
    r"(?P<sign>[+-]?)(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<binary>[KMGTPE]i)|[eE](?P<exponent>[+-]?[0-9]+)|(?P<decimal>[numkMGTPE]?))"
)
_NUMBER_PREFIX = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")

BYTE_RESOURCES = frozenset({"memory", "ephemeral-storage", "storage"})
"""Resources counted in bytes and written in binary units (plus every ``hugepages-<size>``)."""


class QuantityError(ValueError):
    """Text that is not a Kubernetes quantity."""


def _junk(value: object, why: str) -> QuantityError:
    return QuantityError(
        f"{excerpt(value)} is not a Kubernetes quantity: {why} "
        "(write a number with an optional suffix, like 500m, 1.5, 2Gi, 128974848 or 1e3)"
    )


def parse_quantity(value: object) -> int:
    """Milli-units of a quantity given as text (``"500m"``, ``"2Gi"``, ``"1e3"``) or a YAML number.

    A value finer than a milli is rounded up, away from zero, as Kubernetes does (``"1n"`` → 1).
    """
    if isinstance(value, bool):
        raise _junk(value, "a boolean is not a number")
    if isinstance(value, int):
        return _in_range(value, value * 1000)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _junk(value, "it is not a finite number")
        return _in_range(value, _parse_text(repr(value)))  # the shortest decimal text: 0.1 is exactly 1/10
    if isinstance(value, str):
        return _in_range(value, _parse_text(value))
    raise _junk(value, f"expected text or a number, got {type(value).__name__}")


def _in_range(value: object, milli: int) -> int:
    if abs(milli) > MAX_MILLI:
        raise QuantityError(f"{excerpt(value)} is too large for a Kubernetes quantity")
    return milli


@functools.lru_cache(maxsize=4096)
def _parse_text(text: str) -> int:
    """Milli-units of quantity text, in integer arithmetic only (a few hundred distinct texts are most of
    a fleet's quantities, hence the cache; errors are not cached)."""
    if not text:
        raise _junk(text, "it is empty")
    if len(text) > _MAX_TEXT:
        raise QuantityError(
            f"{text[:20]!r}... is not a Kubernetes quantity: longer than {_MAX_TEXT} characters"
        )
    if text != text.strip():
        raise _junk(text, "it has surrounding spaces")
    match = _QUANTITY.fullmatch(text)
    if match is None:
        prefix = _NUMBER_PREFIX.match(text)
        if prefix is None:
            raise _junk(text, "it does not start with a number")
        suffix = text[prefix.end() :]
        raise _junk(
            text,
            f"unknown suffix {excerpt(suffix)}; the suffixes are n, u, m, k, M, G, T, P, E, "
            "Ki, Mi, Gi, Ti, Pi, Ei, or an exponent such as e3",
        )
    whole, _, fraction = match["number"].partition(".")
    mantissa = int(whole + fraction or "0")  # the number is mantissa / 10**len(fraction)
    if mantissa == 0:
        return 0
    # value * 1000 = mantissa * 2**binary * 10**power, rounded up (away from zero) to an integer
    binary, power = 0, 3 - len(fraction)
    if match["binary"] is not None:
        binary = _BINARY_SUFFIXES[match["binary"]]
    elif match["exponent"] is not None:
        # Clamped: past +-200 the result is out of range, or below one milli, whatever the number was.
        power += max(-200, min(200, int(match["exponent"])))
    else:
        power += _DECIMAL_SUFFIXES[match["decimal"]]
    numerator = mantissa << binary
    scale: int = 10 ** abs(power)
    magnitude = numerator * scale if power >= 0 else -(-numerator // scale)
    return -magnitude if match["sign"] == "-" else magnitude


def is_byte_resource(resource: str) -> bool:
    """Whether ``resource`` counts bytes (memory, storage, hugepages) rather than cores or items."""
    return resource in BYTE_RESOURCES or resource.startswith("hugepages-")


def format_quantity(resource: str, milli: int) -> str:
    """Human text: cpu in millicores (``"1500m"``, ``"2"``), memory in binary units, others as counts.

    Memory-like resources use the largest binary unit that divides the bytes exactly (``"1536Mi"``,
    ``"2Gi"``), else plain bytes; a fraction of a byte or of a count is written in milli-units (``"1500m"``).
    """
    sign = "-" if milli < 0 else ""
    milli = abs(milli)
    if milli % 1000:
        return f"{sign}{milli}m"
    whole = milli // 1000
    if is_byte_resource(resource) and whole:
        for unit, suffix in _BINARY_UNITS:
            if whole % unit == 0:
                return f"{sign}{whole // unit}{suffix}"
    return f"{sign}{whole}"


def in_words(resource: str, milli: int) -> str:
    """A quantity as scheduling reasons write it: cpu always in millicores (``"900m"``, ``"1000m"``, as Nova's
    messages do, so amounts in one sentence compare at a glance), anything else as ``format_quantity``."""
    if resource == "cpu":
        return f"{milli}m"
    return format_quantity(resource, milli)


def parse_resource_list(
    raw: Any, location: SourceLocation, field: str, problems: list[Problem], *, allow_negative: bool = False
) -> dict[str, int]:
    """A ``{resource: quantity}`` mapping (requests, limits, allocatable) in milli-units.

    Appends a Problem for each value that is not a quantity, for a negative one (Kubernetes refuses them in
    requests, limits and capacity; ``allow_negative`` is for derived figures such as overcommitted free
    space), and for a non-mapping; keeps the rest. ``None`` (an empty YAML field) is an empty list.
    """
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        problems.append(
            Problem(location, f"must be a mapping of resource name to quantity, got {_type_name(raw)}", field)
        )
        return {}
    parsed: dict[str, int] = {}
    for name, quantity in raw.items():
        if not isinstance(name, str) or not name:
            problems.append(
                Problem(location, f"resource name must be non-empty text, got {excerpt(name)}", field)
            )
            continue
        where = f"{field}.{name}" if field else name
        try:
            milli = parse_quantity(quantity)
        except QuantityError as error:
            problems.append(Problem(location, str(error), where))
            continue
        if milli < 0 and not allow_negative:
            problems.append(Problem(location, f"must not be negative, got {excerpt(quantity)}", where))
            continue
        parsed[name] = milli
    return parsed


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    return {list: "a list", str: "text", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__
    )


def add(a: ResourceList, b: ResourceList) -> dict[str, int]:
    """Resource-wise ``a + b``; a resource missing from one side counts as 0. Keys keep ``a``'s order."""
    total = dict(a)
    for name, milli in b.items():
        total[name] = total.get(name, 0) + milli
    return total


def shortfall(request: ResourceList, free: ResourceList) -> dict[str, int]:
    """The resources ``request`` lacks in ``free`` and by how much (empty when it fits), for reasons."""
    return {
        name: milli - free.get(name, 0)
        for name, milli in request.items()
        if milli > 0 and milli > free.get(name, 0)
    }
