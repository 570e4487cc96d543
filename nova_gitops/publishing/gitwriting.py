"""The rendered repository, as a local bare cache we fetch into, commit in, and push from.

Why plumbing and ``git fast-import`` and not GitPython's index: ``index.add`` is slower by an order of
magnitude and more, and fast-import writes only the trees on the changed paths, so a small change on top of a
large tree costs what the change costs. Why hash in memory: a render regenerates the whole tree, but only the
blobs whose git id (``sha1(b"blob <len>\\0" + bytes)``) differs from the parent tree's listing are sent to
git, so an incremental publish neither re-writes nor re-compresses what did not change.

Fetch and push go through GitPython's ``Remote`` API (``nova_gitops.clients.gitrunning``: refspecs, leases,
per-ref outcomes, progress), under the same environment policy and deadline as the plumbing.

Nothing here is ever partial on the remote: a commit is built in the local cache under a private ref and
only becomes visible to others when ``push`` succeeds. A process killed at any point leaves the remote as
it was and, at worst, a dangling private ref in the cache, which the next run overwrites.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from pathlib import Path

from nova_gitops import errors
from nova_gitops.clients import gitfailures, gitrunning
from nova_gitops.publishing.gitcommands import GitCommands, GitFailed
from nova_gitops.rendering.increments import blob_id

FILE_MODE = "100644"
STAGING_REF = "refs/nova/staging"
# Push rejections that mean "another push got there first": fetch, re-render and retry. The first three are
# git's own client-side refusals; the rest are the remote losing its ref-lock race to a concurrent push
# (receive-pack reports "failed to update ref" or "failed to lock", the ref backend "cannot lock ref ... is
# at X but expected Y" or "incorrect old value").
RETRYABLE_REJECTIONS = (
    "non-fast-forward",
    "fetch first",
    "stale info",
    "cannot lock ref",
    "failed to update ref",
    "failed to lock",
    "unable to lock",
    "incorrect old value",
    "but expected",
)
# Refusals by policy, which no retry can get past: only these are explained as branch protection.
POLICY_REFUSALS = ("hook declined", "protected")
DEFAULT_IDENTITY = ("nova-gitops", "nova-gitops@localhost")
BIG_COMMIT_FILES = 1000
"""A commit writing more files than this is a first publish or a large change: compressed as git does."""
SMALL_COMMIT_CONFIG = (("fastimport.unpackLimit", "0"), ("pack.compression", "1"))
"""fast-import keeps a small commit's pack as written (no ``unpack-objects``), compressed fast."""
SMALL_PACKS_KEPT = 32
"""Packs in the cache beyond which ``RenderedRepo.tidy`` rolls the small ones up (an incremental publish
leaves one, fast-import's; a roll-up is kept off the common path)."""


@dataclass(frozen=True, slots=True)
class TreeChanges:
    """What turns a parent tree into a rendered tree: files to write and paths to delete."""

    written: Mapping[str, bytes]
    deleted: tuple[str, ...]

    @property
    def is_empty(self) -> bool:
        return not self.written and not self.deleted


def tree_changes(listing: Mapping[str, str], files: Mapping[str, bytes]) -> TreeChanges:
    """Compare rendered bytes with a tree listing (path → blob id) by hashing in memory."""
    written = {path: data for path, data in files.items() if listing.get(path) != blob_id(data)}
    deleted = tuple(sorted(path for path in listing if path not in files))
    return TreeChanges(written, deleted)


class PushOutcome(Enum):
    PUSHED = "pushed"
    UP_TO_DATE = "up-to-date"
    REJECTED = "rejected"  # someone else moved the branch: fetch, re-render, retry


def cache_path(cache_dir: Path, url: str) -> Path:
    return cache_dir / "repos" / hashlib.sha256(url.encode()).hexdigest()


def quote_path(path: str) -> bytes:
    """A path as fast-import reads it: C-style quoted when it holds a quote, a backslash or a newline."""
    if not any(char in path for char in '"\\\n') and not path.startswith('"'):
        return path.encode()
    escaped = path.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'.encode()


def identity(environ: Mapping[str, str], role: str) -> tuple[str, str]:
    name = environ.get(f"GIT_{role}_NAME") or DEFAULT_IDENTITY[0]
    email = environ.get(f"GIT_{role}_EMAIL") or DEFAULT_IDENTITY[1]
    return name, email


def signature_date(environ: Mapping[str, str], role: str, now: float) -> str:
    """``GIT_AUTHOR_DATE`` / ``GIT_COMMITTER_DATE`` as fast-import's raw date (``<seconds> <zone>``), as
    ``git commit`` honours them (pinned dates give reproducible commit ids); ``now`` when unset or in a form
    other than git's raw (``[@]<seconds> <zone>``) or ISO 8601 with a zone."""
    pinned = (environ.get(f"GIT_{role}_DATE") or "").strip()
    raw = re.fullmatch(r"@?(\d{1,12}) ([+-]\d{4})", pinned)
    if raw:
        return f"{raw.group(1)} {raw.group(2)}"
    if pinned:
        try:
            when = datetime.fromisoformat(pinned)
        except ValueError:
            when = None
        delta = when.utcoffset() if when is not None else None
        if when is not None and delta is not None and when.timestamp() >= 0:
            minutes = int(delta.total_seconds() // 60)
            sign = "-" if minutes < 0 else "+"
            return f"{int(when.timestamp())} {sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"
    return f"{int(now)} +0000"


def _fast_import_stream(
    parent: str | None, changes: TreeChanges, message: str, environ: Mapping[str, str], *, now: float
) -> list[bytes]:
    """The commands that have ``git fast-import`` write one commit of ``changes`` on ``parent`` (onto
    ``STAGING_REF``) and print its id: the person and dates from ``environ`` as ``git commit`` takes them."""
    author, committer = identity(environ, "AUTHOR"), identity(environ, "COMMITTER")
    authored, committed = (
        signature_date(environ, "AUTHOR", now),
        signature_date(environ, "COMMITTER", now),
    )
    encoded = message.encode()
    chunks: list[bytes] = [
        b"reset %s\n" % STAGING_REF.encode(),  # forget the tip a previous run left, so `from` decides
        b"commit %s\n" % STAGING_REF.encode(),
        b"mark :1\n",
        b"author %s <%s> %s\n" % (author[0].encode(), author[1].encode(), authored.encode()),
        b"committer %s <%s> %s\n" % (committer[0].encode(), committer[1].encode(), committed.encode()),
        b"data %d\n%s\n" % (len(encoded), encoded),
    ]
    if parent:
        chunks.append(b"from %s\n" % parent.encode())
    chunks += [b"D %s\n" % quote_path(path) for path in changes.deleted]
    for path in sorted(changes.written):
        data = changes.written[path]
        chunks.append(b"M %s inline %s\ndata %d\n" % (FILE_MODE.encode(), quote_path(path), len(data)))
        chunks.append(data)
        chunks.append(b"\n")
    chunks.append(b"get-mark :1\n")  # the commit's id on stdout: no rev-parse afterwards
    chunks.append(b"done\n")
    return chunks


class RenderedRepo:
    """A bare clone of the rendered repository kept under the cache directory, one per URL."""

    def __init__(
        self,
        path: Path,
        url: str,
        *,
        timeout: float = 120.0,
        progress: gitrunning.ProgressHook | None = None,  # sees fetches and pushes advance
    ) -> None:
        self.path = path
        self.url = url
        self.repo = gitrunning.open_cache(path, f"the cache {path} of {url}")
        self.remote = gitrunning.Remote(self.repo, url, timeout=timeout, progress=progress)
        self.git = GitCommands(path, timeout=timeout)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Exclusive use of this cache (other publishers on this machine wait; other machines race)."""
        with open(self.path.parent / f"{self.path.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _network(self, *args: str, action: str) -> bytes:
        try:
            return self.git.run(*args, network=True).stdout
        except GitFailed as failure:
            raise remote_error(self.url, action, failure) from None

    def remote_head(self, branch: str) -> str | None:
        """The commit ``branch`` points at on the remote, or None when the branch does not exist."""
        output = self._network("ls-remote", "--heads", self.url, f"refs/heads/{branch}", action="read")
        for line in output.decode().splitlines():
            sha, _, ref = line.partition("\t")
            if ref == f"refs/heads/{branch}":
                return sha
        return None

    def fetch(self, branch: str, *, into: str = "refs/nova/remote") -> str | None:
        """Fetch ``branch`` into the cache (as the private ref ``into``); its commit, or None when the remote
        has no such branch."""
        head = self.remote_head(branch)
        if head is not None and not self.has_commit(head):
            try:
                self.remote.fetch([f"+refs/heads/{branch}:{into}"], no_tags=True)
            except GitFailed as failure:
                raise remote_error(self.url, "fetch", failure) from None
        return head

    def has_commit(self, sha: str) -> bool:
        return self.git.run("cat-file", "-e", f"{sha}^{{commit}}", check=False).status == 0

    def listing(self, commit: str | None, *, paths: Sequence[str] = (), links: bool = True) -> dict[str, str]:
        """Every file of ``commit`` as path → blob id (empty for no commit); only those under ``paths``
        (files or directories) when given; without symbolic links (mode 120000, also a ``blob``) when
        ``links`` is False."""
        if commit is None:
            return {}
        output = self.git.run("ls-tree", "-r", "-z", "--full-tree", commit, "--", *paths).stdout
        listing: dict[str, str] = {}
        for entry in output.split(b"\0"):  # "100644 blob <40 hex>\t<path>": fixed offsets, no splitting
            if entry[7:12] == b"blob " and (links or entry[:6] != b"120000"):
                listing[entry[53:].decode()] = entry[12:52].decode()
        return listing

    def read(self, commit: str | None, path: str) -> bytes | None:
        if commit is None:
            return None
        result = self.git.run("cat-file", "blob", f"{commit}:{path}", check=False)
        return result.stdout if result.status == 0 else None

    def read_blobs(self, blob_ids: Sequence[str]) -> dict[str, bytes]:
        """Contents of many blobs in one ``cat-file --batch`` call."""
        if not blob_ids:
            return {}
        output = self.git.run(
            "cat-file", "--batch", stdin="".join(f"{sha}\n" for sha in blob_ids).encode()
        ).stdout
        contents: dict[str, bytes] = {}
        position = 0
        for sha in blob_ids:
            header_end = output.index(b"\n", position)
            size = int(output[position:header_end].split(b" ")[2])
            contents[sha] = output[header_end + 1 : header_end + 1 + size]
            position = header_end + 2 + size
        return contents

    def message(self, commit: str) -> str:
        return self.git.run("log", "-1", "--format=%B", commit).stdout.decode()

    def commit(
        self,
        parent: str | None,
        changes: TreeChanges,
        message: str,
        *,
        environ: Mapping[str, str],
    ) -> str:
        """Write one commit with ``git fast-import`` and return its id; no ref outside the cache moves.

        Only the trees on the changed paths are written (fast-import loads the parent's trees lazily), and
        a small commit is kept as the small pack fast-import wrote, compressed fast and without deltas: by
        default fast-import would delta each blob against the one before it in the stream (unrelated
        files), compress at level 6 and then explode a pack of fewer than 100 objects into loose objects
        with ``unpack-objects`` — on a one-workload change that was mostly compressing the single-file
        placement.yaml three times over, most of what the commit took. Big
        commits (a first publish) keep level-6 compression, since a push sends the stored bytes as they
        are."""
        self.tidy()
        chunks = _fast_import_stream(parent, changes, message, environ, now=time.time())
        small = len(changes.written) <= BIG_COMMIT_FILES
        options = [part for name, value in SMALL_COMMIT_CONFIG for part in ("-c", f"{name}={value}")]
        options = options if small else []
        running = self.git.start(
            [*options, "fast-import", "--quiet", "--done", "--force", "--date-format=raw", "--depth=0"]
        )
        stdin = running.stdin()
        try:
            stdin.writelines(chunks)
            stdin.close()
        except BrokenPipeError:
            pass
        stdout = running.proc.stdout.read().decode(errors="replace") if running.proc.stdout else ""
        stderr = running.proc.stderr.read().decode(errors="replace") if running.proc.stderr else ""
        if running.proc.wait() != 0:
            raise errors.RepoError(f"git fast-import failed in the cache {self.path}: {stderr.strip()}")
        commit = stdout.strip()
        if len(commit) != 40 or any(char not in "0123456789abcdef" for char in commit):
            raise errors.RepoError(f"git fast-import in the cache {self.path} named no commit: {stdout!r}")
        return commit

    def tidy(self) -> None:
        """Roll the small packs that incremental commits leave up into one once there are more than
        ``SMALL_PACKS_KEPT`` (``git repack --geometric``: the big pack of the first publish is not rewritten,
        and no delta search is made), so looking objects up stays cheap; about every that many commits."""
        try:
            packs = sum(1 for name in os.listdir(self.path / "objects" / "pack") if name.endswith(".pack"))
        except OSError:
            return
        if packs > SMALL_PACKS_KEPT:
            self.git.run("repack", "-d", "-q", "--geometric=2", "--window=0", check=False)

    def same_content(self, commit: str, other: str) -> bool:
        """Whether two commits hold the same tree on the same parents (differing only in dates or message)."""
        if commit == other:
            return True
        listed = self.git.run("rev-list", "--no-walk", "--format=%T %P", commit, other).stdout.decode()
        contents = [line for line in listed.splitlines() if not line.startswith("commit ")]
        return len(contents) == 2 and contents[0] == contents[1]

    def push(
        self, commit: str, branch: str, *, lease: bool = False, expect: str | None = None
    ) -> PushOutcome:
        """Push ``commit`` to ``branch``; a non-fast-forward comes back as ``REJECTED``, not as an error.

        With ``lease`` (for branches nova-gitops owns, like PR branches) the update is forced, provided the
        branch is still at ``expect`` (None: does not exist); otherwise it is an ordinary fast-forward push.
        """
        options = {"force_with_lease": f"refs/heads/{branch}:{expect or ''}"} if lease else {}
        try:
            result = self.remote.push({f"refs/heads/{branch}": commit}, **options)
        except GitFailed as failure:
            raise remote_error(self.url, "push to", failure) from None
        rejected = [update.line() for update in result.rejected]
        if not result.error and not rejected:
            up_to_date = any(update.flag == "=" for update in result.updates)
            return PushOutcome.UP_TO_DATE if up_to_date else PushOutcome.PUSHED
        if rejected and all(is_retryable(line) for line in rejected):
            return PushOutcome.REJECTED
        refused = GitFailed(("push", self.url), 1, "\n".join(rejected) or result.error)
        raise remote_error(self.url, "push to", refused)


def is_retryable(rejection: str) -> bool:
    """Whether a ``git push --porcelain`` rejection line means a lost race (retry) rather than a refusal."""
    if any(reason in rejection for reason in POLICY_REFUSALS):
        return False
    return any(reason in rejection for reason in RETRYABLE_REJECTIONS)


def remote_error(url: str, action: str, failure: GitFailed) -> errors.RepoError:
    """A message that says what failed and what to check next."""
    if failure.timed_out:
        return errors.RepoError(
            f"cannot {action} {url}: git gave no answer in time; check that the host is up and reachable "
            f"(or raise --git-timeout)"
        )
    hint = "check the URL, your network and your credentials"
    if any(reason in failure.stderr for reason in POLICY_REFUSALS):
        hint = "the remote refused the push (branch protection or a hook): check the branch's rules"
    elif "remote rejected" in failure.stderr:
        hint = "the remote could not update the branch: check its logs, disk space and permissions"
    return errors.RepoError(f"cannot {action} {url}: {last_line(failure.stderr)}; {hint}")


last_line = functools.partial(gitfailures.last_line, otherwise="git failed")


def environment() -> Mapping[str, str]:
    return os.environ
