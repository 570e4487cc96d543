"""What the fake's controllers do "a while later" (namespace finalization, garbage collection): each action
runs on a daemon timer `delay` seconds after it was asked for (at once when `delay` is 0), under the store
lock, and never once the server stopped."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

RETRY_DELAY = 0.05  # seconds before a controller looks again at something still held (finalizers)


class Delayed:
    def __init__(self, lock: threading.RLock, delay: float) -> None:
        self.lock = lock
        self.delay = delay
        self._timers: list[threading.Timer] = []
        self._stopped = False

    def later(self, action: Callable[..., Any], *args: Any) -> None:
        """Run `action(*args)` after `delay` (now when it is 0)."""
        self._after(self.delay, action, args)

    def retry(self, action: Callable[..., Any], *args: Any) -> None:
        """Run `action(*args)` again soon, even when `delay` is 0: what it waits for is someone else's."""
        self._after(max(self.delay, RETRY_DELAY), action, args)

    def stop(self) -> None:
        self._stopped = True
        for timer in self._timers:
            timer.cancel()

    def _after(self, delay: float, action: Callable[..., Any], args: tuple[Any, ...]) -> None:
        if delay <= 0:
            self._run(action, *args)
            return
        timer = threading.Timer(delay, self._run, (action, *args))
        timer.daemon = True
        self._timers = [t for t in self._timers if t.is_alive()] + [timer]
        timer.start()

    def _run(self, action: Callable[..., Any], *args: Any) -> None:
        if not self._stopped:
            with self.lock:
                action(*args)
