"""Replacing an object whose change the server refuses as immutable: delete, wait until gone, create.

A Job's pod template and ``completions`` are immutable, and the planner changes them (Divide re-splits a
Job's completions when a cluster joins): without replacement the server answers ``422 ... field is
immutable`` on every pass and the old Job runs on. Replacing deletes what the object's pods were doing, so it
is done only where it is expected — Jobs, and objects annotated ``gitops.nova.elotl.co/replace: "true"``
(as Flux's ``force``) — only for objects the agent *created* (an adopted object is never deleted), and it
counts against the mass-prune budget like a deletion (docs/agent.md, "Immutable fields").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from nova_agent.clocks import Clock
from nova_agent.desired import DesiredObject
from nova_agent.kubeports import KubePort, Resource
from nova_agent.ownership import uid_of
from nova_agent.resources import Body, annotations_of

REPLACE_ANNOTATION: Final = "gitops.nova.elotl.co/replace"

_IMMUTABLE: Final = re.compile(
    r"immutable|may not change once set|updates to statefulset spec for fields other than", re.IGNORECASE
)
"""How kube-apiserver words a refused change of an immutable field (Jobs, selectors, a Service's clusterIP,
immutable ConfigMaps and Secrets, PVC and StatefulSet specs)."""

GONE_TIMEOUT: Final = 60.0
"""How long a replacement waits for the old object to be gone (finalizers run) before creating the new one."""


def is_immutable_refusal(status: int, message: str) -> bool:
    return status == 422 and _IMMUTABLE.search(message) is not None


NEVER_REPLACED: Final = frozenset(
    {("v1", "Namespace"), ("apiextensions.k8s.io/v1", "CustomResourceDefinition")}
)
"""Deleting one of these deletes everything in it or of its kind, objects the agent did not create among
them: no annotation makes the agent replace them (``deleting`` guards their deletion the same way)."""


def replaceable_by_default(body: Body) -> bool:
    """Jobs are replaced by default; any object whose manifest is annotated ``replace: "true"`` too, but a
    Namespace or a CRD never."""
    if (body.get("apiVersion"), body.get("kind")) in NEVER_REPLACED:
        return False
    if annotations_of(body).get(REPLACE_ANNOTATION) == "true":
        return True
    return body.get("kind") == "Job" and str(body.get("apiVersion", "")).startswith("batch/")


def refusal_fix(item: DesiredObject, created: bool) -> str:
    """What the user can do about an immutable change the agent will not make by itself."""
    if not created:
        return (
            f"; nova-agent did not create {item.ref} (it adopted it) and never deletes it: delete it by hand "
            "and the next pass creates it from git"
        )
    return (
        f'; annotate the manifest with {REPLACE_ANNOTATION}: "true" to let nova-agent replace it (delete '
        "and re-create), or delete it by hand and the next pass creates it from git"
    )


@dataclass(frozen=True, slots=True)
class Replaced:
    response: Body | None
    """The server's answer to the create; None when the old object was not gone in time."""


def replace(kube: KubePort, resource: Resource, item: DesiredObject, clock: Clock) -> Replaced:
    """Delete the live object (background propagation, uid precondition: never a newer object of that name),
    wait until it is gone, and create ``item`` in its place."""
    namespace, name = item.ref.namespace, item.ref.name
    live = kube.get(resource, namespace, name)
    uid = uid_of(live) if live is not None else ""
    if live is not None:
        kube.delete(resource, namespace, name, uid=uid)
    waited, delay = 0.0, 0.05
    while True:
        current = kube.get(resource, namespace, name)
        if current is None or (uid and uid_of(current) != uid):
            break
        if waited >= GONE_TIMEOUT or not clock.sleep(delay):
            return Replaced(None)
        waited, delay = waited + delay, min(delay * 2, 2.0)
    return Replaced(kube.apply(resource, item.body, force=True))
