"""One step of a rollout: from what git says now, which release refs to move, and the record to keep.

``step`` is the whole gate logic and a pure function of its arguments (docs/rollouts.md, "Gates" and
"Restart safety"). The controller calls it on every reconcile; it moves each ``nova/clusters/<cluster>``
ref the decision names, writes the decision's record, and is done. Asked again with the refs moved and the
record written, and nothing else new, ``step`` moves nothing and returns the same record: that is what
makes a killed controller resume, and a second controller that lost its lease harmless (it can only
decide what the first one decided, and its compare-and-swap push of stale refs fails).

Order within a step: an abort (rolled back, and held); clusters whose directory did not change (advanced
at once, gate or not: their bytes are the same); remedial moves (released at once unless a person paused);
then the waves in order, stopping at the first that has not passed — or that passed and is not healthy now
(``held``: it holds the later waves until it is healthy again, a person promotes it or a later wave, or
``healthTimeout`` runs out and the rollout fails as ``onFailure`` says).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from nova_gitops.api.rollouts import RolloutStrategy, format_duration
from nova_gitops.rollouts import health, superseding, trust
from nova_gitops.rollouts.decisions import Decision, Move, Situation, WaveState, WaveStatus
from nova_gitops.rollouts.records import Record, WaveRecord
from nova_gitops.rollouts.waves import Wave


def step(
    strategy: RolloutStrategy | None, waves: Sequence[Wave], situation: Situation, now: datetime
) -> Decision:
    """Decide the next moves of the rollout of ``situation.target`` over ``waves`` (``waves_for``)."""
    if strategy is None:
        return _ungated(waves, situation)
    return _Stepper(strategy, waves, situation, now).run()


def _ungated(waves: Sequence[Wave], situation: Situation) -> Decision:
    """No strategy: every cluster released at once, as before rollouts; no record is kept."""
    target = situation.target
    names = [name for wave in waves for name in wave.clusters]
    moves = tuple(Move(name, target, "release") for name in names if situation.released.get(name) != target)
    statuses = tuple(
        WaveStatus(wave.name, "passed", "no RolloutStrategy: released at once") for wave in waves
    )
    return Decision(moves, Record(), statuses, {name: f"released {target[:7]}" for name in names})


class _Stepper:
    """The state of one ``step`` call (kept in one object so each rule reads as one short method)."""

    def __init__(
        self, strategy: RolloutStrategy, waves: Sequence[Wave], situation: Situation, now: datetime
    ) -> None:
        self.strategy, self.waves, self.situation, self.now = strategy, waves, situation, now
        self.target = situation.target
        names = [cluster for wave in waves for cluster in wave.clusters]
        self.trust = trust.trusted(
            situation.record, situation.observed, situation.released, names, situation.untouched
        )
        self.record = superseding.starting_record(waves, situation, self.trust, now)
        self.released_from = dict(self.record.released_from)
        self.moves: dict[str, Move] = {}
        self.reasons: dict[str, str] = {}
        self.statuses: list[WaveStatus] = []
        self.wave_records = {wave.name: self.record.wave(wave.name) for wave in waves}

    def run(self) -> Decision:
        requests = self.situation.requests
        if requests.abort and requests.abort == self.target and self.record.outcome != "aborted":
            self.record = replace(
                self.record, outcome="aborted", rolled_back=tuple(sorted(self.released_from))
            )
        self._advance_unchanged()
        if self.record.outcome in ("aborted", "rolled-back"):
            self._hold_rollback()
        else:
            self._drop_implausible()
            self._walk()
        return self._decision()

    def _drop_implausible(self) -> None:
        """Drop every claimed pass ``_implausible`` finds before any wave is judged, so a wave's re-check
        (which looks at the passes of the waves after it) never counts one, and the record keeps none."""
        promotes = self.situation.requests.promotes
        for wave in self.waves:
            record = self.wave_records[wave.name]
            promoted = (self.target, wave.name) in promotes
            if record.passed_at is not None and not promoted and self._implausible(wave):
                # a claim: the wave is gated as if it had not passed
                self._set(wave, replace(record, passed_at=None, healthy_since=None, promoted=False))

    def current(self, cluster: str) -> str | None:
        move = self.moves.get(cluster)
        return move.commit if move is not None else self.situation.released.get(cluster)

    def _advance_unchanged(self) -> None:
        paused = self.situation.requests.paused
        for wave in self.waves:
            for cluster in wave.clusters:
                if (
                    self.situation.released.get(cluster) == self.target
                    or cluster in self.record.rolled_back
                    or cluster in self.situation.unreported  # nothing moves for a cluster nobody hears from
                ):
                    continue
                change = self.situation.changes.get(cluster, "gated")
                if change == "unchanged":
                    self.moves[cluster] = Move(cluster, self.target, "unchanged")
                    self.reasons[cluster] = f"unchanged by {self.target[:7]}: advanced at once"
                elif change == "remedial" and not paused:
                    self.moves[cluster] = Move(cluster, self.target, "remedial")
                    self.reasons[cluster] = f"remedial move {self.target[:7]}: released at once"

    def _hold_rollback(self) -> None:
        """Keep every rolled-back cluster at the commit it had before (idempotent, crash-safe)."""
        for cluster in self.record.rolled_back:
            back = self.released_from.get(cluster)
            if self.situation.released.get(cluster) != back or cluster in self.moves:
                self.moves[cluster] = Move(cluster, back, "rollback")
            self.reasons[cluster] = f"rolled back to {(back or 'no release')[:7]}"
        outcome = self.record.outcome
        for wave in self.waves:
            record = self.wave_records[wave.name]
            if outcome == "aborted":
                self._status(wave, "aborted", f"rollout of {self.target[:7]} aborted by request: rolled back")
            elif record.failed_at is not None:  # also one that failed after it passed
                self._status(wave, "rolled-back", record.failure)
            elif record.passed_at is not None:
                self._status(wave, "passed", "passed")
            else:
                self._status(wave, "pending", f"rollout of {self.target[:7]} stopped")

    def _walk(self) -> None:
        blocked = ""
        for wave in self.waves:
            if blocked:
                self._status(wave, "pending", f"waits for {blocked}")
                for cluster in self._pending(wave):
                    self.reasons[cluster] = f"waits for {blocked}"
                continue
            if not self._gate(wave):
                held = self.statuses[-1].state == "held"
                blocked = f"wave {wave.name}" + (" (passed, but not healthy now)" if held else "")
            if self.record.outcome == "rolled-back":
                blocked = f"wave {wave.name} (rolled back)"

    def _pending(self, wave: Wave) -> list[str]:
        """The wave's clusters with a gated change not yet released to them, in name order."""
        return [
            cluster
            for cluster in wave.clusters
            if cluster not in self.moves
            and cluster not in self.situation.unreported
            and self.situation.released.get(cluster) != self.target
            and self.situation.changes.get(cluster, "gated") == "gated"
        ]

    def _gate(self, wave: Wave) -> bool:
        """Advance ``wave`` as far as it can go now; True when it has passed (the next may go)."""
        record = self.wave_records[wave.name]
        requests = self.situation.requests
        pending = self._pending(wave)
        promoted = (self.target, wave.name) in requests.promotes
        if record.passed_at is not None:
            return self._recheck(wave, record, promoted)
        if requests.unreadable:  # what the file meant is unknown: it may have been a pause
            self._status(wave, "paused", f"paused: {requests.paused_reason}")
            return False
        if requests.paused:
            why = f": {requests.paused_reason}" if requests.paused_reason else ""
            self._status(wave, "paused", f"paused by request{why}")
            return False
        if (self.target, wave.name) in requests.promotes:
            self._release(wave, pending)
            self._set(wave, replace(record, passed_at=self.now, promoted=True, failed_at=None, failure=""))
            self._status(wave, "passed", "promoted")
            return True
        if record.failed_at is not None:
            if not self._resumed(wave, record):
                self._status(wave, "paused", f"paused: {record.failure}")
                return False
            record = replace(record, failed_at=None, failure="", waiting_since=self.now, healthy_since=None)
            self._set(wave, record)
        return self._check(wave, record, pending)

    def _resumed(self, wave: Wave, record: WaveRecord) -> bool:
        """A ``rollout resume`` given for this wave of this target after it failed."""
        resume = self.situation.requests.resume
        return (
            resume is not None
            and (resume.revision, resume.wave) == (self.target, wave.name)
            and record.failed_at is not None
            and resume.at > record.failed_at
        )

    def _recheck(self, wave: Wave, record: WaveRecord, promoted: bool) -> bool:
        """A wave that passed, judged again before any later wave goes on (True: it may). A wave passed by
        a promote request is not judged (a person decided). Otherwise, not healthy now, it is ``held``:
        the later waves wait until it is healthy again, or a person promotes it or a later wave (which is
        then released as any promote does); held for ``healthTimeout`` (``held_since``), it fails the
        rollout as ``onFailure`` says — except under a pause by request, which holds every consequence.
        Once every later wave has passed there is nothing left to hold: a loss of health after that (a node
        lost a week after the rollout completed) is not this rollout's, and neither reopens nor fails it."""
        if not self._later_to_pass(wave):
            if record.held_since is not None or record.failed_at is not None:
                record = replace(record, held_since=None, failed_at=None, failure="")
                self._set(wave, record)
            self._status(wave, "passed", "promoted" if record.promoted else "passed")
            return True
        if promoted:
            if record.failed_at is not None or record.held_since is not None:
                record = replace(record, failed_at=None, failure="", held_since=None, promoted=True)
                self._set(wave, record)
            self._status(wave, "passed", "promoted" if record.promoted else "passed")
            return True
        later = self._later_promote(wave)
        if record.failed_at is not None and later is None:  # failed after it passed: paused on it
            if not self._resumed(wave, record):
                self._status(wave, "paused", f"paused: {record.failure}")
                return False
            record = replace(record, failed_at=None, failure="", held_since=None)
            self._set(wave, record)
        holding = self._not_healthy_now(wave)
        if holding is None or later is not None:
            if record.held_since is not None or record.failed_at is not None:
                record = replace(record, held_since=None, failed_at=None, failure="")
                self._set(wave, record)
            if holding is None:
                self._status(wave, "passed", "promoted" if record.promoted else "passed")
            else:
                self._status(
                    wave,
                    "passed",
                    f"passed; not healthy now ({holding}), but wave {later} was promoted by request: the "
                    "rollout goes on without it",
                )
            return True
        return self._hold(wave, record, holding)

    def _hold(self, wave: Wave, record: WaveRecord, holding: str) -> bool:
        """``wave`` passed but is not healthy now (``holding`` says why): it holds the later waves, is paused
        on by a pause request, or fails the rollout after ``healthTimeout``. Always False: none goes on."""
        if record.held_since is None:
            record = replace(record, held_since=self.now)
            self._set(wave, record)
        held, timeout = self.now - (record.held_since or self.now), self.strategy.health_timeout
        requests = self.situation.requests
        if requests.paused:
            why = f": {requests.paused_reason}" if requests.paused_reason else ""
            self._status(
                wave,
                "paused",
                f"paused by request{why}; wave {wave.name} passed, but not healthy now: {holding}",
            )
            return False
        if held >= timeout:
            self._fail(wave, record, f"passed, but not healthy for {format_duration(timeout)}: {holding}")
            return False
        then = "is rolled back" if self.strategy.on_failure == "rollback" else "pauses"
        self._status(
            wave,
            "held",
            f"passed, but not healthy now ({_shown(held)} of {format_duration(timeout)}, then the rollout "
            f"{then}): {holding}; the later waves wait until it is healthy again, or "
            f"`nova-gitops rollout promote --wave {wave.name}` goes on without it",
        )
        return False

    def _later_to_pass(self, wave: Wave) -> bool:
        """Some wave after ``wave`` has not passed (claims ``_drop_implausible`` dropped count as not
        passed): it may still be released, so ``wave`` is re-checked."""
        index = self.waves.index(wave)
        return any(self.wave_records[later.name].passed_at is None for later in self.waves[index + 1 :])

    def _later_promote(self, wave: Wave) -> str | None:
        """A later wave of this target promoted by request: a person goes on past ``wave``'s hold."""
        names = [each.name for each in self.waves]
        later = names[names.index(wave.name) + 1 :]
        promotes = self.situation.requests.promotes
        return next((name for name in later if (self.target, name) in promotes), None)

    def _members(self, wave: Wave, pending: Sequence[str] = ()) -> list[str]:
        """The wave's clusters a gate judges: released through it (or to verify, ``Record.verify``)."""
        verify = self.record.verify
        return [
            cluster
            for cluster in wave.clusters
            if (cluster in self.released_from or cluster in verify) and cluster not in pending
        ]

    def _not_healthy_now(self, wave: Wave) -> str | None:
        """Why a wave that passed is not healthy now (None: it is). Checked before any later wave is
        released, so a pass the record claims — or one that no longer holds — never releases the next wave
        on its own: a wave passes on health the controller sees, or on a promote request."""
        unreported = [cluster for cluster in wave.clusters if cluster in self.situation.unreported]
        if unreported:
            return f"no usable report from {', '.join(unreported)}"
        for cluster in self._members(wave):
            verdict = self._judge(cluster)
            self.reasons[cluster] = verdict.reason
            if verdict.state != "healthy":
                return verdict.reason
        return None

    def _implausible(self, wave: Wave) -> bool:
        """A pass this controller only has the record's word for (it just started) of a wave that released
        none of the clusters the change gates in it: dropped, so its clusters are released and judged.
        (A cluster that joins a wave after it passed is left as it was: the pass was seen.)"""
        return self.trust.claimed and not self._members(wave) and bool(self._pending(wave))

    def _check(self, wave: Wave, record: WaveRecord, pending: list[str]) -> bool:
        members = self._members(wave, pending)
        verdicts = [self._judge(cluster) for cluster in members]
        for cluster, verdict in zip(members, verdicts, strict=True):
            self.reasons[cluster] = verdict.reason
        failed = next((verdict for verdict in verdicts if verdict.state == "failed"), None)
        if failed is not None:
            self._fail(wave, record, failed.reason)
            return False
        waiting = next((verdict for verdict in verdicts if verdict.state == "waiting"), None)
        unreported = [cluster for cluster in wave.clusters if cluster in self.situation.unreported]
        if waiting is None and unreported:
            waiting = self._unreported(wave, unreported)
        if waiting is not None:
            if record.healthy_since is not None or record.waiting_since is None:
                record = replace(record, healthy_since=None, waiting_since=self.now)
                self._set(wave, record)
            waited = self.now - (record.waiting_since or self.now)
            timeout = self.strategy.health_timeout
            if waited >= timeout:
                self._fail(wave, record, f"not healthy after {format_duration(timeout)}: {waiting.reason}")
            else:
                self._status(
                    wave,
                    "waiting",
                    f"waiting for health, {_shown(waited)} of {format_duration(timeout)}: {waiting.reason}",
                )
            return False
        if pending:
            batch = pending[: wave.max_parallel or len(pending)]
            self._release(wave, batch)
            self._set(wave, replace(record, released_at=self.now, waiting_since=self.now, healthy_since=None))
            rest = len(pending) - len(batch)
            more = f" ({rest} more after them)" if rest else ""
            self._status(wave, "releasing", f"released {self.target[:7]} to {', '.join(batch)}{more}")
            return False
        if not members or self.now - (record.healthy_since or self.now) >= wave.bake_time:
            self._set(
                wave, replace(record, passed_at=self.now, healthy_since=record.healthy_since or self.now)
            )
            self._status(wave, "passed", "passed" if members else "passed: no cluster of it changes")
            return True
        if record.healthy_since is None:
            record = replace(record, healthy_since=self.now)
            self._set(wave, record)
        baked = self.now - (record.healthy_since or self.now)
        self._status(wave, "baking", f"baking, {_shown(baked)} of {format_duration(wave.bake_time)}")
        return False

    def _judge(self, cluster: str) -> health.Verdict:
        commit = self.current(cluster) or ""
        reports, rendered = self.situation.reports.get(cluster), self.situation.rendered_at(cluster, commit)
        return health.judge(cluster, reports, commit, rendered)

    def _unreported(self, wave: Wave, clusters: Sequence[str]) -> health.Verdict:
        """Why ``wave`` waits for clusters that were in it and have no usable report now: passing it
        without them would let a change skip its canary because an agent broke."""
        for cluster in clusters:
            runs = (self.situation.released.get(cluster) or "nothing released")[:7]
            self.reasons[cluster] = (
                f"no usable report (missing or refused): kept in wave {wave.name}, running {runs}, until it "
                f"reports again; `rollout promote --wave {wave.name}` goes on without it, and deleting its "
                f"branch nova/clusters/{cluster} retires it"
            )
        return health.Verdict("waiting", f"no usable report from {', '.join(clusters)}")

    def _release(self, wave: Wave, clusters: Sequence[str]) -> None:
        for cluster in clusters:
            self.released_from.setdefault(cluster, self.situation.released.get(cluster))
            self.moves[cluster] = Move(cluster, self.target, "release")
            self.reasons[cluster] = f"released {self.target[:7]} (wave {wave.name})"

    def _fail(self, wave: Wave, record: WaveRecord, reason: str) -> None:
        """``wave`` failed: pause, or roll back its clusters — and, for a wave that had passed, those of
        every later wave (they got the change because it passed)."""
        self._set(wave, replace(record, failed_at=self.now, failure=reason, healthy_since=None))
        if self.strategy.on_failure == "rollback":
            index = self.waves.index(wave)
            failed = self.waves[index:] if record.passed_at is not None else (wave,)
            rolled = tuple(
                sorted(
                    cluster for each in failed for cluster in each.clusters if cluster in self.released_from
                )
            )
            self.record = replace(self.record, outcome="rolled-back", rolled_back=rolled)
            for cluster in rolled:
                back = self.released_from.get(cluster)
                self.moves[cluster] = Move(cluster, back, "rollback")
                self.reasons[cluster] = f"rolled back to {(back or 'no release')[:7]}: {reason}"
            self._status(wave, "rolled-back", reason)
        else:
            self._status(wave, "paused", f"paused: {reason}")

    def _set(self, wave: Wave, record: WaveRecord) -> None:
        self.wave_records[wave.name] = record

    def _status(self, wave: Wave, state: WaveState, reason: str) -> None:
        self.statuses.append(WaveStatus(wave.name, state, reason))

    def _decision(self) -> Decision:
        outcome = self.record.outcome
        if outcome not in ("aborted", "rolled-back"):
            states = [status.state for status in self.statuses]
            outcome = (
                "complete"
                if all(state == "passed" for state in states)
                else "paused"
                if "paused" in states
                else "progressing"
            )
        record = replace(
            self.record,
            outcome=outcome,
            waves=tuple(self.wave_records[wave.name] for wave in self.waves),
            released_from=self.released_from,
            members={cluster: wave.name for wave in self.waves for cluster in sorted(wave.clusters)},
        )
        moves = tuple(self.moves[cluster] for cluster in sorted(self.moves))
        return Decision(
            moves,
            record,
            tuple(self.statuses),
            dict(sorted(self.reasons.items())),
            requests_problem=self.situation.requests.unreadable,
            notes=self._notes(),
        )

    def _notes(self) -> tuple[str, ...]:
        unreadable = self.situation.requests.unreadable
        requests = (f"rollout paused: the requests do not read: {unreadable}",) if unreadable else ()
        return (*requests, *self.trust.notes)


def _shown(duration: timedelta) -> str:
    return format_duration(timedelta(seconds=int(max(duration, timedelta(0)).total_seconds())))


def next_deadline(
    strategy: RolloutStrategy | None, waves: Sequence[Wave], decision: Decision
) -> datetime | None:
    """When the next timed change of ``decision`` falls due: the end of a baking wave's bake, or the health
    timeout of a wave just released or waiting for health. None: nothing is timed (the next step waits for a
    report or a request). The controller wakes then rather than at its next poll, so a bake ends on time, not
    up to an interval late."""
    if strategy is None:
        return None
    bakes = {wave.name: wave.bake_time for wave in waves}
    due: list[datetime] = []
    for status in decision.waves:
        record = decision.record.wave(status.name)
        if status.state == "baking" and record.healthy_since is not None and status.name in bakes:
            due.append(record.healthy_since + bakes[status.name])
        elif status.state in ("releasing", "waiting") and record.waiting_since is not None:
            due.append(record.waiting_since + strategy.health_timeout)
        elif status.state == "held" and record.held_since is not None:
            due.append(record.held_since + strategy.health_timeout)
    return min(due, default=None)
