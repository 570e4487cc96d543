"""The agent's own namespace, where its inventory lives: created when it is missing (a fresh cluster), so
``nova-agent sync`` needs no ``kubectl create namespace`` first.

It is created only when the inventory is written and the server answers that the namespace does not exist
(so a pass on a cluster that has it costs no extra call), labelled as the agent's, and never recorded in the
inventory: it is not something the render holds, and the agent never deletes it
(:func:`nova_agent.ownership.protected_namespace`). A dry run creates nothing and says it would.
"""

from __future__ import annotations

import logging
from typing import Final

from nova_agent.kubeports import KubePort, Resource
from nova_agent.permissions import PermissionDenied, explained
from nova_agent.resources import Body
from nova_gitops.clients.kuberest import KubeApiError

NAMESPACES: Final = Resource("", "v1", "namespaces", "Namespace", False)
MANAGED_BY: Final = {"app.kubernetes.io/managed-by": "nova-agent"}

log = logging.getLogger("nova_agent")


def is_missing_namespace(error: KubeApiError, namespace: str) -> bool:
    """Whether a write failed because ``namespace`` does not exist (kube-apiserver: 404 ``namespaces "x"
    not found``)."""
    return error.status == 404 and f'namespaces "{namespace}" not found' in error.message


def create(kube: KubePort, namespace: str) -> None:
    metadata = {"name": namespace, "labels": dict(MANAGED_BY)}
    body: Body = {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata}
    try:
        with explained("create", NAMESPACES, "", namespace):
            kube.apply(NAMESPACES, body, force=False)
    except PermissionDenied as denied:
        raise PermissionDenied(
            f"the inventory namespace {namespace} does not exist and {denied}; or create it beforehand "
            f"(kubectl create namespace {namespace})",
            denied.reason,
        ) from denied
    log.info("created namespace %s for the inventory (it did not exist)", namespace)


def apply_in(kube: KubePort, resource: Resource, body: Body, namespace: str) -> Body:
    """Apply ``body`` (forced) into the agent's ``namespace``, creating the namespace if it is missing."""
    with explained("patch", resource, namespace, namespace):
        try:
            return kube.apply(resource, body, force=True)
        except KubeApiError as error:
            if not is_missing_namespace(error, namespace):
                raise
        create(kube, namespace)
        return kube.apply(resource, body, force=True)


def note_if_missing(kube: KubePort, namespace: str) -> None:
    """For a dry run with no inventory: say that a real pass would create the namespace."""
    try:
        missing = kube.get(NAMESPACES, "", namespace) is None
    except KubeApiError:
        return  # may not read namespaces: a real pass finds out when it writes
    if missing:
        log.info(
            "namespace %s does not exist: nova-agent would create it for the inventory (dry run)", namespace
        )
