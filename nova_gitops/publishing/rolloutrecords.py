"""The rollout record: one small file (``rollout/record.yaml``) on a branch, compared and set.

The controller keeps it on ``nova/rollout`` of the rendered repository (``controller.rolloutstep``), a branch
agents cannot write; the rebuild-and-retry below also lets it live beside agents' pushes on a status branch.

Release refs say what each cluster runs; what they cannot say — a rollout paused, a wave promoted by hand,
when a gate started waiting — lives in this record, so that a controller killed at any step, or its
successor after a leader election, resumes from git alone. Its content is opaque here: the pure rollout
logic defines and validates it (docs/rollouts.md).

Why compare-and-set: two controllers may both write it. ``write_record`` is given the record it read and
writes only if the branch still holds exactly that (otherwise ``WriteOutcome.CHANGED``: re-read, re-decide),
so one controller's decision is never silently overwritten by another's taken on older facts.

Why rebuild and retry: agents push ``status/<cluster>.yaml`` to the same branch all the time, each one file
on top of the head. Our commit is likewise the fetched head with this one file replaced (``fast-import``
from the head, nothing else touched), pushed with a lease on that head; when an agent got there first the
lease fails, and we fetch, check the record again, rebuild on the new head and push again, with a short
jittered back-off, a bounded number of times. An agent losing to us does the same on its side
(``nova_agent.statuspushing``), so both land.

The record is read through GitPython's objects (commit, tree, blob: its size from the object's header before
its bytes are read); the commit is written with ``fast-import`` and pushed through GitPython's ``Remote``
(``gitwriting.RenderedRepo``).

The status branch is written by every agent, so the record is untrusted input like a status report: it is
size-bounded here, and the caller validates it and never lets it stand against the release refs.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Mapping
from enum import Enum

import git

from nova_gitops import errors
from nova_gitops.clients import gitrunning
from nova_gitops.clients.backoff import Backoff
from nova_gitops.publishing.gitwriting import PushOutcome, RenderedRepo, TreeChanges

RECORD_PATH = "rollout/record.yaml"
MAX_RECORD_BYTES = 1024 * 1024  # a record is a few KB; more was not written by a controller
LOCAL_REF = "refs/nova/rollout-record"  # the cache's copy of the status branch head
RECORD_BACKOFF = Backoff(base=0.05, cap=1.0, jitter=0.5)  # agents' pushes take tens of milliseconds


class RecordTooLarge(errors.RepoError):
    """The file on the branch is over ``MAX_RECORD_BYTES``: not one a controller or a command wrote."""


class WriteOutcome(Enum):
    WRITTEN = "written"
    UNCHANGED = "unchanged"  # the record already holds these bytes: no commit
    CHANGED = "changed"  # the record is no longer what the caller read: nothing written; re-read


class RolloutRecords:
    """The rollout record on ``branch`` of a repository (the status branch, ``nova-status``) through its
    local bare cache (the status reader's, ``cache_dir / "status"``)."""

    def __init__(
        self,
        repo: RenderedRepo,
        branch: str,
        *,
        path: str = RECORD_PATH,
        attempts: int = 8,
        environ: Mapping[str, str] | None = None,
        pause: Callable[[float], None] = time.sleep,  # tests pass a no-op
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.repo = repo
        self.branch = branch
        self.path = path
        self.attempts = attempts
        self.environ = os.environ if environ is None else environ
        self.pause = pause
        self.jitter = jitter

    def read_record(self) -> bytes | None:
        """The record at the branch's head, or None when there is no branch or no record yet."""
        return self._record_at(self.repo.fetch(self.branch, into=LOCAL_REF))

    def write_record(self, data: bytes, expected_previous: bytes | None, message: str) -> WriteOutcome:
        """Replace the record with ``data`` if it still holds ``expected_previous`` (None: no record yet).

        Raises ``errors.RepoError`` when the remote cannot be reached, refuses the push, or kept moving
        under us for every attempt."""
        if len(data) > MAX_RECORD_BYTES:
            raise ValueError(f"a rollout record of {len(data)} bytes is over the {MAX_RECORD_BYTES} limit")
        for attempt in range(1, self.attempts + 1):
            head = self.repo.fetch(self.branch, into=LOCAL_REF)
            current = self._record_at(head)
            if current != expected_previous:
                return WriteOutcome.CHANGED
            if current == data:
                return WriteOutcome.UNCHANGED
            commit = self.repo.commit(head, TreeChanges({self.path: data}, ()), message, environ=self.environ)
            if self.repo.push(commit, self.branch, lease=True, expect=head) is not PushOutcome.REJECTED:
                return WriteOutcome.WRITTEN
            self.pause(RECORD_BACKOFF.delay(attempt, self.jitter))  # an agent pushed first: rebuild on theirs
        raise errors.RepoError(
            f"could not write {self.path} to {self.repo.url} {self.branch}: the branch moved under each of "
            f"{self.attempts} attempts (agents pushing status); it is retried at the next reconcile"
        )

    def _record_at(self, commit: str | None) -> bytes | None:
        if commit is None:
            return None
        try:
            found = self.repo.repo.commit(commit).tree / self.path
        except KeyError:  # no record (or no rollout/ directory) yet
            return None
        except (ValueError, git.BadName, git.GitCommandError) as error:
            failed = gitrunning.failure(("cat-file", commit, self.path), error)
            raise errors.RepoError(
                f"cannot read {self.path} of {commit} from the cache of {self.repo.url}: {failed.stderr}; "
                "remove the cache directory if it is damaged"
            ) from None
        if not isinstance(found, git.Blob):
            return None
        if found.size > MAX_RECORD_BYTES:  # read from the object's header, before its bytes
            raise RecordTooLarge(
                f"{self.path} on {self.repo.url} {self.branch} is {found.size} bytes, over the "
                f"{MAX_RECORD_BYTES} limit: not a record a controller wrote; check who pushed it"
            )
        return bytes(found.data_stream.read())
