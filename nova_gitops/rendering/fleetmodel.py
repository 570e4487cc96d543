"""Everything the fleet's pages show, from one set of facts (issue 27): what a render produced, or what the
controller holds after its last reconcile.

``FleetFacts`` is the input: a plan, the source set it was planned from (policies, the clusters with the
agents' reports laid over them, the rollout strategy), the agents' own fields, the rollout step's decision
and the last reconciles. ``FleetModel`` builds each page's rows from it once, when first asked (a
controller whose view nobody opens pays nothing), and finds a group by name without a scan. Pure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from nova_gitops.api.clusters import Cluster
from nova_gitops.api.inputs import SourceSet
from nova_gitops.rendering import activityviews, fleetviews, groupviews
from nova_gitops.rendering.activityviews import Reconciled, ReconcileRow, RolloutView
from nova_gitops.rendering.fleetviews import AgentFacts, ClusterRow, FleetSummary
from nova_gitops.rendering.groupviews import GroupPage, GroupRow
from nova_gitops.rollouts.decisions import Decision
from nova_gitops.scheduling.planparts import GroupPlan
from nova_gitops.scheduling.plans import Plan


@dataclass(frozen=True, slots=True)
class FleetFacts:
    plan: Plan
    source_set: SourceSet | None  # None: only the plan is known (no candidates, no waves)
    agents: Mapping[str, AgentFacts] = field(default_factory=dict)
    decision: Decision | None = None
    reconciles: Sequence[Reconciled] = ()
    head: str = ""  # the rendered commit the plan is at, "" when none (a render to a file)
    where: str = ""  # the rollout commands' options naming the repository and the source
    now: datetime | None = None
    title: str = ""  # the source's name
    released: Mapping[str, str] = field(default_factory=dict)  # cluster → commit released to it


REUSED = ("groups", "summary")
"""What a model takes from an earlier one of the same plan and reports (the cluster rows too, aged again)."""


class FleetModel:
    """The pages' rows, each built on first use. ``previous``: a model of the same plan, source set,
    reports, head and rollout decision (the controller's view after a reconcile that changed nothing), whose
    rows are taken instead of built again."""

    def __init__(self, facts: FleetFacts, previous: FleetModel | None = None) -> None:
        self.facts = facts
        if previous is not None:
            for name in REUSED:
                if name in previous.__dict__:
                    self.__dict__[name] = previous.__dict__[name]
            if "clusters" in previous.__dict__:
                self.__dict__["clusters"] = fleetviews.aged(previous.__dict__["clusters"], facts.now)
        self._groups = {group.name: group for group in facts.plan.groups}
        for group in facts.plan.groups:  # a link names a group as the page shows it (``shown``)
            self._groups.setdefault(fleetviews.shown(group.name), group)
        self._policies = (
            {policy.name: policy for policy in facts.source_set.policies} if facts.source_set else {}
        )

    @property
    def clusters_in(self) -> Sequence[Cluster]:
        return self.facts.source_set.clusters if self.facts.source_set is not None else ()

    @cached_property
    def clusters(self) -> tuple[ClusterRow, ...]:
        released = dict(self.facts.released)
        if not released and self.facts.head:  # no rollout: every agent follows the branch head
            released = {usage.cluster: self.facts.head for usage in self.facts.plan.clusters}
        return fleetviews.cluster_rows(
            self.facts.plan, self.clusters_in, self.facts.agents, now=self.facts.now, released=released
        )

    @cached_property
    def summary(self) -> FleetSummary:
        return fleetviews.summary(self.facts.plan, self.clusters)

    @cached_property
    def groups(self) -> tuple[GroupRow, ...]:
        return groupviews.group_rows(self.facts.plan)

    def find(self, name: str) -> GroupPlan | None:
        """The group of that name (or of that name as the pages show it)."""
        return self._groups.get(name)

    def group(self, name: str) -> GroupPage | None:
        found = self._groups.get(name)
        if found is None:
            return None
        page = groupviews.group_page(found, self._policies, self.clusters_in)
        return dataclasses.replace(page, history=activityviews.moves_of(found.name, self.facts.reconciles))

    @cached_property
    def rollout(self) -> RolloutView:
        strategy = self.facts.source_set.rollout if self.facts.source_set is not None else None
        return activityviews.rollout_view(
            strategy,
            self.clusters_in,
            self.facts.decision,
            self.facts.agents,
            where=self.facts.where,
            now=self.facts.now,
            released=self.facts.released,
        )

    @cached_property
    def reconciles(self) -> tuple[ReconcileRow, ...]:
        return activityviews.reconcile_rows(self.facts.reconciles)
