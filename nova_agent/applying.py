"""Applying desired objects with server-side apply, in rank order, one failure never stopping the others.

CRDs go first and are waited for (``Established``, then served by discovery, which a real kube-apiserver
updates a moment later) before the custom resources they define are resolved; a kind still unknown after
that is the object's own error. Each failure is classified
(:func:`~nova_agent.retrying.classify_api_failure`) and recorded with backoff, so the next pass retries it
without hammering the server.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from nova_agent import permissions, redacting, replacing
from nova_agent.clocks import Clock
from nova_agent.desired import DesiredObject
from nova_agent.health import find_condition
from nova_agent.kubeports import KubePort, Resource
from nova_agent.ordering import apply_order
from nova_agent.ownership import ADOPT_ANNOTATION, ADOPT_FORCE
from nova_agent.resources import Body, ObjectRef, with_namespace
from nova_agent.retrying import FailureKind, FailureTable, classify_api_failure, record_failure
from nova_gitops.clients.kuberest import KubeApiError

CRD_RESOURCE = Resource(
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False
)


ADOPTION_CONFLICT_FIX: Final = (
    "; the object existed before nova-agent applied it, and nova-agent does not take over fields other "
    "managers own on objects it did not create: remove those fields from git or from the object, or "
    f"annotate the manifest with {ADOPT_ANNOTATION}: {ADOPT_FORCE} to take them over"
)


@dataclass(slots=True)
class ApplyOutcome:
    applied: list[DesiredObject] = field(default_factory=list)
    failed: dict[ObjectRef, str] = field(default_factory=dict)
    responses: dict[ObjectRef, Body] = field(default_factory=dict)
    """What the server answered for each applied object (its uid and managed fields)."""
    replaced: list[ObjectRef] = field(default_factory=list)
    """Objects deleted and created again because a change of an immutable field was refused (or, in a dry
    run, that would be)."""


def resolve(kube: KubePort, item: DesiredObject) -> tuple[Resource | None, DesiredObject]:
    """The resource serving ``item``, and ``item`` with the ``default`` namespace filled in where needed."""
    resource = kube.resource_for(item.ref.api_version, item.ref.kind)
    if resource is not None and resource.namespaced and not item.ref.namespace:
        body = with_namespace(item.body, "default")
        ref = ObjectRef(item.ref.api_version, item.ref.kind, "default", item.ref.name)
        return resource, replace(item, ref=ref, body=body)
    return resource, item


def wait_for_crds(kube: KubePort, names: Sequence[str], clock: Clock, timeout: float) -> list[str]:
    """Wait until every named CRD is ``Established``; the names still not established at ``timeout``."""
    waited, delay, pending = 0.0, 0.05, list(names)
    while True:
        pending = [name for name in pending if not _established(kube, name)]
        if not pending or waited >= timeout or not clock.sleep(delay):
            return pending
        waited, delay = waited + delay, min(delay * 2, 1.0)


def served_kinds(crd: Body) -> list[tuple[str, str]]:
    """``(apiVersion, kind)`` of each version a CRD's body serves."""
    spec = crd.get("spec") or {}
    group, kind = spec.get("group"), (spec.get("names") or {}).get("kind")
    if not isinstance(group, str) or not isinstance(kind, str):
        return []
    versions = [v for v in spec.get("versions") or [] if isinstance(v, dict) and v.get("served", True)]
    return [(f"{group}/{v['name']}", kind) for v in versions if isinstance(v.get("name"), str)]


def wait_for_discovery(
    kube: KubePort, kinds: Sequence[tuple[str, str]], clock: Clock, timeout: float
) -> list[tuple[str, str]]:
    """Wait until discovery serves every ``(apiVersion, kind)``; those still missing at ``timeout``. A real
    kube-apiserver publishes a CRD's discovery a moment after ``Established`` (longer on a loaded machine),
    and resolving its custom resources at once failed them for a pass."""
    waited, delay, pending = 0.0, 0.05, list(kinds)
    while True:
        kube.forget_discovery()  # each round reads discovery afresh
        pending = [(version, kind) for version, kind in pending if kube.resource_for(version, kind) is None]
        if not pending or waited >= timeout or not clock.sleep(delay):
            return pending
        waited, delay = waited + delay, min(delay * 2, 1.0)


def _established(kube: KubePort, name: str) -> bool:
    crd = kube.get(CRD_RESOURCE, "", name)
    condition = find_condition(crd, "Established") if crd is not None else None
    return condition is not None and condition.get("status") == "True"


@dataclass(frozen=True, slots=True)
class ApplyOptions:
    """How a pass applies: ``unforced`` objects (being created or adopted) go without ``force`` whatever
    ``force`` says; an object in ``created`` whose change the server refuses as immutable is replaced when
    it may be (``replacing.replaceable_by_default``), at most ``replace_budget`` of them (None: no limit)."""

    force: bool
    unforced: Collection[ObjectRef] = ()
    created: Collection[ObjectRef] = ()
    replace_budget: int | None = 0
    dry_run: bool = False
    crd_timeout: float = 60.0
    agent_namespace: str = "nova-agent"
    """For the fix of a refused permission: the RBAC of deploy/agent lives there."""


def apply_objects(
    kube: KubePort,
    objects: Sequence[DesiredObject],
    *,
    failures: FailureTable,
    now: float,
    clock: Clock,
    force: bool,
    unforced: Collection[ObjectRef] = (),
    created: Collection[ObjectRef] = (),
    replace_budget: int | None = 0,
    dry_run: bool = False,
    crd_timeout: float = 60.0,
    agent_namespace: str = "nova-agent",
) -> ApplyOutcome:
    """Apply ``objects`` in rank order; ``failures`` is updated in place (cleared on success). See
    :class:`ApplyOptions` for the rest."""
    options = ApplyOptions(force, unforced, created, replace_budget, dry_run, crd_timeout, agent_namespace)
    applier = _Applier(kube, options, failures, now, clock)
    by_ref: Mapping[ObjectRef, DesiredObject] = {item.ref: item for item in objects}
    ordered = [by_ref[ref] for ref in apply_order(by_ref)]
    crds = [item for item in ordered if item.ref.kind == "CustomResourceDefinition"]
    rest = [item for item in ordered if item.ref.kind != "CustomResourceDefinition"]
    applied = [item for item in crds if applier.send(item)]
    applied_crds = [item.ref.name for item in applied]
    if applied_crds and not dry_run:
        late = wait_for_crds(kube, applied_crds, clock, crd_timeout)
        kinds = [kind for item in applied if item.ref.name not in late for kind in served_kinds(item.body)]
        wait_for_discovery(kube, kinds, clock, crd_timeout)  # a kind still missing fails its objects below
        for name in late:
            applier.outcome.failed.setdefault(
                ObjectRef("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", name),
                f"CustomResourceDefinition {name} was not established within {crd_timeout:.0f}s",
            )
    for item in rest:
        applier.send(item)
    return applier.outcome


class _Applier:
    """One pass's applies: each object's outcome, failures recorded with backoff, the replacement budget."""

    def __init__(
        self, kube: KubePort, options: ApplyOptions, failures: FailureTable, now: float, clock: Clock
    ) -> None:
        self.kube, self.options, self.failures, self.now, self.clock = kube, options, failures, now, clock
        self.outcome = ApplyOutcome()
        self.budget = options.replace_budget

    def fail(self, item: DesiredObject, kind: FailureKind, message: str) -> bool:
        self.outcome.failed[item.ref] = message
        self.failures[item.ref.key] = record_failure(
            self.failures.get(item.ref.key), item.digest, kind, message, self.now
        )
        return False

    def succeed(self, item: DesiredObject, response: Body) -> bool:
        self.failures.pop(item.ref.key, None)
        self.outcome.applied.append(item)
        self.outcome.responses[item.ref] = response
        return True

    def send(self, item: DesiredObject) -> bool:
        resource, resolved = resolve(self.kube, item)
        if resource is None:
            message = (
                f"the server does not serve {item.ref.kind} in {item.ref.api_version} (is its CRD applied?)"
            )
            return self.fail(item, FailureKind.TRANSIENT, message)
        adopting = item.ref in self.options.unforced
        force = self.options.force and not adopting
        try:
            response = self.kube.apply(resource, resolved.body, force=force, dry_run=self.options.dry_run)
        except KubeApiError as error:
            if replacing.is_immutable_refusal(error.status, error.message):
                return self.replace(resource, resolved, error)
            message = redacting.redact_server_message(error.message, resolved.body)
            fix = ADOPTION_CONFLICT_FIX if adopting and error.status == 409 else ""
            if error.status == 403 and permissions.refusal_of(message) is not None:
                fix = f"; {permissions.explain(message, self.options.agent_namespace)}"
            kind = classify_api_failure(error.status, error.message)
            return self.fail(item, kind, f"{error.status} {error.reason}: {message}{fix}")
        return self.succeed(resolved, response)

    def replace(self, resource: Resource, item: DesiredObject, refusal: KubeApiError) -> bool:
        """``item``'s change was refused as immutable: replace the object if it may be, else say how to."""
        message = redacting.redact_server_message(refusal.message, item.body)
        refused = f"{refusal.status} {refusal.reason}: {message}"
        created = item.ref in self.options.created
        if not created or not replacing.replaceable_by_default(item.body):
            return self.fail(item, FailureKind.INVALID, refused + replacing.refusal_fix(item, created))
        if self.budget is not None and self.budget <= 0:
            return self.fail(item, FailureKind.TRANSIENT, refused + REPLACE_BUDGET_SPENT)
        if self.budget is not None:
            self.budget -= 1
        self.outcome.replaced.append(item.ref)
        if self.options.dry_run:
            return self.succeed(item, {})
        try:
            done = replacing.replace(self.kube, resource, item, self.clock)
        except KubeApiError as error:
            message = redacting.redact_server_message(error.message, item.body)
            kind = classify_api_failure(error.status, error.message)
            return self.fail(item, kind, f"replacing: {error.status} {error.reason}: {message}")
        if done.response is None:
            waited = f"the old object was still there after {replacing.GONE_TIMEOUT:.0f}s (finalizers?)"
            return self.fail(item, FailureKind.TRANSIENT, f"{refused}; replacing: {waited}")
        return self.succeed(item, done.response)


REPLACE_BUDGET_SPENT: Final = (
    "; not replaced in this pass: replacing deletes, and this pass already deletes or replaces as many "
    "objects as --max-prune-percent allows (the next pass goes on; a commit with the trailer "
    "Nova-Allow-Mass-Prune: true lifts the limit)"
)
