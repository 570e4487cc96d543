"""The shared back-off: doubling from ``base``, capped, jitter only lengthens and never past the cap, and a
schedule is a function of the injected clock reading and random source only (no wall clock, no global
random state)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.clients.backoff import Backoff, no_jitter


def test_delays_double_from_base_up_to_the_cap() -> None:
    backoff = Backoff(base=5.0, cap=60.0)
    assert [backoff.delay(attempt) for attempt in range(0, 7)] == [0.0, 5.0, 10.0, 20.0, 40.0, 60.0, 60.0]


def test_a_long_outage_stays_at_the_cap() -> None:
    assert Backoff(base=2.0, cap=300.0).delay(10_000) == 300.0


def test_jitter_comes_from_the_injected_source() -> None:
    backoff = Backoff(base=10.0, cap=1000.0, jitter=0.1)
    assert backoff.delay(1, lambda: 0.5) == 10.5
    assert backoff.delay(2, lambda: 0.0) == 20.0
    assert backoff.delay(1) == 10.0  # no source: no jitter


def test_the_same_seed_gives_the_same_schedule() -> None:
    backoff = Backoff(base=1.0, cap=100.0, jitter=0.25)
    first, again = random.Random("c1").random, random.Random("c1").random
    assert [backoff.delay(n, first) for n in range(1, 9)] == [backoff.delay(n, again) for n in range(1, 9)]


def test_retry_at_is_the_clock_reading_plus_the_delay() -> None:
    backoff = Backoff(base=3.0, cap=100.0, jitter=0.5)
    assert backoff.retry_at(2, now=1000.0) == 1006.0
    assert backoff.retry_at(2, now=1000.0, random=lambda: 1.0) == 1009.0


@settings(max_examples=200)
@given(
    st.integers(1, 80),
    st.floats(0.01, 100),
    st.floats(1, 1000),
    st.floats(0, 1),
    st.floats(0, 0.999),
)
def test_jitter_lengthens_within_its_fraction_and_never_past_the_cap(
    attempt: int, base: float, cap: float, jitter: float, draw: float
) -> None:
    plain = Backoff(base, cap)
    jittered = Backoff(base, cap, jitter)
    delay = jittered.delay(attempt, lambda: draw)
    assert 0 < plain.delay(attempt) <= delay <= min(cap, plain.delay(attempt) * (1 + jitter))
    assert plain.delay(attempt + 1) >= plain.delay(attempt)
    assert jittered.delay(attempt, no_jitter) == plain.delay(attempt)
