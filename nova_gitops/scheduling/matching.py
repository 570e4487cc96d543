"""Which SchedulePolicy decides where an object goes (docs/design.md §3 "Matching").

An object matches a policy when its Namespace's labels match ``namespaceSelector`` (cluster-scoped objects
always pass), when it matches any one of ``resourceSelectors.labelSelectors`` and, when ``kinds`` is given,
its group/version/kind is listed. Several matches: the highest ``spec.priority`` wins, then the lexically
first name, and the overlap is reported as a warning (``validate --strict`` fails on it).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

from nova_gitops.api import policies
from nova_gitops.api.objects import Manifest
from nova_gitops.api.policies import SchedulePolicy


@dataclass(frozen=True, slots=True)
class Match:
    """The policy chosen for one object (None when no policy matches) and any overlap warning."""

    policy: SchedulePolicy | None
    overlap_warning: str | None = None


class Matcher:
    """``match`` for many objects: each policy's namespace selector is evaluated once per namespace, and the
    policies are matched once per distinct *signature* of an object.

    Whether a policy selects an object depends only on its kind and apiVersion, its namespace (and whether
    it is namespaced) and its labels at the keys some resource selector names: objects alike in those
    (a workload's Deployment, Service and ConfigMap are alike but for their kind; thousands of workloads
    differ only in labels no policy looks at) match the same policies, so the policies are evaluated once
    per signature rather than once per object. The overlap warning names the object, so it is made per
    object from the memoized list."""

    def __init__(
        self, candidates: Sequence[SchedulePolicy], namespace_labels: Mapping[str, Mapping[str, str]]
    ) -> None:
        self.policies = sorted(candidates, key=precedence)
        self._namespace_labels = namespace_labels
        self._namespace_ok: dict[tuple[str, str], bool] = {}
        self._label_keys = policies.selector_label_keys(self.policies)
        self._matching: dict[Hashable, list[SchedulePolicy]] = {}

    def _in_namespace(self, policy: SchedulePolicy, manifest: Manifest) -> bool:
        if not manifest.namespaced or policy.namespace_selector is None:
            return True
        key = (policy.name, manifest.namespace)
        found = self._namespace_ok.get(key)
        if found is None:
            labels_of = policies.namespace_labels_of(manifest.namespace, self._namespace_labels)
            found = self._namespace_ok[key] = policy.namespace_selector.matches(labels_of)
        return found

    def match(self, manifest: Manifest) -> Match:
        """The policy for ``manifest``, as ``match`` decides it."""
        signature = policies.match_signature(manifest, self._label_keys)
        try:
            matching = self._matching.get(signature)
        except TypeError:  # a label value that cannot be hashed (the source validates them as text)
            return _choose(manifest, self._evaluate(manifest))
        if matching is None:
            matching = self._matching[signature] = self._evaluate(manifest)
        return _choose(manifest, matching)

    def _evaluate(self, manifest: Manifest) -> list[SchedulePolicy]:
        object_labels = manifest.labels
        return [
            policy
            for policy in self.policies
            if self._in_namespace(policy, manifest)
            and policies.selects_resource(policy.resource_selectors, manifest, object_labels)
        ]


def precedence(policy: SchedulePolicy) -> tuple[int, str]:
    """Sort key: highest priority first, then the lexically first name."""
    return (-policy.priority, policy.name)


def match(
    manifest: Manifest,
    candidates: Sequence[SchedulePolicy],
    namespace_labels: Mapping[str, Mapping[str, str]],
) -> Match:
    """Choose the policy for ``manifest`` among ``candidates`` (already sorted by ``precedence``)."""
    return _choose(
        manifest, [policy for policy in candidates if policies.selects(policy, manifest, namespace_labels)]
    )


def _choose(manifest: Manifest, matching: Sequence[SchedulePolicy]) -> Match:
    if not matching:
        return Match(None)
    chosen = matching[0]
    if len(matching) == 1:
        return Match(chosen)
    names = ", ".join(policy.name for policy in matching)
    warning = (
        f"{manifest.key} matches several SchedulePolicies ({names}); using {chosen.name} "
        f"(highest spec.priority, then name)"
    )
    return Match(chosen, warning)
