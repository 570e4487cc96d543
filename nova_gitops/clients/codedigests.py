"""A digest of the code of some packages, so that a cache made by other code is not trusted.

A cache entry says what *this* code makes of its inputs (a parse, a plan, a render); after an upgrade or a
local change the same inputs may give something else. Each cache records the digest of the packages whose
code it depends on and ignores entries made under another, whether or not someone bumped a format number.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import ModuleType


def package_digest(*packages: ModuleType) -> str:
    """SHA-256 over the name and bytes of every ``.py`` file of each package, in name order."""
    digest = hashlib.sha256()
    for package in packages:
        for path in sorted(Path(package.__file__ or "").parent.glob("*.py")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()
