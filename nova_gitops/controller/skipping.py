"""When a reconcile may skip planning, rendering and publishing: nothing that determines them has changed.

Most reconciles are polls that find nothing new, and a full one costs the whole fleet (read and parse every
source file, plan, render every object, hash the tree against the branch head). A plan is a pure function of
the source, the cluster inventory (the agents' reports), the settings, the previous placement (the branch
head), the reschedule exclusions and, through the failback hold, the clock. So when the last reconcile found
the branch already holding its render (outcome ``unchanged``) and every one of those is what it was then, this
reconcile would render the same bytes and find them on the same head again: it is skipped. Each input is
compared by a digest of its bytes, taken before it is read:

- the source: its ``SourceSnapshot.digest`` (the commit of a git source; the bytes of every file of a
  directory; the listed documents of a control plane) and its recorded ``SourceInfo``; no digest, no skip;
- the reports: each report's ``plan_digest`` (its Cluster document without health, heartbeats and errors,
  which planning never reads), by cluster; a report refused or gone changes the set;
- the settings: equal ``ControllerSettings``;
- the exclusions: the ``avoid`` map after this reconcile's update of the reschedule memory, so a new
  request, a cool-down that ended or a capacity change that released one is a change;
- the failback hold: a hold's wait that is over (``failback_due``) is a change, since the group may now
  fail back; while it runs, the same inputs give the same hold, so the skip is exact;
- the branch head: the one the last reconcile found (``git ls-remote``): anyone else's push is a change.

Only an ``unchanged`` reconcile leaves a basis: right after a commit, the next reconcile plans in full once
(planning against its own placement is a fixed point, but the failback hold is observed against the
previous placement, so the first reconcile on the new head establishes it). Whatever the skip, the rollout
step still runs (bakes and timeouts depend on time), and the observers still see the reports.

Pure: data in, a reason out; the reconciler does the reading.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from nova_gitops.api.clusters import Cluster
from nova_gitops.api.problems import Problem
from nova_gitops.api.rollouts import RolloutStrategy
from nova_gitops.controller import rescheduling, statusreading
from nova_gitops.controller.ports import ClusterReport, SourceSnapshot
from nova_gitops.controller.settings import ControllerSettings
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.scheduling.plans import Plan


@dataclass(frozen=True, slots=True)
class Inputs:
    """What a reconcile's plan depends on, besides the branch head, the exclusions and the clock."""

    source: SourceInfo
    source_digest: str
    reports: tuple[tuple[str, str], ...]  # (cluster, plan digest of its report), by cluster
    settings: ControllerSettings


def inputs_of(
    snapshot: SourceSnapshot, reports: Mapping[str, ClusterReport], settings: ControllerSettings
) -> Inputs | None:
    """The inputs of a reconcile from what it read; None when the source cannot say what it holds."""
    if snapshot.digest is None:
        return None
    digests = tuple(
        (name, reports[name].plan_digest or statusreading.plan_fingerprint(reports[name].document.body))
        for name in sorted(reports)
    )
    return Inputs(snapshot.source, snapshot.digest, digests, settings)


@dataclass(frozen=True, slots=True)
class Basis:
    """The last reconcile that found its render on the branch: what it read, and what it answers with."""

    inputs: Inputs
    avoid: Mapping[str, Mapping[str, str]]
    head: str
    failback_due: float | None  # clock reading when the first held failback is due (None: none held)
    plan: Plan
    strategy: RolloutStrategy | None  # the source's RolloutStrategy, for the rollout step
    clusters: tuple[Cluster, ...]  # the inventory, for the rollout step
    source_reports: Mapping[str, ClusterReport]  # reports carried by the source's own Cluster objects
    refused: tuple[Problem, ...]  # the source's Clusters refused as reports
    warnings: tuple[Problem, ...]
    stuck: tuple[str, ...]


def failback_due(hold: rescheduling.FailbackHold, after: float) -> float | None:
    """When the first group held from failing back may fail back (None: no group is held)."""
    if after <= 0 or not hold.waiting:
        return None
    return min(hold.waiting.values()) + after


def changed_before_head(basis: Basis | None, inputs: Inputs | None) -> str | None:
    """Why the reconcile cannot skip, judging the inputs alone (None: it may, if the rest holds)."""
    if basis is None:
        return "no unchanged reconcile before"
    if inputs is None:
        return "the source has no digest"
    if inputs.source != basis.inputs.source or inputs.source_digest != basis.inputs.source_digest:
        return "the source changed"
    if inputs.reports != basis.inputs.reports:
        return "the reports changed"
    if inputs.settings != basis.inputs.settings:
        return "the settings changed"
    return None


def why_not(
    basis: Basis | None,
    inputs: Inputs | None,
    avoid: Mapping[str, Mapping[str, str]],
    now: float,
    head: Callable[[], str | None] | None,  # None: the publisher cannot tell its head
) -> str | None:
    """Why the reconcile cannot skip (None: it skips). The head is read last, only when all else holds."""
    reason = changed_before_head(basis, inputs)
    if reason is not None or basis is None:
        return reason or "no unchanged reconcile before"
    if avoid != basis.avoid:
        return "the reschedule exclusions changed"
    if basis.failback_due is not None and now >= basis.failback_due:
        return "a failback hold is over"
    if head is None:
        return "the publisher cannot tell the branch head"
    if head() != basis.head:
        return "the rendered branch moved"
    return None
