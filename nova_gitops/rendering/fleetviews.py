"""The fleet page's rows (issue 27): every cluster with its capacity bars, state and what its agent reports.

Pure, like the rest of ``rendering``: built from what a plan and the agents' reports already hold (a render's
plan, or the controller's last one), never from a clock or a file. Every text from data (names, labels,
reasons, errors) is made one visible line here (``api.texts.one_line``: control, bidi and invisible
characters shown as ``\\uXXXX``), so the HTML layer escapes plain text and nothing else; numbers stay numbers.
Nothing of a Secret reaches a row: the rows carry names, labels, quantities and the agent's own fields.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from nova_gitops.api import labels, texts
from nova_gitops.api.clusters import Cluster
from nova_gitops.api.times import parse_rfc3339
from nova_gitops.scheduling.planparts import ClusterUsage
from nova_gitops.scheduling.plans import Plan

BAR_RESOURCES: Final = ("cpu", "memory", "nvidia.com/gpu", "pods")
"""The resources a cluster's bars show, in this order, when the cluster has any of them."""
MAX_TEXT: Final = 300
"""Longest text from data a cell shows (reasons, errors); longer ones end with an ellipsis."""
MAX_LIST: Final = 50
"""Most entries of one cell's list (drifted objects, requests); the rest are counted."""


def shown(value: object, limit: int = MAX_TEXT) -> str:
    """Text from data as one visible line of at most ``limit`` characters."""
    return _shown(value if isinstance(value, str) else str(value), limit)


@functools.lru_cache(maxsize=65536)
def _shown(text: str, limit: int) -> str:
    """``shown`` of a text, remembered: a fleet's pages show the same few hundred cluster names in every
    group's row (16,000 groups at K=5 name 500 clusters ~180,000 times)."""
    line = texts.one_line(text)
    return line if len(line) <= limit else line[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class AgentFacts:
    """What an agent's report says beyond what planning reads (its ``status`` fields, api/statusreports)."""

    heartbeat: datetime | None = None
    synced_revision: str = ""
    drifted: tuple[str, ...] = ()
    requests: tuple[str, ...] = ()  # each reschedule request as "group: reason"
    last_error: str = ""


def _entry_names(entries: Any) -> tuple[str, ...]:
    if not isinstance(entries, list):
        return ()
    names = []
    for entry in entries[:MAX_LIST]:
        if isinstance(entry, Mapping):
            where = "/".join(str(entry.get(key)) for key in ("kind", "namespace", "name") if entry.get(key))
            names.append(shown(where or "?", 200))
        else:
            names.append(shown(entry, 200))
    return tuple(names)


def agent_facts(body: Any) -> AgentFacts:
    """An agent's report (its Cluster document's body, as read from ``status/<cluster>.yaml``) → the facts the
    fleet page shows; any field of the wrong shape is left out (the report is untrusted)."""
    status = body.get("status") if isinstance(body, Mapping) else None
    if not isinstance(status, Mapping):
        return AgentFacts()
    requests = status.get("rescheduleRequests")
    asked = tuple(
        shown(f"{request.get('group', '?')}: {request.get('reason', '')}", 200)
        for request in (requests if isinstance(requests, list) else [])[:MAX_LIST]
        if isinstance(request, Mapping)
    )
    error = status.get("lastError")
    return AgentFacts(
        heartbeat=parse_rfc3339(status.get("heartbeat")) or parse_rfc3339(status.get("lastUpdateTime")),
        synced_revision=shown(status.get("syncedRevision") or "", 64),
        drifted=_entry_names(status.get("driftedObjects")),
        requests=asked,
        last_error=shown(error) if isinstance(error, str | Mapping) and error else "",
    )


@dataclass(frozen=True, slots=True)
class Bar:
    """One resource of one cluster, in milli-units: used by our groups, by others (the agent counts what
    nova-gitops does not manage), free; ``over`` when our groups ask more than was available."""

    resource: str
    ours: int
    others: int
    free: int
    total: int
    over: bool

    def percent(self, part: int) -> float:
        return round(100.0 * part / self.total, 1) if self.total > 0 else 0.0

    def widths(self, scale: int = 150) -> tuple[float, float]:
        """The others' and our parts of a bar ``scale`` wide (ours cut where the bar ends)."""
        if self.total <= 0:
            return 0.0, 0.0
        others = round(self.others * scale / self.total, 1)
        return others, round(min(self.ours * scale / self.total, scale - others), 1)

    @property
    def used_percent(self) -> float:
        return self.percent(self.ours + self.others)

    @property
    def text(self) -> str:
        """``cpu 2.5 of 8 used (ours 2, others 0.5)``: the bar in words, for its title and screen readers."""
        return (
            f"{self.resource} {amount(self.resource, self.ours + self.others)} of "
            f"{amount(self.resource, self.total)} used (ours {amount(self.resource, self.ours)}, "
            f"others {amount(self.resource, self.others)})" + (": over capacity" if self.over else "")
        )


def amount(resource: str, milli: int) -> str:
    """A short human amount: cores, GiB, or a count, one decimal at most."""
    if resource == "memory" or resource.startswith(("ephemeral-storage", "hugepages-")):
        value, unit = milli / 1000 / 2**30, " GiB"
    else:
        value, unit = milli / 1000, ""
    return (f"{value:.1f}".rstrip("0").rstrip(".") or "0") + unit


def bars(usage: ClusterUsage) -> tuple[Bar, ...]:
    """The cluster's bars: ``BAR_RESOURCES`` it has any of, then no others (a page of 500 stays small)."""
    found = []
    for resource in BAR_RESOURCES:
        total = usage.allocatable.get(resource, 0)
        if total <= 0:
            continue
        available = max(0, usage.available.get(resource, 0))
        ours = max(0, usage.placed.get(resource, 0))
        others = max(0, total - available)
        free = available - ours
        found.append(Bar(resource, ours, others, max(0, free), total, free < 0))
    return tuple(found)


@dataclass(frozen=True, slots=True)
class ClusterRow:
    name: str
    state: str  # Ready, NotReady, Unknown
    standby: bool
    cordoned: bool
    region: str
    zone: str
    labels: tuple[tuple[str, str], ...]
    bars: tuple[Bar, ...]
    groups: int  # groups placed there
    report_age: str  # "12s", "4m", "-" when the cluster has no report
    report_seconds: int | None
    heartbeat: datetime | None  # of its agent's last report, which the age is measured from
    synced: str  # the commit its agent last synced (short), "-" without one
    released: str  # the commit released to it (short), "-" when not known
    drifted: tuple[str, ...]
    requests: tuple[str, ...]
    last_error: str

    @property
    def busiest(self) -> float:
        """The fullest bar's used share, for sorting the fullest first."""
        return max((bar.used_percent for bar in self.bars), default=0.0)


def age(seconds: float | None) -> str:
    """``12s``, ``4m``, ``3h``, ``2d``; ``5m ahead`` for a report dated after now (the agent's clock is
    ahead: not a fresh report); ``-`` for none."""
    if seconds is None:
        return "-"
    if seconds < 0:
        return f"{age(-seconds)} ahead"
    whole = int(seconds)
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if whole >= size:
            return f"{whole // size}{unit}"
    return f"{whole}s"


def _state(cluster: Cluster | None) -> str:
    if cluster is None or cluster.ready is None:
        return "Unknown"
    return "Ready" if cluster.ready else "NotReady"


def cluster_rows(
    plan: Plan,
    clusters: Sequence[Cluster],
    agents: Mapping[str, AgentFacts],
    *,
    now: datetime | None,
    released: Mapping[str, str] | None = None,
) -> tuple[ClusterRow, ...]:
    """One row per cluster the plan knows, in name order. ``now`` measures report ages (None: not shown);
    ``released``: each cluster's released commit, when a rollout says (else the rendered head's, if given)."""
    by_name = {cluster.name: cluster for cluster in clusters}
    placed: dict[str, int] = {}
    for group in plan.groups:
        for name in group.clusters:
            placed[name] = placed.get(name, 0) + 1
    rows = []
    for usage in plan.clusters:
        cluster = by_name.get(usage.cluster)
        facts = agents.get(usage.cluster)
        seconds = _seconds(facts.heartbeat if facts is not None else None, now)
        cluster_labels = dict(cluster.labels) if cluster is not None else {}
        rows.append(
            ClusterRow(
                name=shown(usage.cluster),
                state=_state(cluster),
                standby=bool(cluster and cluster.standby),
                cordoned=bool(cluster and cluster.cordoned),
                region=shown(cluster_labels.get(labels.CLUSTER_REGION, ""), 64),
                zone=shown(cluster_labels.get(labels.CLUSTER_ZONE, ""), 64),
                labels=tuple(
                    (shown(key, 120), shown(value, 120)) for key, value in sorted(cluster_labels.items())
                ),
                bars=bars(usage),
                groups=placed.get(usage.cluster, 0),
                report_age=age(seconds) if facts is not None else "-",
                report_seconds=seconds,
                heartbeat=facts.heartbeat if facts is not None else None,
                synced=(facts.synced_revision[:7] if facts and facts.synced_revision else "-"),
                released=shown((released or {}).get(usage.cluster, "-"))[:7],
                drifted=facts.drifted if facts else (),
                requests=facts.requests if facts else (),
                last_error=facts.last_error if facts else "",
            )
        )
    return tuple(rows)


def _seconds(heartbeat: datetime | None, now: datetime | None) -> int | None:
    return int((now - heartbeat).total_seconds()) if heartbeat is not None and now is not None else None


def aged(rows: Sequence[ClusterRow], now: datetime | None) -> tuple[ClusterRow, ...]:
    """The rows with their report ages measured at ``now`` (rows kept from an earlier version of the view,
    whose plan and reports are the same, are aged again instead of built again)."""
    found = []
    for row in rows:
        seconds = _seconds(row.heartbeat, now)
        found.append(
            dataclasses.replace(row, report_seconds=seconds, report_age=age(seconds))
            if row.report_age != "-" and seconds != row.report_seconds
            else row
        )
    return tuple(found)


@dataclass(frozen=True, slots=True)
class FleetSummary:
    clusters: int
    ready: int
    groups: int
    unschedulable: int
    unscheduled_objects: int
    warnings: tuple[str, ...]


def summary(plan: Plan, rows: Sequence[ClusterRow]) -> FleetSummary:
    return FleetSummary(
        clusters=len(rows),
        ready=sum(1 for row in rows if row.state == "Ready"),
        groups=len(plan.groups),
        unschedulable=sum(1 for group in plan.groups if group.status == "unschedulable"),
        unscheduled_objects=len(plan.unscheduled),
        warnings=tuple(shown(warning) for warning in plan.warnings[:MAX_LIST]),
    )
