"""Applying desired objects with server-side apply, in rank order, one failure never stopping the others.

CRDs go first and are waited for (``Established``) before the custom resources they define are resolved
through discovery; a kind still unknown after that is the object's own error. Each failure is classified
(:func:`~nova_agent.retrying.classify_api_failure`) and recorded with backoff, so the next pass retries it
without hammering the server.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from nova_agent import redacting
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


def resolve(kube: KubePort, item: DesiredObject) -> tuple[Resource | None, DesiredObject]:
    """The resource serving ``item``, and ``item`` with the ``default`` namespace filled in where needed."""
    resource = kube.resource_for(item.ref.api_version, item.ref.kind)
    if resource is not None and resource.namespaced and not item.ref.namespace:
        body = with_namespace(item.body, "default")
        ref = ObjectRef(item.ref.api_version, item.ref.kind, "default", item.ref.name)
        return resource, DesiredObject(ref, body, item.digest, item.path)
    return resource, item


def wait_for_crds(kube: KubePort, names: Sequence[str], clock: Clock, timeout: float) -> list[str]:
    """Wait until every named CRD is ``Established``; the names still not established at ``timeout``."""
    waited, delay, pending = 0.0, 0.05, list(names)
    while True:
        pending = [name for name in pending if not _established(kube, name)]
        if not pending or waited >= timeout or not clock.sleep(delay):
            return pending
        waited, delay = waited + delay, min(delay * 2, 1.0)


def _established(kube: KubePort, name: str) -> bool:
    crd = kube.get(CRD_RESOURCE, "", name)
    condition = find_condition(crd, "Established") if crd is not None else None
    return condition is not None and condition.get("status") == "True"


def apply_objects(
    kube: KubePort,
    objects: Sequence[DesiredObject],
    *,
    failures: FailureTable,
    now: float,
    clock: Clock,
    force: bool,
    unforced: Collection[ObjectRef] = (),
    dry_run: bool = False,
    crd_timeout: float = 60.0,
) -> ApplyOutcome:
    """Apply ``objects`` in rank order; ``failures`` is updated in place (cleared on success). Objects in
    ``unforced`` (being created or adopted) are applied without ``force``, whatever ``force`` says."""
    outcome = ApplyOutcome()
    by_ref: Mapping[ObjectRef, DesiredObject] = {item.ref: item for item in objects}
    ordered = [by_ref[ref] for ref in apply_order(by_ref)]
    crds = [item for item in ordered if item.ref.kind == "CustomResourceDefinition"]
    rest = [item for item in ordered if item.ref.kind != "CustomResourceDefinition"]

    def fail(item: DesiredObject, kind: FailureKind, message: str) -> None:
        outcome.failed[item.ref] = message
        failures[item.ref.key] = record_failure(failures.get(item.ref.key), item.digest, kind, message, now)

    def send(item: DesiredObject) -> bool:
        resource, resolved = resolve(kube, item)
        if resource is None:
            message = (
                f"the server does not serve {item.ref.kind} in {item.ref.api_version} (is its CRD applied?)"
            )
            fail(item, FailureKind.TRANSIENT, message)
            return False
        adopting = item.ref in unforced
        try:
            response = kube.apply(resource, resolved.body, force=force and not adopting, dry_run=dry_run)
        except KubeApiError as error:
            message = redacting.redact_server_message(error.message, resolved.body)
            fix = ADOPTION_CONFLICT_FIX if adopting and error.status == 409 else ""
            fail(
                item,
                classify_api_failure(error.status, error.message),
                f"{error.status} {error.reason}: {message}{fix}",
            )
            return False
        failures.pop(item.ref.key, None)
        outcome.applied.append(resolved)
        outcome.responses[resolved.ref] = response
        return True

    applied_crds = [item.ref.name for item in crds if send(item)]
    if applied_crds and not dry_run:
        late = wait_for_crds(kube, applied_crds, clock, crd_timeout)
        kube.forget_discovery()
        for name in late:
            outcome.failed.setdefault(
                ObjectRef("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", name),
                f"CustomResourceDefinition {name} was not established within {crd_timeout:.0f}s",
            )
    for item in rest:
        send(item)
    return outcome
