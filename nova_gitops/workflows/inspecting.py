"""What ``get`` and ``explain`` show, and the ScheduleGroups completion offers: a source loaded (with the
cluster reports) and planned, never rendered or written."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nova_gitops.api import inputs
from nova_gitops.scheduling import explaining
from nova_gitops.scheduling.plans import Plan, PlanSettings
from nova_gitops.workflows import rendering


@dataclass(frozen=True, slots=True)
class Planned:
    source_set: inputs.SourceSet
    plan: Plan | None  # None when only the source was asked for


def planned(
    source: str,
    *,
    clusters_path: Path | None,
    settings: PlanSettings,
    environ: Mapping[str, str],
    previous: str | None = None,
    plan: bool = True,
) -> Planned:
    """SOURCE (a directory or ``git-url[@ref]``) loaded with the Clusters under ``clusters_path`` laid over
    its own and, with ``plan``, planned with ``--previous`` (``rendering.read_previous``, relative to the
    current directory) for stickiness."""
    with rendering.opened_source(source, environ=environ) as (root, _):
        source_set = rendering.load_source(root, clusters_path, namespace=settings.namespace)
        if not plan:
            return Planned(source_set, None)
        before = rendering.read_previous(previous, repository_of=Path.cwd(), environ=environ)
        return Planned(source_set, rendering.plan_source(source_set, previous=before, settings=settings))


def explain(
    source: str,
    reference: str,
    *,
    clusters_path: Path | None,
    settings: PlanSettings,
    environ: Mapping[str, str],
    previous: str | None = None,
) -> dict[str, Any]:
    """Where the object ``reference`` (``KIND/[NAMESPACE/]NAME``) goes and why (``scheduling.explaining``)."""
    found = planned(
        source, clusters_path=clusters_path, settings=settings, environ=environ, previous=previous
    )
    assert found.plan is not None
    return explaining.explain(found.source_set, found.plan, reference)


def group_names(root: Path) -> list[str]:
    """The ScheduleGroups of the source directory ``root``, planned afresh with the default settings;
    ``InputError`` when it does not validate."""
    plan = rendering.plan_source(rendering.load_source(root))
    return [group.name for group in plan.groups]
