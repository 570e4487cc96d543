"""Running git for nova-gitops and nova-agent: GitPython's ``Repo`` and ``Remote`` under the one policy.

What goes through GitPython's API: opening and creating the bare caches (``Repo``, ``Repo.init``), fetch
and push (``Remote.fetch``/``Remote.push`` with refspecs, ``--force-with-lease``, ``--atomic``; the
push's per-ref outcome read from GitPython's ``PushInfo``), small reads of refs, commits and blobs, and
progress (``git.RemoteProgress``, offered to callers as :data:`ProgressHook`). What stays on plumbing, run
through the same :class:`PolicyGit`: ``fast-import``, ``ls-tree``, ``cat-file --batch`` and ``ls-remote``,
where GitPython has no API or its object layer (one object per request) would be slower on a 100k-file tree
(docs/publishing.md, "Git").

Every command — API or plumbing — runs under ``nova_gitops.clients.gitenvironment``'s policy: GitPython
copies ``os.environ`` for each child and cannot unset a variable, so :class:`PolicyGit` puts ``env -u NAME``
in front of the command for the inherited variables the policy drops, and passes the policy's own variables
(no system or global configuration, no hooks, no prompts, the protocol allow-list) as the call's
environment. ``Repo`` objects made here use it for every command GitPython runs for them, its persistent
``cat-file`` included. GitPython also refuses ``ext::``-style remotes and ``--upload-pack``-style options
itself; both refusals, like every ``git.exc.GitCommandError``, come out of this module as
:class:`GitFailed`, which the callers turn into their own errors (``errors.RepoError``, the agent's
``GitError``). GitPython's own warnings about a failed push or fetch name the URL; its loggers get a filter
that masks credentials in them.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import git
import git.exc

from nova_gitops import errors
from nova_gitops.clients import gitenvironment, gitfailures


class GitFailed(errors.RepoError):
    """A git command failed; ``stderr`` is git's own explanation (GitPython's refusals included).

    A ``RepoError``, so one that no caller turned into a message of its own still reaches the user as what
    it is, a repository that could not be read or written, never as an unexpected crash."""

    def __init__(self, command: Sequence[str], status: int, stderr: str) -> None:
        self.command = tuple(command)
        self.status = status
        self.stderr = stderr.strip()
        shown = " ".join(scrub(part) for part in self.command)
        super().__init__(f"git {shown} exited {status}: {scrub(self.stderr)}")

    @property
    def timed_out(self) -> bool:
        return self.status == -9 or "did not complete in" in self.stderr or "timed out" in self.stderr


def failure(command: Sequence[str], error: Exception) -> GitFailed:
    """``error`` (anything GitPython raises) as a :class:`GitFailed` for ``command``."""
    if isinstance(error, git.exc.UnsafeProtocolError):
        return GitFailed(
            command,
            128,
            "fatal: refused: a URL of this kind (a remote helper such as ext::) can run commands on this "
            "machine; use a file://, git://, ssh:// or https:// URL",
        )
    if isinstance(error, git.exc.UnsafeOptionError):
        return GitFailed(command, 128, f"fatal: refused: {error}".split(", use `allow_unsafe")[0])
    if isinstance(error, git.exc.GitCommandError):
        status = error.status if isinstance(error.status, int) else 128
        stderr = error.stderr if isinstance(error.stderr, str) else str(error.stderr)
        # GitPython wraps git's stderr as "\n  stderr: '<text>'"
        text = stderr.strip().removeprefix("stderr:").strip().strip("'")
        if "timed out" in text or "kill_after_timeout" in text:
            status = -9
        return GitFailed(command, status, text or str(error))
    return GitFailed(command, 128, str(error))


class PolicyGit(git.Git):
    """``git.Git`` whose every command runs under ``gitenvironment``'s policy (see the module docstring).

    ``environ`` is what the policy decides on (None: ``os.environ`` at each call); a call's own ``env``
    (a private index, say) is passed as it is."""

    def __init__(self, working_dir: Any = None, environ: Mapping[str, str] | None = None) -> None:
        super().__init__(working_dir)
        self._policy_environ = environ

    def execute(self, command: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(command, list | tuple) and command:
            own = dict(kwargs.pop("env", None) or {})
            # what GitPython's child really inherits is os.environ: drop from it (and from an explicit
            # environ) what the policy drops
            decided = os.environ if self._policy_environ is None else self._policy_environ
            unset, assign = gitenvironment.policy({**os.environ, **decided}, passed=own)
            kwargs["env"] = {**assign, **own}
            command = [*gitenvironment.unset_prefix(unset), *command]
        return super().execute(command, *args, **kwargs)


class PolicyRepo(git.Repo):
    """``git.Repo`` whose commands (its persistent ``cat-file`` included) run through :class:`PolicyGit`."""

    GitCommandWrapperType = PolicyGit


def open_repo(path: Path) -> PolicyRepo:
    """The repository whose git directory (bare) or work tree is ``path``."""
    try:
        return PolicyRepo(str(path))
    except (git.exc.InvalidGitRepositoryError, git.exc.NoSuchPathError) as error:
        raise GitFailed(("open", str(path)), 128, f"fatal: not a git repository: {error}") from None


def open_bare(path: Path) -> PolicyRepo:
    """The bare repository at ``path``, created (``Repo.init``) when there is none yet."""
    if (path / "HEAD").exists():
        return open_repo(path)
    try:
        PolicyRepo.init(str(path), mkdir=True, bare=True, quiet=True)
    except git.exc.GitCommandError as error:
        raise failure(("init", "--bare", str(path)), error) from None
    return open_repo(path)


def open_cache(path: Path, what: str) -> PolicyRepo:
    """:func:`open_bare` for a cache of ours; one that cannot be created is a ``RepoError`` naming ``what``
    (``the cache … of URL``, ``the source cache …``) and the likely cause."""
    try:
        return open_bare(path)
    except GitFailed as cannot:
        raise errors.RepoError(
            f"cannot create {what}: {gitfailures.last_line(cannot.stderr, 'git failed')}; check that the "
            "cache directory (--cache-dir) is writable"
        ) from None


# { Progress


@dataclass(frozen=True, slots=True)
class Progress:
    """One progress report of a fetch or a push, as git prints it (``Receiving objects: 40% (4/10)``)."""

    stage: str  # "counting", "compressing", "receiving", "resolving", "writing", "finding sources", ...
    done: int
    total: int | None  # None while git does not know
    message: str  # git's own suffix ("1.2 MiB | 3 MiB/s"), often empty


ProgressHook = Callable[[Progress], None]
"""What a caller passes to see a fetch or push advance (a rich progress bar, a log line)."""

STAGES: Final[Mapping[int, str]] = {
    git.RemoteProgress.COUNTING: "counting",
    git.RemoteProgress.COMPRESSING: "compressing",
    git.RemoteProgress.WRITING: "writing",
    git.RemoteProgress.RECEIVING: "receiving",
    git.RemoteProgress.RESOLVING: "resolving",
    git.RemoteProgress.FINDING_SOURCES: "finding sources",
    git.RemoteProgress.CHECKING_OUT: "checking out",
}


class _Reporter(git.RemoteProgress):
    def __init__(self, hook: ProgressHook) -> None:
        super().__init__()
        self._hook = hook

    def update(
        self, op_code: int, cur_count: str | float, max_count: str | float | None = None, message: str = ""
    ) -> None:
        stage = STAGES.get(op_code & self.OP_MASK, "working")
        total = int(float(max_count)) if max_count not in (None, "") else None
        self._hook(Progress(stage, int(float(cur_count or 0)), total, message or ""))


def reporter(hook: ProgressHook | None) -> git.RemoteProgress | None:
    return None if hook is None else _Reporter(hook)


# } END progress


@dataclass(frozen=True, slots=True)
class RefUpdate:
    """One ref of a push as the remote answered: git's porcelain flag and summary, e.g. ``!`` and
    ``[rejected] (stale info)``; ``=`` is up to date."""

    ref: str
    flag: str
    summary: str

    @property
    def rejected(self) -> bool:
        return self.flag == "!"

    def line(self) -> str:
        """The update as ``git push --porcelain`` prints it (what rejection reasons are matched against)."""
        return f"{self.flag}\t{self.ref}\t{self.summary}"


FLAGS: Final = (
    (
        git.PushInfo.ERROR
        | git.PushInfo.REJECTED
        | git.PushInfo.REMOTE_REJECTED
        | git.PushInfo.REMOTE_FAILURE,
        "!",
    ),
    (git.PushInfo.UP_TO_DATE, "="),
    (git.PushInfo.DELETED, "-"),
    (git.PushInfo.NEW_TAG | git.PushInfo.NEW_HEAD, "*"),
    (git.PushInfo.FORCED_UPDATE, "+"),
)


def _flag(info: git.PushInfo) -> str:
    return next((flag for mask, flag in FLAGS if info.flags & mask), " ")


@dataclass(frozen=True, slots=True)
class PushResult:
    """Every ref of a push, and git's error output when the push as a whole failed."""

    updates: tuple[RefUpdate, ...]
    error: str  # empty when git exited 0

    @property
    def rejected(self) -> tuple[RefUpdate, ...]:
        return tuple(update for update in self.updates if update.rejected)


PUSH_SOURCE_PREFIX: Final = "refs/nova/push/"
"""Local refs (``refs/nova/push/<commit>``) that name what a push sends, for the push only: GitPython reads
a push's answer per ref only when the source side is a ref, not a bare commit id. One per distinct commit,
not per remote ref (a release batch moves 100 refs to one commit: writing 100 refs showed in
bench/releases.py), and named by the commit, so that two pushes from one cache at once (agents of one
machine sharing it) can never send each other's commit. Written and removed by GitPython in-process (no
git process)."""


class Remote:
    """A remote given by URL (no ``[remote]`` section is written: a token in the URL never lands in a
    config file), fetched from and pushed to through GitPython with a deadline and optional progress."""

    def __init__(
        self, repo: git.Repo, url: str, *, timeout: float = 120.0, progress: ProgressHook | None = None
    ) -> None:
        self.repo = repo
        self.url = url
        self.timeout = timeout
        self.progress = progress
        self._remote = git.Remote(repo, url)

    def fetch(self, refspecs: Sequence[str], **options: Any) -> None:
        """``git fetch <url> <refspecs>``; ``options`` are GitPython's keywords (``prune=True``)."""
        try:
            self._remote.fetch(
                list(refspecs),
                progress=reporter(self.progress),
                verbose=False,
                kill_after_timeout=self.timeout,
                **options,
            )
        except (git.exc.GitError, OSError) as error:
            raise failure(("fetch", self.url, *refspecs), error) from None

    def push(self, updates: Mapping[str, str | None], **options: Any) -> PushResult:
        """Push each ``{remote ref: commit}`` (None deletes the ref) in one ``git push``; ``options`` as
        GitPython's keywords (``atomic=True``, ``force_with_lease=[...]``). A rejected ref is part of the
        result, not an error; a push that reached no ref raises :class:`GitFailed`."""
        sources = {commit: PUSH_SOURCE_PREFIX + commit for commit in updates.values() if commit is not None}
        refspecs = [f"{sources[commit]}:{ref}" if commit else f":{ref}" for ref, commit in updates.items()]
        created: list[str] = []
        try:
            for commit, source in sources.items():
                git.Reference.create(self.repo, source, commit, force=True)
                created.append(source)
            infos = self._remote.push(
                refspecs, progress=reporter(self.progress), kill_after_timeout=self.timeout, **options
            )
        except (git.exc.GitError, OSError, ValueError) as error:
            raise failure(("push", self.url), error) from None
        finally:
            for source in created:
                with contextlib.suppress(OSError, ValueError):
                    git.Reference.delete(self.repo, source)
        result = PushResult(
            tuple(RefUpdate(info.remote_ref_string, _flag(info), info.summary.strip()) for info in infos),
            "" if infos.error is None else failure(("push", self.url), infos.error).stderr,
        )
        if not result.updates and result.error:
            raise GitFailed(("push", self.url), 1, result.error)
        return result


# { Credentials never reach a log

scrub = gitfailures.scrub  # ``text`` with the ``user:token@`` part of any URL in it masked: one rule


QUIETED: Final = ("Git informed while fetching", "Error lines received while")
"""GitPython's warnings about lines it could not parse and about a failed fetch or push: the port reports
the outcome itself (a rejected push is routine under a race), so these are kept only when GitPython's
loggers are set to DEBUG."""


class _ScrubCredentials(logging.Filter):
    """Masks credentials in GitPython's log records, and drops its duplicates of what we report."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = scrub(record.getMessage()), None
        if record.levelno > logging.DEBUG and record.msg.startswith(QUIETED):
            return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)
        return True


for _name in ("git.remote", "git.cmd"):
    logging.getLogger(_name).addFilter(_ScrubCredentials())

# }
