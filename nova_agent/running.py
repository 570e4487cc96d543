"""The agent's passes and its loop: sync (or watch, in delegated mode), observe, report; then wait.

Every failure is caught at the level it belongs to: an object's failure inside the pass (reported, retried
later with backoff), a pass-level failure here (the cluster is left as it is). Whatever failed, the report is
still written, with ``lastError``, when git allows it. Only "unreachable" (git or the API gave no answer, or a
5xx) makes the loop back off; a refusal (RBAC, a bad render) is retried at the normal interval
(:mod:`nova_agent.passerrors`). ``sync`` runs one pass and turns its outcome into an exit code; ``run``
repeats passes until it is stopped.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

import yaml

from nova_agent import delegating, observing, passerrors, reporting
from nova_agent.clocks import Clock
from nova_agent.delegating import RenderedDirectory
from nova_agent.drifting import DriftedObject
from nova_agent.gitrepos import GitError, RepoCache, redact
from nova_agent.kubeports import KubePort
from nova_agent.owned import OwnedObject
from nova_agent.passerrors import (
    EXIT_OBJECT_FAILURES,
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_UNEXPECTED,
    EXIT_UNREACHABLE,
)
from nova_agent.repositories import repository_id
from nova_agent.resources import ObjectKey, ObjectRef
from nova_agent.retrying import FailureTable, cluster_jitter, pass_backoff
from nova_agent.settings import SETTLE_WINDOW, AgentSettings
from nova_agent.statuspushing import StatusBranch
from nova_agent.syncing import NothingReleased, SyncRefused, SyncResult, read_inventory, sync_once
from nova_gitops.api import labels as nova_labels
from nova_gitops.api import progress as phases
from nova_gitops.clients.kuberest import KubeApiError, KubeUnavailable

if TYPE_CHECKING:  # prometheus_client is imported only when metrics are served
    from nova_agent.metrics import AgentMetrics

log = logging.getLogger("nova_agent")


@dataclass(slots=True)
class PassOutcome:
    exit_code: int
    message: str = ""
    sync: SyncResult | None = None
    report_pushed: bool = False
    error: Exception | None = None
    """The unexpected exception that ended the pass (``--debug`` shows its traceback)."""


@dataclass(slots=True)
class AgentState:
    """What the loop carries from one pass to the next."""

    failures: FailureTable = field(default_factory=dict)
    consecutive_errors: int = 0
    synced_revision: str = ""
    adopted: list[ObjectRef] = field(default_factory=list)
    drift_seen: dict[ObjectKey, datetime] = field(default_factory=dict)
    """When each drift still standing was first seen (the report's ``firstSeen``)."""
    drifted: list[DriftedObject] = field(default_factory=list)
    settling_until: datetime | None = None
    """Until when the loop looks again at ``settle_interval`` (an apply, or a new revision, was recent)."""
    unsettled: bool = False
    """The last report had a workload not yet healthy (or, delegated, a revision not yet applied)."""
    delegated: RenderedDirectory = field(default_factory=RenderedDirectory)
    """Delegated mode: the cluster's directory as last read (:mod:`nova_agent.delegating`)."""


class Agent:
    def __init__(
        self, settings: AgentSettings, kube: KubePort, clock: Clock, metrics: AgentMetrics | None = None
    ) -> None:
        self.settings = settings
        self.metrics = metrics
        self.kube = kube
        self.clock = clock
        self.repo = RepoCache(settings.repo, settings.cache_dir)
        status_cache = (
            self.repo if not settings.status_repo else RepoCache(settings.status_repo, settings.cache_dir)
        )
        self.status = StatusBranch(status_cache, settings.status_branch, clock)
        self.state = AgentState()
        self._jitter = cluster_jitter(settings.cluster)
        if settings.orchestration_enabled:
            log.info(
                "objects applied from %s (%s) carry %s=%s",
                redact(settings.repo),
                settings.directory,
                nova_labels.RENDERED_REPOSITORY,
                repository_id(settings.repo, settings.directory),
            )

    def _sync(self, progress: phases.Progress) -> PassOutcome:
        if not self.settings.orchestration_enabled:
            progress.phase(phases.GIT, f"reading {self.settings.directory}")
            return self._read_delegated()
        try:
            result = sync_once(
                self.settings,
                self.repo,
                self.kube,
                self.clock,
                self.state.failures,
                self.state.drift_seen,
                progress=progress,
            )
        except SyncRefused as refused:
            return PassOutcome(EXIT_REFUSED, str(refused))
        except NothingReleased as waiting:
            log.info("%s", waiting)
            return PassOutcome(EXIT_OK)
        self.state.synced_revision = result.synced_revision
        self.state.adopted = result.holds_adopted
        self.state.drifted = result.drifted
        if result.refusal:
            return PassOutcome(EXIT_REFUSED, result.refusal, result)
        if result.failed:
            return PassOutcome(EXIT_OBJECT_FAILURES, result.error_summary, result)
        return PassOutcome(EXIT_OK, "", result)

    def _failed(self, error: Exception) -> PassOutcome:
        code, message = passerrors.classify(error, self.settings.namespace)
        return PassOutcome(code, message, error=error if code == EXIT_UNEXPECTED else None)

    def _read_delegated(self) -> PassOutcome:
        """Delegated mode: read which objects the cluster's directory holds (nothing is applied)."""
        try:
            self.state.delegated = delegating.read_directory(self.repo, self.settings)
        except GitError as error:  # the last set read stands; the report says why
            return self._failed(error)
        return PassOutcome(EXIT_OK)

    def _synced_revision(self) -> str:
        if not self.state.synced_revision and self.settings.orchestration_enabled:
            try:
                self.state.synced_revision = read_inventory(self.kube, self.settings)[0].revision
            except (KubeApiError, KubeUnavailable):
                return ""  # the pass's own error says why; the report goes out without it
        return self.state.synced_revision

    def _workloads(self, outcome: PassOutcome) -> tuple[PassOutcome, list[OwnedObject]]:
        """This agent's own workloads for the report: its inventory's live objects; in delegated mode what
        the other tool applied, narrowed to the cluster's directory as last read from git."""
        if outcome.sync is not None:
            return outcome, outcome.sync.owned
        if self.settings.orchestration_enabled:
            return outcome, []
        try:
            live = observing.delegated_workloads(self.kube, self.settings.namespace)
            scaled = observing.autoscaled_in(self.kube, live)
        except Exception as error:
            self.state.synced_revision = ""
            return (self._failed(error) if outcome.exit_code == EXIT_OK else outcome), []
        owned, self.state.synced_revision = delegating.delegated_owned(
            live, self.state.delegated, observing.DELEGATED_KINDS, scaled
        )
        return outcome, owned

    def pass_once(self, progress: phases.Progress = phases.NO_PROGRESS) -> PassOutcome:
        """One pass: sync (unless delegated), then observe and report, telling ``progress`` of each phase.
        Whatever fails, the report is still written (with ``lastError``) when git allows it; nothing but an
        interrupt raises."""
        started = time.perf_counter()
        outcome = self._pass(progress)
        if self.metrics is not None:
            result = outcome.sync
            self.metrics.record_pass(
                outcome.exit_code,
                time.perf_counter() - started,
                result.drifted if result is not None else [],
                len(result.replaced) if result is not None else 0,
                ended=self.clock.now(),
            )
        return outcome

    def _pass(self, progress: phases.Progress) -> PassOutcome:
        self.kube.new_pass()
        before = (self.state.synced_revision, self.state.delegated.revision)
        try:
            outcome = self._sync(progress)
        except Exception as error:
            outcome = self._failed(error)
        outcome, workloads = self._workloads(outcome)
        applied = outcome.sync is not None and bool(outcome.sync.applied or outcome.sync.replaced)
        if applied or before != (self.state.synced_revision, self.state.delegated.revision):
            self.state.settling_until = self.clock.now() + SETTLE_WINDOW
        if self.settings.report_enabled:
            progress.phase(phases.REPORT)
            try:
                self._report(outcome, workloads)
            except Exception as error:
                log.warning("status report not written: %s", error)
                if outcome.exit_code == EXIT_OK:
                    outcome = self._failed(error)
        if outcome.exit_code == EXIT_UNREACHABLE:
            self.state.consecutive_errors += 1
        else:
            self.state.consecutive_errors = 0
        return outcome

    def _report(self, outcome: PassOutcome, workloads: list[OwnedObject]) -> None:
        now = self.clock.now()
        observed = observing.observe(
            self.kube,
            self.settings,
            workloads,
            now,
            synced_revision=self._synced_revision(),
            last_error=outcome.message,
            adopted=self.state.adopted,
            drifted=self.state.drifted,
        )
        if observed.problem is not None and outcome.exit_code == EXIT_OK:
            code, message = passerrors.classify(observed.problem, self.settings.namespace)
            outcome.exit_code, outcome.message = code, f"capacity not measured: {message}"
        observation = observed.observation
        self.state.unsettled = any(not item.health.healthy for item in observation.workloads) or (
            not self.settings.orchestration_enabled
            and self.state.delegated.revision != self._synced_revision()
        )
        try:
            if self.settings.dry_run:
                document = reporting.build_report(self.status, self.settings, observation, now)
                log.info(
                    "status report (dry run, not pushed):\n%s", yaml.safe_dump(document, sort_keys=False)
                )
            else:
                outcome.report_pushed = reporting.publish_report(self.status, self.settings, observation, now)
        except GitError as error:
            log.warning("status report not written to %s: %s", redact(self.settings.status_url), error)
            if outcome.exit_code == EXIT_OK:
                outcome.exit_code, outcome.message = EXIT_UNREACHABLE, str(error)

    def next_delay(self, outcome: PassOutcome) -> float:
        """The interval; ``settle_interval`` while what a recent pass applied is not yet healthy (so a
        rollout's gate sees it healthy seconds after it is, not an interval later); a growing backoff after
        consecutive pass-level failures."""
        if self.state.consecutive_errors == 0:
            settling = self.state.settling_until is not None and self.clock.now() < self.state.settling_until
            if settling and self.state.unsettled and self.settings.settle_interval > 0:
                return min(self.settings.interval, self.settings.settle_interval)
            return self.settings.interval
        backoff = pass_backoff(self.settings.interval)
        return max(self.settings.interval, backoff.delay(self.state.consecutive_errors, self._jitter))

    def run(self, stopping: Callable[[], bool] = lambda: False, first: PassOutcome | None = None) -> int:
        """Pass after pass until the clock is stopped (SIGTERM/SIGINT). A pass that fails once ``stopping``
        says an interrupt arrived is not logged: Ctrl-C on a terminal kills its git commands too, and
        the failures that follow are the interrupt's, not the network's. ``first``: a pass already made and
        logged (the command line's first sync, shown with progress on a terminal); the loop waits after it."""
        outcome = first
        while True:
            if outcome is not None and not self.clock.sleep(self.next_delay(outcome)):
                return EXIT_OK
            outcome = self.pass_once()
            if not (stopping() and outcome.exit_code != EXIT_OK):
                log_outcome(outcome)


STRIPPED_NAMED = 5
"""How many objects the note on stripped fields names (then a count)."""


def stripped_applied(result: SyncResult) -> str:
    """One line on the objects this pass applied without the ``ownerReferences`` or ``finalizers`` their
    render set ("" when none): said when they are applied, not at every pass that finds them unchanged."""
    refs = sorted(ref for ref in result.applied if ref in result.stripped)
    if not refs:
        return ""
    fields = sorted({name for ref in refs for name in result.stripped[ref]})
    named = ", ".join(str(ref) for ref in refs[:STRIPPED_NAMED])
    more = f" and {len(refs) - STRIPPED_NAMED} more" if len(refs) > STRIPPED_NAMED else ""
    return (
        f"applied {len(refs)} object(s) without the {' and '.join(fields)} their render sets "
        f"({named}{more}): "
        "nova-agent never applies owner references (the garbage collector would delete the object when the "
        "owner they name is absent) nor finalizers (docs/agent.md)"
    )


def log_outcome(outcome: PassOutcome) -> None:
    result = outcome.sync
    if result is not None:
        log.info(
            "revision %s: %d applied, %d unchanged, %d pruned, %d released, %d failed",
            result.revision[:12],
            len(result.applied),
            result.unchanged,
            len(result.pruned),
            len(result.released),
            len(result.failed),
        )
        for ref, message in sorted(result.failed.items()):
            log.warning("%s: %s", ref, message)
        for ref in result.replaced:
            log.info("replaced %s: the server refused the change of an immutable field", ref)
        if stripped := stripped_applied(result):
            log.warning("%s", stripped)
        for found in result.drifted:
            done = "put back" if found.corrected else f"not put back (drift {found.mode.value})"
            log.warning("drift: %s differs from git at %s: %s", found.ref, ", ".join(found.fields), done)
        for ref in result.adopted:
            log.info("adopted %s: it existed before nova-agent applied it, so it will never be deleted", ref)
        for ref in result.released:
            log.info("released %s: git no longer has it and nova-agent did not create it; left as it is", ref)
        for ref in result.would_prune:
            log.info("would delete %s (dry run)", ref)
    if outcome.error is not None:
        log.error("%s (rerun sync with --debug for details)", outcome.message)
    elif outcome.message:
        (log.warning if outcome.exit_code else log.info)("%s", outcome.message)
