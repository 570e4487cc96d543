"""Kubernetes label selectors (matchLabels + matchExpressions) with kube-apiserver semantics.

Operators: In, NotIn, Exists, DoesNotExist. NotIn and DoesNotExist match when the key is absent. An empty
selector matches everything. Requirements are ANDed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from nova_gitops.api.problems import Problem, SourceLocation

Operator = Literal["In", "NotIn", "Exists", "DoesNotExist"]


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """matchLabels are folded into In requirements of one value, in source order, before expressions."""

    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(requirement.matches(labels) for requirement in self.requirements)

    @property
    def is_empty(self) -> bool:
        return not self.requirements


def parse_selector(
    raw: Any, location: SourceLocation, field: str, problems: list[Problem]
) -> LabelSelector:
    """Parse a selector mapping; append a Problem for every defect and return what could be parsed."""
    raise NotImplementedError
