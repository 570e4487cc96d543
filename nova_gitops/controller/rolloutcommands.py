"""``nova-gitops rollout``: read a rollout the way the controller's next step will, and commit people's
requests (docs/rollouts.md, "Commands, acting through git").

Why this lives in ``controller`` and not in ``workflows``: ``status`` must decide exactly as the controller
does, so it reuses the controller's own pieces — its source readers, its status reader, its rule that the
agents' reports replace the source's Clusters (``loading.source_set``), and ``RolloutDriver.read`` —
and asks ``stepping.step`` on them without applying anything: nothing is pushed, the release refs and the
record stay as they are. The layers put ``workflows`` under ``controller``, so it could not import them.

Why the strategy comes from ``--source``: the ``RolloutStrategy`` is a source document and is never
rendered, so the rendered repository does not hold it; reading the source as the controller does gives the
waves the controller's next step will use.

Requests (pause, resume, promote, abort) are one file, ``rollout/requests.yaml`` on ``nova/rollout`` of the
rendered repository, rewritten whole from what it parsed as and committed with a compare-and-set: when
someone else changed it in between, it is read again and the request applied again, once. A file that does
not read is a pause (``records.read_requests``), so the clean file a command writes over it stays paused —
except ``resume``, which lifts it — and says why; the command's output says so too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from nova_gitops import errors
from nova_gitops.api.problems import Problem
from nova_gitops.api.rollouts import RolloutStrategy
from nova_gitops.controller import loading, sourcereading, statusreading
from nova_gitops.controller.ports import ClusterReport, SourceReader
from nova_gitops.controller.rolloutstep import (
    REQUESTS_PATH,
    ROLLOUT_BRANCH,
    Reading,
    RolloutDriver,
    dump_yaml,
)
from nova_gitops.publishing import gitwriting
from nova_gitops.publishing.gitwriting import RenderedRepo
from nova_gitops.publishing.rolloutrecords import RolloutRecords, WriteOutcome
from nova_gitops.rollouts import records, requesting, statuses, stepping
from nova_gitops.rollouts.decisions import Decision
from nova_gitops.rollouts.records import Requests
from nova_gitops.sources import gitsources


@dataclass(frozen=True, slots=True)
class Where:
    """The repositories a rollout command reads: the rendered one, the status one, and the source."""

    repo_url: str
    source: str
    cache_dir: Path
    branch: str = "main"
    status_branch: str = "nova-status"
    status_repo: str | None = None
    timeout: float = 120.0


@dataclass(frozen=True, slots=True)
class Inspection:
    """A rollout as the controller's next step would decide it (nothing applied). ``reading`` None:
    nothing to roll out (nothing published, or no strategy and no release branches)."""

    strategy: RolloutStrategy | None
    reading: Reading | None
    decision: Decision | None
    reports: Mapping[str, ClusterReport]
    now: datetime
    refused: tuple[Problem, ...] = ()
    """Problems of the agents' reports the controller would refuse (those clusters have no report)."""


def rendered_repo(where: Where) -> RenderedRepo:
    """The rendered repository through the publisher's cache (the controller's, when on this machine)."""
    url = where.repo_url
    return RenderedRepo(gitwriting.cache_path(where.cache_dir, url), url, timeout=where.timeout)


def source_reader(spec: str, cache_dir: Path, timeout: float) -> SourceReader:
    """The controller's reader of ``--source``: a directory (not watched) or ``git-url[@ref]``."""
    if gitsources.is_git_spec(spec):
        return sourcereading.GitSource.from_spec(spec, cache_dir=cache_dir, timeout=timeout)
    root = Path(spec)
    if not root.is_dir():
        raise errors.UserError(
            f"source {spec} does not exist: give the directory or git URL the controller reads"
        )
    return sourcereading.DirectorySource(root, stop=threading.Event(), watch_changes=False)


def inspect(where: Where, now: datetime) -> Inspection:
    """Read the source, the agents' reports and the rendered repository, and decide as a step would."""
    status = statusreading.GitStatusReader(
        where.status_repo or where.repo_url,
        where.status_branch,
        cache_dir=where.cache_dir,
        timeout=where.timeout,
    )
    read = status.read()
    with source_reader(where.source, where.cache_dir, where.timeout).read() as snapshot:
        source_set, every_report, refused = loading.source_set(snapshot, read.reports)
    repo = rendered_repo(where)
    driver = RolloutDriver(repo, where.branch, wall_clock=lambda: now)
    with repo.locked():
        reading = driver.read(source_set.rollout, source_set.clusters, every_report)
    if reading is not None:  # decided as the controller that wrote the record will (rollouts.trust)
        reading = replace(reading, situation=replace(reading.situation, observed=reading.situation.record))
    if reading is None:
        return Inspection(source_set.rollout, None, None, every_report, now, (*read.problems, *refused))
    decision = stepping.step(source_set.rollout, reading.waves, reading.situation, now)
    return Inspection(source_set.rollout, reading, decision, every_report, now, (*read.problems, *refused))


@dataclass(frozen=True, slots=True)
class Written:
    """What a request command committed: the outcome, the requests now in force, the commit (if any)."""

    outcome: WriteOutcome
    requests: Requests
    commit: str | None
    replaced: str = ""
    """Why the file this command replaced did not read ("" when it did)."""


def write_requests(
    repo: RenderedRepo,
    change: Callable[[Requests], Requests],
    message: str,
    *,
    environ: Mapping[str, str],
) -> Written:
    """Read ``rollout/requests.yaml``, apply ``change`` to what it says, write it back if it differs, with a
    compare-and-set; read again and apply again once if someone else wrote it in between."""
    store = RolloutRecords(repo, ROLLOUT_BRANCH, path=REQUESTS_PATH, environ=environ)
    for _ in range(2):
        with repo.locked():
            previous = store.read_record()
            found = records.read_requests(previous)
            wanted = replace(change(found), unreadable="")
            if found.unreadable and wanted.paused and wanted.paused_reason == found.paused_reason:
                wanted = replace(
                    wanted,
                    paused_reason=f"kept paused: the requests did not read when they were rewritten "
                    f"({found.unreadable}); `nova-gitops rollout resume` lifts it",
                )
            data = dump_yaml(records.requests_to_data(wanted))
            outcome = store.write_record(data, previous, message)
            if outcome is not WriteOutcome.CHANGED:
                head = repo.remote_head(ROLLOUT_BRANCH) if outcome is WriteOutcome.WRITTEN else None
                return Written(outcome, wanted, head, found.unreadable)
    raise errors.RepoError(
        f"{REQUESTS_PATH} on {repo.url} {ROLLOUT_BRANCH} changed twice while this request was written "
        "(someone else is running nova-gitops rollout): run the command again"
    )


def author_environment(repo: RenderedRepo, environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` with the user's git identity as the author: ``GIT_AUTHOR_*`` when set, else
    ``user.name``/``user.email`` from git's configuration, so ``git log`` of the requests names who asked.

    The configuration is read by GitPython's parser (the user's ``~/.gitconfig`` and the cache's own), not by
    running git: git itself runs without global configuration (``clients.gitenvironment``), and reading two
    values runs nothing a configuration file could name."""
    found = dict(environ)
    missing = [
        pair
        for pair in (("GIT_AUTHOR_NAME", "name"), ("GIT_AUTHOR_EMAIL", "email"))
        if not found.get(pair[0])
    ]
    if missing:
        with repo.repo.config_reader() as config:
            for variable, key in missing:
                configured = str(config.get_value("user", key, default="")).strip()
                if configured:
                    found[variable] = configured
    return found


def status(where: Where, now: datetime) -> dict[str, Any] | None:
    """``rollout status`` as data (None: nothing to roll out); see ``rollouts.statuses``."""
    inspection = inspect(where, now)
    if inspection.reading is None or inspection.decision is None:
        return None
    reading = inspection.reading
    return statuses.document(reading.waves, reading.situation, inspection.decision, now, inspection.refused)


class UnknownWave(errors.UserError):
    """``promote --wave`` names a wave the rollout does not have (the message lists those it has)."""


class NothingToDo(errors.UserError):
    """The request has nothing to act on (no rollout in progress, nothing paused): nothing is committed."""


PAUSE_NEXT = (
    "the controller releases nothing more through a gate, and makes no remedial move, until "
    "`nova-gitops rollout resume`; clusters a change leaves byte-for-byte the same still advance"
)


def request(
    where: Where,
    command: str,
    *,
    now: datetime,
    environ: Mapping[str, str],
    wave: str | None = None,
    reason: str = "",
) -> str:
    """Commit one request (``pause``, ``resume``, ``promote``, ``abort``) and say what it did and what the
    controller will do next. ``pause`` reads nothing but the requests (it holds across renders); the others
    are tied to the target (``main``'s head as read) and checked against the decision the next step takes."""
    repo = rendered_repo(where)
    identity = author_environment(repo, environ)
    if command == "pause":
        return _pause(repo, identity, reason)
    inspection = inspect(where, now)
    reading, decision = inspection.reading, inspection.decision
    target = reading.situation.target if reading is not None else ""
    names = [known.name for known in reading.waves] if reading is not None else []
    if command == "promote" and wave is not None and reading is not None and wave not in names:
        raise UnknownWave(
            f"no wave {wave!r} in the rollout of {target[:12]}: the waves are {', '.join(names)}"
        )
    chosen = wave if wave is not None else (decision.current_wave if decision is not None else None)
    found = reading.situation.requests if reading is not None else Requests()
    refused = requesting.refusal(command, decision, found, chosen)
    if refused:
        raise NothingToDo(refused)
    assert decision is not None and reading is not None
    if command == "resume":
        return _resume(repo, identity, decision, target, now)
    if command == "promote":
        assert chosen is not None
        return _promote(repo, identity, decision, target, chosen)
    return _abort(repo, identity, reading, target)


def _pause(repo: RenderedRepo, identity: Mapping[str, str], reason: str) -> str:
    author = identity.get("GIT_AUTHOR_NAME") or gitwriting.DEFAULT_IDENTITY[0]
    why = f"{author}: {reason}" if reason else author
    written = write_requests(
        repo, lambda found: requesting.paused(found, why), f"rollout pause: {why}", environ=identity
    )
    return _said(written, f"paused the rollout ({why})", PAUSE_NEXT)


def _resume(
    repo: RenderedRepo, identity: Mapping[str, str], decision: Decision, target: str, now: datetime
) -> str:
    short = target[:12]
    failed = requesting.failed_wave(decision)
    retry = f" wave {failed}" if failed else ""
    written = write_requests(
        repo,
        lambda found: requesting.resumed(found, target, failed, now),
        f"rollout resume: {short}{retry}",
        environ=identity,
    )
    return _said(
        written,
        f"resumed the rollout of {short}" + (f", retrying wave {failed}" if failed else ""),
        "the controller continues the rollout at its next step",
    )


def _promote(
    repo: RenderedRepo, identity: Mapping[str, str], decision: Decision, target: str, chosen: str
) -> str:
    short = target[:12]
    written = write_requests(
        repo,
        lambda found: requesting.promoted(found, target, chosen),
        f"rollout promote: wave {chosen} of {short}",
        environ=identity,
    )
    held = " (paused by request: not before `nova-gitops rollout resume`)" if written.requests.paused else ""
    return _said(
        written,
        f"promoted wave {chosen} of {short}",
        f"{requesting.promote_effect(decision, chosen)}{held}",
    )


def _abort(repo: RenderedRepo, identity: Mapping[str, str], reading: Reading, target: str) -> str:
    short = target[:12]
    written = write_requests(
        repo, lambda found: requesting.aborted(found, target), f"rollout abort: {short}", environ=identity
    )
    return _said(
        written,
        f"aborted the rollout of {short}",
        f"at its next step the controller rolls back {_rolled_back(reading)} and stops this rollout; "
        "a newer render starts a new one",
    )


def _rolled_back(reading: Reading) -> str:
    """The clusters an abort returns, as the record says (a first release: its branch is deleted)."""
    situation = reading.situation
    back = [
        f"{name} to {before[:7]}" if before else f"{name} (its first release: branch deleted)"
        for name, before in sorted(situation.record.released_from.items())
        if situation.released.get(name) == situation.target
    ]
    return ", ".join(back) or "no cluster"


def _said(written: Written, done: str, following: str) -> str:
    replaced = (
        f"\nwarning: the requests did not read ({written.replaced}): replaced by a clean file"
        + ("; it stays paused until `nova-gitops rollout resume`" if written.requests.paused else "")
        if written.replaced
        else ""
    )
    if written.outcome is WriteOutcome.UNCHANGED:
        return f"{done}: already requested, nothing committed\nnext: {following}{replaced}"
    where = f"{REQUESTS_PATH} on {ROLLOUT_BRANCH}"
    return f"{done} (commit {(written.commit or '')[:7]} to {where})\nnext: {following}{replaced}"
