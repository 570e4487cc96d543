"""``diff``: what a change does to placement, between two renders on disk or two revisions of a source.

Two directories: ``publishing.treecomparing`` finds the files whose bytes differ and only those are parsed
(``rendering.diffs``).

Two revisions: the base is rendered afresh and the head is rendered with the base's placement as its
previous placement, which is what publishing the head on top of the base would do (stickiness); the diff
therefore shows the moves the change itself causes, not a reshuffle of everything. When the head's source
has a RolloutStrategy, the diff carries the change's wave plan (``rollouts.plans``): the waves are the
head's (its strategy over its clusters), and the clusters it changes are those whose rendered directory
differs. Two directories carry no plan: a render records neither the strategy nor the Clusters' labels.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from nova_gitops import errors
from nova_gitops.api import progress as phases
from nova_gitops.publishing import treecomparing
from nova_gitops.rendering import diffs, schedulegroups
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.rollouts import plans
from nova_gitops.scheduling.findings import Findings
from nova_gitops.scheduling.plans import PlanSettings, PreviousPlacement
from nova_gitops.sources import gitsources
from nova_gitops.workflows import headroomdiffing, renderers
from nova_gitops.workflows.renderers import RenderedFiles, RenderFiles


def diff_directories(
    old: Path, new: Path, *, progress: phases.Progress = phases.NO_PROGRESS
) -> diffs.RenderDiff:
    """Compare two renders on disk (``diff OLD_DIR NEW_DIR``)."""
    progress.phase(phases.DIFF, f"{old} → {new}")
    try:
        return diffs.diff_renders(treecomparing.directory_changes(old, new))
    except diffs.UnreadablePlacement as error:
        where = old if error.side == "old" else new
        raise errors.UserError(
            f"{where / error.path}: {error.reason}; not a render nova-gitops wrote"
        ) from None


@dataclass(frozen=True, slots=True)
class SourceDiff:
    diff: diffs.RenderDiff
    findings: Findings  # what the head's plan has to tell (``cli.notices``)


def diff_source(
    source: str,
    base: str,
    head: str | None,
    *,
    settings: PlanSettings,
    clusters_path: Path | None,
    cache_dir: Path | None,
    environ: Mapping[str, str],
    timeout: float = 120.0,
    progress: phases.Progress = phases.NO_PROGRESS,
    headroom: bool = False,
    domain: str | None = None,
) -> SourceDiff:
    """``diff --source``: ``diff_revisions`` with the real renderer (``renderers.default_render``), git
    sources cached in ``cache_dir`` (default: ``gitsources.default_cache_dir``). With ``headroom``
    (``--headroom``), each side's failover headroom too (``headroomdiffing``; ``domain``: its
    ``--headroom-domain``), compared in the diff's ``headroom``."""
    caches = cache_dir or gitsources.default_cache_dir(environ)
    renderer: renderers.SourceRenderer | headroomdiffing.HeadroomRenderer
    if headroom:
        renderer = headroomdiffing.HeadroomRenderer(
            settings, clusters_path, domain=domain, cache_dir=caches, progress=progress
        )
    else:
        renderer = renderers.default_render(settings, clusters_path, cache_dir=caches, progress=progress)
    result = diff_revisions(
        source, base, head, render=renderer, cache_dir=caches, timeout=timeout, progress=progress
    )
    if isinstance(renderer, headroomdiffing.HeadroomRenderer):
        result = dataclasses.replace(result, headroom=renderer.compared())
    return SourceDiff(result, renderer.findings)  # the head's findings: it is rendered last


@contextmanager
def revision_of(source: str, ref: str, *, cache_dir: Path, timeout: float) -> Iterator[gitsources.Checkout]:
    path = Path(source)
    if path.is_dir() and not gitsources.is_bare_repository(path):
        with gitsources.checkout_local(path, ref) as checkout:
            yield checkout
        return
    spec = gitsources.GitSpec(gitsources.parse_spec(source).url, ref)
    with gitsources.checkout(spec, cache_dir=cache_dir, timeout=timeout) as checkout:
        yield checkout


def diff_revisions(
    source: str,
    base: str,
    head: str | None,
    *,
    render: RenderFiles,
    cache_dir: Path,
    timeout: float = 120.0,
    progress: phases.Progress = phases.NO_PROGRESS,  # git and diff phases; the renderer tells its own
) -> diffs.RenderDiff:
    """Render ``source`` at ``base`` and at ``head`` (the work tree when None) and compare the renders."""
    if head is None and not (Path(source).is_dir() and not gitsources.is_bare_repository(Path(source))):
        raise errors.UserError(f"{source} has no work tree: give --head as well as --base")
    with ExitStack() as stack:
        progress.phase(phases.GIT, f"checking out {base}")
        base_checkout = stack.enter_context(revision_of(source, base, cache_dir=cache_dir, timeout=timeout))
        if head is None:
            head_checkout = gitsources.open_directory(Path(source))
        else:
            progress.phase(phases.GIT, f"checking out {head}")
            head_checkout = stack.enter_context(
                revision_of(source, head, cache_dir=cache_dir, timeout=timeout)
            )
        repo = base_checkout.repo
        old = render(base_checkout.root, SourceInfo(repo, base_checkout.revision), PreviousPlacement.empty())
        previous = old.placement if isinstance(old, RenderedFiles) else None
        if previous is None:  # a renderer that does not say: read the render's group files back
            previous = schedulegroups.previous_from_files(old)
        new = render(head_checkout.root, SourceInfo(repo, head_checkout.revision), previous)
    progress.phase(phases.DIFF)
    changes = diffs.changed_files(old, new)
    result = diffs.diff_renders(changes)
    waves = new.waves if isinstance(new, RenderedFiles) else ()
    if not waves:
        return result
    return dataclasses.replace(result, rollout=plans.plan_change(waves, diffs.touched_clusters(changes)))
