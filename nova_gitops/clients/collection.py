"""The cyclic garbage collector paused while a load, a plan or a publish builds or reads large structures.

Loading a source, planning and rendering make a few hundred thousand objects that live until the publish
ends and hold almost no reference cycles (reference counting frees the rest). Left running, the collector
scans the growing heap again and again: measured on the reference fleet, a plan from memory took 0.65 s
with it paused and 0.6–1.4 s with it running, depending on how much the process held already. It is
paused only around such phases and restored after, whatever happens.

Threads may pause it at once (the controller's reconcile, and its web view building a page of a big fleet):
the collector is paused while any of them is inside ``paused`` and set back as the first found it only when
the last leaves, so one thread's end never turns it on under another's phase.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_inside = 0  # threads inside ``paused`` now
_was_enabled = False  # the collector's state when the first of them came in


@contextlib.contextmanager
def paused() -> Iterator[None]:
    global _inside, _was_enabled
    with _lock:
        if _inside == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0 and _was_enabled:
                gc.enable()
