"""Publishing from the controller: one rendered revision → at most one commit on the rendered branch.

The same steps and safety as ``workflows.publishing.publish`` (render completely in memory, mass-delete guard,
commit in the local cache, fast-forward push, redo on a lost race with the winner's placement as the
previous one), with two differences the loop needs: the render is a callback that receives the branch's
previous placement (so the controller can plan with reschedule exclusions and its failback hold), and the
commit message carries the controller's notes (a reschedule quotes the agent's reason). No commit is made
when the render equals the branch head, which is what makes reconciles idempotent. With leader election,
leadership is checked again right before the commit and the push: a replica that lost the Lease during a
long reconcile gives up (``TemporaryError``) instead of pushing beside the new leader.

Incremental, as ``publish`` is: after each push the render's index (``rendering.increments``) is kept in
memory and in the cache directory (``publishing.renderindex``) under the commit it describes. When the head
is that commit, the render emits only what changed and says what changed in the head's tree
(``IndexChanges``: only the clusters and files the change reached are looked at, as ``publish`` does — no
``ls-tree``, no listing of ~100k paths compared); a head made by anyone else (another replica, ``publish``
from another machine, a hand edit) has no index, and the render emits every file, compared with the head's
listing, as before.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping
from dataclasses import replace
from pathlib import Path

from nova_gitops import errors
from nova_gitops.controller.ports import Publication, Rendered, RenderOnto
from nova_gitops.publishing import gitwriting, guard, messages, previousplacements, renderindex
from nova_gitops.publishing.gitwriting import PushOutcome, RenderedRepo
from nova_gitops.rendering import diffs, increments, reports
from nova_gitops.rendering.increments import RenderIndex
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.workflows import publishing
from nova_gitops.workflows.publishing import README_FILE, Outcome, PublishOptions, PublishResult


class GitPublisher:
    def __init__(
        self,
        repo_url: str,
        *,
        cache_dir: Path,
        options: PublishOptions | None = None,
        environ: Mapping[str, str] | None = None,
        is_leader: Callable[[], bool] | None = None,  # None: always (no leader election)
    ) -> None:
        self.is_leader = is_leader or (lambda: True)
        self.options = options = options or PublishOptions()
        self.environ = os.environ if environ is None else environ
        self.cache_dir = cache_dir
        self.repo = RenderedRepo(
            gitwriting.cache_path(cache_dir, repo_url), repo_url, timeout=options.timeout
        )
        # the last push's commit and its render's index
        self._index: tuple[str, RenderIndex] | None = None

    def head(self) -> str | None:
        """The branch's commit on the remote (None when the branch does not exist yet)."""
        return self.repo.remote_head(self.options.branch)

    def publish(self, render: RenderOnto, source: SourceInfo) -> Publication:
        with self.repo.locked():
            for attempt in range(1, self.options.attempts + 1):
                publication = self._once(render, source, attempt)
                if publication is not None:
                    return publication
        raise errors.TemporaryError(
            f"gave up publishing to {self.repo.url} {self.options.branch} after {self.options.attempts} "
            "attempts: other publishers kept moving the branch",
            delay=5.0,
        )

    def _once(self, render: RenderOnto, source: SourceInfo, attempt: int) -> Publication | None:
        branch = self.options.branch
        head = self.repo.fetch(branch)
        base = self._index_of(head)
        previous = previousplacements.read(self.repo, head, self.cache_dir)
        rendered = render(previous, base)
        changed = rendered.delta.changes
        if base is not None and changed is not None:  # only where the change reached, as publish does
            listing, blobs, changes = publishing.changes_with_readme(
                changed, base, messages.readme(source.repo)
            )
        else:
            listing = self.repo.listing(head)
            tree = _tree(rendered, source, listing)
            if tree is None:  # the index did not cover a change of the head: render every file
                rendered = render(previous, None)
                tree = _tree(rendered, source, listing)
            assert tree is not None  # a render without a base emits every file
            base, (blobs, changes) = None, tree
        comparison = publishing.comparison_of(self.repo, listing, changes)
        file_changes = comparison.file_changes
        if comparison.unchanged:  # the head's index, if any, still describes the head: it is kept
            result = PublishResult(
                Outcome.UNCHANGED, branch, head, diffs.RenderDiff(), source, attempts=attempt
            )
            return Publication(result, rendered)
        allowed: list[guard.MassDeletion] = []
        if changes.deleted:
            allowed = self._guard(listing, blobs.keys(), rendered.vacated)
        diff = diffs.diff_renders(file_changes)
        message = messages.commit_message(
            diff,
            source_repo=source.repo,
            source_revision=source.revision,
            allow_mass_prune=bool(allowed),
            notes=(*publishing.layout_notes(file_changes), *rendered.notes),
            remedial=rendered.rescheduled_only and self._same_source(head, source),
        )
        self._still_leading()
        commit = self.repo.commit(head, changes, message, environ=self.environ)
        self._still_leading()
        placement = reports.previous_of(rendered.plan)
        index = replace(rendered.index, others={**rendered.index.others, README_FILE: blobs[README_FILE]})
        with publishing.keeping_for_next(self.cache_dir, commit, placement, index):  # while git pushes
            pushed = self.repo.push(commit, branch)
        if pushed is PushOutcome.REJECTED:
            return None
        self._index = (commit, index)
        result = PublishResult(Outcome.PUBLISHED, branch, commit, diff, source, message, None, attempt)
        return Publication(result, rendered)

    def _index_of(self, head: str | None) -> RenderIndex | None:
        """The index of the render committed as ``head``: the one kept from this replica's last push, or the
        cache directory's (a restart, or ``publish`` run with the same cache); None for a head nobody here
        made."""
        if head is None:
            return None
        if self._index is not None and self._index[0] == head:
            return self._index[1]
        found = renderindex.load(self.cache_dir, head)
        if found is not None:
            self._index = (head, found)
        return found

    def _same_source(self, head: str | None, source: SourceInfo) -> bool:
        """The head was rendered from the same source revision: what changes now is the controller's own
        doing (a reschedule), not a change someone pushed."""
        if head is None or source.revision is None:
            return False
        previous = messages.trailers(self.repo.message(head)).get(messages.SOURCE_REVISION_TRAILER)
        return previous == source.revision

    def _still_leading(self) -> None:
        """A reconcile can outlast the renew deadline: a replica that lost the Lease meanwhile must not push
        (the new leader may be publishing already); the new leader redoes the work."""
        if not self.is_leader():
            raise errors.TemporaryError(
                f"not publishing to {self.repo.url} {self.options.branch}: this replica lost the leader "
                "election during the reconcile",
                delay=5.0,
            )

    def _guard(
        self, listing: Mapping[str, str], files: Collection[str], vacated: frozenset[str]
    ) -> list[guard.MassDeletion]:
        """The mass-delete guard, except on clusters the controller moved groups off on purpose (a
        reschedule or a failback empties a cluster that ran one group, and that is the point)."""
        found = guard.mass_deletions(listing, files, self.options.max_delete_percent)
        unexplained = [item for item in found if item.cluster not in vacated]
        if unexplained and not self.options.allow_mass_delete:
            guard.check(listing, files, max_percent=self.options.max_delete_percent, allow=False)
        return found


def _tree(
    rendered: Rendered, source: SourceInfo, listing: Mapping[str, str]
) -> tuple[dict[str, str], gitwriting.TreeChanges] | None:
    """The render's whole tree as path → blob id, with what every rendered repository carries besides
    (README.md; ``.gitattributes`` is the render's own), and its changes to the head's ``listing``; None when
    a file whose blob differs from the head's was not emitted (the base index does not describe the head).
    Set operations on the views, not a loop over ~100k paths: the changes are a handful."""
    blobs = dict(rendered.blobs)
    files = rendered.files
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
    return blobs, gitwriting.TreeChanges(dict(sorted(written.items())), deleted)
