"""One reconcile: one source revision + the agents' reports → plan → render → at most one commit.

Order (docs/design.md §8): read the status branch (the cluster inventory and the reschedule requests) and the
source at one revision (the two reads overlap), validate both together (a report's Cluster replaces the
source's Cluster of the same name), turn reschedule requests into exclusions, then plan against the
placement on the rendered branch (stickiness), render in memory and publish. Publishing makes no commit
when nothing changed, so the same inputs give no new commit.

Two rules of judgement live here, not in the planner:
- A group is moved off a cluster that asked to reschedule it only when another cluster can take it; when
  none can, it stays where it is (as Nova does: "otherwise rescheduling will not happen"), and the exclusion
  is kept for its cool-down in case room appears elsewhere.
- Failback to a higher tier waits until it has been possible for ``failback_after`` seconds, per group: a
  group whose wait is over fails back alone, the others keep waiting from when their own room appeared. The
  planner is asked more than once only when some group would move at all.

The reconciler keeps two small memories between calls (exclusions and the failback hold), both bounded by
the number of groups, and the basis of the last reconcile that changed nothing (its inputs' digests and its
plan): a reconcile whose inputs are those again skips planning, rendering and publishing
(``controller.skipping`` says when that is exact) and only runs the rollout step.

A reconcile that does run costs what an incremental ``publish`` costs, not a whole fleet: the source's files
are parsed only when their bytes are new (``sources.parsecache``: one parse cache, kept in memory), and
the render emits only the files whose inputs changed since the branch head's render
(``rendering.increments``, with the head's index the publisher keeps), which the fingerprints tell from
each source file's digest. Both caches
hold one source and one render: nothing else accumulates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from nova_gitops.api import inputs
from nova_gitops.api.clusters import Cluster
from nova_gitops.api.problems import Problem
from nova_gitops.api.rollouts import RolloutStrategy
from nova_gitops.api.statusreports import RescheduleRequest
from nova_gitops.clients import collection
from nova_gitops.controller import loading, rescheduling, skipping
from nova_gitops.controller.ports import (
    Clock,
    ClusterReport,
    HeadReader,
    PlanObserver,
    Publisher,
    Rendered,
    RenderOnto,
    RolloutObserver,
    SourceReader,
    SourceSnapshot,
    StatusReader,
    StatusSnapshot,
)
from nova_gitops.controller.rolloutstep import RolloutDriver, StepResult
from nova_gitops.controller.settings import ControllerSettings
from nova_gitops.publishing.releases import MoveOutcome
from nova_gitops.publishing.rolloutrecords import WriteOutcome
from nova_gitops.rendering.increments import RenderIndex
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.rollouts.events import rollout_events
from nova_gitops.scheduling import failover, memory, planning
from nova_gitops.scheduling.memory import PlanMemory
from nova_gitops.scheduling.plans import Plan, PreviousPlacement
from nova_gitops.sources.parsecache import ParseCache
from nova_gitops.workflows import renderers
from nova_gitops.workflows.publishing import Outcome


@dataclass(frozen=True, slots=True)
class ReconcileOutcome:
    outcome: Outcome
    commit: str | None  # the branch head after the reconcile
    source: SourceInfo
    plan: Plan | None  # None when superseded
    message: str = ""  # the commit message, when a commit was made
    moved: int = 0  # groups whose clusters changed in this commit
    unscheduled: int = 0
    rescheduled: tuple[rescheduling.Exclusion, ...] = ()  # exclusions that moved a group in this plan
    reported_only: tuple[RescheduleRequest, ...] = ()  # spread groups: reported, not acted on
    stuck: tuple[str, ...] = ()  # groups asked to move that no other cluster can take
    failed_back: tuple[str, ...] = ()
    status_problems: tuple[Problem, ...] = ()
    source_warnings: tuple[Problem, ...] = ()
    duration: float = 0.0
    rollout: StepResult | None = None  # the rollout step after the publish (None: no rollout, no refs)
    skipped: bool = False  # nothing that determines the render changed: not planned, rendered or published
    replanned_because: str = ""  # why a reconcile that was not skipped planned (``skipping.why_not``)
    emitted: int = 0  # files the render produced bytes for; the others were the head's render's
    source_set: inputs.SourceSet | None = None  # what was planned (None when skipped: the basis's source)
    file_digests: Mapping[str, str] | None = None  # the source files' digests the plan's memory is keyed by


@dataclass(slots=True)
class _Attempt:
    """What the render callback decided, kept for the outcome (the callback may run more than once)."""

    hold: rescheduling.FailbackHold = field(default_factory=rescheduling.FailbackHold)
    rescheduled: tuple[rescheduling.Exclusion, ...] = ()
    stuck: tuple[str, ...] = ()
    failed_back: tuple[str, ...] = ()


def placements(plan: Plan) -> dict[str, tuple[str, ...]]:
    return {group.name: group.clusters for group in plan.groups}


class Reconciler:
    def __init__(
        self,
        settings: ControllerSettings,
        *,
        source: SourceReader,
        status: StatusReader,
        publisher: Publisher,
        clock: Clock,
        observers: Sequence[PlanObserver] = (),
        rollout: RolloutDriver | None = None,
    ) -> None:
        self.settings = settings
        self.rollout = rollout
        self.source = source
        self.status = status
        self.publisher = publisher
        self.clock = clock
        self.observers = tuple(observers)
        self.memory = rescheduling.RescheduleMemory()
        self.hold = rescheduling.FailbackHold()
        self.basis: skipping.Basis | None = None  # the last reconcile that found its render on the branch
        self.skips = 0  # reconciles skipped since the start
        self.parse_cache: tuple[str, ParseCache] | None = None  # the source last read from files, by repo
        # the parts of the last reconcile's plans (``scheduling.memory``), which the next one's plans reuse;
        # while a reconcile plans: its files' digests and the memory of every plan it made so far
        self.plan_memory: PlanMemory | None = None
        self._planning: tuple[Mapping[str, str] | None, PlanMemory | None] = (None, None)

    def reconcile(self) -> ReconcileOutcome:
        started = self.clock.now()
        # the status branch and the source are read at once: when nothing changed, both are a round trip to
        # a git host (or a directory's digest), and waiting for one after the other is half the reconcile
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="nova-status-read") as pool:
            reading = pool.submit(self.status.read)
            with self.source.read() as snapshot:
                return self._reconcile_read(reading.result(), snapshot, started)

    def _reconcile_read(
        self, status: StatusSnapshot, snapshot: SourceSnapshot, started: float
    ) -> ReconcileOutcome:
        read = skipping.inputs_of(snapshot, status.reports, self.settings)
        basis, self.basis = self.basis, None  # kept again only by a skip or an unchanged reconcile
        reason = skipping.changed_before_head(basis, read)
        if reason is None and basis is not None and read is not None:
            skipped = self._skip(basis, read, status, snapshot, started)
            if isinstance(skipped, ReconcileOutcome):
                self.basis = basis
                return skipped
            reason = skipped
        with collection.paused():  # a reconcile builds ~100k objects per 100 clusters beside the memories
            return self._reconcile(status, snapshot, started, read, reason or "")

    def _skip(
        self,
        basis: skipping.Basis,
        read: skipping.Inputs,
        status: StatusSnapshot,
        snapshot: SourceSnapshot,
        started: float,
    ) -> ReconcileOutcome | str:
        """The reconcile when the inputs are the basis's: the outcome of a skip, or why it cannot skip."""
        reports = {**status.reports, **basis.source_reports}  # as ``source_set`` orders them
        requests = [request for report in reports.values() for request in report.reschedule_requests]
        capacities = {name: report.capacity for name, report in reports.items()}
        update = rescheduling.update(
            self.memory, requests, capacities, now=started, cooldown=self.settings.reschedule_cooldown
        )
        head = self.publisher.head if isinstance(self.publisher, HeadReader) else None
        reason = skipping.why_not(basis, read, update.memory.avoid(), started, head)
        if reason is not None:
            return reason
        plan = basis.plan
        spread = {group.name for group in plan.groups if group.mode != "single"}
        self.memory = update.memory.without_groups(spread)
        self.skips += 1
        for observer in self.observers:
            observer.planned(plan, reports)
        step = self._rollout_step(basis.strategy, basis.clusters, reports)
        return ReconcileOutcome(
            outcome=Outcome.UNCHANGED,
            commit=basis.head,
            source=snapshot.source,
            plan=plan,
            unscheduled=len(plan.unscheduled),
            reported_only=tuple(request for request in requests if request.group in spread),
            stuck=basis.stuck,
            status_problems=(*status.problems, *basis.refused),
            source_warnings=basis.warnings,
            duration=self.clock.now() - started,
            rollout=step,
            skipped=True,
        )

    def _reconcile(
        self,
        status: StatusSnapshot,
        snapshot: SourceSnapshot,
        started: float,
        read: skipping.Inputs | None,
        reason: str,
    ) -> ReconcileOutcome:
        """The whole reconcile: validate, plan, render what changed, publish, then the rollout step."""
        loaded = loading.load(
            snapshot,
            status.reports,
            namespace=self.settings.namespace,
            parse_cache=self._parse_cache(snapshot.source) if snapshot.root is not None else None,
        )
        inputs_set, reports, refused = loaded.source_set, loaded.reports, loaded.refused
        requests = [request for report in reports.values() for request in report.reschedule_requests]
        capacities = {name: report.capacity for name, report in reports.items()}
        update = rescheduling.update(
            self.memory, requests, capacities, now=started, cooldown=self.settings.reschedule_cooldown
        )
        attempt = _Attempt()
        self._planning = (loaded.digests or None, None)
        render = self._render_onto(loaded, snapshot.source, update.memory, started, attempt)
        publication = self.publisher.publish(render, snapshot.source)
        self.plan_memory = self._planned_memory() or self.plan_memory
        rendered = publication.rendered
        plan = rendered.plan if rendered is not None else None
        spread = {group.name for group in plan.groups if group.mode != "single"} if plan else set()
        self.memory = update.memory.without_groups(spread)
        self.hold = attempt.hold
        self._tell_planned(plan, reports)
        result = publication.result
        step = None
        if result.outcome is not Outcome.SUPERSEDED:
            step = self._rollout_step(inputs_set.rollout, inputs_set.clusters, reports)
        if read is not None and plan is not None and result.outcome is Outcome.UNCHANGED and result.commit:
            self.basis = self._basis(read, result.commit, plan, loaded, status, update.memory, attempt)
        return ReconcileOutcome(
            outcome=result.outcome,
            commit=result.commit,
            source=result.source,
            plan=plan,
            message=result.message,
            moved=len(result.diff.moved),
            unscheduled=len(plan.unscheduled) if plan else 0,
            rescheduled=attempt.rescheduled,
            reported_only=tuple(request for request in requests if request.group in spread),
            stuck=attempt.stuck,
            failed_back=attempt.failed_back,
            status_problems=(*status.problems, *refused),
            source_warnings=inputs_set.warnings,
            duration=self.clock.now() - started,
            rollout=step,
            replanned_because=reason,
            emitted=len(rendered.files) if rendered is not None else 0,
            source_set=inputs_set,
            file_digests=loaded.digests or None,
        )

    def _tell_planned(self, plan: Plan | None, reports: Mapping[str, ClusterReport]) -> None:
        """Each observer is told of the plan (none when the reconcile was superseded)."""
        if plan is not None:
            for observer in self.observers:
                observer.planned(plan, reports)

    def _render_onto(
        self,
        loaded: loading.Loaded,
        source: SourceInfo,
        memory: rescheduling.RescheduleMemory,
        started: float,
        attempt: _Attempt,
    ) -> RenderOnto:
        """The render callback the publisher calls on top of the branch head's placement and render index:
        plan (``_plan``), then render only what changed since that index."""
        inputs_set = loaded.source_set

        def render(previous: PreviousPlacement, base: RenderIndex | None) -> Rendered:
            plan = self._plan(inputs_set, previous, memory, started, attempt)
            if plan.settings.headroom:  # --headroom-in-placement: PLACEMENT.md says it, as publish --headroom
                plan = failover.with_failover(
                    inputs_set, plan, recalled=self.plan_memory, file_digests=loaded.digests or None
                )
            delta = renderers.render_changes(plan, inputs_set, source, base, loaded.digests)
            notes = _notes(previous, plan, memory, attempt)
            rescheduled_only = bool(attempt.rescheduled) and not attempt.failed_back
            vacated = _vacated(previous, plan, attempt)
            return Rendered(delta, plan, notes, vacated, rescheduled_only)

        return render

    def _basis(
        self,
        read: skipping.Inputs,
        head: str,
        plan: Plan,
        loaded: loading.Loaded,
        status: StatusSnapshot,
        memory: rescheduling.RescheduleMemory,
        attempt: _Attempt,
    ) -> skipping.Basis:
        """What a reconcile that found its render on the branch keeps, for the next to skip on."""
        return skipping.Basis(
            inputs=read,
            avoid=memory.avoid(),
            head=head,
            failback_due=skipping.failback_due(self.hold, self.settings.failback_after),
            plan=plan,
            strategy=loaded.source_set.rollout,
            clusters=loaded.source_set.clusters,
            source_reports={
                name: report for name, report in loaded.reports.items() if name not in status.reports
            },
            refused=loaded.refused,
            warnings=loaded.source_set.warnings,
            stuck=attempt.stuck,
        )

    def _rollout_step(
        self,
        strategy: RolloutStrategy | None,
        clusters: Sequence[Cluster],
        reports: Mapping[str, ClusterReport],
    ) -> StepResult | None:
        """The rollout step after a reconcile, told to the observers (None: no rollout driver)."""
        if self.rollout is None:
            return None
        step = self.rollout.step(strategy, clusters, reports)
        self._tell_rollout(step, strategy.name if strategy is not None else None)
        return step

    def _parse_cache(self, source: SourceInfo) -> ParseCache:
        """The parse cache of the source as it is recorded now: one object, kept from load to load (it
        reads its file once and then keeps what the last load used); another source starts anew."""
        if self.parse_cache is None or self.parse_cache[0] != source.repo:
            self.parse_cache = (source.repo, ParseCache.for_source(self.settings.cache_dir, source.repo))
        return self.parse_cache[1]

    def _tell_rollout(self, step: StepResult, strategy: str | None) -> None:
        if step.decision is None:
            return
        told = rollout_events(
            step.decision,
            strategy,
            moved=step.moved is MoveOutcome.MOVED,
            recorded=step.record is WriteOutcome.WRITTEN,
        )
        if told:
            for observer in self.observers:
                if isinstance(observer, RolloutObserver):
                    observer.rolled_out(told)

    def _plan(
        self,
        source: inputs.SourceSet,
        previous: PreviousPlacement,
        memory: rescheduling.RescheduleMemory,
        now: float,
        attempt: _Attempt,
    ) -> Plan:
        avoid = memory.avoid()
        free, stuck = self._plan_keeping_stuck(source, previous, avoid, failback=True)
        plan = free
        attempt.hold = self.hold.observe((), now)
        attempt.failed_back = ()
        free_placed = placements(free)
        moving = any(
            free_placed.get(group, clusters) != tuple(clusters) for group, clusters in previous.groups.items()
        )
        if moving and self.settings.failback_after > 0:
            held, stuck_held = self._plan_keeping_stuck(source, previous, avoid, failback=False)
            wanting = rescheduling.failback_candidates(placements(held), placements(free), previous.groups)
            attempt.hold = self.hold.observe(wanting, now)
            due = attempt.hold.due(now, self.settings.failback_after)
            if due:  # only these fail back; the others keep their holds
                plan, stuck = self._plan_keeping_stuck(source, previous, avoid, failback=frozenset(due))
                attempt.failed_back = tuple(sorted(due))
                attempt.hold = attempt.hold.without(due)
            else:
                plan, stuck = held, stuck_held
        attempt.stuck = stuck
        now_placed = placements(plan)
        attempt.rescheduled = tuple(
            exclusion
            for exclusion in sorted(memory.exclusions.values(), key=lambda item: item.key)
            if exclusion.cluster in previous.groups.get(exclusion.group, ())
            and exclusion.cluster not in now_placed.get(exclusion.group, ())
            and exclusion.group not in stuck
        )
        return plan

    def _plan_keeping_stuck(
        self,
        source: inputs.SourceSet,
        previous: PreviousPlacement,
        avoid: Mapping[str, Mapping[str, str]],
        *,
        failback: bool | frozenset[str],
    ) -> tuple[Plan, tuple[str, ...]]:
        """Plan with the exclusions; a group they leave with nowhere to go is planned again without its
        exclusions, so it stays where it was instead of being removed from every cluster."""

        def plan_with(exclusions: Mapping[str, Mapping[str, str]]) -> Plan:
            return self._plan_once(source, previous, exclusions, failback)

        plan = plan_with(avoid)
        stuck = tuple(
            sorted(
                group.name for group in plan.groups if group.name in avoid and group.status == "unschedulable"
            )
        )
        if not stuck:
            return plan, ()
        return plan_with({group: value for group, value in avoid.items() if group not in stuck}), stuck

    def _planned_memory(self) -> PlanMemory | None:
        """The memory of this reconcile's plans (None when none was made), and the reconcile's planning
        state cleared. Only what these plans used is kept, so the memory cannot grow."""
        made = self._planning[1]
        self._planning = (None, None)
        return made

    def _plan_once(
        self,
        source: inputs.SourceSet,
        previous: PreviousPlacement,
        avoid: Mapping[str, Mapping[str, str]],
        failback: bool | frozenset[str],
    ) -> Plan:
        """Every plan of a reconcile is made here, and only here: the free one, the held one and the due
        failbacks' (``_plan``), each made again without the exclusions of the groups it leaves stuck. Each
        reuses what the last reconcile's plans and this one's earlier plans worked out, where its inputs are
        the same (``scheduling.memory``: the plan is the one made afresh)."""
        digests, made = self._planning
        recalled = self.plan_memory if made is None else (self.plan_memory or memory.EMPTY).merged(made)
        plan = planning.plan(
            source,
            previous=previous,
            settings=self.settings.plan_settings,
            avoid=avoid,
            failback=failback,
            recalled=recalled,
            file_digests=digests,
        )
        if plan.memory is not None:
            self._planning = (digests, plan.memory if made is None else made.merged(plan.memory))
        return plan


def _vacated(previous: PreviousPlacement, plan: Plan, attempt: _Attempt) -> frozenset[str]:
    """Clusters that rescheduled or failed-back groups left in this plan."""
    now_placed = placements(plan)
    left = {exclusion.cluster for exclusion in attempt.rescheduled}
    for group in attempt.failed_back:
        left.update(set(previous.groups.get(group, ())) - set(now_placed.get(group, ())))
    return frozenset(left)


def _notes(
    previous: PreviousPlacement,
    plan: Plan,
    memory: rescheduling.RescheduleMemory,
    attempt: _Attempt,
) -> tuple[str, ...]:
    now_placed = placements(plan)
    notes = [
        f"rescheduled {exclusion.group} from {exclusion.cluster} to "
        f"{','.join(now_placed.get(exclusion.group, ())) or 'no cluster'}: "
        f'cluster {exclusion.cluster} reported "{exclusion.reason}"'
        for exclusion in attempt.rescheduled
    ]
    notes += [
        f"failed back {group} from {','.join(previous.groups.get(group, ()))} to "
        f"{','.join(now_placed.get(group, ()))}: a higher tier has had room long enough"
        for group in attempt.failed_back
        if previous.groups.get(group) != now_placed.get(group)
    ]
    for group in attempt.stuck:
        reasons = "; ".join(
            f'{exclusion.cluster} reported "{exclusion.reason}"'
            for exclusion in memory.exclusions.values()
            if exclusion.group == group
        )
        notes.append(f"kept {group} where it is: no other cluster can take it ({reasons})")
    return tuple(notes)
