"""The parts of a plan: what one ScheduleGroup was given (its clusters, mode and status, and each of its
objects' copies per cluster) and what a plan placed on each cluster. ``plans.Plan`` holds them; the plan
memory (``scheduling.memory``) keeps them between plans, so they pickle as ``pickling.by_fields`` says."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from nova_gitops.api.objects import Manifest
from nova_gitops.api.policies import FieldOverride
from nova_gitops.api.quantities import ResourceList
from nova_gitops.scheduling.pickling import by_fields

Mode = Literal["single", "divide", "duplicate"]
Status = Literal["scheduled", "delegated", "unschedulable"]


@dataclass(frozen=True, slots=True)
class ClusterCopy:
    """What one cluster receives of one object: its replicas (None = as in the source) and overrides."""

    cluster: str
    replicas: int | None = None
    overrides: tuple[FieldOverride, ...] = ()
    # a divided Job's share of its completions (docs/design.md §3); None: as in the source
    completions: int | None = None

    __reduce__ = by_fields


@dataclass(frozen=True, slots=True)
class ObjectPlan:
    manifest: Manifest
    copies: tuple[ClusterCopy, ...]  # sorted by cluster name


@dataclass(frozen=True, slots=True)
class GroupPlan:
    """One ScheduleGroup and its decision. ``policy`` is None for a group placed by an annotation."""

    name: str
    policy: str | None
    group_by: tuple[str, str] | None  # (labelKey, value); None when ungrouped
    mode: Mode
    status: Status
    clusters: tuple[str, ...]
    reason: str
    objects: tuple[ObjectPlan, ...]
    warnings: tuple[str, ...] = ()
    requests: Mapping[str, int] = field(default_factory=dict)  # what the group's pods request in total

    __reduce__ = by_fields


@dataclass(frozen=True, slots=True)
class ClusterUsage:
    """A cluster's capacity and what this plan placed on it, per resource (milli-units)."""

    cluster: str
    allocatable: ResourceList
    available: ResourceList  # before this plan
    placed: ResourceList  # requested by what this plan placed there (single placement and spread)

    __reduce__ = by_fields
