"""Failover headroom in operation: after each reconcile that changed what a loss's plan reads (placement,
capacity, policies, clusters), compute what losing each cluster would strand, in a thread of its own, and
export it (``nova_headroom_stranded_groups{lost}``, ``nova_headroom_computed_timestamp_seconds``;
docs/metrics.md).

Headroom costs one plan per cluster (docs/headroom.md), far more than a reconcile that changed one workload,
so the loop never waits for it: ``reconciled`` hands the plan over and returns. One computation runs at a
time, from the newest plan: a plan handed over while one runs replaces any that waits, and the running one's
result is dropped when it ends (stale: the placement it describes is no longer the branch's), so the
metrics never go back to an older plan and the work never queues up. Each computation reuses the
reconcile's plan memory (``scheduling.memory``: every loss re-plans only what it touches) and the source
set the reconcile loaded; both are immutable, so the next reconcile can run meanwhile.

What counts as a change is what a loss's plan reads (``placement_key``): the plan's placement and capacity
(each group's clusters, status and requests, each cluster's usage), the clusters' labels, state and nodes,
and the policies — not the commit: a capacity change alone makes no commit (PLACEMENT.md's capacity table
describes, it does not decide) and still changes what a loss strands, and a policy that allows one more
cluster moves nothing and may rescue a group a loss would strand.
When the render computed the headroom itself (``--headroom-in-placement``: the plan carries it), that
result is exported as it is, and nothing is computed again.

The thread and the loop share the interpreter, so a computation plans its losses one at a time and only
while no reconcile runs (``reconciling``): a reconcile that starts meanwhile shares the CPU with at most the
one loss plan in progress (a fraction of a second at the reference fleet), then has it to itself. A
computation that a newer plan superseded stops at its next loss instead of finishing a result that would be
dropped.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from nova_gitops.api.inputs import SourceSet
from nova_gitops.controller.logs import JsonLog
from nova_gitops.controller.serving import Metrics
from nova_gitops.scheduling import failover, headroom
from nova_gitops.scheduling.headroom import Headroom
from nova_gitops.scheduling.memory import PlanMemory
from nova_gitops.scheduling.plans import LossOutcome, Plan


def placement_key(plan: Plan, source: SourceSet) -> object:
    """What a plan's headroom depends on: where each group is, how and what it requests, what each cluster
    has and holds (its totals in the plan; its labels, state and nodes in the source: candidates and fit
    read them), and the policies (which clusters a group may go to). Compared by value, never kept beyond
    the last one."""
    groups = tuple(
        (group.name, tuple(group.clusters), group.status, group.mode, tuple(sorted(group.requests.items())))
        for group in plan.groups
    )
    clusters = tuple(
        (cluster.name, cluster.labels, cluster.ready, cluster.standby, cluster.autoscaled, cluster.nodes)
        for cluster in source.clusters
    )
    return groups, plan.clusters, clusters, source.policies


Loss_ = tuple[str, tuple[str, ...]]
"""A loss to plan, as ``headroom`` hands it to its mapper: its name and the clusters lost."""


class Superseded(Exception):
    """A newer plan was handed over while this computation ran: it stops at its next loss."""


@dataclass(frozen=True, slots=True)
class Job:
    """One computation to make: the plan, what it was planned from, and its memory."""

    key: object
    generation: int
    source: SourceSet
    plan: Plan
    recalled: PlanMemory | None
    file_digests: Mapping[str, str] | None


class HeadroomWatch:
    """Computes failover headroom in the background (the module docstring) and exports it to ``metrics``.
    A thread runs while there is something to compute, and ends when nothing waits. ``wait`` is the signal
    tests (and a clean stop) wait on; ``close`` stops it."""

    def __init__(
        self,
        metrics: Metrics,
        *,
        domain: str | None = None,
        clock: Callable[[], float],  # wall-clock Unix time, for the computed timestamp
        log: JsonLog | None = None,
        compute: Callable[[Job], Headroom] | None = None,  # None: ``headroom.headroom`` (a seam for tests)
    ) -> None:
        self.metrics = metrics
        self.compute = compute or self.headroom_of
        self.domain = domain
        self.clock = clock
        self.log = log
        self._changed = threading.Condition()
        self._wanted: object = None  # the key of the plan last handed over (or computed in the render)
        self._generation = 0  # bumped by every plan handed over: a result of an older one is stale
        self._pending: Job | None = None
        self._running = False  # a computation is in progress
        self._closed = False
        self._thread: threading.Thread | None = None
        self.computed = 0  # results exported
        self.dropped = 0  # results dropped as stale
        self.background = 0  # computations run in the thread
        self.last: tuple[LossOutcome, ...] | None = None
        self._failure = ""  # the last error told, so that the same one is logged once
        self._quiet = threading.Event()  # set while no reconcile runs: a loss is planned only then
        self._quiet.set()
        self.held = threading.Event()  # set when a computation waits for a reconcile to end (for tests)
        self.losses_planned = 0  # losses planned by the thread, all computations together

    def reconciled(
        self,
        plan: Plan | None,
        source: SourceSet | None,
        *,
        recalled: PlanMemory | None = None,
        file_digests: Mapping[str, str] | None = None,
    ) -> None:
        """A reconcile's plan (None: superseded, nothing planned): hand it over when its placement or
        capacity changed since the last one; export the render's own result when it carries one."""
        if plan is None or source is None:
            return
        key = placement_key(plan, source)
        with self._changed:
            if self._closed or key == self._wanted:
                return
            self._wanted = key
            self._generation += 1
            if plan.failover is not None:  # the render computed it (--headroom-in-placement)
                self._pending = None
                self._export(plan.failover)
                return
            self._pending = Job(key, self._generation, source, plan, recalled, file_digests)
            self._start()
            self._changed.notify_all()

    @contextmanager
    def reconciling(self) -> Iterator[None]:
        """A reconcile runs for the block: the computation plans no further loss until it ends, so a
        reconcile shares the interpreter with at most one loss plan in progress."""
        self._quiet.clear()
        try:
            yield
        finally:
            self._quiet.set()

    def wait(self, timeout: float) -> bool:
        """Wait until no computation runs or waits and the thread has ended (True), or ``timeout`` seconds
        pass (False)."""
        with self._changed:
            return self._changed.wait_for(lambda: self._thread is None, timeout)

    @property
    def computing(self) -> bool:
        """A thread computes, or is about to (a plan waits)."""
        with self._changed:
            return self._thread is not None

    def close(self, timeout: float = 5.0) -> None:
        """Stop the thread: a computation in progress is left to end (its result dropped)."""
        with self._changed:
            self._closed = True
            self._pending = None
            self._changed.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="nova-headroom", daemon=True)
            self._thread.start()

    def _work(self) -> None:
        """Compute until nothing waits, then end: no thread is left idle between changes (the next plan
        handed over starts one)."""
        while True:
            with self._changed:
                if self._closed or self._pending is None:
                    self._thread = None
                    self._changed.notify_all()
                    return
                job, self._pending, self._running = self._pending, None, True
            found = self._compute(job)
            with self._changed:
                self._running = False
                if job.generation != self._generation or self._closed:
                    self.dropped += 1  # a newer plan came meanwhile: its computation follows
                elif found is not None:
                    self._export(found)
                self._changed.notify_all()

    def headroom_of(self, job: Job) -> Headroom:
        """The failover headroom of the job's plan, with this watch's domain (``scheduling.headroom``),
        its losses planned one at a time between reconciles (``paced``)."""
        return headroom.headroom(
            job.source,
            settings=job.plan.settings,
            domain=self.domain,
            recalled=job.recalled,
            file_digests=job.file_digests,
            today=job.plan,
            mapper=self.paced(job.generation),
        )

    def paced(self, generation: int) -> headroom.Mapper:
        """A ``map`` over the losses that plans each only while no reconcile runs, and gives up
        (``Superseded``) at the first loss after a newer plan was handed over: its result would be
        dropped, so the rest of it is not worth computing."""

        def mapper(function: Callable[[Loss_], headroom.Loss], items: Sequence[Loss_]) -> list[headroom.Loss]:
            found = []
            for item in items:
                if not self._quiet.is_set():
                    self.held.set()
                    self._quiet.wait()
                with self._changed:
                    if generation != self._generation or self._closed:
                        raise Superseded
                found.append(function(item))
                self.losses_planned += 1
            return found

        return mapper

    def _compute(self, job: Job) -> tuple[LossOutcome, ...] | None:
        self.background += 1
        try:
            report = self.compute(job)
        except Superseded:  # a newer plan came: dropped below, its own computation follows
            return None
        except headroom.HeadroomError as error:  # a --headroom-domain no cluster has: said once
            self._tell(str(failover.as_flag(error)))
            return None
        except Exception as error:  # never the loop's end: the metrics keep their last value
            self._tell(f"{type(error).__name__}: {error}")
            return None
        self._failure = ""
        return failover.outcomes(report)

    def _tell(self, failure: str) -> None:
        if failure != self._failure and self.log is not None:
            self.log.warning("failover headroom not computed", error=failure)
        self._failure = failure

    def _export(self, found: tuple[LossOutcome, ...]) -> None:
        """Called with the lock held: the metrics are set by one thread at a time."""
        self.metrics.headroom_computed(failover.stranded_counts(found), self.clock())
        self.last = found
        self.computed += 1
        self._changed.notify_all()
