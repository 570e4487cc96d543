"""The previous render's placement, cached by the git blob id of its placement.yaml.

Stickiness needs the placement of the branch head. At the reference size placement.yaml is ~5 MB and takes
~1.5 s to parse, which alone would blow an incremental publish's budget; but the publish that committed it
knew the placement already. So each publish stores what it committed under the new blob's id, and the next one
loads it in milliseconds. A blob id names exact bytes, so an entry can never be stale; a missing or unreadable
entry just means parsing the file as before.
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


def load(cache_dir: Path, blob_id: str) -> PreviousPlacement | None:
    try:
        with open(_directory(cache_dir) / f"{blob_id}.pickle", "rb") as cached:
            found = pickle.load(cached)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError):
        return None
    return found if isinstance(found, PreviousPlacement) else None


def store(cache_dir: Path, blob_id: str, placement: PreviousPlacement) -> None:
    """Keep ``placement`` under ``blob_id``, written atomically, old entries pruned; never fails a publish."""
    with contextlib.suppress(pickle.PicklingError):
        data = pickle.dumps(placement, protocol=pickle.HIGHEST_PROTOCOL)
        cachefiles.store(_directory(cache_dir), f"{blob_id}.pickle", data, kept=KEPT_ENTRIES)
