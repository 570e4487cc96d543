"""Leader election on a ``coordination.k8s.io/v1`` Lease, so several controller replicas are safe.

Only the leader reconciles and commits; the others wait, ready to take over. This is the scheme of client-go's
``leaderelection`` package, which every Kubernetes controller uses and operators know how to inspect
(``kubectl get lease -n nova-gitops nova-gitops-controller -o yaml``):

- the Lease names its ``holderIdentity`` and ``leaseDurationSeconds``; the holder rewrites ``renewTime``
  every retry period;
- another replica takes the Lease over only when it has seen the same record unchanged for a whole lease
  duration *on its own monotonic clock* (never by comparing ``renewTime`` with its wall clock: clocks of
  different machines disagree);
- every write is a PUT carrying the ``resourceVersion`` that was read, so two candidates cannot both win: the
  second gets 409 Conflict;
- a leader that could not renew for ``renew_deadline`` stops leading *before* the lease can expire for the
  others, and a leader that shuts down releases the Lease (empty holder, 1 s duration) so a successor takes
  over at once instead of after a lease duration.

The decision is a pure function (:func:`decide`); :class:`LeaderElector` holds the observed state and talks
through :class:`LeasePort`, whose one implementation :class:`KubeLeases` speaks REST. Time comes from an
injected monotonic clock (``ports.Clock``) and an injected wall clock (for ``renewTime``), so tests run in
milliseconds.
"""

from __future__ import annotations

import contextlib
import enum
import socket
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from nova_gitops import errors
from nova_gitops.clients.kuberest import KubeApiError
from nova_gitops.controller.ports import Clock, MonotonicClock
from nova_gitops.sources.kubeapi import Body, KubeApi, ResourceKind

LEASES = ResourceKind("coordination.k8s.io", "v1", "leases", "Lease", True)
FIELD_MANAGER = "nova-gitops"
DEFAULT_LEASE_NAME = "nova-gitops-controller"


@dataclass(frozen=True, slots=True)
class LeaseRecord:
    """The Lease's spec as we use it; ``resource_version`` is the optimistic-concurrency token."""

    holder: str
    duration_seconds: int
    acquire_time: str | None = None
    renew_time: str | None = None
    transitions: int = 0
    resource_version: str = ""


class Action(enum.Enum):
    CREATE = "create"  # no Lease yet
    RENEW = "renew"  # we hold it
    ACQUIRE = "acquire"  # released or expired: take it over
    WAIT = "wait"  # someone else holds a live lease


def decide(observed: LeaseRecord | None, observed_at: float, now: float, identity: str) -> Action:
    """What a candidate should do, given the record it last saw and when (monotonic seconds) it saw it
    change."""
    if observed is None:
        return Action.CREATE
    if observed.holder == identity:
        return Action.RENEW
    if not observed.holder or now >= observed_at + observed.duration_seconds:
        return Action.ACQUIRE
    return Action.WAIT


def next_record(
    observed: LeaseRecord | None, action: Action, identity: str, duration_seconds: int, wall_now: str
) -> LeaseRecord:
    """The record to write for ``action`` (not WAIT): renewals keep the acquire time; take-overs count a
    transition."""
    if action is Action.WAIT:
        raise ValueError("nothing to write while another replica holds the lease")
    if observed is None or action is Action.CREATE:
        return LeaseRecord(identity, duration_seconds, wall_now, wall_now, 0)
    if action is Action.RENEW:
        return replace(observed, duration_seconds=duration_seconds, renew_time=wall_now)
    return replace(
        observed,
        holder=identity,
        duration_seconds=duration_seconds,
        acquire_time=wall_now,
        renew_time=wall_now,
        transitions=observed.transitions + 1,
    )


def released_record(held: LeaseRecord, wall_now: str) -> LeaseRecord:
    """What a leader writes on shutdown: no holder and a 1 s duration, so a successor takes over at once."""
    return replace(held, holder="", duration_seconds=1, renew_time=wall_now)


def micro_time(moment: datetime) -> str:
    """A Kubernetes MicroTime: RFC 3339 in UTC with microseconds."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_lease(body: Mapping[str, Any]) -> LeaseRecord:
    spec = body.get("spec") or {}
    metadata = body.get("metadata") or {}
    return LeaseRecord(
        holder=str(spec.get("holderIdentity") or ""),
        duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
        acquire_time=spec.get("acquireTime"),
        renew_time=spec.get("renewTime"),
        transitions=int(spec.get("leaseTransitions") or 0),
        resource_version=str(metadata.get("resourceVersion") or ""),
    )


def lease_body(name: str, namespace: str, record: LeaseRecord) -> Body:
    metadata: Body = {"name": name, "namespace": namespace}
    if record.resource_version:
        metadata["resourceVersion"] = record.resource_version
    spec: Body = {
        "holderIdentity": record.holder,
        "leaseDurationSeconds": record.duration_seconds,
        "leaseTransitions": record.transitions,
    }
    if record.acquire_time:
        spec["acquireTime"] = record.acquire_time
    if record.renew_time:
        spec["renewTime"] = record.renew_time
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": metadata, "spec": spec}


def default_identity(environ: Mapping[str, str]) -> str:
    """``<pod or host name>_<random>``: unique per process, readable in ``kubectl get lease``."""
    return f"{environ.get('POD_NAME') or socket.gethostname()}_{uuid.uuid4().hex[:8]}"


class LeaseConflict(Exception):
    """Someone else wrote the Lease since we read it (409), or created it first."""


SURVIVED = (errors.ClusterError, LeaseConflict, OSError)
"""Failures a candidate lives through: they count as a failed attempt (the API server or the network)."""


class LeasePort(Protocol):
    def get(self) -> LeaseRecord | None: ...
    def create(self, record: LeaseRecord) -> LeaseRecord: ...
    def update(self, record: LeaseRecord) -> LeaseRecord:
        """Write ``record`` only if the Lease is still at ``record.resource_version``; else LeaseConflict."""
        ...


class KubeLeases:
    """LeasePort over the Kubernetes API."""

    def __init__(self, api: KubeApi, namespace: str, name: str = DEFAULT_LEASE_NAME) -> None:
        self.api, self.namespace, self.name = api, namespace, name

    def get(self) -> LeaseRecord | None:
        body = self.api.get(LEASES, self.namespace, self.name)
        return None if body is None else parse_lease(body)

    def create(self, record: LeaseRecord) -> LeaseRecord:
        body = lease_body(self.name, self.namespace, replace(record, resource_version=""))
        try:
            return parse_lease(self.api.create(LEASES, self.namespace, body, FIELD_MANAGER))
        except KubeApiError as error:
            if error.status == 409:
                raise LeaseConflict(str(error)) from error
            raise

    def update(self, record: LeaseRecord) -> LeaseRecord:
        try:
            return parse_lease(
                self.api.replace(LEASES, lease_body(self.name, self.namespace, record), FIELD_MANAGER)
            )
        except KubeApiError as error:
            if error.status in (404, 409):
                raise LeaseConflict(str(error)) from error
            raise


class LeaderElector:
    """One candidate. Call :meth:`step` every ``retry_period`` (or use :meth:`campaign`); ``is_leader`` says
    whether to reconcile now."""

    def __init__(
        self,
        port: LeasePort,
        identity: str,
        *,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        clock: Clock | None = None,
        wall_clock: Callable[[], datetime] | None = None,
    ) -> None:
        if not retry_period < renew_deadline < lease_duration:
            raise ValueError("leader election needs retry period < renew deadline < lease duration")
        self.port, self.identity = port, identity
        self.lease_duration, self.renew_deadline, self.retry_period = (
            lease_duration,
            renew_deadline,
            retry_period,
        )
        self.clock = clock or MonotonicClock()
        self.wall_clock = wall_clock or (lambda: datetime.now(UTC))
        self.observed: LeaseRecord | None = None
        self.observed_at = self.clock.now()
        self.last_renewed: float | None = None  # monotonic time of our last successful write as leader

    @property
    def is_leader(self) -> bool:
        if self.last_renewed is None or self.observed is None or self.observed.holder != self.identity:
            return False
        return self.clock.now() - self.last_renewed < self.renew_deadline

    def _observe(self, record: LeaseRecord | None) -> None:
        if record != self.observed:
            self.observed, self.observed_at = record, self.clock.now()

    def step(self) -> bool:
        """One attempt to acquire or renew; returns ``is_leader`` afterwards. API errors count as a failed
        renewal (leadership ends when they last past the renew deadline) and are not raised."""
        try:
            self._observe(self.port.get())
            action = decide(self.observed, self.observed_at, self.clock.now(), self.identity)
            if action is Action.WAIT:
                self.last_renewed = None
                return False
            duration = max(1, round(self.lease_duration))
            record = next_record(
                self.observed, action, self.identity, duration, micro_time(self.wall_clock())
            )
            written = self.port.create(record) if action is Action.CREATE else self.port.update(record)
        except SURVIVED:
            return self.is_leader
        self._observe(written)
        self.last_renewed = self.clock.now()
        return True

    def release(self) -> None:
        """Give the Lease up (on graceful shutdown) if we hold it; errors are ignored: the lease expires."""
        if not self.is_leader or self.observed is None:
            return
        with contextlib.suppress(*SURVIVED):
            self._observe(self.port.update(released_record(self.observed, micro_time(self.wall_clock()))))
        self.last_renewed = None

    def campaign(
        self,
        stop: threading.Event,
        on_started: Callable[[], None] = lambda: None,
        on_stopped: Callable[[], None] = lambda: None,
        on_error: Callable[[Exception], None] = lambda error: None,
    ) -> None:
        """Step every retry period until ``stop`` is set, calling ``on_started``/``on_stopped`` when
        leadership begins or ends; releases the Lease when stopped while leading. Run it in a thread.

        An unexpected exception in a step (a bug, a malformed Lease) is given to ``on_error`` and counts as
        a failed attempt: the election goes on, since a dead election thread would leave a leader that
        never renews (it steps down at the renew deadline and nobody takes over until it is restarted)."""
        leading = False
        try:
            while not stop.is_set():
                try:
                    now_leading = self.step()
                    if now_leading != leading:
                        leading = now_leading
                        (on_started if leading else on_stopped)()
                except Exception as error:
                    on_error(error)
                stop.wait(self.retry_period)
        finally:
            if leading:
                try:
                    self.release()
                except Exception as error:
                    on_error(error)
                on_stopped()


class Campaign:
    """:meth:`LeaderElector.campaign` in a thread of its own, with a stop event of its own.

    The loop's stop event is set by SIGTERM while a reconcile may still be running; if the election waited
    on it, the Lease would be released mid-reconcile and a second replica could start leading while this
    one still pushes. So the election ends only when :meth:`end` is called, after the loop returned."""

    def __init__(
        self,
        elector: LeaderElector,
        *,
        on_started: Callable[[], None] = lambda: None,
        on_stopped: Callable[[], None] = lambda: None,
        on_error: Callable[[Exception], None] = lambda error: None,
    ) -> None:
        self.elector = elector
        self.stop = threading.Event()
        self.thread = threading.Thread(
            target=elector.campaign,
            args=(self.stop,),
            kwargs={"on_started": on_started, "on_stopped": on_stopped, "on_error": on_error},
            name="nova-leader-election",
            daemon=True,
        )

    def start(self) -> Campaign:
        self.thread.start()
        return self

    @property
    def alive(self) -> bool:
        return self.thread.is_alive()

    def end(self, timeout: float = 5.0) -> None:
        """Stop campaigning and release the Lease if held (call only once the loop has returned)."""
        self.stop.set()
        if self.thread.is_alive():
            self.thread.join(timeout=timeout)
