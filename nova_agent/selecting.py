"""Label selector matching for the few places the agent relates objects (pods to their workload).

A small, exact implementation of ``matchLabels`` + ``matchExpressions`` on raw selector dicts, so that the
agent does not depend on the scheduler's validated selector types for data it reads from a live cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """Kubernetes semantics; a missing or malformed selector matches nothing (never "everything")."""
    if not isinstance(selector, Mapping) or not selector:
        return False
    match_labels = selector.get("matchLabels") or {}
    if not isinstance(match_labels, Mapping):
        return False
    if any(labels.get(key) != value for key, value in match_labels.items()):
        return False
    for expression in selector.get("matchExpressions") or []:
        if not isinstance(expression, Mapping):
            return False
        key, operator = expression.get("key"), expression.get("operator")
        values = expression.get("values") or []
        present = key in labels
        if operator == "In" and not (present and labels[str(key)] in values):
            return False
        if operator == "NotIn" and present and labels[str(key)] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
        if operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False
    return True
