"""Who an object belongs to: pure decisions on creating, adopting, releasing and deleting.

The agent's promise is that it deletes only what it created. An object it applies either did not exist (the
agent *created* it, and records its uid) or existed already (the agent *adopted* it: a user's Namespace that
namespace-follow renders, a ConfigMap someone created by hand before it was put in git). Adopting is an
explicit, reported event, and it never takes fields over by force: the first apply to an existing object is
sent without ``force``, so a field another manager owns with a different value is a reported conflict, not a
silent take-over, unless the manifest says ``gitops.nova.elotl.co/adopt: force``. When git no longer wants
an object, a created one is deleted (on condition that the live object still has the recorded uid, so an
object someone re-created by hand under the same name is never deleted), an adopted one is *released*:
forgotten, left exactly as it is.

Namespaces get two more guards, because deleting one deletes everything in it: the cluster's own
(:data:`PROTECTED_NAMESPACES`) and the agent's own namespace are never applied or deleted, and a Namespace the
agent created is deleted only when it holds nothing the agent does not own (:func:`deletion_blockers`). The
same holds for a CustomResourceDefinition, whose deletion deletes every object of its kind.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import Any, Final

from nova_agent.kubeports import FIELD_MANAGER, Resource
from nova_agent.resources import Body, ObjectKey, ObjectRef, annotations_of, labels_of, ref_of
from nova_gitops.api import labels as nova_labels

PROTECTED_NAMESPACES: Final = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
"""Namespaces every cluster has: never applied as Namespace objects, never deleted."""

ADOPT_ANNOTATION: Final = "gitops.nova.elotl.co/adopt"
ADOPT_FORCE: Final = "force"
"""``gitops.nova.elotl.co/adopt: force``: adopt an existing object even over fields other managers own."""

NAMESPACE_DEFAULTS: Final = frozenset(
    {("", "ServiceAccount", "default"), ("", "ConfigMap", "kube-root-ca.crt")}
)
"""Objects Kubernetes creates in every namespace: they never keep a Namespace from being deleted."""

EVENT_KINDS: Final = frozenset({("", "Event"), ("events.k8s.io", "Event")})

MAX_NAMED_BLOCKERS: Final = 5


class Ownership(enum.Enum):
    CREATED = "created"
    ADOPTED = "adopted"
    UNKNOWN = "unknown"
    """Recorded by an agent that did not yet record ownership: never a Namespace to delete."""

    @classmethod
    def parse(cls, value: object) -> Ownership:
        for member in cls:
            if member.value == value:
                return member
        return cls.UNKNOWN


def is_namespace(ref: ObjectRef) -> bool:
    return ref.kind == "Namespace" and ref.group == ""


def protected_namespace(ref: ObjectRef, agent_namespace: str) -> bool:
    """Whether ``ref`` is a Namespace the agent must never apply nor delete."""
    return is_namespace(ref) and (ref.name in PROTECTED_NAMESPACES or ref.name == agent_namespace)


def uid_of(body: Mapping[str, Any] | None) -> str:
    metadata = (body or {}).get("metadata")
    return str(metadata.get("uid") or "") if isinstance(metadata, Mapping) else ""


def other_writers(body: Mapping[str, Any]) -> set[str]:
    """Field managers other than ours that wrote the object itself (``managedFields`` entries not of the
    ``status`` subresource: controllers reporting status do not make an object theirs)."""
    metadata = body.get("metadata")
    entries = metadata.get("managedFields") if isinstance(metadata, Mapping) else None
    if not isinstance(entries, list):
        return set()
    return {
        str(entry.get("manager", ""))
        for entry in entries
        if isinstance(entry, Mapping) and entry.get("subresource") != "status"
    } - {FIELD_MANAGER}


def is_same_object(owner: Ownership, uid: str, live: Mapping[str, Any], cluster: str) -> bool:
    """Whether ``live`` is the object an inventory entry (``owner``, ``uid``) describes.

    With a recorded uid, only that uid; without one (an entry written before its first apply completed, or by
    an older agent), an entry of unknown ownership is taken at its word, and a pending creation only when the
    live object carries our target-cluster label and nobody else wrote to it (the interrupted apply did reach
    the server, and it is still only ours)."""
    if uid:
        return uid_of(live) == uid
    if owner is Ownership.UNKNOWN:
        return True
    return labels_of(live).get(nova_labels.TARGET_CLUSTER) == cluster and not other_writers(live)


def adopts(
    entry_owner: Ownership | None, entry_uid: str, live: Mapping[str, Any] | None, cluster: str
) -> bool:
    """Whether applying now would take over an existing object the agent does not hold yet."""
    if live is None:
        return False
    return entry_owner is None or not is_same_object(entry_owner, entry_uid, live, cluster)


def ownership_after_apply(
    entry_owner: Ownership | None, adopting: bool, before: Mapping[str, Any] | None, after: Mapping[str, Any]
) -> Ownership:
    """Who owns an object once applied. Created when it did not exist and no other manager had written to
    it by the time our apply landed (a racing creator shows in ``managedFields``)."""
    if before is None:
        return Ownership.ADOPTED if other_writers(after) else Ownership.CREATED
    if adopting or entry_owner is None:
        return Ownership.ADOPTED
    return entry_owner


def applies_unforced(
    entry_owner: Ownership | None,
    entry_uid: str,
    before: Mapping[str, Any] | None,
    adopting: bool,
    body: Body,
) -> bool:
    """Whether an apply must not take fields over from other managers: a creation (nothing to take; a
    conflict means someone raced us to it), an adoption, every later apply to an adopted object, and an
    entry never confirmed by a successful apply (no uid yet) — unless the manifest says ``adopt: force``."""
    if before is None:
        return True
    unconfirmed = entry_owner is not None and entry_owner is not Ownership.UNKNOWN and not entry_uid
    if adopting or entry_owner is Ownership.ADOPTED or unconfirmed:
        return not forces_adoption(body)
    return False


def forces_adoption(body: Mapping[str, Any]) -> bool:
    return str(annotations_of(body).get(ADOPT_ANNOTATION, "")).strip().lower() == ADOPT_FORCE


def deletion_blockers(items: Iterable[Body], deleted: Mapping[ObjectKey, str]) -> list[ObjectRef]:
    """Of the objects a deletion would take along (a namespace's contents, a CRD's objects), those that keep
    it from happening: everything but the objects this pass deleted (``deleted``: key → uid, so a namesake
    someone re-created meanwhile is not taken for ours), what Kubernetes makes in every namespace, events,
    objects already being deleted, a deleted Service's Endpoints, and dependents whose every owner
    (``ownerReferences``) is one of those — a Deployment's ReplicaSets and their Pods, a Service's
    EndpointSlices. An owner that is neither listed nor deleted by this pass (cluster-scoped, another kind,
    not yet garbage collected) is not known to be ours: its dependents block."""
    candidates: list[tuple[ObjectRef, Body]] = []
    for item in items:
        try:
            candidates.append((ref_of(item), item))
        except ValueError:  # a listing item that cannot name itself cannot be shown to be ours: it blocks
            unnamed = ObjectRef(str(item.get("apiVersion", "")), str(item.get("kind", "")), "", "(unnamed)")
            candidates.append((unnamed, {}))
    by_uid = {uid_of(body): (ref, body) for ref, body in candidates if uid_of(body)}
    deleted_uids = set(deleted.values())
    services = {
        (ref.namespace, ref.name) for ref, _ in candidates if ref.kind == "Service" and ref.group == ""
    }
    services.update((key[2], key[3]) for key in deleted if key[:2] == ("", "Service"))
    memo: dict[str, bool] = {}

    def owner_blocks(owner: str, visiting: frozenset[str]) -> bool:
        if owner in deleted_uids:
            return False
        return owner in visiting or owner not in by_uid or blocks(*by_uid[owner], visiting)

    def blocks(ref: ObjectRef, body: Body, visiting: frozenset[str]) -> bool:
        uid = uid_of(body)
        if uid in memo:
            return memo[uid]
        metadata = body.get("metadata") or {}
        owners = [
            str(owner["uid"])
            for owner in metadata.get("ownerReferences") or []
            if isinstance(owner, Mapping) and owner.get("uid")
        ]
        if (
            metadata.get("deletionTimestamp")
            or (uid and deleted.get(ref.key) == uid)
            or (ref.group, ref.kind, ref.name) in NAMESPACE_DEFAULTS
            or (ref.group, ref.kind) in EVENT_KINDS
            or (ref.group == "" and ref.kind == "Endpoints" and (ref.namespace, ref.name) in services)
        ):
            result = False  # ours, Kubernetes' own, going anyway, or a Service's endpoints (judged with it)
        else:
            result = not owners or any(owner_blocks(owner, visiting | {uid}) for owner in owners)
        if uid:
            memo[uid] = result
        return result

    return sorted(ref for ref, body in candidates if blocks(ref, body, frozenset()))


def describe_blockers(kept: ObjectRef, blockers: list[ObjectRef]) -> str:
    named = ", ".join(str(ref) for ref in blockers[:MAX_NAMED_BLOCKERS])
    more = f" and {len(blockers) - MAX_NAMED_BLOCKERS} more" if len(blockers) > MAX_NAMED_BLOCKERS else ""
    what = "everything in it" if is_namespace(kept) else "every object of its kind"
    return (
        f"{kept.kind} {kept.name} was not deleted: deleting it deletes {what}, and that includes objects "
        f"nova-agent did not create or still applies ({named}{more}); once they are moved or deleted, the "
        "next pass deletes it"
    )


def crd_resource(crd: Mapping[str, Any]) -> Resource | None:
    """The resource a live CustomResourceDefinition serves (its storage version when served, else its first
    served one): None when it serves none, and then nothing can tell what deleting it would take along."""
    spec = crd.get("spec")
    if not isinstance(spec, Mapping):
        return None
    names, versions = (
        spec.get("names") or {},
        [v for v in spec.get("versions") or [] if isinstance(v, Mapping)],
    )
    served = [v for v in versions if v.get("served") and v.get("storage")] + [
        v for v in versions if v.get("served")
    ]
    if not served or not isinstance(names, Mapping) or not names.get("plural") or not spec.get("group"):
        return None
    return Resource(
        str(spec["group"]),
        str(served[0].get("name")),
        str(names["plural"]),
        str(names.get("kind", "")),
        spec.get("scope") == "Namespaced",
    )
