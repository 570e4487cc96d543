"""Cordoned clusters (``nova-gitops cordon``; label ``nova.elotl.co/cordoned: "true"``), like ``kubectl
cordon`` for nodes: no new or moved group is placed on a cordoned cluster, and what runs there stays.

- A group the previous render placed on a cordoned cluster stays there while it is a candidate and fits, as
  any sticky group does. Every placement the planner *chooses* — a new group, a group that must move, one
  failing back to a higher tier — skips cordoned clusters, and its reason says ``Cluster c skipped,
  cordoned;``. A group that no longer fits on its cordoned cluster therefore moves off it, and never back.
- A spread policy's group spreads over its candidates minus the cordoned clusters it was not on already.
- Pins and spread-onto annotations name their clusters explicitly and are honoured (a pin to a cordoned
  cluster is warned about), as ``kubectl cordon`` leaves a pod with a ``nodeName`` alone.

Both rules keep every plan a fixed point (``placementstages``): what stays depends only on where the
previous render put a group, and what is chosen never lands on a cordoned cluster.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from nova_gitops.api.clusters import Cluster

CORDONED = "cordoned"
"""The reason a cordoned cluster is skipped, in Nova's event wording: ``Cluster c2 skipped, cordoned;``."""


def cordoned(clusters: Sequence[Cluster]) -> frozenset[str]:
    return frozenset(cluster.name for cluster in clusters if cluster.cordoned)


def avoiding(avoid: Mapping[str, str], closed: frozenset[str]) -> Mapping[str, str]:
    """The clusters a placement the planner chooses must skip (cluster → reason): ``avoid``'s (reschedule
    requests, whose reason is kept) and the cordoned ones."""
    if not closed:
        return avoid
    return {**dict.fromkeys(sorted(closed), CORDONED), **avoid}


def closed_to_spread(closed: frozenset[str], previous_clusters: Sequence[str]) -> frozenset[str]:
    """The cordoned clusters a spread group may not spread onto: those it was not on already."""
    return closed.difference(previous_clusters)
