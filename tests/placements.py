"""A rendered repository's decisions in one mapping, for tests that check where groups went.

The rendered repository keeps one file per group (``placement/<policy>/<group>.yaml``) and a small index
(``placement.yaml``). Tests that ask "which clusters did this group get" read both here into the shape the
single-file placement.yaml had: ``groups`` (each with ``name``, ``policy``, ``groupBy``, ``mode``, ``status``,
``clusters``, ``reason``, ``objects``, and ``requests`` and ``warnings`` when present), ``unscheduled`` and
``warnings`` (the index's, then each group's prefixed with its name, as the plan lists them).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml


def read(root: Path) -> dict[str, Any]:
    """The decisions of the render in ``root``."""
    files = {"placement.yaml": (root / "placement.yaml").read_bytes()}
    for path in sorted((root / "placement").glob("*/*.yaml")):
        files[path.relative_to(root).as_posix()] = path.read_bytes()
    return from_files(files)


def from_files(files: Mapping[str, bytes]) -> dict[str, Any]:
    """The decisions of a render given as path → bytes (only its placement files are read)."""
    index = yaml.load(files["placement.yaml"], Loader=yaml.CSafeLoader)
    groups = [
        flat(yaml.load(data, Loader=yaml.CSafeLoader))
        for path, data in sorted(files.items())
        if path.startswith("placement/") and path.endswith(".yaml")
    ]
    groups.sort(key=lambda group: group["name"])
    warnings = list(index.get("warnings") or [])
    warnings += [f"{group['name']}: {warning}" for group in groups for warning in group.get("warnings", [])]
    return {**index, "groups": groups, "warnings": warnings}


def flat(document: dict[str, Any]) -> dict[str, Any]:
    """A group file's document as the single-file layout's group entry."""
    status = document["status"]
    entry: dict[str, Any] = {
        "name": document["metadata"]["name"],
        "policy": document["policy"]["name"],
        "groupBy": document["groupBy"],
        "mode": status["mode"],
        "status": status["phase"],
        "clusters": status["clusters"],
        "reason": status["reason"],
        "objects": document["objectRefs"],
    }
    for key in ("requests", "warnings"):
        if key in status:
            entry[key] = status[key]
    return entry
