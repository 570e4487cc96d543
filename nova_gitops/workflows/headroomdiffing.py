"""``diff --headroom``: render each side as ``diff`` does, and plan each side's failover headroom too.

The renderer ``diff_revisions`` calls once per side (``RenderFiles``) loads, plans and renders the side like
``renderers.SourceRenderer`` and, with that side's plan and its memory, plans each loss
(``scheduling.headroom``): one load and one plan per side serve both the render and the headroom, which
then costs one what-if per cluster per side, each re-planning only what the loss touches, spread over
processes as ``nova-gitops headroom`` spreads them (``whatif.spread_over``). The head is
rendered on the base's placement (stickiness), so its headroom is that of the head as published on top of
the base. ``compare`` turns the two sides into the section ``diffformats`` shows
(``rendering.headroomdiffs``). With ``--headroom-domain``, a side none of whose clusters has the label
loses nothing (the change that labels the clusters is compared, not refused); neither side having it is
the flag's error.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from nova_gitops.api import progress as phases
from nova_gitops.rendering import headroomdiffs, reports
from nova_gitops.rendering.headroomdiffs import HeadroomDiff
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.scheduling import failover, findings, headroom
from nova_gitops.scheduling.plans import LossOutcome, PlanSettings, PreviousPlacement
from nova_gitops.sources.parsecache import ParseCache
from nova_gitops.workflows import rendering, whatif
from nova_gitops.workflows.renderers import RenderedFiles


class HeadroomRenderer:
    """A ``RenderFiles`` that also keeps each side's failover headroom (``sides``: base, then head) and,
    like ``SourceRenderer``, the findings of the last side rendered (the head's)."""

    def __init__(
        self,
        settings: PlanSettings,
        clusters_path: Path | None = None,
        *,
        domain: str | None = None,
        cache_dir: Path | None = None,
        progress: phases.Progress = phases.NO_PROGRESS,
        jobs: int | None = None,  # processes planning the losses (None: ``whatif.default_jobs``)
    ) -> None:
        self.jobs = whatif.default_jobs() if jobs is None else jobs
        self.settings = settings
        self.clusters_path = clusters_path
        self.domain = domain
        self.cache_dir = cache_dir
        self.progress = progress
        self.findings = findings.NONE
        self.sides: list[tuple[LossOutcome, ...]] = []
        self.unschedulable: list[tuple[str, ...]] = []  # each side's groups placed nowhere
        self.unlabelled: list[headroom.HeadroomError] = []  # the sides none of whose clusters has the domain

    def __call__(self, root: Path, source: SourceInfo, previous: PreviousPlacement) -> Mapping[str, bytes]:
        self.progress.phase(phases.LOAD)
        cache = ParseCache.for_source(self.cache_dir, source.repo) if self.cache_dir is not None else None
        source_set, digests = rendering.load_source_with_digests(
            root, self.clusters_path, parse_cache=cache, namespace=self.settings.namespace
        )
        self.progress.phase(phases.PLAN)
        plan = rendering.plan_source(
            source_set, previous=previous, settings=self.settings, file_digests=digests
        )
        self.findings = findings.findings_of(source_set, plan)
        self.progress.phase(phases.PLAN, "failover headroom: one plan per cluster")
        try:
            report = headroom.headroom(
                source_set,
                settings=self.settings,
                domain=self.domain,
                file_digests=digests,
                today=plan,
                mapper=whatif.spread_over(self.jobs),  # the losses over processes, as ``headroom`` does
            )
            outcomes = failover.outcomes(report)
        except headroom.HeadroomError as error:  # no cluster of this side has the domain: it loses nothing
            self.unlabelled.append(failover.as_flag(error))
            outcomes = ()
        self.sides.append(outcomes)
        self.unschedulable.append(
            tuple(group.name for group in plan.groups if group.status == "unschedulable")
        )
        self.progress.phase(phases.RENDER)
        tree = rendering.render_plan(plan, source_set, source)
        files = RenderedFiles(tree.files)
        files.placement = reports.previous_of(plan)
        files.waves = tree.waves
        return files

    def compared(self) -> HeadroomDiff:
        """The head's headroom against the base's (both sides rendered): a group the head places nowhere
        is no rescue, though no loss strands it there."""
        if len(self.unlabelled) >= 2:  # neither side has the domain: a typo, most likely
            raise self.unlabelled[-1]
        base, head = self.sides[-2:]
        return headroomdiffs.compare(base, head, down=self.unschedulable[-1])
