"""Kubernetes resource quantities as exact milli-units.

Behaviours covered:
- every quantity form parses exactly: decimal SI (n u m k M G T P E), binary SI (Ki..Ei), exponents (1e3,
  1E-3), signs, a bare trailing or leading decimal point, YAML ints, YAML floats through their decimal text;
- values finer than a milli round up (away from zero), as Kubernetes does: 1n cpu is 1m;
- junk (empty, spaces, unknown suffix, booleans, null, lists, inf, out-of-range) is a QuantityError whose
  message quotes the value and says what is expected;
- ``format_quantity``: cpu as millicores or whole cores, memory in the largest exact binary unit, counts;
- ``parse_resource_list`` collects a Problem per bad or negative value and keeps the good ones;
- ``add``/``shortfall`` treat a missing resource as 0;
- properties: text quantities agree with exact rational arithmetic (a reference model); a YAML float reads
  as its decimal text; format then parse is the identity; what was added fits in the sum.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.api import quantities
from nova_gitops.api.problems import SourceLocation
from nova_gitops.api.quantities import QuantityError

KI = 1024


@pytest.mark.parametrize(
    ("value", "milli"),
    [
        ("1", 1000),
        ("1.5", 1500),
        ("500m", 500),
        ("0.5", 500),
        (".5", 500),
        ("2.", 2000),
        ("1n", 1),
        ("1u", 1),
        ("1500000n", 2),
        ("1000000n", 1),
        ("0.1m", 1),
        ("1k", 1_000_000),
        ("1M", 10**9),
        ("1G", 10**12),
        ("1T", 10**15),
        ("1P", 10**18),
        ("1E", 10**21),
        ("1Ki", KI * 1000),
        ("1Mi", KI**2 * 1000),
        ("1.5Gi", 3 * KI**3 // 2 * 1000),
        ("1Ti", KI**4 * 1000),
        ("1Pi", KI**5 * 1000),
        ("1Ei", KI**6 * 1000),
        ("1e3", 1_000_000),
        ("1E3", 1_000_000),
        ("1e-3", 1),
        ("1E-3", 1),
        ("1.5e+2", 150_000),
        ("1e-10", 1),
        ("128974848", 128974848000),
        ("129e6", 129 * 10**9),
        ("+2", 2000),
        ("-2", -2000),
        ("-1n", -1),
        ("0", 0),
        ("0e999999", 0),
        ("0Ei", 0),
        (2, 2000),
        (0, 0),
        (0.5, 500),
        (0.1, 100),
        (2.675, 2675),
        (1e-9, 1),
        (3.0, 3000),
    ],
)
def test_quantities_parse_to_exact_milli_units(value: object, milli: int) -> None:
    assert quantities.parse_quantity(value) == milli


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "it is empty"),
        (" 1", "surrounding spaces"),
        ("1 Gi", "unknown suffix ' Gi'"),
        ("1gi", "unknown suffix 'gi'"),
        ("1KB", "unknown suffix 'KB'"),
        ("1e", "unknown suffix 'e'"),
        ("1e1.5", "unknown suffix 'e1.5'"),
        ("1.2.3", "unknown suffix '.3'"),
        ("two", "does not start with a number"),
        ("Gi", "does not start with a number"),
        (".", "does not start with a number"),
        ("--1", "does not start with a number"),
        ("1e30", "too large"),
        ("9Ei", "too large"),
        ("1e999999999", "too large"),
        ("1" * 65, "longer than 64 characters"),
        (True, "a boolean is not a number"),
        (None, "expected text or a number, got NoneType"),
        ([1], "expected text or a number, got list"),
        (float("inf"), "not a finite number"),
        (float("nan"), "not a finite number"),
    ],
)
def test_junk_is_a_clear_quantity_error(value: object, message: str) -> None:
    with pytest.raises(QuantityError) as raised:
        quantities.parse_quantity(value)
    assert message in str(raised.value)
    assert "is not a Kubernetes quantity" in str(raised.value) or "too large" in str(raised.value)


@pytest.mark.parametrize(
    ("resource", "milli", "text"),
    [
        ("cpu", 1500, "1500m"),
        ("cpu", 2000, "2"),
        ("cpu", 0, "0"),
        ("cpu", 1, "1m"),
        ("cpu", -500, "-500m"),
        ("memory", 1536 * KI**2 * 1000, "1536Mi"),
        ("memory", 2 * KI**3 * 1000, "2Gi"),
        ("memory", KI**6 * 1000, "1Ei"),
        ("memory", 1000 * 1000, "1000"),
        ("memory", 0, "0"),
        ("memory", 1500, "1500m"),
        ("memory", -(KI**2) * 1000, "-1Mi"),
        ("ephemeral-storage", 10 * KI**3 * 1000, "10Gi"),
        ("hugepages-2Mi", 4 * KI**2 * 1000, "4Mi"),
        ("nvidia.com/gpu", 2000, "2"),
        ("nvidia.com/gpu", 1500, "1500m"),
        ("pods", 110_000, "110"),
    ],
)
def test_format_quantity_writes_what_a_user_would(resource: str, milli: int, text: str) -> None:
    assert quantities.format_quantity(resource, milli) == text


def test_parse_resource_list_collects_every_bad_value() -> None:
    problems: list[Any] = []
    location = SourceLocation("clusters.yaml", 4)
    parsed = quantities.parse_resource_list(
        {"cpu": "2", "memory": "1 Gi", "nvidia.com/gpu": True, "pods": 110, "ephemeral-storage": "-1Gi"},
        location,
        "status.capacityResources.node-1",
        problems,
    )
    assert parsed == {"cpu": 2000, "pods": 110_000}
    assert [problem.field for problem in problems] == [
        "status.capacityResources.node-1.memory",
        "status.capacityResources.node-1.nvidia.com/gpu",
        "status.capacityResources.node-1.ephemeral-storage",
    ]
    assert problems[-1].message == "must not be negative, got '-1Gi'"
    assert all(problem.location == location for problem in problems)


def test_parse_resource_list_allows_negatives_only_when_asked() -> None:
    problems: list[Any] = []
    parsed = quantities.parse_resource_list(
        {"cpu": "-500m"}, SourceLocation("f.yaml", 1), "status.free", problems, allow_negative=True
    )
    assert (parsed, problems) == ({"cpu": -500}, [])


@pytest.mark.parametrize(("raw", "count"), [(None, 0), ({}, 0), (["cpu"], 1), ("2", 1), ({3: "1"}, 1)])
def test_parse_resource_list_shapes(raw: object, count: int) -> None:
    problems: list[Any] = []
    quantities.parse_resource_list(raw, SourceLocation("f.yaml", 1), "spec.resources", problems)
    assert len(problems) == count


def test_arithmetic_treats_a_missing_resource_as_zero() -> None:
    assert quantities.add({"cpu": 1000}, {"cpu": 500, "memory": 10}) == {"cpu": 1500, "memory": 10}
    assert quantities.shortfall({"nvidia.com/gpu": 1000}, {"cpu": 1500}) == {"nvidia.com/gpu": 1000}


@pytest.mark.parametrize(
    ("request_", "free", "fits"),
    [
        ({"cpu": 1000}, {"cpu": 1000}, True),
        ({"cpu": 1001}, {"cpu": 1000}, False),
        ({"nvidia.com/gpu": 1000}, {"cpu": 8000}, False),
        ({"nvidia.com/gpu": 0}, {"cpu": 8000}, True),
        ({}, {}, True),
        ({"cpu": 500, "memory": 10}, {"cpu": 500, "memory": 9}, False),
    ],
)
def test_shortfall_checks_every_requested_resource(
    request_: dict[str, int], free: dict[str, int], fits: bool
) -> None:
    assert (quantities.shortfall(request_, free) == {}) is fits


def test_shortfall_names_what_is_missing_and_by_how_much() -> None:
    assert quantities.shortfall({"cpu": 1500, "memory": 5}, {"cpu": 900, "memory": 10}) == {"cpu": 600}


RESOURCES = st.sampled_from(["cpu", "memory", "ephemeral-storage", "nvidia.com/gpu", "pods", "hugepages-1Gi"])
MILLIS = st.integers(min_value=-(2**62), max_value=2**62) | st.integers(min_value=0, max_value=10**6).map(
    lambda n: n * 1024**3 * 1000
)


@settings(max_examples=200)
@given(RESOURCES, MILLIS)
def test_formatted_quantities_parse_back_exactly(resource: str, milli: int) -> None:
    assert quantities.parse_quantity(quantities.format_quantity(resource, milli)) == milli


LISTS = st.dictionaries(RESOURCES, st.integers(min_value=0, max_value=10**15), max_size=4)


@settings(max_examples=200)
@given(LISTS, LISTS)
def test_what_was_added_fits_and_no_more(a: dict[str, int], b: dict[str, int]) -> None:
    total = quantities.add(a, b)
    assert quantities.shortfall(b, total) == {}
    assert quantities.shortfall(a, total) == {}


DECIMAL_POWERS = [("n", -9), ("u", -6), ("m", -3), ("", 0), ("k", 3), ("M", 6), ("G", 9), ("T", 12)]
SCALES: dict[str, Fraction] = {  # up to 10**12, so that a million of the unit stays in range
    **{suffix: Fraction(10) ** power for suffix, power in DECIMAL_POWERS},
    **{suffix: Fraction(1024) ** power for suffix, power in [("Ki", 1), ("Mi", 2), ("Gi", 3), ("Ti", 4)]},
    **{f"e{power}": Fraction(10) ** power for power in (-7, -3, 0, 2, 5)},
    **{f"E+{power}": Fraction(10) ** power for power in (1, 3)},
}


@settings(max_examples=200)
@given(
    st.sampled_from(["", "+", "-"]),
    st.integers(min_value=0, max_value=10**6),
    st.text(alphabet="0123456789", max_size=9),
    st.sampled_from(sorted(SCALES)),
)
def test_text_quantities_agree_with_exact_rational_arithmetic(
    sign: str, whole: int, fraction: str, suffix: str
) -> None:
    text = f"{sign}{whole}{'.' + fraction if fraction else ''}{suffix}"
    exact = Fraction(f"{whole}.{fraction or '0'}") * SCALES[suffix] * 1000
    expected = math.ceil(exact) * (-1 if sign == "-" else 1)
    assert quantities.parse_quantity(text) == expected


@settings(max_examples=200)
@given(st.decimals(min_value=0, max_value=10**9, places=3, allow_nan=False))
def test_yaml_floats_are_read_through_their_decimal_text(value: Decimal) -> None:
    as_float = float(value)
    assert quantities.parse_quantity(as_float) == quantities.parse_quantity(repr(as_float))
    assert quantities.parse_quantity(as_float) == int(value * 1000)
