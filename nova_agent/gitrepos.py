"""Reading the rendered repository: fetch a branch, then read one directory from that commit's *tree*.

The agent never checks out a work tree. It keeps a bare cache repository, fetches the branch head (shallow),
and reads ``clusters/<cluster>/`` with ``git ls-tree`` + ``git cat-file --batch`` from the commit it resolved,
so a push that lands while the agent reads cannot hand it a mix of two revisions.

The cache is created and fetched through GitPython's ``Repo`` and ``Remote``
(``nova_gitops.clients.gitrunning``, shared with the controller: a deadline on every network call, an
optional progress hook); reading the tree stays plumbing (``ls-tree`` and one ``cat-file --batch`` for
every file of the directory, where GitPython's object layer would ask one object at a time), run as a
subprocess. Both run under the controller's one environment policy (``nova_gitops.clients.gitenvironment``):
inherited repository-location variables stripped (``GIT_DIR`` and friends, as pre-commit's ``no_git_env``
does), no system or global configuration, no hooks, no prompts, only the file/git/ssh/https transports, so
a hook, CI environment or hostile ``~/.gitconfig`` cannot redirect the agent's git calls or run anything
through them.
"""

from __future__ import annotations

import functools
import hashlib
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import git

from nova_gitops.clients import gitfailures, gitrunning
from nova_gitops.clients.gitenvironment import git_environment
from nova_gitops.clients.gitrunning import GitFailed

GIT_TIMEOUT: Final = 120.0
"""Seconds a network git command may take before it is killed (a remote that accepts and never answers)."""
MAX_FILE_BYTES: Final = 1024 * 1024
"""A rendered manifest larger than this is refused (Kubernetes itself stops at about 1.5 MB per object)."""


class GitError(Exception):
    """A git command failed; the message says what to check. Credentials in URLs are masked."""

    def __init__(self, message: str) -> None:
        super().__init__(scrub(message))


class GitUnavailable(GitError):
    """The remote could not be read (network, credentials) or has no such branch yet: try again later."""


class DirectoryMissing(GitError):
    """The directory is not in the commit: nothing at all is under it (git keeps no empty directory)."""


def run_git(
    args: Sequence[str],
    cwd: Path,
    *,
    stdin: bytes | None = None,
    extra_env: Mapping[str, str] | None = None,
    check: bool = True,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """One plumbing command under the environment policy; ``timeout`` for those that talk to a remote."""
    command = ["git", "-c", "user.name=nova-agent", "-c", "user.email=nova-agent@localhost", *args]
    try:
        result = subprocess.run(
            command,
            cwd=cwd,
            input=stdin,
            capture_output=True,
            env=git_environment(os.environ, extra_env),
            check=False,
            timeout=timeout,
        )
    except FileNotFoundError as error:
        raise GitError("git is not installed or not on PATH") from error
    except subprocess.TimeoutExpired as error:
        raise GitUnavailable(
            f"git {args[0]} gave no answer in {timeout:g} s; check that the host is up"
        ) from error
    if check and result.returncode != 0:
        message = result.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(
            f"git {args[0]} failed: {message[-1] if message else 'exit ' + str(result.returncode)}"
        )
    return result


scrub = gitrunning.scrub  # ``text`` with the ``user:token@`` part of any URL in it masked


last_line = functools.partial(gitfailures.last_line, otherwise="git failed")  # git's last line of explanation


def redact(url: str) -> str:
    """A repository URL without credentials, fit for logs and status reports."""
    scheme, sep, rest = url.partition("://")
    if sep and "@" in rest.split("/", 1)[0]:
        return f"{scheme}://***@{rest.split('@', 1)[1]}"
    return url


@dataclass(frozen=True, slots=True)
class TreeFile:
    path: str
    data: bytes


class RepoCache:
    """A bare repository under ``cache_dir`` for one remote URL."""

    def __init__(
        self,
        url: str,
        cache_dir: Path,
        *,
        timeout: float = GIT_TIMEOUT,
        progress: gitrunning.ProgressHook | None = None,  # sees fetches and pushes advance
    ) -> None:
        self.url = url
        digest = hashlib.sha256(url.encode()).hexdigest()[:16]
        self.path = cache_dir / f"repo-{digest}.git"
        self.timeout = timeout
        self.progress = progress
        self._remote: gitrunning.Remote | None = None

    @property
    def remote(self) -> gitrunning.Remote:
        """The remote, through GitPython, on the cache (created on first use)."""
        if self._remote is None:
            try:
                repo = gitrunning.open_bare(self.path)
            except GitFailed as failure:
                raise GitError(f"cannot create the cache {self.path}: {last_line(failure.stderr)}") from None
            self._remote = gitrunning.Remote(repo, self.url, timeout=self.timeout, progress=self.progress)
        return self._remote

    def ensure(self) -> None:
        self.remote  # noqa: B018 - creates the cache

    def fetch(self, branch: str, local_ref: str) -> str | None:
        """Fetch ``branch`` (shallow) into ``local_ref``; its commit, or None when there is no such branch."""
        self.ensure()
        asked = ["ls-remote", "--heads", self.url, f"refs/heads/{branch}"]
        listing = run_git(asked, self.path, check=False, timeout=self.timeout)
        if listing.returncode != 0:
            detail = listing.stderr.decode(errors="replace").strip().splitlines()
            raise GitUnavailable(
                f"cannot read {redact(self.url)}: {detail[-1] if detail else 'git ls-remote failed'}; "
                "check the URL, the network and the credentials"
            )
        if not listing.stdout.strip():
            return None
        try:
            self.remote.fetch([f"+refs/heads/{branch}:{local_ref}"], no_tags=True, depth=1)
        except GitFailed as failure:  # the remote went away, or failed, between ls-remote and fetch
            raise GitUnavailable(
                f"cannot fetch {branch!r} from {redact(self.url)}: git fetch failed: "
                f"{last_line(failure.stderr)}; check the network and the remote"
            ) from None
        try:
            return str(self.remote.repo.commit(local_ref).hexsha)
        except (ValueError, git.BadName, git.GitCommandError) as error:
            raise GitError(f"cannot read {local_ref} in the cache {self.path}: {error}") from None

    def read_tree(self, commit: str, directory: str) -> list[TreeFile]:
        """Every file under ``directory`` in ``commit``, read from the object store (never a work tree).
        Raises :class:`DirectoryMissing` when the commit has nothing under it: git keeps no empty directory,
        so that is a directory that does not exist, never one that is empty (a rendered cluster's directory
        always holds its ``kustomization.yaml``)."""
        prefix = directory.strip("/") + "/"
        listing = run_git(["ls-tree", "-r", "-z", "--full-tree", commit, "--", prefix], self.path).stdout
        records = [record for record in listing.split(b"\0") if record]
        if not records:
            raise DirectoryMissing(f"{prefix} does not exist in commit {commit[:12]}")
        entries: list[tuple[str, str]] = []
        for record in records:
            meta, _, path = record.partition(b"\t")
            mode, kind, sha = meta.decode().split()
            if kind == "blob" and mode != "120000":
                entries.append((sha, path.decode()))
        if not entries:
            return []
        batch = run_git(
            ["cat-file", "--batch"], self.path, stdin="".join(f"{s}\n" for s, _ in entries).encode()
        )
        files: list[TreeFile] = []
        data, offset = batch.stdout, 0
        for _, file_path in entries:
            header_end = data.index(b"\n", offset)
            _, _, size_text = data[offset:header_end].decode().split()
            size = int(size_text)
            start = header_end + 1
            files.append(TreeFile(file_path, data[start : start + size]))
            offset = start + size + 1
        return files

    def blob(self, commit: str, path: str) -> bytes | None:
        result = run_git(["cat-file", "blob", f"{commit}:{path}"], self.path, check=False)
        return result.stdout if result.returncode == 0 else None

    def trailers(self, commit: str) -> dict[str, list[str]]:
        """The trailers of a commit's message (``Key: value`` lines of its last paragraph)."""
        message = run_git(["cat-file", "commit", commit], self.path).stdout.split(b"\n\n", 1)[-1]
        parsed = run_git(["interpret-trailers", "--parse"], self.path, stdin=message).stdout.decode()
        trailers: dict[str, list[str]] = {}
        for line in parsed.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                trailers.setdefault(key.strip(), []).append(value.strip())
        return trailers

    def verify_signature(self, commit: str, allowed_signers: Path) -> None:
        """Raise :class:`GitError` unless ``commit`` is signed by a key in the SSH allowed-signers file."""
        result = run_git(
            ["-c", f"gpg.ssh.allowedSignersFile={allowed_signers}", "verify-commit", commit],
            self.path,
            check=False,
        )
        if result.returncode != 0:
            detail = result.stderr.decode(errors="replace").strip().splitlines()
            raise GitError(
                f"commit {commit[:12]} has no valid signature from a key in {allowed_signers}"
                + (f": {detail[-1]}" if detail else "")
            )
