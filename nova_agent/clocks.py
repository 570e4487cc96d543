"""The clock, injected: the agent's timing (intervals, backoff, pending timeouts, heartbeats) reads time only
through a :class:`Clock`, so tests drive it with :class:`FakeClock` and never sleep."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...

    def sleep(self, seconds: float) -> bool:
        """Wait ``seconds``; False when asked to stop meanwhile."""
        ...


class SystemClock:
    """Wall-clock time; :meth:`stop` wakes a sleeping loop (SIGTERM handling)."""

    def __init__(self) -> None:
        self._stopped = threading.Event()

    def now(self) -> datetime:
        return datetime.now(UTC)

    def sleep(self, seconds: float) -> bool:
        return not self._stopped.wait(max(0.0, seconds))

    def stop(self) -> None:
        self._stopped.set()


class FakeClock:
    """A clock tests move by hand; :meth:`sleep` advances it and records the delay."""

    def __init__(self, start: datetime | None = None, stop_after_sleeps: int | None = None) -> None:
        self.current = start or datetime(2026, 1, 1, tzinfo=UTC)
        self.sleeps: list[float] = []
        self.stop_after_sleeps = stop_after_sleeps

    def now(self) -> datetime:
        return self.current

    def advance(self, seconds: float) -> None:
        self.current += timedelta(seconds=seconds)

    def sleep(self, seconds: float) -> bool:
        self.sleeps.append(seconds)
        self.advance(seconds)
        return self.stop_after_sleeps is None or len(self.sleeps) < self.stop_after_sleeps
