"""``publish``: turn one source revision into one commit on the rendered repository.

The order is what makes it safe: read the source completely, render completely in memory, check the
mass-delete guard on that complete render, commit in the local cache, and only then push. A failure or a kill
at any step before the push leaves the remote untouched; the push is atomic (a ref update).

Concurrency: publishers on different machines race on one branch. Each push is an ordinary fast-forward;
a rejected push (a non-fast-forward, or a push that lost the remote's ref lock to a concurrent one: see
``gitwriting.RETRYABLE_REJECTIONS``) means someone else published first, so we fetch their head, plan
again with *their* placement as the previous one (stickiness), render, commit and push again, a bounded
number of times. A publisher whose source revision is older than the one already rendered on the branch
(the branch head's ``Nova-Source-Revision`` descends from ours) stops and reports ``superseded``: the
branch always ends at a complete render of the newest source.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from nova_gitops import errors
from nova_gitops.api import progress as phases
from nova_gitops.clients import collection
from nova_gitops.publishing import (
    gitwriting,
    guard,
    messages,
    previousplacements,
    renderindex,
)
from nova_gitops.publishing.gitwriting import PushOutcome, RenderedRepo
from nova_gitops.rendering import diffs
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.scheduling.findings import Findings
from nova_gitops.scheduling.plans import PlanSettings
from nova_gitops.sources import gitsources
from nova_gitops.workflows import committing, renderers
from nova_gitops.workflows.gitprogress import git_progress

PR_PATCH_LIMIT = 200
PULL_REQUEST_REF = "refs/nova/pull-request"  # the cache's copy of the PR branch (the target's is elsewhere)


class Outcome(Enum):
    PUBLISHED = "published"
    UNCHANGED = "unchanged"  # the branch already holds this render: no commit
    SUPERSEDED = "superseded"  # the branch holds a render of a newer source revision: nothing to do


@dataclass(frozen=True, slots=True)
class PublishOptions:
    branch: str = "main"
    pull_request: bool = False
    max_delete_percent: int = guard.DEFAULT_MAX_DELETE_PERCENT
    allow_mass_delete: bool = False
    attempts: int = 5
    timeout: float = 120.0  # seconds for each network git command


@dataclass(frozen=True, slots=True)
class PublishResult:
    outcome: Outcome
    branch: str  # where the commit went (the PR branch with --pull-request)
    commit: str | None
    diff: diffs.RenderDiff
    source: SourceInfo
    message: str = ""
    pull_request_body: str | None = None
    attempts: int = 1
    head_revision: str | None = None  # the source revision already rendered on the branch, when superseded


@contextmanager
def opened_source(
    spec: str, *, cache_dir: Path, timeout: float, progress: phases.Progress = phases.NO_PROGRESS
) -> Iterator[gitsources.Checkout]:
    """SOURCE as a directory (read as it is) or ``git-url[@ref]`` (fetched into the cache, one revision)."""
    if not gitsources.is_git_spec(spec):
        yield gitsources.open_directory(Path(spec), with_blobs=True)
        return
    progress.phase(phases.GIT, f"fetching {spec}")
    hook = git_progress(progress, f"fetching {spec}")
    with gitsources.checkout(
        gitsources.parse_spec(spec), cache_dir=cache_dir, timeout=timeout, progress=hook
    ) as checkout:
        yield checkout


def render_for_head(
    repo: RenderedRepo,
    head: str | None,
    checkout: gitsources.Checkout,
    source: SourceInfo,
    render: renderers.RenderFiles,
    cache_dir: Path,
) -> committing.HeadChanges:
    """Render the source as changes to the branch head: incrementally when the renderer can and the head is a
    commit this machine published (its index is cached), otherwise in full and compared by hashing."""
    previous = previousplacements.read(repo, head, cache_dir)
    if isinstance(render, renderers.SourceRenderer):
        base = renderindex.load(cache_dir, head) if head is not None else None
        incremental = render.render_delta(checkout.root, source, previous, base, blobs=checkout.blobs)
        delta, placement = incremental.delta, incremental.placement
        update = committing.incremental_changes(delta, base, source, placement)
        if update is None:  # no index, or one not used (another renderer, damaged): compare
            update = committing.compared_changes(delta, repo.listing(head), source, placement)
        assert update is not None  # a render without a base emits every file
        return update
    listing = repo.listing(head)
    files = committing.with_repository_files(render(checkout.root, source, previous), source)
    compared = gitwriting.tree_changes(listing, files)
    return committing.HeadChanges(listing, files.keys(), compared, getattr(files, "placement", None), None)


def publish(
    source_spec: str,
    repo_url: str,
    *,
    render: renderers.RenderFiles,
    cache_dir: Path,
    options: PublishOptions = PublishOptions(),
    environ: Mapping[str, str] | None = None,
    on_committed: Callable[[str], None] | None = None,  # None except in tests (e.g. a kill before push)
    progress: phases.Progress = phases.NO_PROGRESS,  # git and write phases; the renderer tells its own
) -> PublishResult:
    """Render ``source_spec`` and publish it to ``options.branch`` of ``repo_url`` (see the module doc)."""
    environ = os.environ if environ is None else environ
    repo = RenderedRepo(
        gitwriting.cache_path(cache_dir, repo_url),
        repo_url,
        timeout=options.timeout,
        progress=git_progress(progress, f"git {repo_url}"),
    )
    opened = opened_source(source_spec, cache_dir=cache_dir, timeout=options.timeout, progress=progress)
    # the collector paused for the whole publish (``collection``): the render index and placement are
    # read and kept around the render, and the render's structures live until the push
    with opened as checkout, repo.locked(), _finishing(render), collection.paused():
        source = SourceInfo(checkout.repo, checkout.revision)
        for attempt in range(1, options.attempts + 1):
            result = publish_once(
                repo,
                checkout,
                source,
                render,
                options,
                environ,
                on_committed,
                attempt,
                cache_dir=cache_dir,
                progress=progress,
            )
            if result is not None:
                return result
            time.sleep(random.uniform(0.05, 0.2) * attempt)  # someone pushed first: let their push settle
    raise errors.RepoError(
        f"gave up publishing to {repo_url} {options.branch} after {options.attempts} attempts: other "
        f"publishers kept moving the branch (or a stale ref lock on the remote kept it locked); try again, "
        f"or run one publisher per branch"
    )


@dataclass(frozen=True, slots=True)
class SourcePublication:
    result: PublishResult
    findings: Findings  # what the published render's plan has to tell (``cli.notices``)


def publish_source(
    source_spec: str,
    repo_url: str,
    *,
    settings: PlanSettings,
    clusters_path: Path | None,
    cache_dir: Path | None,
    options: PublishOptions,
    environ: Mapping[str, str],
    progress: phases.Progress = phases.NO_PROGRESS,
) -> SourcePublication:
    """``nova-gitops publish``: ``publish`` with the real renderer (``renderers.default_render``), clones
    cached in ``cache_dir`` (default: ``gitsources.default_cache_dir``)."""
    caches = cache_dir or gitsources.default_cache_dir(environ)
    renderer = renderers.default_render(settings, clusters_path, cache_dir=caches, progress=progress)
    result = publish(
        source_spec,
        repo_url,
        render=renderer,
        cache_dir=caches,
        options=options,
        environ=environ,
        progress=progress,
    )
    return SourcePublication(result, renderer.findings)


@contextmanager
def _finishing(render: renderers.RenderFiles) -> Iterator[None]:
    """Wait for what the renderer still writes (``SourceRenderer.finish``), however the publish ends."""
    try:
        yield
    finally:
        if isinstance(render, renderers.SourceRenderer):
            render.finish()


def superseded_by(repo: RenderedRepo, head: str | None, checkout: gitsources.Checkout) -> str | None:
    """The newer source revision the branch head was rendered from, if it is newer than ours."""
    if head is None or checkout.revision is None or checkout.repository is None:
        return None
    theirs = messages.trailers(repo.message(head)).get("Nova-Source-Revision")
    if not theirs or theirs == checkout.revision:
        return None
    return theirs if checkout.repository.supersedes(checkout.revision, theirs) else None


def publish_once(
    repo: RenderedRepo,
    checkout: gitsources.Checkout,
    source: SourceInfo,
    render: renderers.RenderFiles,
    options: PublishOptions,
    environ: Mapping[str, str],
    on_committed: Callable[[str], None] | None,
    attempt: int,
    *,
    cache_dir: Path,
    progress: phases.Progress = phases.NO_PROGRESS,
) -> PublishResult | None:
    """One fetch → render → commit → push round; None when the push lost a race and must be redone."""
    progress.phase(phases.GIT, f"fetching {options.branch}")
    head = repo.fetch(options.branch)
    target = messages.pull_request_branch(source.revision) if options.pull_request else options.branch
    if not options.pull_request and (newer := superseded_by(repo, head, checkout)) is not None:
        return PublishResult(
            Outcome.SUPERSEDED, target, head, diffs.RenderDiff(), source, head_revision=newer
        )
    rendered = render_for_head(repo, head, checkout, source, render, cache_dir)
    committed = committing.commit_onto_head(
        repo,
        head,
        rendered,
        source,
        environ=environ,
        max_delete_percent=options.max_delete_percent,
        allow_mass_delete=options.allow_mass_delete,
        patch_limit=PR_PATCH_LIMIT if options.pull_request else 0,
        progress=progress,
    )
    if committed is None:
        body = None
        if options.pull_request:  # still a body: a CI step that reads --body-file must not break
            body = messages.unchanged_pull_request_body(
                source_repo=source.repo, source_revision=source.revision, branch=options.branch
            )
        return PublishResult(
            Outcome.UNCHANGED, options.branch, head, diffs.RenderDiff(), source, "", body, attempt
        )
    if on_committed is not None:
        on_committed(committed.commit)
    with committing.keeping_for_next(cache_dir, committed.commit, rendered.placement, rendered.index):
        return _push(repo, committed, source, target, options, attempt, progress)  # the keeping meanwhile


def _push(
    repo: RenderedRepo,
    committed: committing.Committed,
    source: SourceInfo,
    target: str,
    options: PublishOptions,
    attempt: int,
    progress: phases.Progress,
) -> PublishResult | None:
    """Push the commit to ``target`` (force-with-lease for a pull-request branch, unless it already holds
    this content); None when the push lost a race."""
    commit, diff, message = committed.commit, committed.diff, committed.message
    body = None
    progress.phase(phases.GIT, f"pushing {target}")
    if options.pull_request:
        body = messages.pull_request_body(
            diff, source_repo=source.repo, source_revision=source.revision, branch=options.branch
        )
        existing = repo.fetch(target, into=PULL_REQUEST_REF)
        if existing is not None and repo.same_content(existing, commit):  # a re-run: no new force-push
            return PublishResult(Outcome.UNCHANGED, target, existing, diff, source, message, body, attempt)
        outcome = repo.push(commit, target, lease=True, expect=existing)
    else:
        outcome = repo.push(commit, target)
    if outcome is PushOutcome.REJECTED:
        return None
    return PublishResult(Outcome.PUBLISHED, target, commit, diff, source, message, body, attempt)
