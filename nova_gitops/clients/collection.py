"""The cyclic garbage collector paused while a load, a plan or a publish builds or reads large structures.

Loading a source, planning and rendering make a few hundred thousand objects that live until the publish
ends and hold almost no reference cycles (reference counting frees the rest). Left running, the collector
scans the growing heap again and again: measured on the reference fleet, a plan from memory took 0.65 s
with it paused and 0.6–1.4 s with it running, depending on how much the process held already. It is
paused only around such phases and restored after, whatever happens.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
