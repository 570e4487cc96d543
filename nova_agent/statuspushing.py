"""Writing ``status/<cluster>.yaml`` to the status branch, safely shared by many agents.

Every agent pushes to the same branch, but each one touches only its own file, so a rejected push is never a
real conflict: the agent fetches the new head, rebuilds its one-file change on top of it with git plumbing
(``read-tree`` into a temporary index, ``update-index --cacheinfo``, ``write-tree``, ``commit-tree``) and
pushes again, a bounded number of times with backoff. No work tree, no merge, no rebase machinery. The push
goes through GitPython's ``Remote`` (``nova_gitops.clients.gitrunning``), whose per-ref answer tells a lost
race (``[rejected]``) from the reason to report.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from nova_agent.clocks import Clock
from nova_agent.gitrepos import GitError, RepoCache, last_line, redact, run_git
from nova_agent.retrying import STATUS_PUSH_BACKOFF
from nova_gitops.clients.gitrunning import GitFailed

STATUS_REF = "refs/nova/status"


@dataclass(frozen=True, slots=True)
class StatusHead:
    """The status branch as last fetched: its commit (None before the first report) and our file there."""

    commit: str | None
    current: bytes | None


class StatusBranch:
    def __init__(self, cache: RepoCache, branch: str, clock: Clock, attempts: int = 6) -> None:
        self.cache = cache
        self.branch = branch
        self.clock = clock
        self.attempts = attempts

    def read(self, path: str) -> StatusHead:
        commit = self.cache.fetch(self.branch, STATUS_REF)
        return StatusHead(commit, None if commit is None else self.cache.blob(commit, path))

    def _commit_on(self, parent: str | None, path: str, data: bytes, message: str) -> str | None:
        """A commit of ``parent``'s tree with ``path`` = ``data``; None when that changes nothing."""
        repo = self.cache.path
        blob = run_git(["hash-object", "-w", "--stdin"], repo, stdin=data).stdout.decode().strip()
        with tempfile.TemporaryDirectory(prefix="nova-agent-index-") as scratch:
            env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
            run_git(["read-tree", parent] if parent else ["read-tree", "--empty"], repo, extra_env=env)
            run_git(["update-index", "--add", "--cacheinfo", f"100644,{blob},{path}"], repo, extra_env=env)
            tree = run_git(["write-tree"], repo, extra_env=env).stdout.decode().strip()
        if parent is not None:
            parent_tree = run_git(["rev-parse", f"{parent}^{{tree}}"], repo).stdout.decode().strip()
            if parent_tree == tree:
                return None
        args = ["commit-tree", tree, "-m", message] + (["-p", parent] if parent else [])
        return run_git(args, repo).stdout.decode().strip()

    def publish(self, path: str, data: bytes, message: str, head: StatusHead) -> bool:
        """Commit ``data`` at ``path`` on top of the branch and push; retry on a moved head.

        Returns False when there was nothing to commit. Raises :class:`GitError` after the last attempt.
        """
        parent = head.commit
        last_error = ""
        for attempt in range(1, self.attempts + 1):
            commit = self._commit_on(parent, path, data, message)
            if commit is None:
                return False
            try:
                pushed = self.cache.remote.push({f"refs/heads/{self.branch}": commit})
            except GitFailed as failure:
                last_error = last_line(failure.stderr)
            else:
                if not pushed.rejected and not pushed.error:
                    return True
                last_error = pushed.rejected[0].line() if pushed.rejected else last_line(pushed.error)
            if attempt == self.attempts or not self.clock.sleep(STATUS_PUSH_BACKOFF.delay(attempt)):
                break
            parent = self.cache.fetch(self.branch, STATUS_REF)
        raise GitError(
            f"could not push status to {redact(self.cache.url)} branch {self.branch} after {self.attempts} "
            f"attempts: {last_error}"
        )
