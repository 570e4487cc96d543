"""Kubernetes RBAC evaluated in Python, for tests that check our deploy/ manifests grant what the code does.

Two pure pieces, each following the API server's own code so that a request allowed here is allowed by a
real kube-apiserver and one denied here is denied there:

- :func:`request_attributes` turns an HTTP request (method, path, query, content type) into the
  authorization attributes kube-apiserver derives from it (``k8s.io/apiserver/pkg/endpoints/request``'s
  ``RequestInfoFactory``): GET of an object is ``get``, of a collection ``list`` (``watch`` with
  ``?watch=true``), POST ``create``, PUT ``update``, PATCH ``patch``, DELETE ``delete`` (``deletecollection``
  without a name); ``namespaces/<ns>/<resource>`` is namespaced, and a request on a Namespace itself is in
  that namespace. A server-side apply also needs ``create``: when the object does not exist the server
  creates it and authorizes ``create`` for that name (``handlers/patch.go``). Discovery (``/api``, ``/apis``,
  ``/apis/<group>/<version>``, ``/version``) is a non-resource URL every authenticated user may read
  (``system:discovery``, ``system:public-info-viewer``): :func:`discovery_allowed` says which.
- :class:`Authorizer` is the RBAC authorizer over a set of rendered objects
  (``plugin/pkg/auth/authorizer/rbac``): ClusterRoleBindings grant their ClusterRole's rules in every
  namespace and on cluster-scoped resources; a RoleBinding grants its Role's (or ClusterRole's) rules in the
  binding's namespace only. Rules match with ``*`` wildcards in apiGroups, resources and verbs,
  ``resource/subresource`` and ``*/subresource``, and ``resourceNames`` (which never match a request without
  a name, such as a list or a create).

Aggregated ClusterRoles and the cluster's bootstrap roles are out of scope: our manifests use neither.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

WILDCARD = "*"
APPLY_PATCH = "application/apply-patch+yaml"
METHOD_VERBS = {
    "GET": "get",
    "HEAD": "get",
    "POST": "create",
    "PUT": "update",
    "PATCH": "patch",
    "DELETE": "delete",
}
NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})
DISCOVERY_URLS = (
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
    "/version",
    "/version/",
    "/healthz",
    "/livez",
    "/readyz",
)
"""Non-resource URLs granted to every authenticated user by the bootstrap roles system:discovery and
system:public-info-viewer."""


@dataclass(frozen=True, slots=True)
class Attributes:
    """What RBAC decides on for one resource request."""

    verb: str
    group: str
    resource: str
    subresource: str = ""
    namespace: str = ""
    name: str = ""

    def __str__(self) -> str:
        resource = f"{self.resource}.{self.group}" if self.group else self.resource
        if self.subresource:
            resource += f"/{self.subresource}"
        where = f" in namespace {self.namespace}" if self.namespace else " (cluster-wide)"
        return f"{self.verb} {resource}{f' {self.name}' if self.name else ''}{where}"


@dataclass(frozen=True, slots=True)
class User:
    name: str
    groups: frozenset[str]


def service_account(namespace: str, name: str) -> User:
    """The user a pod running as ServiceAccount ``namespace/name`` authenticates as."""
    return User(
        f"system:serviceaccount:{namespace}:{name}",
        frozenset({"system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"}),
    )


# ----- requests → attributes


def discovery_allowed(path: str) -> bool:
    """Whether a non-resource URL is one every authenticated user may GET."""
    return any(
        path == allowed or (allowed.endswith("*") and path.startswith(allowed[:-1]))
        for allowed in DISCOVERY_URLS
    )


def _true(value: str | None) -> bool:
    return (value or "").lower() in ("true", "1")


def request_attributes(
    method: str, path: str, query: Mapping[str, str], content_type: str = ""
) -> list[Attributes] | None:
    """The attributes RBAC checks for this request (two for a server-side apply: patch, and create should
    the object not exist), or None for a non-resource URL (discovery, /version)."""
    parts = [part for part in path.split("/") if part]
    if not parts or parts[0] not in ("api", "apis"):
        return None
    if parts[0] == "api":
        if len(parts) < 3:
            return None
        group, current = "", parts[2:]
    else:
        if len(parts) < 4:
            return None
        group, current = parts[1], parts[3:]
    verb = METHOD_VERBS.get(method.upper(), method.lower())
    if current[0] == "watch":  # the legacy /watch/ prefix
        if len(current) < 2:
            raise ValueError(f"no resource in {path}")  # kube-apiserver answers this with an error too
        verb, current = "watch", current[1:]
    namespace = ""
    if current[0] == "namespaces" and len(current) > 1:
        namespace = current[1]
        if len(current) > 2 and current[2] not in NAMESPACE_SUBRESOURCES:
            current = current[2:]
    resource = current[0]
    name = current[1] if len(current) > 1 else ""
    subresource = current[2] if len(current) > 2 else ""
    if not name and verb == "get":
        verb = "watch" if _true(query.get("watch")) else "list"
        selector = query.get("fieldSelector", "")
        if selector.startswith("metadata.name=") and "," not in selector:
            name = selector.removeprefix("metadata.name=")
    elif name and verb == "get" and _true(query.get("watch")):
        verb = "watch"
    elif not name and verb == "delete":
        verb = "deletecollection"
    found = Attributes(verb, group, resource, subresource, namespace, name)
    if verb == "patch" and content_type == APPLY_PATCH:
        return [found, Attributes("create", group, resource, subresource, namespace, name)]
    return [found]


# ----- rules


def _matches(values: Iterable[str], wanted: str) -> bool:
    return any(value in (WILDCARD, wanted) for value in values)


def rule_allows(rule: Mapping[str, Any], request: Attributes) -> bool:
    """Whether one PolicyRule of a (Cluster)Role allows ``request``."""
    if not _matches(rule.get("verbs") or (), request.verb):
        return False
    if not _matches(rule.get("apiGroups") or (), request.group):
        return False
    combined = f"{request.resource}/{request.subresource}" if request.subresource else request.resource
    resources = rule.get("resources") or ()
    if not any(
        resource in (WILDCARD, combined)
        or (bool(request.subresource) and resource == f"*/{request.subresource}")
        for resource in resources
    ):
        return False
    names = rule.get("resourceNames") or ()
    return not names or request.name in names


class Authorizer:
    """The RBAC authorizer over the Roles, ClusterRoles and bindings among ``objects`` (rendered
    manifests; other kinds are ignored)."""

    def __init__(self, objects: Iterable[Mapping[str, Any]]) -> None:
        self.roles: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
        self.cluster_bindings: list[Mapping[str, Any]] = []
        self.bindings: list[Mapping[str, Any]] = []
        for body in objects:
            kind, metadata = body.get("kind"), body.get("metadata") or {}
            namespace = str(metadata.get("namespace") or "") if kind == "Role" else ""
            if kind in ("Role", "ClusterRole"):
                self.roles[(str(kind), namespace, str(metadata["name"]))] = list(body.get("rules") or [])
            elif kind == "ClusterRoleBinding":
                self.cluster_bindings.append(body)
            elif kind == "RoleBinding":
                self.bindings.append(body)

    def _rules(self, binding: Mapping[str, Any], namespace: str) -> list[Mapping[str, Any]]:
        ref = binding["roleRef"]
        role_namespace = namespace if ref["kind"] == "Role" else ""
        return self.roles.get((ref["kind"], role_namespace, ref["name"]), [])

    def allows(self, user: User, request: Attributes) -> bool:
        for binding in self.cluster_bindings:
            if _binds(binding, user, "") and any(
                rule_allows(rule, request) for rule in self._rules(binding, "")
            ):
                return True
        if not request.namespace:
            return False
        for binding in self.bindings:
            namespace = str(binding["metadata"].get("namespace") or "")
            if (
                namespace == request.namespace
                and _binds(binding, user, namespace)
                and any(rule_allows(rule, request) for rule in self._rules(binding, namespace))
            ):
                return True
        return False


def _binds(binding: Mapping[str, Any], user: User, namespace: str) -> bool:
    """Whether one of the binding's subjects is ``user`` (a ServiceAccount subject without a namespace is
    in the RoleBinding's namespace)."""
    for subject in binding.get("subjects") or ():
        kind, name = subject.get("kind"), subject.get("name")
        if kind == "ServiceAccount":
            account = f"system:serviceaccount:{subject.get('namespace') or namespace}:{name}"
            if account == user.name:
                return True
        elif (kind == "User" and name == user.name) or (kind == "Group" and name in user.groups):
            return True
    return False


def runs_as(objects: Iterable[Mapping[str, Any]], deployment: str) -> User:
    """The user the pods of Deployment ``deployment`` among ``objects`` authenticate as."""
    for body in objects:
        if body.get("kind") == "Deployment" and body["metadata"]["name"] == deployment:
            pod = body["spec"]["template"]["spec"]
            return service_account(body["metadata"]["namespace"], pod.get("serviceAccountName") or "default")
    raise LookupError(f"no Deployment {deployment} among the objects")
