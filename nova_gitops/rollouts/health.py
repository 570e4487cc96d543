"""A cluster's report judged against the commit released to it: healthy for that revision, still
waiting, or failed.

What the report says is read from ``status`` of ``status/<cluster>.yaml`` (docs/agent.md): only
``syncedRevision``, ``workloads[*].healthy/revision/condition/reason/message``, ``lastError`` and
``rescheduleRequests``. The rules (docs/rollouts.md, "Gates"):

- Health counts only for the exact revision: the report's ``syncedRevision`` must be the released commit,
  and every workload entry must name that commit in ``revision``. A workload entry without ``revision``
  (an agent older than per-workload revisions) proves nothing about a new revision: a Healthy left over
  from the previous revision must never pass a gate, so such a cluster waits and then times out, with a
  reason that says to upgrade its agent.
- Failed, at once: a workload reflecting the released commit and Degraded (``DEGRADED_CONDITIONS`` or
  ``DEGRADED_REASONS``: states Kubernetes does not leave by waiting); a reschedule request (pods Pending
  past the agent's ``--pending-timeout``) once the cluster synced the commit; ``lastError`` once the cluster
  synced the commit (an apply or a prune failed), or naming the commit's first 12 hex digits (the agent
  refused it: the mass-prune guard, a signature). Other errors (git unreachable) only delay, and the health
  timeout ends the wait.
- Anything else unhealthy (rolling out, ``MinimumReplicasUnavailable``) is waiting.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

DEGRADED_CONDITIONS: Final = frozenset({"Failed", "ReplicaFailure"})
"""A Job or Pod that failed; a ReplicaSet whose pods cannot be created (quota, admission)."""

DEGRADED_REASONS: Final = frozenset(
    {
        "ProgressDeadlineExceeded",  # a Deployment gave up progressing
        "CrashLoopBackOff",
        "ImagePullBackOff",
        "ErrImagePull",
        "CreateContainerConfigError",
        "InvalidImageName",
    }
)
"""Reasons the agent reports (nova_agent.health) that waiting will not cure."""

MAX_REASON_CHARS: Final = 300

State = Literal["healthy", "waiting", "failed"]


@dataclass(frozen=True, slots=True)
class WorkloadFacts:
    """One ``status.workloads`` entry. ``revision`` None: the agent did not say which commit it reflects."""

    kind: str
    namespace: str
    name: str
    healthy: bool
    revision: str | None = None
    condition: str = ""
    reason: str = ""
    message: str = ""

    @property
    def label(self) -> str:
        """``Deployment shop/web``; ``Namespace shop`` for a cluster-scoped object."""
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"

    @property
    def degraded(self) -> bool:
        return not self.healthy and (self.condition in DEGRADED_CONDITIONS or self.reason in DEGRADED_REASONS)


@dataclass(frozen=True, slots=True)
class ClusterFacts:
    """What a gate reads from one cluster's report. ``pending`` names the workloads with a reschedule
    request (``Deployment shop/web``)."""

    synced_revision: str = ""
    workloads: tuple[WorkloadFacts, ...] = ()
    last_error: str = ""
    pending: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Verdict:
    state: State
    reason: str


def facts_from_status(status: Mapping[str, Any]) -> ClusterFacts:
    """The facts of a report's ``status`` mapping (the controller validated the report; values of the
    wrong type are read as absent, never trusted)."""
    workloads: list[WorkloadFacts] = []
    for entry in _list(status.get("workloads")):
        if not isinstance(entry, Mapping):
            continue
        revision = entry.get("revision")
        workloads.append(
            WorkloadFacts(
                kind=_text(entry.get("kind")),
                namespace=_text(entry.get("namespace")),
                name=_text(entry.get("name")),
                healthy=entry.get("healthy") is True,
                revision=revision if isinstance(revision, str) and revision else None,
                condition=_text(entry.get("condition")),
                reason=_text(entry.get("reason")),
                message=_text(entry.get("message")),
            )
        )
    pending = tuple(
        WorkloadFacts(
            _text(request.get("kind")), _text(request.get("namespace")), _text(request.get("name")), False
        ).label
        for request in _list(status.get("rescheduleRequests"))
        if isinstance(request, Mapping)
    )
    return ClusterFacts(
        synced_revision=_text(status.get("syncedRevision")),
        workloads=tuple(workloads),
        last_error=_text(status.get("lastError")),
        pending=pending,
    )


def judge(cluster: str, facts: ClusterFacts | None, released: str) -> Verdict:
    """Whether ``cluster`` is healthy for ``released``, still waiting, or failed, and why (a failure
    beats a wait: the first failure found is the reason)."""
    if facts is None:
        return Verdict("waiting", f"{cluster}: no report yet")
    short = released[:7]
    synced = facts.synced_revision == released
    error = facts.last_error.strip()
    if error and (synced or (len(released) >= 12 and released[:12] in error)):
        what = "apply failed" if synced else f"agent refused {short}"
        return Verdict("failed", f"{cluster}: {what}: {_cut(error)}")
    if not synced:
        shown = facts.synced_revision[:7] or "nothing"
        return Verdict("waiting", f"{cluster}: syncing (reports {shown}, released {short})")
    if facts.pending:
        return Verdict("failed", f"{facts.pending[0]} Pending on {cluster} past the agent's pending timeout")
    waiting: Verdict | None = None
    for workload in facts.workloads:
        reflects = workload.revision == released
        if reflects and workload.degraded:
            return Verdict("failed", f"{workload.label} Degraded on {cluster} ({_why(workload)})")
        if (reflects and workload.healthy) or waiting is not None:
            continue
        if workload.revision is None:
            why = "its nova-agent reports no workload revisions (upgrade it)"
            waiting = Verdict(
                "waiting", f"{workload.label} on {cluster}: not proven healthy for {short}: {why}"
            )
        elif not reflects:
            waiting = Verdict(
                "waiting", f"{workload.label} on {cluster} reflects {workload.revision[:7]}, not {short}"
            )
        else:
            waiting = Verdict("waiting", f"{workload.label} on {cluster} not healthy yet ({_why(workload)})")
    return waiting or Verdict("healthy", f"{cluster}: healthy for {short}")


def _why(workload: WorkloadFacts) -> str:
    detail = f": {workload.message}" if workload.message else ""
    return _cut(f"{workload.reason or workload.condition or 'unhealthy'}{detail}")


def _cut(text: str) -> str:
    return text if len(text) <= MAX_REASON_CHARS else text[:MAX_REASON_CHARS] + "…"


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []
