"""Render a source directory: read → validate → plan → render, all in memory, nothing written."""

from __future__ import annotations

from pathlib import Path

from nova_gitops.rendering.renders import RenderedTree
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.scheduling.plans import PlanSettings, PreviousPlacement


def render_source(
    root: Path,
    *,
    source: SourceInfo,
    previous: PreviousPlacement,
    settings: PlanSettings,
    clusters_path: Path | None = None,
) -> RenderedTree:
    """Read ``root``, validate it (``errors.InputError`` lists every problem), plan, and render in memory."""
    raise NotImplementedError
