"""The manifests under deploy/, built as ``kubectl kustomize`` builds them (skipped without kubectl)."""

from __future__ import annotations

import copy
import functools
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")


@functools.cache
def _built(directory: str) -> tuple[dict[str, Any], ...]:
    assert KUBECTL is not None
    result = subprocess.run(
        [KUBECTL, "kustomize", str(DEPLOY / directory)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return tuple(d for d in yaml.load_all(result.stdout, Loader=yaml.CSafeLoader) if d)


def build(directory: str) -> list[dict[str, Any]]:
    """The objects ``deploy/<directory>`` builds to (a fresh list; each directory is built once a run)."""
    return copy.deepcopy(list(_built(directory)))
