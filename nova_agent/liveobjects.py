"""The cluster's objects around a sync pass: those of the render (by their label) and, for each object about
to be applied, what it is before the apply."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from nova_agent.desired import DesiredObject
from nova_agent.kubeports import KubePort, Resource
from nova_agent.resources import Body, BodyError, ObjectKey, ObjectRef, ref_of
from nova_gitops.clients.kuberest import KubeApiError


def list_live(
    kube: KubePort,
    resources: Sequence[Resource],
    label_selector: str,
    namespaces: Mapping[Resource, Collection[str]] | None = None,
) -> tuple[dict[ObjectKey, Body], dict[ObjectRef, str]]:
    """Live objects carrying ``label_selector``, one cluster-wide list per resource; and a listing error per
    kind that could not be listed.

    A kind the agent may not list cluster-wide (403: RBAC narrowed to RoleBindings per namespace, see
    docs/agent.md) is listed in each of its ``namespaces`` instead; when that is refused too, it is that
    kind's error and the other kinds are still listed."""
    live: dict[ObjectKey, Body] = {}
    errors: dict[ObjectRef, str] = {}
    for resource in sorted(set(resources), key=lambda r: (r.group, r.plural)):
        try:
            items = list(kube.list(resource, None, label_selector))
        except KubeApiError as error:
            if error.status == 404:
                continue
            if error.status != 403:
                raise
            where = (namespaces or {}).get(resource)
            items, refusal = _list_per_namespace(kube, resource, label_selector, where)
            if refusal:
                errors[ObjectRef(resource.api_version, resource.kind, "", "*")] = (
                    f"cannot list {resource.plural}: {error.status} {error.reason}: {error.message}{refusal}"
                )
                continue
        for item in items:
            try:
                live[ref_of(item).key] = item
            except BodyError:
                continue  # a listing item that cannot name itself is nothing the agent applied
    return live, errors


def _list_per_namespace(
    kube: KubePort, resource: Resource, label_selector: str, namespaces: Collection[str] | None
) -> tuple[list[Body], str]:
    """The items of ``resource`` in each namespace, or why that was not possible."""
    if not resource.namespaced or not namespaces:
        return [], ""
    items: list[Body] = []
    for namespace in sorted(namespaces):
        try:
            items += kube.list(resource, namespace, label_selector)
        except KubeApiError as error:
            if error.status == 404:
                continue
            if error.status != 403:
                raise
            return [], f"; nor in namespace {namespace}: {error.status} {error.reason}"
    return items, ""


LIST_INSTEAD_OF_GETS = 16
"""From this many objects of one kind and namespace to look up, one list costs less than a read each."""


def live_before(
    kube: KubePort, items: Sequence[DesiredObject], live: Mapping[ObjectKey, Body]
) -> dict[ObjectRef, Body | None]:
    """Each object as it is before this pass applies it: from the labelled listing when it carries our
    label, else read (it may exist without our label: a user's own object, about to be adopted) — one list
    per kind and namespace where many are new (a first sync), a read each otherwise. Not readable (narrowed
    RBAC): None, and the apply's answer decides (``managedFields``)."""
    before: dict[ObjectRef, Body | None] = {}
    lookups: dict[tuple[Resource, str], list[DesiredObject]] = {}
    for item in items:
        resource = kube.resource_for(item.ref.api_version, item.ref.kind)
        if item.ref.key in live or resource is None:
            before[item.ref] = live.get(item.ref.key)
        else:
            lookups.setdefault((resource, item.ref.namespace), []).append(item)
    for (resource, namespace), members in lookups.items():
        listed: dict[str, Body] | None = None
        if len(members) >= LIST_INSTEAD_OF_GETS:
            try:
                found = kube.list(resource, namespace or None)
                listed = {str(o["metadata"]["name"]): o for o in found if isinstance(o.get("metadata"), dict)}
            except (KubeApiError, KeyError):
                listed = None
        for item in members:
            if listed is not None:
                before[item.ref] = listed.get(item.ref.name)
                continue
            try:
                before[item.ref] = kube.get(resource, namespace, item.ref.name)
            except KubeApiError:
                before[item.ref] = None
    return before
