"""Carrying out a prune plan: delete what the agent created, release what it adopted, keep what it must.

:mod:`nova_agent.pruning` decides which inventory entries git no longer wants; this module decides, object by
object and against the live cluster, what happens to each (:mod:`nova_agent.ownership` explains the rules):

- gone, no longer carrying our target-cluster label, or carrying another repository's label: forgotten
  (someone else's now);
- adopted, of unknown ownership and a Namespace, one of the cluster's own Namespaces, or not the object the
  agent created (another uid): *released*, forgotten and left as it is;
- a Namespace the agent created that still holds objects it may not delete: *kept*, with the reason, and
  tried again next pass;
- otherwise deleted, on condition that the live object still has the uid just checked.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from nova_agent import ownership, repositories
from nova_agent.inventories import Inventory
from nova_agent.kubeports import KubePort
from nova_agent.ownership import Ownership
from nova_agent.resources import Body, ObjectKey, ObjectRef, labels_of
from nova_gitops.api import labels as nova_labels
from nova_gitops.clients.kuberest import KubeApiError


@dataclass(slots=True)
class DeleteOutcome:
    deleted: list[ObjectRef] = field(default_factory=list)
    released: list[ObjectRef] = field(default_factory=list)
    forget: list[ObjectKey] = field(default_factory=list)
    failed: dict[ObjectRef, str] = field(default_factory=dict)
    """Deletions that failed, and Namespaces kept because of what they hold (with the reason)."""


def releases(ref: ObjectRef, owner: Ownership, agent_namespace: str) -> bool:
    """Whether an inventory entry is released rather than deleted, whatever the live object looks like."""
    if ownership.protected_namespace(ref, agent_namespace):
        return True
    return owner is Ownership.ADOPTED or (owner is Ownership.UNKNOWN and ownership.is_namespace(ref))


def carry_out(
    kube: KubePort,
    plan: Sequence[ObjectRef],
    inventory: Inventory,
    *,
    cluster: str,
    agent_namespace: str,
    dry_run: bool,
    applied_uids: Collection[str] = (),
    repository: repositories.Repository | None = None,
) -> DeleteOutcome:
    """Delete, release or keep each planned object (in plan order: a Namespace after its contents).

    An object whose kind is not discovered stays in the inventory: discovery may lag behind (or a CRD may
    come back), and an entry once forgotten is never pruned. ``applied_uids`` are the objects this pass
    applied: one of them under an old key (an apiVersion whose group changed, served by both) is the object
    git still wants, so its old entry is forgotten, never deleted. An object carrying another ``repository``'s
    label is another fleet's (:mod:`nova_agent.repositories`): forgotten, never deleted."""
    outcome = DeleteOutcome()
    deleted: dict[ObjectKey, str] = {}
    for ref in plan:
        entry = inventory.entries[ref.key]
        resource = kube.resource_for(ref.api_version, ref.kind)
        if resource is None:
            continue
        try:
            live = kube.get(resource, ref.namespace, ref.name)
            if (
                live is None
                or labels_of(live).get(nova_labels.TARGET_CLUSTER) != cluster
                or (repository is not None and repositories.is_foreign(live, repository))
            ):
                outcome.forget.append(ref.key)  # gone, or someone else's now: never delete what is not ours
                continue
            uid = ownership.uid_of(live)
            if uid in applied_uids:
                outcome.forget.append(ref.key)
                continue
            if releases(ref, entry.owner, agent_namespace) or (entry.uid and uid != entry.uid):
                outcome.released.append(ref)
                outcome.forget.append(ref.key)
                continue
            reason = _kept(kube, ref, live, deleted)
            if reason:
                outcome.failed[ref] = reason
                continue
            if not dry_run:
                kube.delete(resource, ref.namespace, ref.name, uid=uid)
        except KubeApiError as error:
            if error.status == 409 and "Precondition failed" in error.message:
                outcome.released.append(ref)  # replaced between our read and our delete: not ours
                outcome.forget.append(ref.key)
                continue
            outcome.failed[ref] = f"delete failed: {error.status} {error.reason}: {error.message}"
            continue
        deleted[ref.key] = uid
        outcome.deleted.append(ref)
        outcome.forget.append(ref.key)
    return outcome


def _kept(kube: KubePort, ref: ObjectRef, live: Body, deleted: Mapping[ObjectKey, str]) -> str:
    """Why ``ref`` may not be deleted now, or "": a Namespace deletes everything in it, and a CRD every object
    of its kind, so each is deleted only when all it would take along is what this pass deleted. Discovery
    is read afresh (a CRD installed since it was cached adds a kind the namespace may hold), and anything
    that cannot be listed — a group whose discovery failed, the CRD's own kind — refuses the deletion."""
    try:
        if ownership.is_namespace(ref):
            kube.forget_discovery()
            resources, namespace, required = list(kube.namespaced_resources()), ref.name, False
        elif ref.kind == "CustomResourceDefinition" and ref.group == "apiextensions.k8s.io":
            served = ownership.crd_resource(live)
            if served is None:
                return f"{ref.kind} {ref.name} was not deleted: it serves no version nova-agent could list"
            resources, namespace, required = [served], None, True
        else:
            return ""
        items: list[Body] = []
        for resource in resources:
            try:
                items += kube.list(resource, namespace)
            except KubeApiError as error:
                if error.status == 404 and not required:
                    continue  # the kind went away since discovery
                raise KubeApiError(error.status, error.reason, f"listing {resource.plural}") from error
    except KubeApiError as error:
        return (
            f"{ref.kind} {ref.name} was not deleted: nova-agent cannot check what deleting it would take "
            f"along ({error.message}: {error.status} {error.reason})"
        )
    blockers = ownership.deletion_blockers(items, deleted)
    return ownership.describe_blockers(ref, blockers) if blockers else ""
