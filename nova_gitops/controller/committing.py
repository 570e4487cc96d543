"""Publishing from the controller: one rendered revision → at most one commit on the rendered branch.

The same steps and safety as ``workflows.publishing.publish`` (render completely in memory, mass-delete guard,
commit in the local cache, fast-forward push, redo on a lost race with the winner's placement as the
previous one), with two differences the loop needs: the render is a callback that receives the branch's
previous placement (so the controller can plan with reschedule exclusions and its failback hold), and the
commit message carries the controller's notes (a reschedule quotes the agent's reason). No commit is made
when the render equals the branch head, which is what makes reconciles idempotent. With leader election,
leadership is checked again right before the commit and the push: a replica that lost the Lease during a
long reconcile gives up (``TemporaryError``) instead of pushing beside the new leader.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from nova_gitops import errors
from nova_gitops.controller.ports import Publication, RenderOnto
from nova_gitops.publishing import gitwriting, guard, messages
from nova_gitops.publishing.gitwriting import PushOutcome, RenderedRepo
from nova_gitops.rendering import diffs, increments, reports
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.workflows import publishing
from nova_gitops.workflows.publishing import Outcome, PublishOptions, PublishResult, with_repository_files


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
        listing = self.repo.listing(head)
        rendered = render(publishing.previous_placement(self.repo, head, listing, self.cache_dir))
        files = with_repository_files(rendered.files, source)
        comparison = publishing.compare_with_head(self.repo, listing, files)
        changes, file_changes = comparison.changes, comparison.file_changes
        if comparison.unchanged:
            result = PublishResult(
                Outcome.UNCHANGED, branch, head, diffs.RenderDiff(), source, attempts=attempt
            )
            return Publication(result, rendered)
        allowed: list[guard.MassDeletion] = []
        if changes.deleted:
            allowed = self._guard(listing, files, rendered.vacated)
        diff = diffs.diff_renders(file_changes)
        message = messages.commit_message(
            diff,
            source_repo=source.repo,
            source_revision=source.revision,
            allow_mass_prune=bool(allowed),
            notes=rendered.notes,
            remedial=rendered.rescheduled_only and self._same_source(head, source),
        )
        self._still_leading()
        commit = self.repo.commit(head, changes, message, environ=self.environ)
        self._still_leading()
        if self.repo.push(commit, branch) is PushOutcome.REJECTED:
            return None
        placement_blob = files.get(diffs.PLACEMENT_FILE)
        publishing.remember_placement(
            self.cache_dir,
            None if placement_blob is None else increments.blob_id(placement_blob),
            reports.previous_of(rendered.plan),
        )
        result = PublishResult(Outcome.PUBLISHED, branch, commit, diff, source, message, None, attempt)
        return Publication(result, rendered)

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
        self, listing: Mapping[str, str], files: Mapping[str, bytes], vacated: frozenset[str]
    ) -> list[guard.MassDeletion]:
        """The mass-delete guard, except on clusters the controller moved groups off on purpose (a
        reschedule or a failback empties a cluster that ran one group, and that is the point)."""
        found = guard.mass_deletions(listing, files, self.options.max_delete_percent)
        unexplained = [item for item in found if item.cluster not in vacated]
        if unexplained and not self.options.allow_mass_delete:
            guard.check(listing, files, max_percent=self.options.max_delete_percent, allow=False)
        return found
