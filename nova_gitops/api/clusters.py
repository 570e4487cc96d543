"""Cluster (``cluster.elotl.co/v1alpha1``) as validated data: labels, readiness and per-node capacity."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from nova_gitops.api.objects import Document
from nova_gitops.api.problems import Problem, SourceLocation
from nova_gitops.api.quantities import ResourceList

TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: TaintEffect


@dataclass(frozen=True, slots=True)
class Node:
    """One node's capacity. ``available`` is allocatable minus requests of pods nova-gitops does not manage."""

    name: str
    allocatable: ResourceList
    available: ResourceList
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]


@dataclass(frozen=True, slots=True)
class Cluster:
    name: str
    location: SourceLocation
    labels: Mapping[str, str]  # includes kubernetes.io/metadata.name=<name> and the nova.elotl.co/cluster.*
    ready: bool | None  # the Ready condition: True, False, or None when absent/Unknown
    standby: bool
    autoscaled: bool
    nodes: tuple[Node, ...]  # sorted by name; a cluster reporting only totals has one pseudo-node

    @property
    def is_candidate(self) -> bool:
        """Ready is not False (a Standby cluster is a candidate: placing there wakes it)."""
        return self.ready is not False


def parse_cluster(document: Document, problems: list[Problem]) -> Cluster | None:
    raise NotImplementedError
