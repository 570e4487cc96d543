"""The index of each render publish committed (``rendering.increments``), cached by the commit's id.

An incremental publish renders only what changed since the render on the branch head, so it needs that
render's index. The publish that made the head commit had it; it stores it here under the commit id, and
the next publish loads it when the branch head is that commit. A commit id names an exact tree, so an entry
is never stale; a head made elsewhere (another machine, a hand edit) has no entry, and publish renders in
full, as it did before there was an index. The index of a reference render is ~15 MB: a few are kept.
"""

from __future__ import annotations

from pathlib import Path

from nova_gitops.publishing import cachefiles
from nova_gitops.rendering.increments import RenderIndex

KEPT_ENTRIES = 3
"""Indexes kept per cache directory: the heads of the last few publishes from this machine."""


def _directory(cache_dir: Path) -> Path:
    return cache_dir / "render-index"


def load(cache_dir: Path, commit: str) -> RenderIndex | None:
    """The index stored for ``commit``; None when there is none or it cannot be read."""
    try:
        data = (_directory(cache_dir) / f"{commit}.bin").read_bytes()
    except OSError:
        return None
    return RenderIndex.from_wire(data)


def store(cache_dir: Path, commit: str, index: RenderIndex) -> None:
    """Keep ``index`` under ``commit``, written atomically, old entries pruned; never fails a publish."""
    cachefiles.store(_directory(cache_dir), f"{commit}.bin", index.to_wire(), kept=KEPT_ENTRIES)
