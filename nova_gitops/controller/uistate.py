"""What the controller's web view shows (issue 27): the facts the controller already holds after each
reconcile, kept for the pages, read-only.

``FleetView`` is told of each reconcile twice: as a plan observer (``planned(plan, reports)``: the plan and
the agents' reports, as the control-plane write-back is) and by the loop (``reconciled(outcome, at)`` or
``failed(error, at)``: the source set, the rollout step, the commit and what moved). It keeps references to
those objects — the controller holds them anyway — and the last ``KEPT_RECONCILES`` reconciles; no page is
built until someone asks (``model``), so a controller whose view nobody opens pays a few assignments per
reconcile. A page's model is built once per version (each reconcile is a version) and shared by every
request until the next. Nothing here reads git, the cluster or a Secret: the view reads only what the
reconcile already read.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from nova_gitops import errors
from nova_gitops.api.inputs import SourceSet
from nova_gitops.controller.ports import ClusterReport
from nova_gitops.controller.reconciling import ReconcileOutcome
from nova_gitops.rendering import fleetviews
from nova_gitops.rendering.activityviews import MAX_RECONCILES, Reconciled, ReconcileRow, reconcile_rows
from nova_gitops.rendering.fleetmodel import FleetFacts, FleetModel
from nova_gitops.rollouts.decisions import Decision
from nova_gitops.scheduling.plans import Plan

KEPT_RECONCILES = MAX_RECONCILES


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One version of the view: its number, when it was made and the model (None before any plan)."""

    version: int
    at: datetime | None
    model: FleetModel | None
    stamp: str


class FleetView:
    """The controller's facts for the web view, safe to read from the server's threads."""

    def __init__(self, *, title: str, where: str, redact: Callable[[str], str] = str) -> None:
        self.title = title
        self.where = where
        self.redact = redact  # what the log does to a text: URLs' credentials and configured secrets out
        self._lock = threading.Lock()
        self._version = 0
        self._plan: Plan | None = None
        self._source_set: SourceSet | None = None
        self._reports: Mapping[str, ClusterReport] = {}
        self._decision: Decision | None = None
        self._released: Mapping[str, str] = {}  # each cluster's release branch, with a rollout
        self._head = ""
        self._at: datetime | None = None
        self._reconciles: deque[Reconciled] = deque(maxlen=KEPT_RECONCILES)
        self._snapshot: Snapshot | None = None
        self._reports_made_of: Mapping[str, ClusterReport] | None = None  # the reports the last model read
        # a group's history from the rendered repository (``uihistory.attach``): (head, policy, group) → rows
        self.history: Callable[[str, str | None, str], Sequence[tuple[str, str, str]]] | None = None

    @property
    def version(self) -> int:
        return self._version

    def group_history(self, policy: str | None, group: str) -> tuple[tuple[str, str, str], ...] | None:
        """The group's commits at the last head, from the rendered repository; None: no repository to read."""
        if self.history is None:
            return None
        return tuple(self.history(self._head, policy, group))

    def reconcile_rows(self) -> tuple[ReconcileRow, ...]:
        """The reconciles kept, as the Reconciles page lists them (for the page shown before any plan)."""
        with self._lock:
            kept = tuple(self._reconciles)
        return reconcile_rows(kept)

    def planned(self, plan: Plan, reports: Mapping[str, ClusterReport]) -> None:
        """A plan observer's call: the plan a reconcile made (or kept) and the agents' reports."""
        with self._lock:
            self._plan, self._reports = plan, reports

    def reconciled(self, outcome: ReconcileOutcome, at: datetime) -> None:
        decision = outcome.rollout.decision if outcome.rollout is not None else None
        released = {
            cluster: commit
            for cluster, commit in (outcome.rollout.released if outcome.rollout is not None else {}).items()
            if commit
        }
        lines = outcome.message.splitlines()[1:]  # the commit message's body, its trailers left out
        notes = tuple(self.redact(line) for line in lines if line.strip() and not line.startswith("Nova-"))
        entry = Reconciled(
            at=at,
            outcome=outcome.outcome.value,
            commit=outcome.commit or "",
            duration=outcome.duration,
            skipped=outcome.skipped,
            replanned_because=self.redact(outcome.replanned_because),
            notes=notes[:20],
            moved=outcome.moved,
            unscheduled=outcome.unscheduled,
        )
        with self._lock:
            if outcome.plan is not None:
                self._plan = outcome.plan
            if outcome.source_set is not None:  # a skip keeps the source of the reconcile it skips on
                self._source_set = outcome.source_set
            self._decision = decision
            self._released = released
            self._head = outcome.commit or self._head
            self._at = at
            self._reconciles.append(entry)
            self._version += 1

    def failed(self, error: BaseException, at: datetime) -> None:
        problems = tuple(self.redact(str(problem)) for problem in getattr(error, "problems", ())[:20])
        kind = "input" if isinstance(error, errors.InputError) else type(error).__name__
        entry = Reconciled(
            at=at,
            outcome="failed",
            commit="",
            duration=0.0,
            error=self.redact(f"{kind}: {error}"),
            notes=problems,
        )
        with self._lock:
            self._reconciles.append(entry)
            self._at = at
            self._version += 1

    def snapshot(self) -> Snapshot:
        """The current version's model, built on first use after a reconcile and then shared."""
        with self._lock:
            if self._snapshot is not None and self._snapshot.version == self._version:
                return self._snapshot
            self._snapshot = Snapshot(self._version, self._at, self._model(), self._stamp())
            return self._snapshot

    def _same_inputs(self) -> bool:
        """Whether the last model was made of these very objects (a skipped reconcile keeps them all)."""
        last = self._snapshot.model if self._snapshot is not None else None
        if last is None or last.facts.plan is not self._plan or last.facts.source_set is not self._source_set:
            return False
        if last.facts.decision is not self._decision or self._reports_made_of is None:
            return False
        if last.facts.head != ("" if self._decision is not None else self._head):
            return False
        if last.facts.released != self._released:
            return False
        made_of = self._reports_made_of
        return made_of.keys() == self._reports.keys() and all(
            made_of[name] is report for name, report in self._reports.items()
        )

    def _model(self) -> FleetModel | None:
        if self._plan is None:
            return None
        previous = self._snapshot.model if self._snapshot is not None and self._same_inputs() else None
        if previous is not None:
            agents = previous.facts.agents
        else:
            agents = {
                name: fleetviews.agent_facts(report.document.body) for name, report in self._reports.items()
            }
        self._reports_made_of = self._reports
        facts = FleetFacts(
            plan=self._plan,
            source_set=self._source_set,
            agents=agents,
            decision=self._decision,
            reconciles=tuple(self._reconciles),
            head="" if self._decision is not None else self._head,  # a rollout releases cluster by cluster
            where=self.where,
            now=self._at,
            title=self.title,
            released=self._released,
        )
        return FleetModel(facts, previous)

    def _stamp(self) -> str:
        if self._at is None:
            return "waiting for the first reconcile"
        last = self._reconciles[-1] if self._reconciles else None
        what = f" · {last.outcome}" + (f" {last.commit[:7]}" if last and last.commit else "") if last else ""
        return f"last reconcile {self._at:%Y-%m-%d %H:%M:%S} UTC{what} · updates by itself"
