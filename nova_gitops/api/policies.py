"""SchedulePolicy (``policy.elotl.co/v1alpha1``) as validated data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from nova_gitops.api import fieldpaths
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import Problem, SourceLocation
from nova_gitops.api.selectors import LabelSelector

SpreadMode = Literal["Divide", "Duplicate"]


@dataclass(frozen=True, slots=True)
class GroupVersionKind:
    group: str
    version: str  # "" matches any version
    kind: str


@dataclass(frozen=True, slots=True)
class PercentageSplit:
    topology_value: str
    percentage: int


@dataclass(frozen=True, slots=True)
class FieldOverride:
    path: fieldpaths.FieldPath
    value: Any  # the staticValue, with its YAML type


@dataclass(frozen=True, slots=True)
class ResourceOverride:
    kind: str
    api_version: str
    name: str
    namespace: str | None
    fields: tuple[FieldOverride, ...]


@dataclass(frozen=True, slots=True)
class Override:
    topology_value: str
    resources: tuple[ResourceOverride, ...]


@dataclass(frozen=True, slots=True)
class SpreadConstraints:
    mode: SpreadMode
    topology_key: str
    percentage_split: tuple[PercentageSplit, ...]
    overrides: tuple[Override, ...]


@dataclass(frozen=True, slots=True)
class ResourceSelectors:
    label_selectors: tuple[LabelSelector, ...]  # any one must match; empty tuple matches everything
    kinds: tuple[GroupVersionKind, ...]  # empty: every kind


@dataclass(frozen=True, slots=True)
class SchedulePolicy:
    name: str
    location: SourceLocation
    priority: int
    namespace_selector: LabelSelector | None
    cluster_selector: LabelSelector | None
    ordered_cluster_selector: LabelSelector | None  # tiers follow its first expression's values
    group_by_key: str | None
    spread: SpreadConstraints | None
    resource_selectors: ResourceSelectors


def parse_policy(document: Document, problems: list[Problem]) -> SchedulePolicy | None:
    """Validate a SchedulePolicy document. Append a Problem per defect (file:line, field, message) and
    warnings for unknown fields; return None when the policy cannot be used."""
    raise NotImplementedError
