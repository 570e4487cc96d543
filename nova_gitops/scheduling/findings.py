"""What a plan has to tell the person who asked for it, besides the render: its warnings, the objects it left
unscheduled and why, and the ``-n NAMESPACE`` that would have let a policy select them (issue 22, item 2).

try-nova's guestbook ships without ``metadata.namespace`` and is applied with ``kubectl apply -n guestbook``;
its policy selects the namespace ``guestbook``. Rendered without ``-n``, every object lives in ``default``,
no policy matches, and ``render`` used to say only ``(6 unscheduled, 0 warnings)``: which six, and why, was
in PLACEMENT.md alone. ``render``, ``publish``, ``diff`` and ``validate`` now take the same ``Findings`` of
their plan and print them alike (``cli.notices``), counting warnings as ``validate`` always did: the
source's, the plan's and one per unscheduled object.

A namespace hint is given for an unscheduled object that names no namespace when a policy whose
``resourceSelectors`` select it has a ``namespaceSelector`` that the object's namespace fails but that a
namespace would pass: one the selector names (``kubernetes.io/metadata.name``) or one the source defines.
Pure: data in, data out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from nova_gitops.api import labels, policies, selectors
from nova_gitops.api.inputs import SourceSet
from nova_gitops.api.objects import Manifest, ObjectKey
from nova_gitops.api.policies import SchedulePolicy
from nova_gitops.api.problems import Problem
from nova_gitops.scheduling import matching
from nova_gitops.scheduling.plans import NO_POLICY, Plan, Unscheduled

MAX_HINT_NAMESPACES = 5
"""At most this many namespaces are named in one hint (a selector can name hundreds)."""


@dataclass(frozen=True, slots=True)
class NamespaceHint:
    """Objects that name no namespace, which ``policy`` would select in one of ``namespaces``."""

    policy: str
    namespaces: tuple[str, ...]  # sorted; the first ``MAX_HINT_NAMESPACES``
    objects: tuple[ObjectKey, ...]  # sorted


@dataclass(frozen=True, slots=True)
class Findings:
    """A plan's warnings and unscheduled objects, as a command reports them (``cli.notices``)."""

    input_warnings: tuple[Problem, ...]  # the source's, at file:line
    plan_warnings: tuple[str, ...]
    unscheduled: tuple[Unscheduled, ...]  # sorted by key, as the plan holds them
    namespace_hints: tuple[NamespaceHint, ...] = ()

    @property
    def warnings(self) -> int:
        """How many warnings ``validate`` counts: the source's, the plan's, one per unscheduled object."""
        return len(self.input_warnings) + len(self.plan_warnings) + len(self.unscheduled)


NONE = Findings((), (), ())


def findings_of(source: SourceSet, plan: Plan) -> Findings:
    """The ``Findings`` of ``plan``, made from ``source``."""
    return Findings(source.warnings, plan.warnings, plan.unscheduled, namespace_hints(source, plan))


def namespace_hints(source: SourceSet, plan: Plan) -> tuple[NamespaceHint, ...]:
    """For each (policy, namespaces) that would select some of the plan's unscheduled objects had they a
    namespace, those objects (see the module docstring); sorted by policy, then namespaces. Each policy's
    passing namespaces are found once, and only policies with some are tried on an object."""
    unmatched = {
        entry.key for entry in plan.unscheduled if entry.policy is None and entry.reason == NO_POLICY
    }
    if not unmatched:
        return ()
    passing = {
        policy.name: _passing(policy, source.namespace_labels)
        for policy in sorted(source.policies, key=matching.precedence)
    }
    hinting = [policy for policy in sorted(source.policies, key=matching.precedence) if passing[policy.name]]
    found: dict[tuple[str, tuple[str, ...]], list[ObjectKey]] = {}
    for manifest in source.workloads if hinting else ():
        if manifest.key not in unmatched or not _names_no_namespace(manifest):
            continue
        for policy in hinting:
            namespaces = tuple(name for name in passing[policy.name] if name != manifest.namespace)
            if namespaces and policies.selects_resource(policy.resource_selectors, manifest):
                found.setdefault((policy.name, namespaces[:MAX_HINT_NAMESPACES]), []).append(manifest.key)
                break
    return tuple(
        NamespaceHint(policy, namespaces, tuple(sorted(keys)))
        for (policy, namespaces), keys in sorted(found.items())
    )


def _no_policy(entry: Unscheduled) -> bool:
    return entry.policy is None and entry.reason == NO_POLICY


def _names_no_namespace(manifest: Manifest) -> bool:
    """A namespaced object whose own manifest names no namespace (``-n`` or ``default`` gave it one)."""
    return manifest.namespaced and not manifest.metadata.get("namespace")


def _passing(policy: SchedulePolicy, defined: Mapping[str, Mapping[str, str]]) -> tuple[str, ...]:
    """The namespaces ``policy``'s namespace selector passes among those it names and those the source
    defines, sorted; none without a namespace selector (it would pass any)."""
    selector = policy.namespace_selector
    if selector is None:
        return ()
    candidates = {*_named(selector.requirements), *defined}
    return tuple(
        sorted(
            name
            for name in candidates
            if selectors.is_dns1123_label(name)
            and selector.matches(policies.namespace_labels_of(name, defined))
        )
    )


def _named(requirements: Sequence[selectors.Requirement]) -> Iterable[str]:
    """The namespace names a namespace selector names: the values of its ``kubernetes.io/metadata.name``
    requirements with ``In`` (matchLabels are folded into those)."""
    for requirement in requirements:
        if requirement.key == labels.METADATA_NAME and requirement.operator == "In":
            yield from requirement.values
