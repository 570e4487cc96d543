"""A cluster's report judged against the commit released to it: healthy for that revision, still
waiting, or failed.

What the report says is read from ``status`` of ``status/<cluster>.yaml`` (docs/agent.md): only
``syncedRevision``, ``workloads[*].apiVersion/kind/namespace/name/healthy/revision/condition/reason/message``,
``lastError`` and ``rescheduleRequests``. The rules (docs/rollouts.md, "Gates"):

- The report must account for every workload rendered for the cluster at the released commit: each object
  of ``clusters/<cluster>/`` there whose kind the agent reports health for (``RENDERED_WORKLOAD_KINDS``)
  must have its entry. A report that names the commit but lists none of them (an agent whose ``--path``
  is wrong applied nothing, and says it is synced) proves nothing: the cluster waits, and times out, and
  the reason names what is unaccounted for. What was rendered is the caller's to read from git; when it
  is not known the cluster cannot be proven healthy either.
  An agent whose cluster holds more than a report can (20,000 workloads, or fewer long ones by the 4 MiB
  cap) cuts its list and says so in a ``ReportComplete`` condition, status False: the workloads it leaves
  out are healthy ones at the synced revision (it lists the others first), but a gate does not take that
  on the agent's word. Such a cluster cannot pass a gate by accounting: it waits, the reason says the
  report was cut and how to go on (check it and promote the wave), and the wave fails at the timeout like
  any other wait. A cut never hides a failure: what fails a gate is listed first.

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

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from nova_gitops.api.statusreports import REPORT_COMPLETE

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

RENDERED_WORKLOAD_KINDS: Final = frozenset(
    {
        ("apps", "Deployment"),
        ("apps", "StatefulSet"),
        ("apps", "DaemonSet"),
        ("apps", "ReplicaSet"),
        ("batch", "Job"),
        ("", "Pod"),
        ("", "PersistentVolumeClaim"),
    }
)
"""(group, kind) the agent always reports as a workload when it holds one (``nova_agent.health.RULES``, the
kinds delegated mode watches): a rendered object of these kinds must have its entry in the report. Others
(custom resources with a ``Ready`` condition) count when reported, but their absence proves nothing: only
the live object says whether it has a ``Ready`` condition."""

WorkloadKey = tuple[str, str, str, str]
"""(group, kind, namespace, name) of a workload, as the report names it and the render holds it."""

MAX_REASON_CHARS: Final = 300
MAX_NAMED_UNACCOUNTED: Final = 3

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
    api_version: str = ""

    @property
    def label(self) -> str:
        """``Deployment shop/web``; ``Namespace shop`` for a cluster-scoped object."""
        return label_of((self.group, self.kind, self.namespace, self.name))

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def key(self) -> WorkloadKey:
        return (self.group, self.kind, self.namespace, self.name)

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
    cut: str = ""
    """The message of the report's ``ReportComplete`` condition when it is False: the agent left entries
    out to stay within what the controller reads ("" for a whole report)."""


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
                api_version=_text(entry.get("apiVersion")),
            )
        )
    pending = tuple(
        WorkloadFacts(
            _text(request.get("kind")), _text(request.get("namespace")), _text(request.get("name")), False
        ).label
        for request in _list(status.get("rescheduleRequests"))
        if isinstance(request, Mapping)
    )
    cut = next(
        (
            _text(condition.get("message")) or "entries left out"
            for condition in _list(status.get("conditions"))
            if isinstance(condition, Mapping)
            and condition.get("type") == REPORT_COMPLETE
            and condition.get("status") == "False"
        ),
        "",
    )
    return ClusterFacts(
        synced_revision=_text(status.get("syncedRevision")),
        workloads=tuple(workloads),
        last_error=_text(status.get("lastError")),
        pending=pending,
        cut=cut,
    )


def label_of(key: WorkloadKey) -> str:
    """``Deployment shop/web``; ``Namespace shop`` for a cluster-scoped object."""
    _, kind, namespace, name = key
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def unaccounted(facts: ClusterFacts | None, rendered: Collection[WorkloadKey]) -> list[WorkloadKey]:
    """The rendered workloads ``facts`` has no entry for, in order."""
    reported = {workload.key for workload in facts.workloads} if facts is not None else set()
    return sorted(key for key in rendered if key not in reported)


def judge(
    cluster: str,
    facts: ClusterFacts | None,
    released: str,
    rendered: Collection[WorkloadKey] | None = None,
) -> Verdict:
    """Whether ``cluster`` is healthy for ``released``, still waiting, or failed, and why (a failure
    beats a wait: the first failure found is the reason). ``rendered``: the workloads rendered for it at
    ``released`` (None: not known, so it cannot be proven healthy)."""
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
    if waiting is not None:
        return waiting
    if rendered is None:
        return Verdict("waiting", f"{cluster}: what was rendered for it at {short} is not known yet")
    missing = unaccounted(facts, rendered)
    if missing and facts.cut:
        return Verdict("waiting", _cut_reason(cluster, short, len(facts.workloads), missing))
    if missing:
        return Verdict("waiting", _unaccounted_reason(cluster, short, missing))
    return Verdict("healthy", f"{cluster}: healthy for {short}")


def _unaccounted_reason(cluster: str, short: str, missing: Sequence[WorkloadKey]) -> str:
    named = ", ".join(label_of(key) for key in missing[:MAX_NAMED_UNACCOUNTED])
    more = len(missing) - MAX_NAMED_UNACCOUNTED
    others = f" and {more} more" if more > 0 else ""
    return (
        f"{cluster} reports {short} synced but not {named}{others} rendered for it there: its agent applied "
        f"nothing of them (is its --path clusters/{cluster}?), or, delegated, does not see them (a render "
        "without --delegated does not label them nova.elotl.co/schedule)"
    )


def _cut_reason(cluster: str, short: str, listed: int, missing: Sequence[WorkloadKey]) -> str:
    return (
        f"{cluster}'s report lists {listed:,} workloads, cut to what the controller reads, and not "
        f"{len(missing):,} more rendered for it at {short} ({label_of(missing[0])}, ...): a gate cannot "
        "account for a cluster of more workloads than a report holds; check the cluster and promote the wave"
    )


def _why(workload: WorkloadFacts) -> str:
    detail = f": {workload.message}" if workload.message else ""
    return _cut(f"{workload.reason or workload.condition or 'unhealthy'}{detail}")


def _cut(text: str) -> str:
    return text if len(text) <= MAX_REASON_CHARS else text[:MAX_REASON_CHARS] + "…"


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []
