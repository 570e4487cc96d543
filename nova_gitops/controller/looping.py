"""The loop: wait for a reason (a trigger, a poll, a retry), reconcile, repeat until told to stop.

When to reconcile is a pure function of a small state and the clock (``LoopState`` and the ``after_*``
functions), so debounce and backoff are table tests. The rules:

- At start, reconcile at once. Then poll every ``interval`` seconds (the source for git, the status branch
  always: agents report there); sooner when a rollout's bake ends (or its health timeout passes) before the
  next poll, so the next wave goes when its gate opens.
- The status branch's head is peeked at every ``status_watch_seconds`` (a quarter interval by default; one
  ``ls-remote``, no fetch); a new report is a trigger like a webhook, so reschedule requests and a wave's
  health are acted on within that time plus ``debounce``.
- A trigger (webhook, directory change) makes a reconcile due ``debounce`` seconds later; each further
  trigger inside that window pushes it back (a burst is one reconcile), but never beyond ``10 × debounce``
  after the first trigger, so a steady stream of pushes cannot starve the loop.
- After a failure: ``TemporaryError(delay)`` retries after ``delay``; input that is wrong
  (``InputError``, ``SafetyError``) waits for the next trigger or poll, since retrying
  the same input gives the same error; anything else (git host down, ...) backs off exponentially
  (2, 4, 8 … s, at most ``max_backoff``, no jitter: one controller leads) with the back-off the agent uses
  too, ``nova_gitops.clients.backoff``.
- With leader election, only the leader reconciles; a follower keeps waiting (and reconciles at once when
  it becomes leader: the election thread puts a trigger).
- Stop: ``stop`` is set (SIGTERM/SIGINT in the CLI); a reconcile in progress finishes (a push is atomic),
  then the loop returns. The wait is cut short by a trigger, so the loop notices a stop quickly.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Protocol

from nova_gitops import errors
from nova_gitops.clients.backoff import Backoff
from nova_gitops.controller import headroomwatching, reconciling
from nova_gitops.controller.committing import GitPublisher
from nova_gitops.controller.logs import JsonLog
from nova_gitops.controller.ports import Clock, PlanObserver, Publisher, SourceReader, StatusReader, Triggers
from nova_gitops.controller.reconciling import ReconcileOutcome
from nova_gitops.controller.rolloutstep import RolloutDriver
from nova_gitops.controller.serving import Metrics
from nova_gitops.controller.settings import ControllerSettings
from nova_gitops.publishing.releases import MoveOutcome
from nova_gitops.workflows.publishing import PublishOptions


class Journal(Protocol):
    """Who is told of each reconcile's outcome and of each failure, with the wall-clock time (the web
    view's ``controller.uistate.FleetView``)."""

    def reconciled(self, outcome: ReconcileOutcome, at: datetime) -> None: ...

    def failed(self, error: BaseException, at: datetime) -> None: ...


class Watcher(Journal, PlanObserver, Protocol):
    """Told of each plan and each reconcile (``controller.uistate.FleetView``)."""


def _always() -> bool:
    return True


def _utc_now() -> datetime:
    return datetime.now(UTC)


MAX_WAIT = 1.0  # seconds between looks at ``stop`` when nothing else wakes the loop
STOP_REASON = "stop"
FIRST_RETRY = 2.0  # seconds after the first unexpected failure; doubling from there
MIN_WAKE = 0.05  # seconds: a deadline already past wakes the loop this soon, never in a busy loop


@dataclass(frozen=True, slots=True)
class LoopState:
    due_at: float | None  # a reconcile is due at this clock reading (None: only at the next poll)
    next_poll: float
    first_trigger: float | None = None  # start of the current debounce window
    failures: int = 0


def start(now: float) -> LoopState:
    return LoopState(due_at=now, next_poll=now)


def after_trigger(state: LoopState, now: float, debounce: float) -> LoopState:
    first = state.first_trigger if state.first_trigger is not None else now
    due = min(now + debounce, first + 10 * debounce)
    if state.due_at is not None and state.first_trigger is None:
        due = min(due, state.due_at)  # a retry or the start was due already: keep the earlier time
    return replace(state, due_at=due, first_trigger=first)


def is_due(state: LoopState, now: float) -> bool:
    return (state.due_at is not None and now >= state.due_at) or now >= state.next_poll


def wait_time(state: LoopState, now: float) -> float:
    wake = state.next_poll if state.due_at is None else min(state.due_at, state.next_poll)
    return max(0.0, wake - now)


def after_success(state: LoopState, now: float, interval: float, wake_in: float | None = None) -> LoopState:
    """Poll again after ``interval``; sooner when something falls due before (``wake_in`` seconds: a
    rollout's bake ends, or its health timeout)."""
    due = now + max(wake_in, MIN_WAKE) if wake_in is not None and wake_in < interval else None
    return LoopState(due_at=due, next_poll=now + interval)


def backoff_delay(error: BaseException, failures: int, max_backoff: float) -> float | None:
    """Seconds until the retry after the ``failures``-th failure in a row; None: wait for new input."""
    if isinstance(error, errors.TemporaryError):
        return min(error.delay, max_backoff)
    if isinstance(error, errors.InputError | errors.SafetyError):
        return None
    return Backoff(base=FIRST_RETRY, cap=max_backoff).delay(failures)


def after_failure(
    state: LoopState, now: float, error: BaseException, interval: float, max_backoff: float
) -> LoopState:
    failures = state.failures + 1
    delay = backoff_delay(error, failures, max_backoff)
    return LoopState(
        due_at=None if delay is None else now + delay,
        next_poll=now + max(interval, delay or 0.0),
        failures=failures,
    )


def _git_publisher(
    settings: ControllerSettings, wall_clock: Callable[[], datetime], is_leader: Callable[[], bool] | None
) -> tuple[GitPublisher, RolloutDriver]:
    """The publisher to the rendered repository of ``settings.repo_url``, and the rollout driver of its
    release refs."""
    publisher = GitPublisher(
        settings.repo_url,
        cache_dir=settings.cache_dir,
        options=PublishOptions(
            branch=settings.branch,
            max_delete_percent=settings.max_delete_percent,
            allow_mass_delete=settings.allow_mass_delete,
            attempts=settings.attempts,
            timeout=settings.git_timeout,
        ),
        is_leader=is_leader,
    )
    rollout = RolloutDriver(
        publisher.repo, settings.branch, wall_clock=wall_clock, is_leader=is_leader or _always
    )
    return publisher, rollout


class Controller:
    """The always-on part: reconcile on start, on triggers, on every poll; survive errors; stop cleanly."""

    def __init__(
        self,
        settings: ControllerSettings,
        *,
        source: SourceReader,
        status: StatusReader,
        clock: Clock,
        observers: Sequence[PlanObserver] = (),
        publisher: Publisher | None = None,  # None: the rendered repository of settings.repo_url
        triggers: Triggers | None = None,
        metrics: Metrics | None = None,
        log: JsonLog | None = None,
        is_leader: Callable[[], bool] | None = None,  # None: always (no leader election)
        wall_clock: Callable[[], datetime]
        | None = None,  # rollout times (bakes, timeouts); None: the system's
        journal: Journal | None = None,  # told of every reconcile and failure (the web view)
    ) -> None:
        self.settings = settings
        self.journal = journal
        self.source = source
        self.status = status
        self.clock = clock
        self.triggers = triggers or Triggers()
        self.metrics = metrics or Metrics()
        self.log = log or JsonLog(secrets=_secrets(settings))
        rollout = None
        self.wall_clock = wall_clock or _utc_now
        if publisher is None:  # the rendered repository of settings.repo_url, and its release refs
            publisher, rollout = _git_publisher(settings, self.wall_clock, is_leader)
        self.publisher = publisher
        self.reconciler = reconciling.Reconciler(
            settings,
            source=source,
            status=status,
            publisher=self.publisher,
            clock=clock,
            observers=observers,
            rollout=rollout,
        )
        self.is_leader = is_leader or (lambda: True)
        if is_leader is not None:
            self.metrics.leading = is_leader
        self.headroom = (  # failover headroom in the background, for the metrics (None: --no-headroom)
            headroomwatching.HeadroomWatch(
                self.metrics,
                domain=settings.headroom_domain,
                clock=lambda: self.wall_clock().timestamp(),
                log=self.log,
            )
            if settings.headroom
            else None
        )
        self._running = False
        self._status_problems: tuple[str, ...] = ()
        self._rollout_notes: tuple[str, ...] = ()
        self.metrics.alive = lambda: self._running

    def watch(self, view: Watcher) -> None:
        """Tell ``view`` of every plan and every reconcile from now on: the web view a demo attaches to a
        controller made without one."""
        self.journal = view
        self.reconciler.observers = (*self.reconciler.observers, view)

    def reconcile_once(self) -> ReconcileOutcome:
        """One reconcile, logged and counted; errors are logged, counted and raised to the caller."""
        started = self.clock.now()
        try:
            with self.headroom.reconciling() if self.headroom is not None else contextlib.nullcontext():
                outcome = self.reconciler.reconcile()
        except Exception as error:
            self.metrics.reconciled("failed", self.clock.now() - started)
            if self.journal is not None:
                self.journal.failed(error, self.wall_clock())
            raise
        self._record(outcome)
        if self.headroom is not None:  # hands the plan over and returns: computed in its own thread
            self.headroom.reconciled(
                outcome.plan,
                outcome.source_set,
                recalled=self.reconciler.plan_memory,
                file_digests=outcome.file_digests,
            )
        if self.journal is not None:
            self.journal.reconciled(outcome, self.wall_clock())
        return outcome

    def _record(self, outcome: ReconcileOutcome) -> None:
        self.metrics.reconciled(
            outcome.outcome.value, outcome.duration, moved=outcome.moved, unscheduled=outcome.unscheduled
        )
        for action, count in (
            ("moved", len(outcome.rescheduled)),
            ("reported", len(outcome.reported_only)),
            ("stuck", len(outcome.stuck)),
        ):
            if count:
                self.metrics.rescheduled(action, count)
        if outcome.failed_back:
            self.metrics.failed_back(len(outcome.failed_back))
        self._record_rollout(outcome)
        problems = tuple(str(problem) for problem in outcome.status_problems)
        if problems != self._status_problems:  # a bad report is logged when it appears, not every poll
            for problem in problems:
                self.log.warning("status report refused", problem=problem)
            self._status_problems = problems
        for request in outcome.reported_only:
            self.log.info(
                "reschedule request for a spread group reported, not acted on",
                group=request.group,
                cluster=request.cluster,
                reason=request.reason,
            )
        for group in outcome.stuck:
            self.log.warning("reschedule requested but no other cluster can take the group", group=group)
        for exclusion in outcome.rescheduled:
            self.log.info(
                "rescheduling triggered",
                group=exclusion.group,
                cluster=exclusion.cluster,
                reason=exclusion.reason,
            )
        self.log.info(
            "reconciled",
            outcome=outcome.outcome.value,
            commit=outcome.commit,
            source=outcome.source.repo,
            revision=outcome.source.revision,
            moved=outcome.moved,
            unscheduled=outcome.unscheduled,
            emitted=outcome.emitted,
            duration=round(outcome.duration, 4),
        )

    def _record_rollout(self, outcome: ReconcileOutcome) -> None:
        decision = outcome.rollout.decision if outcome.rollout is not None else None
        if decision is None:
            self.metrics.rolled_out(-1, False, 0.0)
            return
        names = [wave.name for wave in decision.waves]
        current = decision.current_wave
        started = decision.record.started_at
        seconds = (self.wall_clock() - started).total_seconds() if started and current else 0.0
        index = names.index(current) if current in names else -1
        self.metrics.rolled_out(index, decision.paused, seconds, bool(decision.requests_problem))
        if decision.notes != self._rollout_notes:  # told when it appears, not at every poll
            for note in decision.notes:
                self.log.warning("rollout input refused", target=decision.record.target, problem=note)
            self._rollout_notes = decision.notes
        if outcome.rollout is not None and outcome.rollout.moved is MoveOutcome.MOVED:
            for wave in decision.waves:
                self.log.info(
                    "rollout",
                    target=decision.record.target,
                    wave=wave.name,
                    state=wave.state,
                    reason=wave.reason,
                )

    def run(self, stop: threading.Event) -> None:
        """Reconcile until ``stop`` is set."""
        self._running = True
        watcher = self._start_watcher(stop)
        status_watcher = self._start_status_watcher(stop)
        state = start(self.clock.now())
        try:
            while not stop.is_set():
                now = self.clock.now()
                if is_due(state, now) and self.is_leader():
                    state = self._reconcile_in_loop(state, stop)
                    continue
                wait = wait_time(state, now) if self.is_leader() else MAX_WAIT
                reasons = self.triggers.wait(min(wait, MAX_WAIT))
                reasons = [reason for reason in reasons if reason != STOP_REASON]
                if reasons and not stop.is_set():
                    for _reason in reasons:
                        self.metrics.triggered()
                    self.log.debug("triggered", reasons=sorted(set(reasons)))
                    state = after_trigger(state, self.clock.now(), self.settings.debounce)
        finally:
            self._running = False
            for thread in (watcher, status_watcher):
                if thread is not None:
                    thread.join(timeout=2.0)
            if self.headroom is not None:
                self.headroom.close()
            self.log.info("stopped")

    def _reconcile_in_loop(self, state: LoopState, stop: threading.Event) -> LoopState:
        try:
            outcome = self.reconcile_once()
        except Exception as error:
            if stop.is_set():  # stopped meanwhile: Ctrl-C on a terminal kills git too, so this is no fault
                self.log.info("reconcile cut short by the stop", kind=type(error).__name__)
                return state
            now = self.clock.now()
            state = after_failure(state, now, error, self.settings.interval, self.settings.max_backoff)
            retry = None if state.due_at is None else round(state.due_at - now, 3)
            fields = {"error": str(error), "kind": type(error).__name__, "failures": state.failures}
            if isinstance(error, errors.InputError):
                fields["problems"] = [str(problem) for problem in error.problems[:50]]
            self.log.error("reconcile failed", retry_in=retry, **fields)
            return state
        due = outcome.rollout.due_at if outcome.rollout is not None else None
        wake_in = (due - self.wall_clock()).total_seconds() if due is not None else None
        return after_success(state, self.clock.now(), self.settings.interval, wake_in)

    def _start_watcher(self, stop: threading.Event) -> threading.Thread | None:
        changes = self.source.changes()
        if changes is None:
            return None

        def forward() -> None:
            try:
                for _change in changes:
                    if stop.is_set():
                        return
                    self.triggers.put("source changed")
            except Exception as error:  # a watcher that dies leaves polling in place
                self.log.error("source watcher stopped", error=str(error))

        thread = threading.Thread(target=forward, name="nova-source-watch", daemon=True)
        thread.start()
        return thread

    def _start_status_watcher(self, stop: threading.Event) -> threading.Thread | None:
        """Peek at the status branch every ``status_watch_seconds`` and put a trigger when an agent
        reported: a reschedule request or a wave's health is acted on at once, not at the next poll. A peek
        that fails is only logged at debug (the poll reads the branch anyway and reports its errors)."""
        every = self.settings.status_watch_seconds
        if every <= 0:
            return None

        def watch() -> None:
            last: str | None = None
            while not stop.wait(every):
                if not self.is_leader():
                    continue
                try:
                    head = self.status.head()
                except Exception as error:
                    self.log.debug("status branch peek failed", error=str(error))
                    continue
                if head is not None and last is not None and head != last:
                    self.triggers.put("status changed")
                last = head if head is not None else last

        thread = threading.Thread(target=watch, name="nova-status-watch", daemon=True)
        thread.start()
        return thread


def _secrets(settings: ControllerSettings) -> list[str]:
    secrets = settings.webhook_secrets
    return [secret for secret in (secrets.github, secrets.gitlab, secrets.generic) if secret]
