"""The warning at a SchedulePolicy that selects no workload of the source."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from nova_gitops.api import (
    policies,
)
from nova_gitops.api.objects import (
    Manifest,
)
from nova_gitops.api.policies import SchedulePolicy
from nova_gitops.api.problems import (
    Problem,
    Severity,
)

_ABSENT = object()  # no label at a key (unlike any label value)
_NO_LABELS: Mapping[str, str] = {}

UNMATCHED_POLICY = (
    "matches no object in the source: its namespaceSelector and resourceSelectors select nothing here"
)


def unmatched_policy_warnings(
    found: Sequence[SchedulePolicy],
    workloads: Sequence[Manifest],
    namespace_labels: Mapping[str, Mapping[str, str]],
) -> list[Problem]:
    """A warning at each policy that selects no workload: most often a selector with a typo in a label or
    a namespace, which would otherwise leave its objects unscheduled without naming the policy. An object
    that a pin or spread-onto annotation places still counts as selected.

    Whether a policy selects an object depends only on its kind, apiVersion, namespace and its labels at the
    keys some selector names (the planner's Matcher relies on the same), so each policy is tried on one
    object per such signature: a few hundred for thousands of workloads, instead of every object for every
    policy that selects nothing."""
    keys = policies.selector_label_keys(found)
    absent = (_ABSENT,) * len(keys)
    alike: dict[object, Manifest] = {}
    for manifest in workloads:
        # policies.match_signature's partition (a label at a key: its value, else _ABSENT), looked up by
        # map rather than a generator, and Manifest.labels read without its two properties: this loop is
        # most of the function
        metadata = manifest.body.get("metadata")
        labels_ = metadata.get("labels") if isinstance(metadata, dict) else None
        if not isinstance(labels_, dict):
            labels_ = _NO_LABELS
        signature = (
            manifest.kind,
            manifest.api_version,
            manifest.namespaced,
            manifest.namespace,
            tuple(map(labels_.get, keys, absent)),
        )
        try:
            alike.setdefault(signature, manifest)
        except TypeError:  # a label value that cannot be hashed: the object stands for itself
            alike[id(manifest)] = manifest
    candidates = _Candidates(list(alike.values()))
    return [
        Problem(policy.location, UNMATCHED_POLICY, None, Severity.WARNING, f"SchedulePolicy {policy.name}")
        for policy in found
        if not any(policies.selects(policy, manifest, namespace_labels) for manifest in candidates.of(policy))
    ]


class _Candidates:
    """The objects a policy could select, narrowed by its selectors' ``In`` requirements: an object whose
    label at the key is none of the values cannot match that selector. With policies that each select one
    shard of a large source, trying every kind of object on every policy costs policies × kinds of object;
    this tries about the ones each policy selects."""

    def __init__(self, manifests: Sequence[Manifest]) -> None:
        self.every = manifests
        self._by_label: dict[tuple[str, object], list[Manifest]] = {}
        self._indexed: set[str] = set()

    def of(self, policy: SchedulePolicy) -> Sequence[Manifest]:
        selectors_ = policy.resource_selectors.label_selectors
        if not selectors_:
            return self.every
        chosen: list[Manifest] = []
        for selector in selectors_:
            narrowest: list[Manifest] | None = None
            for requirement in selector.requirements:
                if requirement.operator != "In":
                    continue
                found = [
                    m
                    for value in dict.fromkeys(requirement.values)
                    for m in self._with(requirement.key, value)
                ]
                if narrowest is None or len(found) < len(narrowest):
                    narrowest = found
            if narrowest is None:
                return self.every
            chosen += narrowest
        return chosen

    def _with(self, key: str, value: str) -> list[Manifest]:
        if key not in self._indexed:
            self._indexed.add(key)
            for manifest in self.every:
                value_found = manifest.labels.get(key)
                if isinstance(value_found, str):  # what is not text equals no In value
                    self._by_label.setdefault((key, value_found), []).append(manifest)
        return self._by_label.get((key, value), [])
