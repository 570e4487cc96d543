"""Cordoned clusters (``nova-gitops cordon``; label ``nova.elotl.co/cordoned: "true"``), like ``kubectl
cordon`` for nodes: no new or moved group is placed on a cordoned cluster, and what runs there stays.

A group the previous render placed on a cordoned cluster keeps it (while it is a candidate and fits, as any
sticky group); every other group of a policy is placed as if the cluster were not a candidate, and its reason
says ``Cluster c skipped, cordoned;``. A spread policy's group spreads over the candidates minus the cordoned
clusters it was not on. Pins and spread-onto annotations name their clusters explicitly and are honoured
(a pin to a cordoned cluster is warned about), as ``kubectl cordon`` leaves a pod with a ``nodeName`` alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from nova_gitops.api.clusters import Cluster
from nova_gitops.scheduling.plans import PreviousPlacement

CORDONED = "cordoned"
"""The reason a cordoned cluster is skipped, in Nova's event wording: ``Cluster c2 skipped, cordoned;``."""


def closed_clusters(
    clusters: Sequence[Cluster], groups: Iterable[str], previous: PreviousPlacement
) -> dict[str, frozenset[str]]:
    """For each of ``groups`` that may not go to some cordoned cluster, those clusters: every cordoned
    cluster but the ones the previous render placed the group on."""
    cordoned = frozenset(cluster.name for cluster in clusters if cluster.cordoned)
    if not cordoned:
        return {}
    closed = {group: cordoned.difference(previous.groups.get(group, ())) for group in groups}
    return {group: names for group, names in closed.items() if names}


def avoiding_closed(
    avoid: Mapping[str, Mapping[str, str]], closed: Mapping[str, frozenset[str]]
) -> dict[str, Mapping[str, str]]:
    """``avoid`` (group → cluster → reason) with each group's closed clusters added as ``cordoned``; a reason
    already given for a cluster (a reschedule request) is kept."""
    merged: dict[str, Mapping[str, str]] = dict(avoid)
    for group, names in closed.items():
        merged[group] = {**dict.fromkeys(sorted(names), CORDONED), **avoid.get(group, {})}
    return merged
