"""The seams of the controller: what it reads, what it tells, and the clock it reads time from.

The loop never touches git, a Kubernetes API or the wall clock directly; it calls these ports. Real
implementations live beside them (``sourcereading``, ``statusreading``, ``committing``); tests pass the same
real implementations over local bare repositories and inject a clock they move by hand, so timer behaviour
(cool-downs, failback holds, debounce, backoff) is tested in milliseconds without sleeping.

``SourceSnapshot`` is one source revision: a directory to load (directory and git sources export one
commit into a temporary directory) or ready documents (the control-plane source lists objects). Both go
through the same validation.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from nova_gitops.api.clusters import Cluster
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import Problem
from nova_gitops.api.statusreports import RescheduleRequest
from nova_gitops.rendering.increments import RenderDelta, RenderIndex
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.rollouts.events import RolloutEvent
from nova_gitops.scheduling.plans import Plan, PreviousPlacement
from nova_gitops.workflows.publishing import PublishResult


@dataclass(frozen=True, slots=True)
class SourceSnapshot:
    """A source read at one revision: either ``root`` (a directory to load) or ``documents``.

    ``texts`` maps file names of ``documents`` to their text, so problems can point at lines (may be empty).
    ``digest`` identifies the content: two snapshots with the same digest hold the same bytes (a git
    revision, a hash of a directory's files taken *before* they are read). None: unknown, and the reconcile
    never skips on it (``controller.skipping``).
    """

    root: Path | None
    documents: tuple[Document, ...] | None
    texts: Mapping[str, str]
    source: SourceInfo
    digest: str | None = None


class SourceReader(Protocol):
    def read(self) -> AbstractContextManager[SourceSnapshot]:
        """One revision of the source, valid inside the block (an export may be removed after it)."""
        ...

    def changes(self) -> Iterator[None] | None:
        """Push notifications: an iterator that yields once per (debounced) change, or None when the
        source can only be polled. Iterated in a thread of its own; it ends when the source closes."""
        ...


@dataclass(frozen=True, slots=True)
class ClusterReport:
    """One agent's validated ``status/<cluster>.yaml``.

    ``document`` is the Cluster document as the inventory uses it (it replaces the source's Cluster of the
    same name); ``capacity`` is a fingerprint of the reported per-node capacity, which releases a
    reschedule exclusion when it changes; ``workloads`` are the agent's health entries as reported (each with
    the ``revision`` it reflects, a string, when the agent is recent enough to say; ``healthy`` is for
    ``synced_revision``).
    """

    cluster: Cluster
    document: Document
    text: str
    capacity: str
    workloads: tuple[Mapping[str, Any], ...] = ()
    reschedule_requests: tuple[RescheduleRequest, ...] = ()
    synced_revision: str = ""
    plan_digest: str = ""  # of what planning reads from the report (``statusreading.plan_fingerprint``)

    @property
    def name(self) -> str:
        return self.cluster.name


@dataclass(frozen=True, slots=True)
class StatusSnapshot:
    """Every usable report, and the problems of those that were refused (they do not stop a reconcile)."""

    reports: Mapping[str, ClusterReport] = field(default_factory=dict)
    problems: tuple[Problem, ...] = ()
    revision: str | None = None  # the status branch commit read, when there is one


class StatusReader(Protocol):
    def read(self) -> StatusSnapshot: ...

    def head(self) -> str | None:
        """The status branch's commit now, read cheaply (no fetch), for the loop's watcher; None when there
        is none (yet) or nothing to watch."""
        ...


class PlanObserver(Protocol):
    def planned(self, plan: Plan, reports: Mapping[str, ClusterReport]) -> None:
        """Called after each successful reconcile (control-plane write-back implements it)."""
        ...


@runtime_checkable
class RolloutObserver(Protocol):
    def rolled_out(self, events: Sequence[RolloutEvent]) -> None:
        """Called after each rollout step that has something to tell (control-plane write-back sends the
        events); an observer of plans may also be one of rollouts."""
        ...


@dataclass(frozen=True, slots=True)
class Rendered:
    """What one render attempt produced on top of a given previous placement, as changes to the render
    ``RenderOnto`` was given the index of (``rendering.increments``): ``delta.files`` holds the bytes of the
    files emitted this time (every file whose blob id the base render did not have, at least; every file
    without a base), ``delta.changes`` what changed in the base's tree (None without a base)."""

    delta: RenderDelta
    plan: Plan
    notes: tuple[str, ...] = ()  # extra commit-message lines (reschedules with their reasons, failbacks)
    vacated: frozenset[str] = frozenset()  # clusters the controller deliberately moved groups off
    rescheduled_only: bool = False  # every move was a reschedule (no failback): remedial if the source is too

    @property
    def files(self) -> Mapping[str, bytes]:
        return self.delta.files

    @property
    def index(self) -> RenderIndex:
        """Describes this render, for the next one."""
        return self.delta.index

    @property
    def blobs(self) -> Mapping[str, str]:
        """Every file of the render (path → git blob id): decodes every group, a full render's cost."""
        return self.delta.blobs


RenderOnto = Callable[[PreviousPlacement, RenderIndex | None], Rendered]
"""Render against the placement currently on the branch, as changes to the render the index describes (the
branch head's, when the publisher has it; None: render every file). Called again when a push loses a race,
or with None when the index turns out not to cover the head."""


@dataclass(frozen=True, slots=True)
class Publication:
    result: PublishResult
    rendered: Rendered | None  # None when nothing was rendered (superseded)


class Publisher(Protocol):
    def publish(self, render: RenderOnto, source: SourceInfo) -> Publication: ...


@runtime_checkable
class HeadReader(Protocol):
    """A publisher that can tell its branch's head cheaply (``git ls-remote``): a reconcile with nothing
    changed checks that nobody else moved the branch instead of rendering again (``controller.skipping``)."""

    def head(self) -> str | None: ...


class Clock(Protocol):
    def now(self) -> float:
        """Seconds on a monotonic scale (only differences mean anything)."""
        ...


class MonotonicClock:
    def now(self) -> float:
        return time.monotonic()


class ManualClock:
    """A clock tests move by hand (our own port, not a library mock)."""

    def __init__(self, start: float = 1000.0) -> None:
        self.value = start

    def now(self) -> float:
        return self.value

    def advance(self, seconds: float) -> None:
        self.value += seconds


class Triggers:
    """Why the loop should reconcile soon: a thread-safe, bounded queue of reasons.

    Producers (webhook, directory watcher) never block: when the queue is full, a reconcile is already
    due and the extra reason is dropped."""

    def __init__(self, limit: int = 1024) -> None:
        self._queue: queue.Queue[str] = queue.Queue(maxsize=limit)

    def put(self, reason: str) -> None:
        with suppress(queue.Full):
            self._queue.put_nowait(reason)

    def wait(self, timeout: float | None) -> list[str]:
        """Reasons that arrived, waiting up to ``timeout`` seconds for the first (0: do not wait)."""
        reasons: list[str] = []
        try:
            if timeout is None or timeout > 0:
                reasons.append(self._queue.get(timeout=timeout))
            else:
                reasons.append(self._queue.get_nowait())
        except queue.Empty:
            return reasons
        while True:
            try:
                reasons.append(self._queue.get_nowait())
            except queue.Empty:
                return reasons
