"""The one way publishing runs git: through GitPython, with a cleaned environment and a deadline.

Why a cleaned environment: when nova-gitops runs inside a git hook or a CI step, the parent exports
variables such as ``GIT_DIR``, ``GIT_INDEX_FILE`` or ``GIT_OBJECT_DIRECTORY`` that would silently point our
git commands at someone else's repository (pre-commit's ``no_git_env`` exists for the same reason). We keep
only the variables that configure *how* git talks to the world — identity, credentials, transport policy —
and drop those that say *which* repository to use. GitPython always starts a child's environment from
``os.environ`` and cannot unset a variable, so inherited variables are removed with ``env -u`` in front of
the command.

Why a deadline: a remote that accepts the connection and never answers would hang a publish forever; every
network command gets ``timeout`` seconds and then fails with a message that names the remote.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import git

KEPT_GIT_VARIABLES = frozenset(
    {
        # identity of the commits we write (tests pin these)
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_COMMITTER_DATE",
        # transport policy, prompts and system configuration
        "GIT_ALLOW_PROTOCOL",
        "GIT_CONFIG_NOSYSTEM",
        "GIT_TERMINAL_PROMPT",
        "GIT_EXEC_PATH",
        # credentials and network settings (as pre-commit keeps them)
        "GIT_ASKPASS",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_SSL_CAINFO",
        "GIT_SSL_NO_VERIFY",
        "GIT_HTTP_PROXY_AUTHMETHOD",
        "GIT_CONFIG_COUNT",
    }
)


def is_kept(name: str) -> bool:
    """Whether an inherited ``GIT_*`` variable is passed on to git (``GIT_CONFIG_KEY_n``/``VALUE_n`` too)."""
    if not name.startswith("GIT_") or name in KEPT_GIT_VARIABLES:
        return True
    return name.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))


def stripped_variables(environ: Mapping[str, str]) -> list[str]:
    """The inherited ``GIT_*`` variables that git must not see, sorted."""
    return sorted(name for name in environ if not is_kept(name))


@dataclass(frozen=True, slots=True)
class GitResult:
    status: int
    stdout: bytes
    stderr: str


class GitFailed(Exception):
    """A git command failed; ``stderr`` is git's own explanation."""

    def __init__(self, command: Sequence[str], status: int, stderr: str) -> None:
        self.command = tuple(command)
        self.status = status
        self.stderr = stderr.strip()
        super().__init__(f"git {' '.join(self.command)} exited {status}: {self.stderr}")

    @property
    def timed_out(self) -> bool:
        return self.status == -9 or "did not complete in" in self.stderr


class GitCommands:
    """Runs ``git <args>`` in ``git_dir`` (a bare repository or a work tree) through GitPython."""

    def __init__(
        self, git_dir: Path, *, timeout: float = 120.0, environ: Mapping[str, str] | None = None
    ) -> None:
        self.git_dir = git_dir
        self.timeout = timeout
        self._strip = stripped_variables(os.environ if environ is None else environ)
        self._git = git.Git(str(git_dir) if git_dir.exists() else None)

    def _command(self, args: Sequence[str]) -> list[str]:
        prefix: list[str] = []
        if self._strip:
            prefix = ["env"]
            for name in self._strip:
                prefix += ["-u", name]
        return [*prefix, "git", f"--git-dir={self.git_dir}", *args]

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


def write_all(stream: IO[bytes], chunks: Sequence[bytes]) -> None:
    """Write ``chunks`` to a pipe in one go (``writelines`` keeps Python out of the per-file loop)."""
    stream.writelines(chunks)
