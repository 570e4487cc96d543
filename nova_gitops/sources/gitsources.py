"""Sources in git: ``git-url[@ref]`` (any URL git understands, ``file://`` included) or a local repository.

Why a clone cache: CI jobs and the controller render the same source again and again; cloning each time costs
the whole history. Each URL gets one bare repository under ``$XDG_CACHE_HOME/nova-gitops/sources/<sha256 of
url>`` that is fetched (heads and tags, pruned) and never re-cloned. An fcntl lock file beside it makes
concurrent runs on one machine take turns instead of corrupting it.

A revision is read by exporting its tree into a fresh temporary directory, so what the renderer reads is
exactly one commit: never a work tree that someone is half-way through updating. The export is written from
git's objects (``ls-tree`` for the entries, one ``cat-file --batch`` process streaming every blob) rather
than checked out, because a checkout makes the tree's symbolic links real, and ``steal.yaml -> /etc/passwd``
pushed to a source would have the renderer read a file of the machine it runs on (a CI runner, the
controller's pod). :mod:`nova_gitops.sources.exporting` says what a link becomes instead.

The cache is created (``Repo.init``) and fetched (``Remote.fetch`` with refspecs) through GitPython's API
(``nova_gitops.clients.gitrunning``); the export is plumbing (``ls-tree`` and one streamed ``cat-file
--batch``), because GitPython's object layer answers one object at a time. Every command runs under
``nova_gitops.clients.gitenvironment``'s policy (the one publishing and the agent use too): through
``gitrunning.PolicyGit``, and for the streamed ``cat-file``, which ``subprocess`` runs, with the same
environment. The git
directory is held as an absolute path: git runs in the repository's parent directory, where a path relative
to ours would name another (``diff --source fleet`` once found "no branch named main").
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from subprocess import PIPE
from typing import IO, cast

import git

from nova_gitops import errors
from nova_gitops.clients import gitenvironment, gitrunning
from nova_gitops.clients.gitrunning import GitFailed
from nova_gitops.sources import exporting, reading, worktree

SCP_LIKE = re.compile(r"^[\w.-]+@[\w.-]+:")  # git@host:org/repo


@dataclass(frozen=True, slots=True)
class GitSpec:
    """A source named by URL, optionally at a ref (branch, tag or commit); None means the remote's HEAD."""

    url: str
    ref: str | None = None


@dataclass(frozen=True, slots=True)
class Checkout:
    """One revision of a source, exported to ``root`` (read-only by convention, deleted after use)."""

    root: Path
    repo: str
    revision: str | None
    repository: Repository | None = None  # where the revision's history can be asked about
    blobs: Mapping[str, str] | None = None
    """Path → blob id of each file the export wrote, or of each file of a work tree that holds its index
    blob (``open_directory``'s ``with_blobs``); None when not known. Lets a load with a parse cache skip
    reading the files it holds (``directory.read_source``)."""


def is_url_like(text: str) -> bool:
    """Whether ``text`` names a repository by itself (a URL with a path, scp-like, or an existing path)."""
    if "://" in text:
        rest = text.split("://", 1)[1]
        return "/" in rest.rstrip("/") or text.startswith("file://")
    return bool(SCP_LIKE.match(text)) or os.path.isdir(text)


def parse_spec(text: str) -> GitSpec:
    """``url@ref`` → GitSpec. The ref is split at the last ``@`` only when what precedes it is a complete
    repository name, so ``git@github.com:org/repo`` and ``https://user@host/repo`` keep their ``@``."""
    url, sep, ref = text.rpartition("@")
    if sep and ref and ":" not in ref and is_url_like(url):
        return GitSpec(url, ref)
    return GitSpec(text, None)


def is_bare_repository(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def default_cache_dir(environ: Mapping[str, str]) -> Path:
    base = environ.get("XDG_CACHE_HOME") or str(Path(environ.get("HOME", "~")).expanduser() / ".cache")
    return Path(base) / "nova-gitops"


class Repository:
    """A git repository we read revisions from (a cache's bare clone or a user's own work tree)."""

    def __init__(self, git_dir: Path, *, timeout: float = 120.0) -> None:
        self.git_dir = git_dir.absolute()
        self.timeout = timeout
        self._git = gitrunning.PolicyGit(str(git_dir.parent))

    def run(
        self, *args: str, network: bool = False, check: bool = True, env: Mapping[str, str] | None = None
    ) -> str:
        try:
            status, out, err = self._git.execute(
                self.command(args),
                with_extended_output=True,
                with_exceptions=False,
                kill_after_timeout=self.timeout if network else None,
                env=dict(env) if env else None,
            )
        except git.GitCommandError as error:  # the deadline raises even without exceptions enabled
            raise gitrunning.failure(args, error) from None
        if check and status != 0:
            raise GitFailed(args, int(status), str(err))
        return str(out)

    def resolve(self, ref: str | None) -> str | None:
        """The commit ``ref`` names (branch, tag, commit id or prefix); None when it names nothing."""
        candidates = ["HEAD"] if ref is None else [f"refs/heads/{ref}", f"refs/tags/{ref}", ref]
        for candidate in candidates:
            result = self.run("rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}", check=False)
            if result.strip():
                return result.strip()
        return None

    def export(self, revision: str, destination: Path) -> dict[str, str]:
        """Write the files of ``revision`` into the empty directory ``destination``, from git's objects.

        Regular files get their blob's bytes (no filters, no line-ending conversion: what the commit holds).
        A symbolic link is never written as the link the tree holds (``export_plan`` says what it becomes),
        so no file outside ``destination`` can be reached through the export; the directory reader reports
        each refused link as a problem that names its path, as it does for a directory source.

        Returns the path → blob id of each file written (``Checkout.blobs``)."""
        entries = exporting.tree_entries(self.run_bytes("ls-tree", "-r", "-z", "--full-tree", revision))
        links: dict[str, list[str]] = {}  # blob id → the links whose target text it is
        for entry in entries:
            if entry.mode == exporting.LINK_MODE:
                links.setdefault(entry.oid, []).append(entry.path)
        targets: dict[str, str] = {}
        for oid, data in self.blobs(links) if links else ():
            targets.update((path, os.fsdecode(data)) for path in links[oid])
        plan = exporting.export_plan(entries, targets)
        writer = exporting.TreeWriter(destination)
        for oid, data in self.blobs(plan.files):
            for path, executable in plan.files[oid]:
                writer.file(path, data, executable=executable)
        for path in plan.directories:
            writer.directory(path)
        for path, target in plan.links.items():
            writer.link(path, target)
        return plan.blobs()

    def is_ancestor(self, older: str, newer: str) -> bool | None:
        """Whether ``older`` is an ancestor of ``newer``; None when either commit is unknown here."""
        for sha in (older, newer):
            if self.run("cat-file", "-t", sha, check=False).strip() != "commit":
                return None
        result = self.run("rev-list", "--count", f"{newer}..{older}", check=False).strip()
        return result == "0"

    def supersedes(self, ours: str, theirs: str) -> bool:
        """Whether ``theirs`` is a strictly newer revision than ``ours`` (a descendant of it)."""
        return theirs != ours and self.is_ancestor(ours, theirs) is True

    def command(self, args: Iterable[str]) -> list[str]:
        """git with ``args`` on this repository (``PolicyGit`` applies the environment policy)."""
        return ["git", f"--git-dir={self.git_dir}", *args]

    def run_bytes(self, *args: str) -> bytes:
        """``run`` for output that is not text (file names in a ``-z`` listing may be any bytes)."""
        status, out, err = self._git.execute(
            self.command(args),
            with_extended_output=True,
            with_exceptions=False,
            stdout_as_string=False,
            strip_newline_in_stdout=False,
        )
        if status != 0:
            raise GitFailed(args, int(status), str(err))
        return bytes(out)

    def blobs(self, oids: Iterable[str]) -> Iterator[tuple[str, bytes]]:
        """Each blob's id and bytes, in the order asked, streamed by one ``cat-file --batch`` process. The
        ids are written to a file first: a pipe would need a thread to feed git while its answers are read
        (GitPython's persistent ``cat-file`` is one request and answer at a time)."""
        with tempfile.TemporaryFile() as asked:
            asked.write("".join(f"{oid}\n" for oid in oids).encode())
            asked.seek(0)
            process = subprocess.Popen(
                self.command(["cat-file", "--batch", "--buffer"]),
                env=gitenvironment.git_environment(os.environ),
                stdin=asked,
                stdout=PIPE,
                stderr=PIPE,
                bufsize=1 << 20,
            )
        stdout, stderr = cast(IO[bytes], process.stdout), cast(IO[bytes], process.stderr)
        try:
            while header := stdout.readline():
                oid, kind, size = [*header.decode().split(), "", ""][:3]
                if kind != "blob":
                    raise errors.RepoError(
                        f"{self.git_dir}: object {oid} is {kind or 'missing'}, not a file's contents; "
                        "the repository is incomplete (fetch it again)"
                    )
                data = stdout.read(int(size))
                stdout.read(1)  # the newline after each blob
                yield oid, data
        except BaseException:
            process.kill()
            raise
        finally:
            status = process.wait()
            message = stderr.read().decode(errors="replace")
            stdout.close()
            stderr.close()
        if status != 0:
            raise GitFailed(["cat-file", "--batch"], status, message)


class SourceCache(Repository):
    """The bare clone of one source URL under the cache directory: fetched, never re-cloned."""

    def __init__(
        self,
        url: str,
        cache_dir: Path,
        *,
        timeout: float = 120.0,
        progress: gitrunning.ProgressHook | None = None,  # sees fetches advance
    ) -> None:
        self.url = url
        path = cache_dir / "sources" / hashlib.sha256(url.encode()).hexdigest()
        path.mkdir(parents=True, exist_ok=True)
        super().__init__(path, timeout=timeout)
        self.repo = gitrunning.open_cache(path, f"the source cache {path}")
        self.remote = gitrunning.Remote(self.repo, url, timeout=timeout, progress=progress)

    @contextmanager
    def locked(self) -> Iterator[None]:
        with open(f"{self.git_dir}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def fetch(self, ref: str | None = None) -> None:
        """Bring the cache up to date with the remote's branches, tags and HEAD (and ``ref`` when it is a
        commit id that no branch or tag reaches)."""
        refspecs = ["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*", "+HEAD:refs/nova/remote-head"]
        try:
            self.remote.fetch(refspecs, prune=True)
        except GitFailed as failure:
            if "couldn't find remote ref HEAD" not in failure.stderr:
                raise source_error(self.url, failure) from None
            try:  # an empty repository, or no default branch
                self.remote.fetch(refspecs[:2], prune=True)
            except GitFailed as again:
                raise source_error(self.url, again) from None
        if ref is not None and self.resolve(ref) is None and re.fullmatch(r"[0-9a-f]{7,40}", ref):
            with contextlib.suppress(GitFailed):  # not advertised: resolve() then says it names nothing
                self.remote.fetch([ref])

    def resolve(self, ref: str | None) -> str | None:
        return super().resolve("refs/nova/remote-head" if ref is None else ref)

    def supersedes(self, ours: str, theirs: str) -> bool:
        """As ``Repository.supersedes``, fetching once when ``theirs`` was pushed after our fetch."""
        if theirs != ours and self.is_ancestor(ours, theirs) is None:
            self.fetch(theirs)
        return super().supersedes(ours, theirs)


def source_error(url: str, failure: GitFailed) -> errors.RepoError:
    text = failure.stderr
    if failure.timed_out:
        return errors.RepoError(
            f"cannot fetch the source {url}: no answer in time; check that the host is up"
        )
    lines = [line.strip(" '") for line in text.splitlines() if line.strip(" '")]
    detail = next(
        (line for line in reversed(lines) if line.startswith(("fatal:", "error:"))),
        lines[-1] if lines else "",
    )
    return errors.RepoError(
        f"cannot fetch the source {url}: {detail}; check the URL, your network and credentials"
    )


@contextmanager
def checkout(
    spec: GitSpec,
    *,
    cache_dir: Path,
    timeout: float = 120.0,
    progress: gitrunning.ProgressHook | None = None,
) -> Iterator[Checkout]:
    """Fetch ``spec`` into the cache and export its revision to a temporary directory for the block."""
    cache = SourceCache(spec.url, cache_dir, timeout=timeout, progress=progress)
    # closing: GitPython's Repo sits in reference cycles, and its helper processes must not wait for the
    # garbage collector (which a render may hold off)
    with cache.locked(), contextlib.closing(cache.repo):
        cache.fetch(spec.ref)
        revision = cache.resolve(spec.ref)
        if revision is None:
            where = f"ref {spec.ref!r}" if spec.ref else "default branch (HEAD)"
            raise errors.RepoError(
                f"the source {spec.url} has no {where}; name an existing branch, tag or commit"
            )
        with tempfile.TemporaryDirectory(prefix="nova-source-") as scratch:
            blobs = cache.export(revision, Path(scratch))
            yield Checkout(Path(scratch), public_url(spec.url), revision, cache, blobs)


@contextmanager
def checkout_local(path: Path, ref: str) -> Iterator[Checkout]:
    """Export ``ref`` of the user's own repository at ``path`` (no cache, no fetch)."""
    repository = Repository(git_dir_of(path))
    revision = repository.resolve(ref)
    if revision is None:
        raise errors.RepoError(f"{path} has no branch, tag or commit named {ref!r}")
    with tempfile.TemporaryDirectory(prefix="nova-source-") as scratch:
        blobs = repository.export(revision, Path(scratch))
        yield Checkout(Path(scratch), str(path), revision, repository, blobs)


def git_dir_of(path: Path) -> Path:
    """The git directory of a work tree or bare repository at ``path``; RepoError when it is neither."""
    if is_bare_repository(path):
        return path
    dot_git = path / ".git"
    if dot_git.is_dir():
        return dot_git
    if dot_git.is_file():  # a linked work tree or submodule: "gitdir: <path>"
        try:
            text = reading.read_regular(dot_git, 4096).decode("utf-8", "replace")
        except (OSError, reading.Refused):
            text = ""
        target = text.partition("gitdir:")[2].strip()
        if target:
            return (path / target).resolve()
    raise errors.RepoError(f"{path} is not the top of a git repository; run the command from its root")


def open_directory(path: Path, *, with_blobs: bool = False) -> Checkout:
    """A directory source as it is on disk: recorded by its origin URL (else its name) and by HEAD, but only
    when the work tree is clean — the directory is read with its uncommitted changes, and a commit must not
    claim a revision it was not rendered from.

    ``with_blobs`` also gives the blob id of each file that holds its index entry's bytes
    (``worktree.clean_blobs``; one ``ls-files`` more), so a load with a parse cache reads only the files
    changed since it was written, clean tree or not."""
    try:
        repository = Repository(git_dir_of(path))
    except errors.RepoError:
        return Checkout(path, path.resolve().name, None)
    origin = repository.run("config", "--get", "remote.origin.url", check=False).strip()
    settings = _settings(repository)
    # the user's global ignore file, which git no longer finds itself (no global configuration)
    own_excludes = settings.get("core.excludesfile", "")
    excludes = None if own_excludes else user_excludes_file(os.environ)
    # --no-optional-locks: asking whether the tree is clean must not rewrite the user's index (a refresh)
    status_command = [
        "--no-optional-locks",
        *(["-c", f"core.excludesFile={excludes}"] if excludes else []),
        f"--work-tree={path.absolute()}",
        "status",
        "--porcelain",
        "-z",
    ]
    try:
        status: bytes | None = repository.run_bytes(*status_command)
    except GitFailed:
        status = None
    head = repository.resolve(None)
    repo = public_url(origin) if origin else path.resolve().name
    blobs = None
    if with_blobs and status is not None:
        with contextlib.suppress(GitFailed):  # without blob ids, every file is read: still the same load
            listing = repository.run_bytes("ls-files", "--stage", "-v", "-z")
            blobs = worktree.clean_blobs(path, repository.git_dir, listing, status, settings, os.environ)
    return Checkout(path, repo, head if not (status or b"").strip() else None, repository, blobs)


def _settings(repository: Repository) -> dict[str, str]:
    """The few configuration values ``open_directory`` needs (lower-case keys; the last value of each)."""
    pattern = "^core\\.(excludesfile|autocrlf|attributesfile)$"
    found: dict[str, str] = {}
    for line in repository.run("config", "--get-regexp", pattern, check=False).splitlines():
        key, _, value = line.partition(" ")
        found[key.lower()] = value.strip()
    return found


def user_excludes_file(environ: Mapping[str, str]) -> str | None:
    """The user's global ignore file: ``core.excludesFile`` of their global configuration, else git's
    default ``$XDG_CONFIG_HOME/git/ignore``; None when there is none. git runs without global configuration
    (``clients.gitenvironment``), so asking whether a work tree is clean would otherwise count files the
    user ignores everywhere (``.DS_Store``, editor files) as changes. Read with GitPython's parser: a path
    of patterns, nothing that runs."""
    home = Path(environ.get("HOME") or "~").expanduser()
    xdg = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
    configured = ""
    for config in (xdg / "git" / "config", home / ".gitconfig"):  # the later one wins, as in git
        if config.is_file():
            with contextlib.suppress(Exception), git.GitConfigParser(str(config), read_only=True) as parser:
                configured = str(parser.get_value("core", "excludesfile", default="")) or configured
    chosen = Path(configured.replace("~", str(home), 1) if configured.startswith("~") else configured)
    if not configured:
        chosen = xdg / "git" / "ignore"
    return str(chosen) if chosen.is_file() else None


def public_url(url: str) -> str:
    """``url`` without a password or token (``https://user:token@host`` → ``https://host``): it ends up
    in commits, README.md and logs."""
    if "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    host, slash, path = rest.partition("/")
    return f"{scheme}://{host.rpartition('@')[2]}{slash}{path}"


def is_git_spec(text: str) -> bool:
    """Whether SOURCE names a git repository (URL, ``url@ref``, or a bare repository) rather than a
    directory of manifests. A path that exists nowhere and looks like no URL is a (missing) directory,
    so the user hears "does not exist" rather than a fetch error. An existing regular file is a single
    manifest file, which ``read_source`` reads, never a repository."""
    path = Path(text)
    if path.is_dir():
        return is_bare_repository(path)
    if path.is_file():
        return False
    return is_url_like(parse_spec(text).url) or path.exists()
