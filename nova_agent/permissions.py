"""What a 403 means for the agent: which verb on which resource it was refused, and which RBAC object of
``deploy/agent`` grants it, so that the message says what an admin has to fix.

kube-apiserver words a refusal as ``configmaps "x" is forbidden: User "system:serviceaccount:nova-agent:
nova-agent" cannot get resource "configmaps" in API group "" in the namespace "nova-agent"`` (or ``... at the
cluster scope``): the verb, resource, group and namespace are read from there. A 403 worded otherwise (a
namespace being terminated, an admission webhook) is not called a missing permission: the message names what
the agent attempted and quotes the server. :data:`GRANTS` maps (group, resource, verb) to the Role or
ClusterRole that grants it; a test checks it against the YAML in ``deploy/agent`` so that the two cannot
drift apart.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final

from nova_agent.kubeports import Resource
from nova_gitops.clients.kuberest import KubeApiError


@dataclass(frozen=True, slots=True)
class Grant:
    """An RBAC object of ``deploy/agent/base``: a ClusterRole, or a Role in the agent's namespace."""

    kind: str
    name: str
    file: str

    def describe(self, agent_namespace: str) -> str:
        where = f" in namespace {agent_namespace}" if self.kind == "Role" else ""
        binding = "RoleBinding" if self.kind == "Role" else "ClusterRoleBinding"
        return (
            f"granted by {self.kind} {self.name}{where} ({self.file}); check that it and its {binding} "
            "to the agent's service account exist"
        )


INVENTORY: Final = Grant("Role", "nova-agent-inventory", "deploy/agent/base/rbac-inventory.yaml")
APPLY: Final = Grant("ClusterRole", "nova-agent-apply", "deploy/agent/base/rbac-apply.yaml")
OBSERVE: Final = Grant("ClusterRole", "nova-agent-observe", "deploy/agent/base/rbac-observe.yaml")

APPLY_VERBS: Final = ("get", "list", "watch", "create", "update", "patch", "delete")
"""What ``nova-agent-apply`` grants on every resource: anything the agent applies or prunes not named in
:data:`GRANTS` is its."""

GRANTS: Final[Mapping[tuple[str, str, str], Grant]] = {
    **{("", "configmaps", verb): INVENTORY for verb in ("get", "create", "update", "patch")},
    **{("", "namespaces", verb): APPLY for verb in ("get", "create", "patch")},
    **{("", plural, "list"): OBSERVE for plural in ("nodes", "pods", "persistentvolumeclaims")},
    **{
        ("apps", plural, "list"): OBSERVE
        for plural in ("deployments", "statefulsets", "daemonsets", "replicasets")
    },
    ("batch", "jobs", "list"): OBSERVE,
    **{
        ("rbac.authorization.k8s.io", plural, verb): APPLY
        for plural in ("roles", "clusterroles")
        for verb in ("escalate", "bind")
    },
}
"""(API group, resource, verb) → the RBAC object that grants it to the agent. ConfigMaps are the inventory's
only in the agent's namespace; elsewhere they are objects the agent applies (:data:`APPLY`)."""


def grant_for(verb: str, group: str, resource: str, namespace: str, agent_namespace: str) -> Grant | None:
    grant = GRANTS.get((group, resource.split("/")[0], verb))
    if grant is INVENTORY and namespace != agent_namespace:
        grant = None
    if grant is None and verb in APPLY_VERBS:
        grant = APPLY
    return grant


_FORBIDDEN: Final = re.compile(
    r'User "(?P<user>[^"]*)" cannot (?P<verb>[\w-]+) resource "(?P<resource>[^"]+)"'
    r' in API group "(?P<group>[^"]*)"(?: in the namespace "(?P<namespace>[^"]*)")?'
)


@dataclass(frozen=True, slots=True)
class Refusal:
    """One refused request: what was asked, where, by whom (when the server said)."""

    verb: str
    group: str
    resource: str
    namespace: str = ""
    user: str = ""


def refusal_of(message: str) -> Refusal | None:
    """The refusal an RBAC 403's message names; None when the message is not worded as RBAC's."""
    found = _FORBIDDEN.search(message)
    if found is None:
        return None
    return Refusal(
        found["verb"], found["group"], found["resource"], found["namespace"] or "", found["user"] or ""
    )


def explain(message: str, agent_namespace: str, attempt: Refusal | None = None) -> str:
    """A 403's message for a human: verb, resource, namespace and the RBAC that grants it.

    Only a refusal worded as RBAC's (``User "..." cannot ...``) is called a missing permission; another 403
    (a namespace being terminated, an admission webhook) names what was attempted and quotes the server."""
    refusal = refusal_of(message)
    if refusal is None:
        if attempt is None:
            return f"refused (403): {message}"
        return f"nova-agent was refused to {_request(attempt)}: {message}"
    grant = grant_for(refusal.verb, refusal.group, refusal.resource, refusal.namespace, agent_namespace)
    how = grant.describe(agent_namespace) if grant is not None else "not granted by deploy/agent"
    who = f" (as {refusal.user})" if refusal.user else ""
    return f"nova-agent may not {_request(refusal)}{who}: {how}"


def _request(refusal: Refusal) -> str:
    what = f"{refusal.resource}.{refusal.group}" if refusal.group else refusal.resource
    where = f"in namespace {refusal.namespace}" if refusal.namespace else "cluster-wide"
    return f"{refusal.verb} {what} {where}"


class PermissionDenied(KubeApiError):
    """A 403 whose message names the verb, resource and the RBAC that grants it."""

    def __init__(self, explanation: str, reason: str = "Forbidden") -> None:
        super().__init__(403, reason, explanation)

    def __str__(self) -> str:
        return self.message


@contextmanager
def explained(verb: str, resource: Resource, namespace: str, agent_namespace: str) -> Iterator[None]:
    """Turns a 403 from what is inside into :class:`PermissionDenied`, explained."""
    try:
        yield
    except PermissionDenied:
        raise
    except KubeApiError as error:
        if error.status != 403:
            raise
        attempt = Refusal(verb, resource.group, resource.plural, namespace if resource.namespaced else "")
        raise PermissionDenied(explain(error.message, agent_namespace, attempt), error.reason) from error
