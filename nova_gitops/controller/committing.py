"""Publishing from the controller: one rendered revision → at most one commit on the rendered branch.

A render becomes a commit the one way ``publish`` makes one (``workflows.committing``: changes to the head,
the mass-delete guard, the commit message, the commit in the local cache, the index and placement kept for
the next), with a fast-forward push and a redo on a lost race with the winner's placement as the previous
one. What is the controller's own: the render is a callback that receives the branch's previous placement
(so the controller can plan with reschedule exclusions and its failback hold), the guard spares the clusters
it vacated on purpose, and the commit message carries the controller's notes (a reschedule quotes the
agent's reason). No commit is made when the render equals the branch head, which is what makes reconciles
idempotent. With leader election,
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
from collections.abc import Callable, Mapping
from pathlib import Path

from nova_gitops import errors
from nova_gitops.controller.ports import Publication, RenderOnto
from nova_gitops.publishing import gitwriting, messages, previousplacements, renderindex
from nova_gitops.publishing.gitwriting import PushOutcome, RenderedRepo
from nova_gitops.rendering import diffs, reports
from nova_gitops.rendering.increments import RenderIndex
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.workflows import committing
from nova_gitops.workflows.publishing import Outcome, PublishOptions, PublishResult


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
        # the placement to keep is read off the plan only once there is a commit to keep it for
        update = committing.incremental_changes(rendered.delta, base, source, None)
        if update is None:
            listing = self.repo.listing(head)
            update = committing.compared_changes(rendered.delta, listing, source, None)
            if update is None:  # the index did not cover a change of the head: render every file
                rendered = render(previous, None)
                update = committing.compared_changes(rendered.delta, listing, source, None)
            assert update is not None  # a render without a base emits every file
        committed = committing.commit_onto_head(
            self.repo,
            head,
            update,
            source,
            environ=self.environ,
            max_delete_percent=self.options.max_delete_percent,
            allow_mass_delete=self.options.allow_mass_delete,
            vacated=rendered.vacated,
            notes=rendered.notes,
            remedial=rendered.rescheduled_only and self._same_source(head, source),
            before_commit=self._still_leading,
        )
        if committed is None:  # the head's index, if any, still describes the head: it is kept
            result = PublishResult(
                Outcome.UNCHANGED, branch, head, diffs.RenderDiff(), source, attempts=attempt
            )
            return Publication(result, rendered)
        self._still_leading()
        commit, index = committed.commit, update.index
        placement = reports.previous_of(rendered.plan)
        assert index is not None  # the controller's renders are incremental: they have one
        with committing.keeping_for_next(self.cache_dir, commit, placement, index):  # while git pushes
            pushed = self.repo.push(commit, branch)
        if pushed is PushOutcome.REJECTED:
            return None
        self._index = (commit, index)
        diff, message = committed.diff, committed.message
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
