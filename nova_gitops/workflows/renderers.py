"""The renderer a publish or a diff calls: read, validate, plan and render a source in memory.

``SourceRenderer`` renders every file (``RenderFiles``) or, for an incremental publish, only what changed
since the render an index describes (``rendering.increments``); ``renderer_digest`` says which code made an
index, so that one made by other code is not trusted. ``render_changes`` is how that render is made, for the
renderer and the controller's reconcile alike.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from nova_gitops import api
from nova_gitops import rendering as rendering_package
from nova_gitops.api import inputs
from nova_gitops.api import progress as phases
from nova_gitops.clients import codedigests, collection
from nova_gitops.publishing import planmemory
from nova_gitops.rendering import increments, reports
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.rollouts.waves import Wave
from nova_gitops.scheduling import findings
from nova_gitops.scheduling.plans import Plan, PlanSettings, PreviousPlacement
from nova_gitops.sources.parsecache import ParseCache
from nova_gitops.workflows import rendering

RenderFiles = Callable[[Path, SourceInfo, PreviousPlacement], Mapping[str, bytes]]


class RenderedFiles(dict[str, bytes]):
    """The files of a render, with the placement its group files record, so that publish can cache it
    without parsing them back (``publishing.placementcache``), and the waves of the source's RolloutStrategy
    (empty without one), which ``diff`` plans a change over."""

    placement: PreviousPlacement | None = None
    waves: tuple[Wave, ...] = ()


@dataclass(frozen=True, slots=True)
class IncrementalRender:
    """A render as changes to the previous one (``rendering.increments``) and the placement it records."""

    delta: increments.RenderDelta
    placement: PreviousPlacement


class SourceRenderer:
    """The real renderer: read, validate, plan and render a source directory in memory.

    Called, it renders every file (``RenderFiles``); ``render_delta`` renders only what changed since the
    render an index describes, which is what makes an incremental publish fast. With ``cache_dir``, files seen
    before with the same bytes are not parsed again (``sources.parsecache``)."""

    def __init__(
        self,
        settings: PlanSettings,
        clusters_path: Path | None = None,
        *,
        cache_dir: Path | None = None,
        progress: phases.Progress = phases.NO_PROGRESS,
    ) -> None:
        self.settings = settings
        self.clusters_path = clusters_path
        self.cache_dir = cache_dir
        self.progress = progress  # told of the load, plan and render phases
        self._keeping: threading.Thread | None = None  # writing the last plan's memory
        self.findings = findings.NONE
        """What the last render's plan has to tell (``cli.notices``): for ``diff``, the head's, rendered
        last; for ``publish``, the render it published."""

    def __call__(self, root: Path, source: SourceInfo, previous: PreviousPlacement) -> Mapping[str, bytes]:
        tree, self.findings = rendering.render_source(
            root,
            source=source,
            previous=previous,
            settings=self.settings,
            clusters_path=self.clusters_path,
            parse_cache=self._parse_cache(source),
            progress=self.progress,
        )
        files = RenderedFiles(tree.files)
        files.placement = reports.previous_of(tree.plan)
        files.waves = tree.waves
        return files

    def render_delta(
        self,
        root: Path,
        source: SourceInfo,
        previous: PreviousPlacement,
        base: increments.RenderIndex | None,
        *,
        blobs: Mapping[str, str] | None = None,
    ) -> IncrementalRender:
        """Read and validate in full, plan what changed (``scheduling.memory``), render only what changed
        since ``base`` (all when None). ``blobs`` (a git export's, ``gitsources.Checkout.blobs``) spares
        reading files the parse cache holds."""
        with collection.paused():
            return self._render_delta(root, source, previous, base, blobs)

    def _render_delta(
        self,
        root: Path,
        source: SourceInfo,
        previous: PreviousPlacement,
        base: increments.RenderIndex | None,
        blobs: Mapping[str, str] | None,
    ) -> IncrementalRender:
        self.progress.phase(phases.LOAD)
        source_set, digests = rendering.load_source_with_digests(
            root,
            self.clusters_path,
            parse_cache=self._parse_cache(source),
            namespace=self.settings.namespace,
            blobs=blobs,
        )
        self.progress.phase(phases.PLAN)
        self.finish()  # the memory an earlier render of this renderer is still writing
        recalled = planmemory.load(self.cache_dir, source.repo) if self.cache_dir is not None else None
        plan = rendering.plan_source(
            source_set, previous=previous, settings=self.settings, recalled=recalled, file_digests=digests
        )
        self.findings = findings.findings_of(source_set, plan)
        self.progress.phase(phases.RENDER)
        delta = render_changes(plan, source_set, source, base, digests)
        if self.cache_dir is not None and plan.memory is not None:  # kept while git commits and pushes
            self._keeping = threading.Thread(
                target=planmemory.store,
                args=(self.cache_dir, source.repo, plan.memory, recalled),
                name="nova-plan-memory",
            )
            self._keeping.start()
        return IncrementalRender(delta, reports.previous_of(plan))

    def finish(self) -> None:
        """Wait until the last plan's memory is kept. It is written while the render is committed and
        pushed (git works in processes of its own, so both cores work; written while the render is emitted,
        it held the interpreter from it); ``publish`` waits for it before it returns."""
        if self._keeping is not None:
            self._keeping.join()
            self._keeping = None

    def _parse_cache(self, source: SourceInfo) -> ParseCache | None:
        return ParseCache.for_source(self.cache_dir, source.repo) if self.cache_dir is not None else None


def default_render(
    settings: PlanSettings,
    clusters_path: Path | None = None,
    *,
    cache_dir: Path | None = None,
    progress: phases.Progress = phases.NO_PROGRESS,
) -> SourceRenderer:
    """The real renderer (``SourceRenderer``), telling ``progress`` of its load, plan and render phases."""
    return SourceRenderer(settings, clusters_path, cache_dir=cache_dir, progress=progress)


def render_changes(
    plan: Plan,
    source_set: inputs.SourceSet,
    source: SourceInfo,
    base: increments.RenderIndex | None,
    digests: Mapping[str, str],
) -> increments.RenderDelta:
    """``plan``'s render as changes to the render ``base`` describes (``rendering.increments``; everything
    when None), known by this code's digest: how publish and the controller's reconcile both render, the
    same bytes as ``rendering.render_plan``."""
    return increments.render_delta(
        plan,
        source,
        base,
        digests=digests,
        salt=renderer_digest(),
        policy_locations=rendering.policy_locations(source_set),
        waves=rendering.rollout_waves(source_set),
    )


@functools.cache
def renderer_digest() -> str:
    """A digest of the code that turns a plan into bytes (the api and rendering packages): an index made by
    other code — an upgrade, a local change — is not trusted to describe what this code renders."""
    return codedigests.package_digest(api, rendering_package)
