"""The fleet split into components: clusters, and the groups that may touch them (``componentplanning``).

A group touches every cluster its placement may read or take room on: its policy's candidates (and the
clusters its selectors match that are not ready, which its reason names), the cluster a pin names, the
clusters a spread-onto annotation names. Clusters joined by a group are in one component; a group that
touches no cluster is a component alone. No placement in one component reads or changes the room of
another, so the planner places each alone and gets the plan it would get placing them together, and a
plan can reuse every component whose inputs did not change (``memory``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Component:
    clusters: tuple[str, ...]  # sorted
    groups: tuple[str, ...]  # sorted


def partition(touches: Iterable[tuple[str, tuple[str, ...]]]) -> list[Component]:
    """Components of (group name, clusters it touches), in the order of their first group by name.

    The groups of one policy touch the same clusters: each distinct set of clusters is joined once."""
    parent: dict[str, str] = {}

    def root(node: str) -> str:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    groups_by_set: dict[tuple[str, ...], list[str]] = {}
    for group, clusters in touches:
        groups_by_set.setdefault(clusters, []).append(group)
    for clusters in groups_by_set:
        if clusters:
            first = root(parent.setdefault(clusters[0], clusters[0]))
            for cluster in clusters[1:]:
                other = root(parent.setdefault(cluster, cluster))
                if other != first:
                    parent[other] = first
    found: dict[str, tuple[list[str], list[str]]] = {}
    for cluster in parent:
        found.setdefault(root(cluster), ([], []))[0].append(cluster)
    alone: list[Component] = []
    for clusters, groups in groups_by_set.items():
        if clusters:
            found[root(clusters[0])][1].extend(groups)
        else:
            alone += [Component((), (group,)) for group in groups]
    made = [Component(tuple(sorted(clusters)), tuple(sorted(groups))) for clusters, groups in found.values()]
    return sorted([*made, *alone], key=lambda component: component.groups)


def untouched(clusters: Sequence[str], components: Sequence[Component]) -> list[str]:
    """The clusters no group touches (their usage is their capacity, with nothing placed)."""
    touched = {name for component in components for name in component.clusters}
    return [name for name in clusters if name not in touched]
