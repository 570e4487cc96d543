"""Committing a render onto a branch head: the one way ``publish`` and the controller make a commit.

A render arrives as changes to the head (``HeadChanges``: the part of the head's tree looked at, the new
tree's paths, what to write and delete); ``commit_onto_head`` compares it with the head (reading only the
old blobs that change), stops when nothing but bookkeeping changes, runs the mass-delete guard, writes the
commit message and commits in the local cache. Pushing is the caller's: ``publish`` may push a pull-request
branch, the controller checks its leadership first.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from nova_gitops import errors
from nova_gitops.api import progress as phases
from nova_gitops.publishing import gitwriting, guard, messages, placementcache, renderindex
from nova_gitops.publishing.gitwriting import RenderedRepo
from nova_gitops.rendering import diffs, increments, oldlayout, reports
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.scheduling.plans import PreviousPlacement

README_FILE = "README.md"


def with_repository_files(files: Mapping[str, bytes], source: SourceInfo) -> dict[str, bytes]:
    """The render plus what every rendered repository carries: README.md and .gitattributes."""
    complete = dict(files)
    complete.setdefault(README_FILE, messages.readme(source.repo))
    complete.setdefault(".gitattributes", reports.GITATTRIBUTES.encode())
    return complete


def layout_notes(file_changes: Collection[diffs.FileChange]) -> tuple[str, ...]:
    """The commit message's note when the commit converts a repository from the single-file placement.yaml
    to one file per group (docs/design.md §4): the first publish after the upgrade does, in one commit."""
    converts = any(
        change.path == diffs.PLACEMENT_FILE
        and change.old is not None
        and oldlayout.is_single_file(change.old)
        for change in file_changes
    )
    return (messages.LAYOUT_NOTE,) if converts else ()


@dataclass(frozen=True, slots=True)
class Comparison:
    """A render against the branch head: which files change, with their old and new bytes."""

    listing: Mapping[str, str]
    changes: gitwriting.TreeChanges
    file_changes: list[diffs.FileChange]

    @property
    def unchanged(self) -> bool:
        """No file changes, or only bookkeeping (source revision, capacity figures): nothing to commit."""
        return self.changes.is_empty or diffs.bookkeeping_only(self.file_changes)


def compare_with_head(
    repo: RenderedRepo, listing: Mapping[str, str], files: Mapping[str, bytes]
) -> Comparison:
    """Compare ``files`` with the head's ``listing``, reading only the old blobs that changed."""
    return comparison_of(repo, listing, gitwriting.tree_changes(listing, files))


def comparison_of(
    repo: RenderedRepo, listing: Mapping[str, str], changes: gitwriting.TreeChanges
) -> Comparison:
    """The comparison ``changes`` make to the head's ``listing``, with the old bytes of what they touch."""
    wanted = (path for path in (*changes.written, *changes.deleted) if path in listing)
    old = repo.read_blobs(list(dict.fromkeys(listing[path] for path in wanted)))
    file_changes = [
        *(
            diffs.FileChange(path, old.get(listing.get(path, "")), data)
            for path, data in changes.written.items()
        ),
        *(diffs.FileChange(path, old[listing[path]], None) for path in changes.deleted),
    ]
    return Comparison(listing, changes, file_changes)


@dataclass(frozen=True, slots=True)
class HeadChanges:
    """A render ready to compare with the branch head: the head's listing, the changes, and what to keep
    for the next publish once the commit is pushed (the placement, and the render's index).

    After an incremental render ``listing`` and ``paths`` hold only the part of the old and new trees the
    change reached (``increments.IndexChanges``), which includes every file of each cluster that loses one:
    all the comparison and the mass-delete guard need, at the cost of the change rather than the tree."""

    listing: Mapping[str, str]
    paths: Collection[str]  # every path of the new tree (the part the change reached, when incremental)
    changes: gitwriting.TreeChanges
    placement: PreviousPlacement | None  # None when the renderer did not say
    index: increments.RenderIndex | None


@dataclass(frozen=True, slots=True)
class Committed:
    """A render committed onto the head in the local cache, not pushed yet."""

    commit: str
    message: str
    diff: diffs.RenderDiff


def commit_onto_head(
    repo: RenderedRepo,
    head: str | None,
    update: HeadChanges,
    source: SourceInfo,
    *,
    environ: Mapping[str, str],
    max_delete_percent: int,
    allow_mass_delete: bool,
    vacated: frozenset[str] = frozenset(),
    notes: Sequence[str] = (),
    remedial: bool = False,
    patch_limit: int = 0,
    before_commit: Callable[[], None] = lambda: None,
    progress: phases.Progress = phases.NO_PROGRESS,
) -> Committed | None:
    """Commit ``update`` onto ``head``: None when it changes nothing but bookkeeping (no commit), else the
    commit, its message and its diff. The mass-delete guard (``check_deletions``) runs first; the message
    carries the layout note of an upgrade, then ``notes``. ``before_commit`` runs right before the commit
    (the controller checks it still leads there)."""
    comparison = comparison_of(repo, update.listing, update.changes)
    changes, file_changes = comparison.changes, comparison.file_changes
    with _head_readable(repo, head):
        if comparison.unchanged:
            return None
    allowed: list[guard.MassDeletion] = []
    if changes.deleted:  # the guard reads every path: only worth it when something is deleted
        allowed = check_deletions(
            update.listing,
            update.paths,
            max_percent=max_delete_percent,
            allow=allow_mass_delete,
            vacated=vacated,
        )
    with _head_readable(repo, head):
        diff = diffs.diff_renders(file_changes, patch_limit=patch_limit)
    message = messages.commit_message(
        diff,
        source_repo=source.repo,
        source_revision=source.revision,
        allow_mass_prune=bool(allowed),
        notes=(*layout_notes(file_changes), *notes),
        remedial=remedial,
    )
    progress.phase(phases.WRITE, f"committing {len(changes.written)} written, {len(changes.deleted)} deleted")
    before_commit()
    return Committed(repo.commit(head, changes, message, environ=environ), message, diff)


@contextmanager
def _head_readable(repo: RenderedRepo, head: str | None) -> Iterator[None]:
    """A placement file of the head that records no decision is the head's fault (ours are always
    readable): a RepoError saying which, and what to do."""
    try:
        yield
    except diffs.UnreadablePlacement as error:
        raise errors.RepoError(
            f"the branch head {head} of {repo.url} has an unreadable {error.path} ({error.reason}); fix or "
            "remove it there, then publish again"
        ) from None


def check_deletions(
    listing: Mapping[str, str],
    paths: Collection[str],
    *,
    max_percent: int,
    allow: bool,
    vacated: frozenset[str] = frozenset(),
) -> list[guard.MassDeletion]:
    """The mass-delete guard (``publishing.guard``): ``SafetyError`` unless allowed, except on ``vacated``
    clusters (the controller moved groups off them on purpose: a reschedule or a failback empties a cluster
    that ran one group, and that is the point); what it found."""
    found = guard.mass_deletions(listing, paths, max_percent)
    unexplained = [item for item in found if item.cluster not in vacated]
    if unexplained and not allow:
        guard.check(listing, paths, max_percent=max_percent, allow=False)
    return found


def index_with_readme(index: increments.RenderIndex, readme_blob: str) -> increments.RenderIndex:
    """A render's index with the README.md every rendered repository carries besides the render."""
    return replace(index, others={**index.others, README_FILE: readme_blob})


def changes_with_readme(
    changes: increments.IndexChanges, base: increments.RenderIndex, readme: bytes
) -> tuple[dict[str, str], dict[str, str], gitwriting.TreeChanges]:
    """A delta's changes to the tree ``base`` describes (``IndexChanges``), with README.md, which every
    rendered repository carries besides the render: the part of the old tree looked at (path → blob id),
    of the new one, and what to write and delete."""
    readme_blob = increments.blob_id(readme)
    before, after = dict(changes.before), dict(changes.after)
    written = dict(changes.written)
    if README_FILE in base.others:
        before[README_FILE] = base.others[README_FILE]
    after[README_FILE] = readme_blob
    if before.get(README_FILE) != readme_blob:
        written[README_FILE] = readme
    return before, after, gitwriting.TreeChanges(written, changes.deleted)


def incremental_changes(
    delta: increments.RenderDelta,
    base: increments.RenderIndex | None,
    source: SourceInfo,
    placement: PreviousPlacement | None,
) -> HeadChanges | None:
    """A delta rendered onto ``base`` (the head's index) as changes to the head, looking only where the
    change reached; None when it was rendered without one (no base, another renderer's, damaged): then
    ``compared_changes`` compares it with the head's listing."""
    if base is None or delta.changes is None:
        return None
    readme = messages.readme(source.repo)
    before, after, changes = changes_with_readme(delta.changes, base, readme)
    index = index_with_readme(delta.index, after[README_FILE])
    return HeadChanges(before, after.keys(), changes, placement, index)


def compared_changes(
    delta: increments.RenderDelta,
    listing: Mapping[str, str],
    source: SourceInfo,
    placement: PreviousPlacement | None,
) -> HeadChanges | None:
    """The delta's whole tree (path → blob id) with README.md, which every rendered repository carries
    besides the render, as changes to the head's ``listing``; None when a file whose blob differs from the
    head's was not emitted (the delta's base does not describe the head). Set operations on the views, not
    a loop over ~100k paths: the changes are a handful."""
    blobs = delta.blobs
    files = delta.files
    readme = None
    if README_FILE not in blobs:
        readme = messages.readme(source.repo)
        blobs[README_FILE] = increments.blob_id(readme)
    written: dict[str, bytes] = {}
    for path, _ in blobs.items() - listing.items():
        data = readme if path == README_FILE and readme is not None else files.get(path)
        if data is None:
            return None
        written[path] = data
    deleted = tuple(sorted(listing.keys() - blobs.keys()))
    changes = gitwriting.TreeChanges(dict(sorted(written.items())), deleted)
    index = index_with_readme(delta.index, blobs[README_FILE])
    return HeadChanges(listing, blobs.keys(), changes, placement, index)


@contextmanager
def keeping_for_next(
    cache_dir: Path,
    commit: str,
    placement: PreviousPlacement | None,
    index: increments.RenderIndex | None,
) -> Iterator[None]:
    """Keep what the next publish starts from — the placement just committed and the render's index, both
    under the commit's id — in a thread while the body runs (git pushes in a process of its own), so it is
    not on a publish's path. An entry for a commit
    whose push is rejected is merely unused."""

    def keep() -> None:
        if placement is not None:
            placementcache.store(cache_dir, commit, placement)
        if index is not None:
            renderindex.store(cache_dir, commit, index)

    keeper = threading.Thread(target=keep, name="nova-keep-for-next")
    keeper.start()
    try:
        yield
    finally:
        keeper.join()
