"""The groups pages' rows (issue 27): the groups table, and one group's page — its objects, the reason and
every candidate cluster's verdict, as ``explain`` says them.

Pure: built from a plan and the source set it was planned from. A candidate's verdict is read from the
group's reason, whose lines the placer writes one per verdict (``scheduling.placing``: ``Cluster wlc-2
skipped, …``, ``Clusters a,b fit, not chosen: …``, ``12 other clusters not chosen: …``, ``Picked cluster
wlc-1 …``), so the page says exactly what ``explain`` prints, cluster by cluster. Texts from data are one
visible line (``fleetviews.shown``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from nova_gitops.api.clusters import Cluster
from nova_gitops.api.policies import SchedulePolicy
from nova_gitops.rendering.fleetviews import MAX_LIST, shown
from nova_gitops.scheduling import candidates
from nova_gitops.scheduling.planparts import GroupPlan
from nova_gitops.scheduling.plans import Plan

MAX_OBJECTS: Final = 200
"""Objects a group's page lists; the rest are counted."""
MAX_VERDICTS: Final = 500
"""Candidates a group's page lists a verdict for; the rest are counted."""
_ONE: Final = re.compile(r"^Cluster (\S+) (.+?);?$")
_SOME: Final = re.compile(r"^Clusters (\S+) (.+?);?$")
_OTHERS: Final = re.compile(r"^\d+ other clusters (.+?);?$")
_PICKED: Final = re.compile(r"^Picked cluster (\S+) (.+?);?$")


@dataclass(frozen=True, slots=True)
class GroupRow:
    name: str
    policy: str  # "<annotation>" for a group placed by an annotation
    mode: str
    status: str
    clusters: tuple[str, ...]
    replicas: str  # "wlc-1=2 wlc-2=1", or "" when the source's replicas are kept
    objects: int
    reason: str  # the reason's first line, short


def _replicas(group: GroupPlan) -> str:
    totals: dict[str, int] = {}
    for item in group.objects:
        for copy in item.copies:
            if copy.replicas is not None:
                totals[copy.cluster] = totals.get(copy.cluster, 0) + copy.replicas
    return " ".join(f"{shown(cluster, 80)}={count}" for cluster, count in sorted(totals.items()))


def group_row(group: GroupPlan) -> GroupRow:
    lines = reason_lines(group.reason)
    return GroupRow(
        name=shown(group.name),
        policy=shown(group.policy) if group.policy is not None else "<annotation>",
        mode=group.mode,
        status=group.status,
        clusters=tuple(shown(cluster, 120) for cluster in group.clusters),
        replicas=_replicas(group),
        objects=len(group.objects),
        reason=shown(
            next((line for line in lines if line.startswith("Picked")), lines[-1] if lines else ""), 160
        ),
    )


def group_rows(plan: Plan) -> tuple[GroupRow, ...]:
    return tuple(group_row(group) for group in plan.groups)


def reason_lines(reason: str) -> list[str]:
    """A reason's lines as ``explain`` lists them under "Decision:"."""
    return [line.strip() + ";" for line in reason.split(";") if line.strip()]


@dataclass(frozen=True, slots=True)
class Verdict:
    cluster: str
    tier: int | None  # 1 = the highest priority; None: not a candidate of the policy (or no policy)
    chosen: bool
    verdict: str


@dataclass(frozen=True, slots=True)
class ObjectRow:
    kind: str
    namespace: str
    name: str
    copies: str  # "wlc-1=2, wlc-2" (replicas where set)


@dataclass(frozen=True, slots=True)
class GroupPage:
    row: GroupRow
    group_by: str
    selection: str  # how the policy selects its candidates
    reason: tuple[str, ...]
    verdicts: tuple[Verdict, ...]
    more_verdicts: int
    objects: tuple[ObjectRow, ...]
    more_objects: int
    warnings: tuple[str, ...]
    history: tuple[tuple[str, str, str], ...] = ()  # (when, commit, what) of its moves, newest first


def _said(lines: Iterable[str]) -> tuple[dict[str, str], str, set[str]]:
    """Per cluster the verdict its reason line says, the verdict of "N other clusters", and the picked."""
    said: dict[str, str] = {}
    others = ""
    picked: set[str] = set()
    for line in lines:
        if match := _PICKED.match(line):
            picked.add(match[1])
            said[match[1]] = f"picked: {match[2]}"
        elif match := _ONE.match(line):
            said[match[1]] = match[2]
        elif match := _SOME.match(line):
            for name in match[1].split(","):
                said[name] = match[2]
        elif match := _OTHERS.match(line):
            others = match[1]
    return said, others, picked


def verdicts(
    group: GroupPlan, policy: SchedulePolicy | None, clusters: Sequence[Cluster]
) -> tuple[tuple[Verdict, ...], str]:
    """Every candidate's verdict, tier by tier (then clusters the group is on that its policy does not
    select: an annotation, a pin), and how the candidates were selected."""
    said, others, picked = _said(reason_lines(group.reason))
    found: list[Verdict] = []
    selection = "placed by an annotation" if policy is None else ""
    if policy is not None:
        chosen = candidates.candidates(policy, clusters)
        selection = chosen.description
        for tier, members in enumerate(chosen.tiers, start=1):
            for cluster in members:
                on = cluster.name in group.clusters
                verdict = said.get(cluster.name) or (
                    "placed here" if on else others or "not placed here (see the reason)"
                )
                found.append(Verdict(shown(cluster.name), tier, on or cluster.name in picked, shown(verdict)))
        for name in chosen.not_ready:
            found.append(Verdict(shown(name), None, False, shown(said.get(name, "skipped, it is not ready"))))
    listed = {verdict.cluster for verdict in found}
    for name in group.clusters:
        if shown(name) not in listed:
            found.append(Verdict(shown(name), None, True, shown(said.get(name, "placed here"))))
    return tuple(found), shown(selection)


def group_page(
    group: GroupPlan, policies: Mapping[str, SchedulePolicy], clusters: Sequence[Cluster]
) -> GroupPage:
    policy = policies.get(group.policy) if group.policy is not None else None
    found, selection = verdicts(group, policy, clusters)
    objects = tuple(
        ObjectRow(
            kind=shown(item.manifest.kind, 80),
            namespace=shown(item.manifest.namespace, 80),
            name=shown(item.manifest.name),
            copies=", ".join(
                shown(copy.cluster, 120) + (f"={copy.replicas}" if copy.replicas is not None else "")
                for copy in item.copies
            ),
        )
        for item in group.objects[:MAX_OBJECTS]
    )
    return GroupPage(
        row=group_row(group),
        group_by=shown(f"{group.group_by[0]}={group.group_by[1]}") if group.group_by else "",
        selection=selection,
        reason=tuple(shown(line, 1000) for line in reason_lines(group.reason)[:MAX_LIST]),
        verdicts=found[:MAX_VERDICTS],
        more_verdicts=max(0, len(found) - MAX_VERDICTS),
        objects=objects,
        more_objects=max(0, len(group.objects) - MAX_OBJECTS),
        warnings=tuple(shown(warning) for warning in group.warnings[:MAX_LIST]),
    )
