"""``api.durations``: the one duration syntax of every time flag of ``nova-gitops`` and ``nova-agent``.

Behaviours covered:
- ``30s``, ``2m``, ``1h30m``, ``500ms``, decimals (``1.5h``) and plain seconds (``0.3``, ``120``) parse;
- anything else (empty, a space inside, a sign, an unknown unit, a trailing bare number) is a
  ``DurationError`` that quotes the text and shows examples; more than a year is refused;
- ``format_seconds`` writes the shortest text that parses back to the same milliseconds (property).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nova_gitops.api import durations


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30s", 30.0),
        ("2m", 120.0),
        ("1h30m", 5400.0),
        ("1h0m5s", 3605.0),
        ("500ms", 0.5),
        ("1m0.5s", 60.5),
        ("1.5h", 5400.0),
        ("0.3", 0.3),
        ("120", 120.0),
        (" 10s ", 10.0),
        ("0", 0.0),
    ],
)
def test_durations_parse(text: str, seconds: float) -> None:
    assert durations.parse_seconds(text) == pytest.approx(seconds)
    assert durations.parse_duration(text) == timedelta(seconds=durations.parse_seconds(text))


@pytest.mark.parametrize("text", ["", "s", "ms", "5x", "1h 30m", "-1s", "+1s", "1m30", "30 s", "1d", "1e3s"])
def test_anything_else_is_refused_with_examples(text: str) -> None:
    with pytest.raises(durations.DurationError) as raised:
        durations.parse_seconds(text)
    assert repr(text) in str(raised.value)
    assert "30s, 2m, 1h30m" in str(raised.value)


def test_more_than_a_year_is_a_typo() -> None:
    with pytest.raises(durations.DurationError, match="longer than a year"):
        durations.parse_seconds("30000000000")


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0s"), (0.3, "300ms"), (30, "30s"), (120, "2m"), (600, "10m"), (5400, "1h30m"), (60.5, "1m0.5s")],
)
def test_format_seconds_is_what_a_person_types(seconds: float, text: str) -> None:
    assert durations.format_seconds(seconds) == text


@given(st.integers(min_value=0, max_value=int(durations.MAX_SECONDS) * 1000))
def test_format_then_parse_is_the_identity_to_the_millisecond(millis: int) -> None:
    text = durations.format_seconds(millis / 1000)
    assert round(durations.parse_seconds(text) * 1000) == millis
