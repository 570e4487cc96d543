"""The one back-off: exponential growth from ``base``, capped at ``cap``, with optional jitter.

Every retry of the agent and the controller asks this for its delay, so the formula lives once. It reads
neither the wall clock nor the process-wide random generator: time comes in as ``now`` (a reading of the
caller's injected clock) and jitter from a ``random`` source the caller passes
(``random.Random(seed).random``, or a constant in tests), so every schedule is reproducible.

Jitter only ever lengthens a delay (by up to ``jitter`` of it, never past ``cap``): processes that failed
together (agents of a fleet whose git host went down) then spread out instead of retrying in lock-step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

RandomSource = Callable[[], float]
"""A number in [0, 1) per call, e.g. the bound method ``random.Random(seed).random``."""

MAX_DOUBLINGS: Final = 30
"""Doubling stops here so a long outage cannot overflow a float; ``cap`` has long applied by then."""


def no_jitter() -> float:
    """A random source that always answers 0: the delay without jitter."""
    return 0.0


@dataclass(frozen=True, slots=True)
class Backoff:
    """``base * 2**(attempt-1)`` seconds, at most ``cap``, lengthened by up to ``jitter`` (0.1 = 10%)."""

    base: float
    cap: float
    jitter: float = 0.0

    def delay(self, attempt: int, random: RandomSource = no_jitter) -> float:
        """Seconds to wait after the ``attempt``-th failure in a row (0 before any failure)."""
        if attempt <= 0:
            return 0.0
        delay = min(self.cap, self.base * 2.0 ** min(attempt - 1, MAX_DOUBLINGS))
        if self.jitter:
            delay = min(self.cap, delay * (1.0 + self.jitter * random()))
        return delay

    def retry_at(self, attempt: int, now: float, random: RandomSource = no_jitter) -> float:
        """When, on the caller's clock (``now`` is its reading), the next attempt may start."""
        return now + self.delay(attempt, random)
