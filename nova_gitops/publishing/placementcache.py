"""The previous render's placement, cached by the git id of what records it (``previousplacements``).

Stickiness needs the placement of the branch head. At the reference size it is thousands of group files, whose
parsing alone would blow an incremental publish's budget; but the publish that committed them knew the
placement already. So each publish stores what it committed under the new commit's id, and the next one loads
it at a fraction of the cost. A git id names exact content, so an entry can never be stale; a missing or
unreadable entry just means reading the files as before. (Before the per-group layout, entries were kept under
the blob id of the single placement.yaml; such an entry is still found under that id.)
"""

from __future__ import annotations

import contextlib
import pickle
from pathlib import Path

from nova_gitops.publishing import cachefiles
from nova_gitops.scheduling.plans import PreviousPlacement

KEPT_ENTRIES = 8
"""Entries kept per cache directory: the newest few heads of the branches published from this machine."""


def _directory(cache_dir: Path) -> Path:
    return cache_dir / "placements"


def load(cache_dir: Path, key: str) -> PreviousPlacement | None:
    """The placement kept under ``key`` (a commit id, or an older version's placement.yaml blob id)."""
    try:
        with open(_directory(cache_dir) / f"{key}.pickle", "rb") as cached:
            found = pickle.load(cached)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError):
        return None
    return found if isinstance(found, PreviousPlacement) else None


def store(cache_dir: Path, key: str, placement: PreviousPlacement) -> None:
    """Keep ``placement`` under ``key``, written atomically, old entries pruned; never fails a publish."""
    with contextlib.suppress(pickle.PicklingError):
        data = pickle.dumps(placement, protocol=pickle.HIGHEST_PROTOCOL)
        cachefiles.store(_directory(cache_dir), f"{key}.pickle", data, kept=KEPT_ENTRIES)
