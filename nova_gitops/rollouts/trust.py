"""What of the rollout record a step may believe (docs/rollouts.md, "What the record can and cannot do").

The controller writes ``rollout/record.yaml``, but it lives on ``nova/rollout``, a branch people write too
(their requests), so whoever can push there can write the record: it is read as a *claim*. A claim that
could release a wave sooner — a pass (``passedAt``), the start of a bake (``healthySince``), a promote —
counts only when this controller observed it; a claim that can only hold a wave back (a failure, more
clusters to judge) is taken as it is.

``trusted`` takes the record as read and ``observed``, the record this controller itself decided last and
git took (as read back from git: ``None`` when it has decided nothing since it started):

- the same record: nothing to question (the normal case, every step);
- none observed (a controller that just started, or took over): the record's passes and bakes stand as
  claims, held to the health re-check every step makes of a passed wave before it releases a later one
  (``stepping``); and the clusters that run the target but that the record does not say it released
  through a gate are added to ``Record.verify``, judged like released ones — so a record that drops the
  canary from ``releasedFrom`` cannot make its wave pass without it — except those the change did not
  touch (``Situation.untouched``, recomputed from ``main``'s history, not read from the record): they were
  advanced at once, and an app of theirs the change never touched must not fail its wave;
- another record than observed (someone wrote it, or it no longer reads): passes and bake starts come only
  from ``observed``; a later bake start, a failure, more clusters released or to verify, a rollback are
  taken from the record (they hold back, or return clusters to where they were); each claim not taken is
  a note for the log.

What remains possible to someone who writes the record is in docs/rollouts.md: in short, across a restart,
to shorten the bake of a wave that is healthy, or pass one whose released clusters are healthy before its
last batches (less than ``rollout promote`` does openly; ``stepping`` drops a claimed pass of a wave that
released none of its clusters), or leave out of ``releasedFrom`` a cluster the latest render did not touch
though an earlier render it runs did (``untouched`` looks at the latest render only); and to roll clusters
back to an earlier commit (never forward: the controller moves a rollback only backwards in history).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from nova_gitops.rollouts.records import Record, WaveRecord

ROLLED_BACK = ("rolled-back", "aborted")


@dataclass(frozen=True, slots=True)
class Trusted:
    """The record a step decides on. ``claimed``: taken on the record's word (nothing observed), so a new
    rollout carries every cluster of the old one to be judged again, not only those of waves not passed."""

    record: Record
    claimed: bool = False
    notes: tuple[str, ...] = ()


def trusted(
    read: Record,
    observed: Record | None,
    released: Mapping[str, str | None],
    clusters: Sequence[str],
    untouched: Collection[str] = frozenset(),
) -> Trusted:
    """The record to step on, from the one ``read`` from git and the one this controller ``observed``.
    ``released``: each cluster's release ref; ``clusters``: those of the waves now; ``untouched``: those
    running the target whose directory the change did not touch (``Situation.untouched``)."""
    if observed is not None and read == observed:
        return Trusted(read)
    if observed is None:
        return Trusted(_verified(read, released, clusters, untouched), claimed=True)
    if read.target == observed.target:
        merged = _merged(read, observed)
        return Trusted(_verified(merged, released, clusters, untouched), notes=_notes(read, observed))
    shown = read.target[:12] or "none (it does not read)"
    note = (
        f"the rollout record on nova/rollout names target {shown}, not {observed.target[:12]} as this "
        "controller wrote it: not trusted; its own record is kept"
    )
    return Trusted(_verified(observed, released, clusters, untouched), notes=(note,))


def _merged(read: Record, observed: Record) -> Record:
    """``observed``, with what ``read`` adds that can only hold back or return clusters."""
    waves = []
    for mine in observed.waves:
        theirs = read.wave(mine.name)
        healthy = mine.healthy_since
        if theirs.healthy_since is None or healthy is None:
            healthy = None if theirs.healthy_since is None else healthy
        else:
            healthy = max(healthy, theirs.healthy_since)
        failed = (mine.failed_at, mine.failure) if mine.failed_at else (theirs.failed_at, theirs.failure)
        # a hold of a passed wave that started sooner ends sooner, in a failure: a claim that holds back
        held = min((moment for moment in (mine.held_since, theirs.held_since) if moment), default=None)
        waves.append(
            replace(mine, healthy_since=healthy, failed_at=failed[0], failure=failed[1], held_since=held)
        )
    outcome = read.outcome if read.outcome in ROLLED_BACK else observed.outcome
    rolled_back = sorted({*observed.rolled_back, *read.rolled_back}) if outcome in ROLLED_BACK else []
    return replace(
        observed,
        outcome=outcome,
        waves=tuple(waves),
        released_from={**read.released_from, **observed.released_from},
        rolled_back=tuple(rolled_back),
        members={**read.members, **observed.members},
        verify=tuple(sorted({*observed.verify, *read.verify})),
    )


def _verified(
    record: Record,
    released: Mapping[str, str | None],
    clusters: Sequence[str],
    untouched: Collection[str],
) -> Record:
    """``record`` with every cluster that runs its target, and that it does not say it released through a
    gate (nor rolled back), in ``verify`` — but for those the change did not touch (``untouched``, which
    git says, whatever the record claims): they are not to be judged, there or in the record's own list."""
    if not record.target:
        return record
    found = {
        cluster
        for cluster in clusters
        if released.get(cluster) == record.target
        and cluster not in record.released_from
        and cluster not in record.rolled_back
    }
    verify = tuple(sorted({*record.verify, *found} - set(untouched)))
    return record if verify == record.verify else replace(record, verify=verify)


def _notes(read: Record, observed: Record) -> tuple[str, ...]:
    notes: list[str] = []
    for theirs in read.waves:
        mine = observed.wave(theirs.name)
        if theirs.passed_at is not None and theirs.passed_at != mine.passed_at:
            notes.append(_claim(read, theirs, "passed at", theirs.passed_at))
        elif theirs.healthy_since is not None and _earlier(theirs.healthy_since, mine.healthy_since):
            notes.append(_claim(read, theirs, "has been healthy since", theirs.healthy_since))
    dropped = sorted(set(observed.released_from) - set(read.released_from))
    if dropped:
        notes.append(
            f"the rollout record on nova/rollout no longer lists {', '.join(dropped)} as released by the "
            f"rollout of {read.target[:12]}: not trusted; they are judged as before"
        )
    return tuple(notes)


def _claim(read: Record, wave: WaveRecord, what: str, moment: datetime) -> str:
    return (
        f"the rollout record on nova/rollout says wave {wave.name} of {read.target[:12]} {what} "
        f"{moment.isoformat()}, which this controller did not observe: not trusted"
    )


def _earlier(theirs: datetime, mine: datetime | None) -> bool:
    return mine is None or theirs < mine
