"""Reading the rendered repository: fetch a branch, then read one directory from that commit's *tree*.

The agent never checks out a work tree. It keeps a bare cache repository, fetches the branch head (shallow),
and reads ``clusters/<cluster>/`` with ``git ls-tree`` + ``git cat-file --batch`` from the commit it resolved,
so a push that lands while the agent reads cannot hand it a mix of two revisions.

Git runs as a subprocess with inherited repository-location variables stripped (``GIT_DIR`` and friends, as
pre-commit's ``no_git_env`` does) and ``GIT_TERMINAL_PROMPT=0`` by default: a hook or CI environment must
not redirect the agent's git calls. The controller applies the same policy:
``nova_gitops.clients.gitenvironment``.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from nova_gitops.clients.gitenvironment import git_environment

MAX_FILE_BYTES: Final = 1024 * 1024
"""A rendered manifest larger than this is refused (Kubernetes itself stops at about 1.5 MB per object)."""


class GitError(Exception):
    """A git command failed; the message says what to check. Credentials in URLs are masked."""

    def __init__(self, message: str) -> None:
        super().__init__(scrub(message))


class GitUnavailable(GitError):
    """The remote could not be read (network, credentials) or has no such branch yet: try again later."""


def run_git(
    args: Sequence[str],
    cwd: Path,
    *,
    stdin: bytes | None = None,
    extra_env: Mapping[str, str] | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[bytes]:
    command = ["git", "-c", "user.name=nova-agent", "-c", "user.email=nova-agent@localhost", *args]
    try:
        result = subprocess.run(
            command,
            cwd=cwd,
            input=stdin,
            capture_output=True,
            env=git_environment(os.environ, extra_env),
            check=False,
        )
    except FileNotFoundError as error:
        raise GitError("git is not installed or not on PATH") from error
    if check and result.returncode != 0:
        message = result.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(
            f"git {args[0]} failed: {message[-1] if message else 'exit ' + str(result.returncode)}"
        )
    return result


_CREDENTIALS_IN_URL: Final = re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]+@")


def scrub(text: str) -> str:
    """``text`` with the ``user:token@`` part of any URL in it masked."""
    return _CREDENTIALS_IN_URL.sub(r"\1***@", text)


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

    def __init__(self, url: str, cache_dir: Path) -> None:
        self.url = url
        digest = hashlib.sha256(url.encode()).hexdigest()[:16]
        self.path = cache_dir / f"repo-{digest}.git"

    def ensure(self) -> None:
        if not (self.path / "HEAD").exists():
            self.path.mkdir(parents=True, exist_ok=True)
            run_git(["init", "--quiet", "--bare", str(self.path)], self.path)

    def fetch(self, branch: str, local_ref: str) -> str | None:
        """Fetch ``branch`` (shallow) into ``local_ref``; its commit, or None when there is no such branch."""
        self.ensure()
        listing = run_git(["ls-remote", "--heads", self.url, f"refs/heads/{branch}"], self.path, check=False)
        if listing.returncode != 0:
            detail = listing.stderr.decode(errors="replace").strip().splitlines()
            raise GitUnavailable(
                f"cannot read {redact(self.url)}: {detail[-1] if detail else 'git ls-remote failed'}; "
                "check the URL, the network and the credentials"
            )
        if not listing.stdout.strip():
            return None
        try:
            run_git(
                ["fetch", "--quiet", "--no-tags", "--depth=1", self.url, f"+refs/heads/{branch}:{local_ref}"],
                self.path,
            )
        except GitError as error:  # the remote went away, or failed, between ls-remote and fetch
            raise GitUnavailable(
                f"cannot fetch {branch!r} from {redact(self.url)}: {error}; check the network and the remote"
            ) from error
        return (
            run_git(["rev-parse", "--verify", f"{local_ref}^{{commit}}"], self.path).stdout.decode().strip()
        )

    def read_tree(self, commit: str, directory: str) -> list[TreeFile]:
        """Every file under ``directory`` in ``commit``, read from the object store (never a work tree)."""
        prefix = directory.strip("/") + "/"
        listing = run_git(["ls-tree", "-r", "-z", "--full-tree", commit, "--", prefix], self.path).stdout
        entries: list[tuple[str, str]] = []
        for record in listing.split(b"\0"):
            if not record:
                continue
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
