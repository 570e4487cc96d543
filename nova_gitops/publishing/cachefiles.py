"""Writing an entry of one of publish's caches (placements, render indexes): atomically, newest few kept.

A cache entry is named by what it describes (a blob id, a commit id), so it is written once and never
changes; a reader sees the whole file or none. A cache must never fail a publish: I/O errors are swallowed
and the entry is simply missing next time.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def store(directory: Path, name: str, data: bytes, *, kept: int) -> None:
    """Write ``data`` to ``directory/name`` atomically, then delete all but the ``kept`` newest entries with
    the same suffix; never raises ``OSError``."""
    suffix = Path(name).suffix
    with contextlib.suppress(OSError):
        directory.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, directory / name)
        entries = sorted(directory.glob(f"*{suffix}"), key=lambda path: path.stat().st_mtime, reverse=True)
        for stale in entries[kept:]:
            stale.unlink(missing_ok=True)
