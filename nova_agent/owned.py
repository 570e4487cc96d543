"""What is ours: the live objects of this agent's inventory, each with the revision it reflects.

The status report covers these objects only (health, reschedule requests), never everything that carries the
target-cluster label: two fleets may share a cluster under the same cluster name. An object is ours when its
key is in the inventory, the live object is the one the entry describes (:func:`ownership.is_same_object`:
the recorded uid), and it carries no other repository's label (:mod:`nova_agent.repositories`).

Each entry remembers the latest rendered commit its live object is known to reflect (``revision``: the commit
whose manifest was last applied to it, or any later one whose manifest is the same) and the generation the
apply answered (``generation``). :func:`mark_synced` moves ``revision`` forward on every pass for the objects
that are in sync; one that failed to apply keeps the older revision it still reflects.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace

from nova_agent import ownership, repositories
from nova_agent.desired import DesiredObject
from nova_agent.inventories import PENDING_DIGEST, Inventory
from nova_agent.resources import Body, BodyError, ObjectKey, ref_of


@dataclass(frozen=True, slots=True)
class OwnedObject:
    body: Body
    """The live object."""
    revision: str = ""
    """The rendered commit whose manifest it reflects ("" when not known: an older agent's entry, or
    delegated mode)."""
    generation: int = 0
    """``metadata.generation`` the agent's apply of that manifest produced (0 when not known)."""


def mark_synced(
    inventory: Inventory,
    desired: Sequence[DesiredObject],
    live_keys: Collection[ObjectKey],
    failed_keys: Collection[ObjectKey],
    revision: str,
) -> Inventory:
    """``inventory`` with ``revision`` recorded on every entry whose live object reflects that commit's
    manifest: same digest as the manifest, present in the cluster (or just applied), and not failed."""
    synced = []
    for item in desired:
        entry = inventory.entries.get(item.ref.key)
        if (
            entry is None
            or entry.revision == revision  # applied by this pass
            or entry.digest == PENDING_DIGEST
            or entry.digest != item.digest
            or item.ref.key in failed_keys
            or item.ref.key not in live_keys
        ):
            continue
        synced.append(replace(entry, revision=revision))
    return inventory.with_entries(synced) if synced else inventory


def owned_objects(
    live: Iterable[Body], inventory: Inventory, *, cluster: str, repository: repositories.Repository
) -> list[OwnedObject]:
    """The live objects that are this agent's (see the module docstring), with what their entries say."""
    owned: list[OwnedObject] = []
    for body in live:
        try:
            key = ref_of(body).key
        except BodyError:
            continue
        entry = inventory.entries.get(key)
        if entry is None or repositories.is_foreign(body, repository):
            continue
        if not ownership.is_same_object(entry.owner, entry.uid, body, cluster):
            continue
        owned.append(OwnedObject(body, entry.revision, entry.generation))
    return owned


def generation_of(response: object) -> int:
    """``metadata.generation`` of an apply's answer (0 when it has none: ConfigMaps, a dry run's oddities)."""
    metadata = response.get("metadata") if isinstance(response, dict) else None
    generation = metadata.get("generation") if isinstance(metadata, dict) else None
    return generation if isinstance(generation, int) and not isinstance(generation, bool) else 0
