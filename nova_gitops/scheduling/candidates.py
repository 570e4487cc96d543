"""Candidate clusters of a policy, in priority tiers (docs/design.md §3 "Candidates").

Candidates are the clusters matching ``clusterSelector`` (all when absent) whose Ready condition is not
False; a Standby cluster is a candidate, since placing there wakes it. ``orderedClusterSelector`` is a
selector too, and its ``In`` expression's values, in order, make the tiers of fill-and-spill: by name
(key ``kubernetes.io/metadata.name``) or by any label (``nova.elotl.co/cluster.provider``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from nova_gitops.api import selectors
from nova_gitops.api.clusters import Cluster
from nova_gitops.api.policies import SchedulePolicy


@dataclass(frozen=True, slots=True)
class Candidates:
    """A policy's candidate clusters. ``clusters``, ``names`` and the tier of each name are worked out once,
    when the candidates are made: a plan asks them of every group the policy places."""

    tiers: tuple[tuple[Cluster, ...], ...]  # highest priority first; clusters in a tier by name
    not_ready: tuple[str, ...]  # selected by the selectors but Ready=False
    description: str  # how the clusters were selected, for reasons: "empty cluster selector", ...
    clusters: tuple[Cluster, ...] = field(init=False)  # every tier's clusters, tier by tier
    names: tuple[str, ...] = field(init=False)  # the names of ``clusters``
    _tier_by_name: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        clusters = tuple(cluster for tier in self.tiers for cluster in tier)
        tier_by_name: dict[str, int] = {}
        for index, tier in enumerate(self.tiers):
            for cluster in tier:
                tier_by_name.setdefault(cluster.name, index)
        object.__setattr__(self, "clusters", clusters)
        object.__setattr__(self, "names", tuple(cluster.name for cluster in clusters))
        object.__setattr__(self, "_tier_by_name", tier_by_name)

    def tier_of(self, cluster_name: str) -> int | None:
        return self._tier_by_name.get(cluster_name)


def tier_requirement(ordered: selectors.LabelSelector) -> selectors.Requirement | None:
    """The requirement whose values order the tiers: the first ``In`` with several values.

    matchLabels are folded into one-valued ``In`` requirements ahead of the expressions; a one-valued
    requirement makes a single tier, so skipping those never changes the order.
    """
    for requirement in ordered.requirements:
        if requirement.operator == "In" and len(requirement.values) > 1:
            return requirement
    return None


def describe(policy: SchedulePolicy | None) -> str:
    if policy is None:
        return "annotation"
    parts = []
    if policy.cluster_selector is not None and not policy.cluster_selector.is_empty:
        parts.append(f"cluster selector {selectors.format_selector(policy.cluster_selector)}")
    if policy.ordered_cluster_selector is not None and not policy.ordered_cluster_selector.is_empty:
        parts.append(f"ordered cluster selector {selectors.format_selector(policy.ordered_cluster_selector)}")
    return "; ".join(parts) if parts else "empty cluster selector"


def candidates(policy: SchedulePolicy, clusters: Sequence[Cluster]) -> Candidates:
    """The policy's candidate clusters, tiered; ``clusters`` must be sorted by name."""
    chosen = [
        cluster
        for cluster in clusters
        if (policy.cluster_selector is None or policy.cluster_selector.matches(cluster.labels))
        and (
            policy.ordered_cluster_selector is None or policy.ordered_cluster_selector.matches(cluster.labels)
        )
    ]
    ready = [cluster for cluster in chosen if cluster.is_candidate]
    not_ready = tuple(cluster.name for cluster in chosen if not cluster.is_candidate)
    requirement = (
        tier_requirement(policy.ordered_cluster_selector) if policy.ordered_cluster_selector else None
    )
    if requirement is None:
        tiers: tuple[tuple[Cluster, ...], ...] = (tuple(ready),) if ready else ()
    else:
        tiers = tuple(
            tier
            for value in requirement.values
            if (tier := tuple(cluster for cluster in ready if cluster.labels.get(requirement.key) == value))
        )
    return Candidates(tiers, not_ready, describe(policy))


def named(names: Sequence[str], clusters: Sequence[Cluster]) -> tuple[tuple[Cluster, ...], tuple[str, ...]]:
    """Clusters named by an annotation, in the annotation's order, and the names not in the inventory."""
    by_name = {cluster.name: cluster for cluster in clusters}
    found = tuple(by_name[name] for name in names if name in by_name)
    missing = tuple(name for name in names if name not in by_name)
    return found, missing
