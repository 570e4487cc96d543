"""Publishing's git plumbing (``ls-tree``, ``cat-file``, ``fast-import``, ``rev-list``...): through
GitPython's ``Git`` under the one environment policy, with a deadline for network commands.

Clone, fetch, push and refs go through GitPython's ``Repo``/``Remote`` API
(``nova_gitops.clients.gitrunning``); this is the plumbing left where speed needs it or GitPython has
no API (docs/publishing.md, "Git"). Why a cleaned environment: see ``nova_gitops.clients.gitenvironment``,
which decides what is kept (for the agent too); ``gitrunning.PolicyGit`` applies it to every command.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import git

from nova_gitops.clients import gitrunning
from nova_gitops.clients.gitrunning import GitFailed

__all__ = ["GitCommands", "GitFailed", "GitResult", "RunningGit"]


@dataclass(frozen=True, slots=True)
class GitResult:
    status: int
    stdout: bytes
    stderr: str


class GitCommands:
    """Runs ``git <args>`` in ``git_dir`` (a bare repository or a work tree) through GitPython."""

    def __init__(
        self, git_dir: Path, *, timeout: float = 120.0, environ: Mapping[str, str] | None = None
    ) -> None:
        self.git_dir = git_dir
        self.timeout = timeout
        self._git = gitrunning.PolicyGit(str(git_dir) if git_dir.exists() else None, environ)

    def _command(self, args: Sequence[str]) -> list[str]:
        return ["git", f"--git-dir={self.git_dir}", *args]

    def run(
        self, *args: str, stdin: bytes | None = None, check: bool = True, network: bool = False
    ) -> GitResult:
        """Run one command and collect its output; ``network`` commands get the deadline."""
        if stdin is not None:
            running = self.start(args)
            stdout, stderr = running.proc.communicate(stdin)
            result = GitResult(running.proc.returncode, stdout, stderr.decode(errors="replace"))
        else:
            try:
                status, out, err = self._git.execute(
                    self._command(args),
                    with_extended_output=True,
                    with_exceptions=False,
                    stdout_as_string=False,
                    strip_newline_in_stdout=False,
                    kill_after_timeout=self.timeout if network else None,
                )
            except git.GitCommandError as error:  # the deadline raises even without exceptions enabled
                raise GitFailed(args, -9, str(error.stderr)) from None
            result = GitResult(int(status), bytes(out), err if isinstance(err, str) else err.decode())
        if check and result.status != 0:
            raise GitFailed(args, result.status, result.stderr)
        return result

    def start(self, args: Sequence[str]) -> RunningGit:
        """Start a long-running command (``fast-import``) with pipes on stdin, stdout and stderr."""
        handle = self._git.execute(self._command(args), as_process=True, istream=subprocess.PIPE)
        return RunningGit(handle)


class RunningGit:
    """A started git process. Holds GitPython's handle, which kills the process when it is collected."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle
        self.proc: subprocess.Popen[bytes] = handle.proc

    def stdin(self) -> IO[bytes]:
        assert self.proc.stdin is not None
        return self.proc.stdin
