"""The inventory: which objects this agent applied, kept in a ConfigMap in the agent's namespace.

Pruning deletes only what is in the inventory (and still carries our target-cluster label), so an
object someone created by hand, or that another tool applies, is never deleted by the agent. Each entry also
holds the digest of the manifest last applied, which is how an unchanged object is recognised without
sending it: a no-op sync makes no write call at all.

Each entry also says whether the agent *created* the object (it did not exist when first applied; its
``uid`` is recorded) or *adopted* it (it existed already: a user's Namespace that namespace-follow renders, an
object created by hand before it was put in git). Only created objects are ever deleted, and only while the
live object still has the recorded uid; adopted ones are released (forgotten, left as they are). Entries
written before ownership was recorded read as ``unknown`` (see :mod:`nova_agent.ownership`).

Each entry also remembers the latest rendered commit its live object is known to reflect (``revision``:
applied from it, or unchanged since; see :mod:`nova_agent.owned`) and the ``metadata.generation`` the server
answered to its last apply (``generation``), so that health can be judged for the revision the object
reflects. Entries of older agents have neither and still decode.

The ConfigMap data is ``revision`` (the rendered commit last synced), ``repository`` (the id of the rendered
repository and directory the inventory belongs to, see :mod:`nova_agent.repositories`; absent in inventories
of older agents), ``entryRevisions: inherited`` (a line without ``revision`` reflects the inventory's: the
common case is written once, not 40 characters per line) and ``objects``, one JSON line per object, sorted,
so the ConfigMap diff of a change is readable with ``kubectl get -o yaml``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from nova_agent.ownership import Ownership
from nova_agent.resources import Body, ObjectKey, ObjectRef

ENTRY_REVISIONS: Final = "entryRevisions"
INHERITED: Final = "inherited"
"""``entryRevisions: inherited``: a line without ``revision`` reflects the inventory's ``revision``.
Inventories of older agents lack the key: their lines reflect no known revision."""

PENDING_DIGEST: Final = ""
"""Digest of an entry whose apply was started but not confirmed (the agent may have been killed mid-apply).
Such an entry is always applied again, and still counts as ours for pruning."""


@dataclass(frozen=True, slots=True)
class InventoryEntry:
    ref: ObjectRef
    digest: str
    owner: Ownership = Ownership.UNKNOWN
    uid: str = ""
    """The live object's uid when the agent created it: a deletion is conditional on it."""
    revision: str = ""
    """The rendered commit of the last successful apply ("" for entries of older agents)."""
    generation: int = 0
    """``metadata.generation`` the server answered to that apply (0: none, or an older agent's entry)."""


@dataclass(frozen=True, slots=True)
class Inventory:
    revision: str = ""
    entries: Mapping[ObjectKey, InventoryEntry] = field(default_factory=dict)
    repository: str = ""
    """The repository id (:func:`nova_agent.repositories.repository_id`) of the agent that wrote it."""

    def __len__(self) -> int:
        return len(self.entries)

    def digest_of(self, key: ObjectKey) -> str | None:
        entry = self.entries.get(key)
        return None if entry is None else entry.digest

    def owner_and_uid(self, ref: ObjectRef) -> tuple[Ownership | None, str]:
        """Who made the object, and the uid recorded of it; (None, "") when the agent never applied it."""
        entry = self.entries.get(ref.key)
        return (None, "") if entry is None else (entry.owner, entry.uid)

    def with_entries(self, entries: Iterable[InventoryEntry], revision: str | None = None) -> Inventory:
        merged = dict(self.entries)
        merged.update((entry.ref.key, entry) for entry in entries)
        return Inventory(self.revision if revision is None else revision, merged, self.repository)

    def without(self, keys: Iterable[ObjectKey], revision: str | None = None) -> Inventory:
        dropped = set(keys)
        kept = {key: entry for key, entry in self.entries.items() if key not in dropped}
        return Inventory(self.revision if revision is None else revision, kept, self.repository)

    def owned_by(self, repository: str) -> Inventory:
        return Inventory(self.revision, self.entries, repository)


def inventory_name(cluster: str) -> str:
    return f"nova-agent-inventory-{cluster}"


def encode_inventory(inventory: Inventory) -> dict[str, str]:
    """ConfigMap ``data`` for an inventory: byte-identical for equal inventories."""
    lines = [
        json.dumps(_entry_dict(entry, inventory.revision), separators=(",", ":"), sort_keys=True)
        for entry in _sorted(inventory)
    ]
    data = {
        "revision": inventory.revision,
        ENTRY_REVISIONS: INHERITED,
        "objects": "".join(line + "\n" for line in lines),
    }
    if inventory.repository:
        data["repository"] = inventory.repository
    return data


def _sorted(inventory: Inventory) -> list[InventoryEntry]:
    return [entry for _, entry in sorted(inventory.entries.items())]


def _entry_dict(entry: InventoryEntry, revision: str) -> dict[str, str | int]:
    item: dict[str, str | int] = {**entry.ref.as_dict(), "digest": entry.digest}
    if entry.owner is not Ownership.UNKNOWN:
        item["owner"] = entry.owner.value
    if entry.uid:
        item["uid"] = entry.uid
    if (
        entry.revision != revision
    ):  # most entries reflect the inventory's revision: written once, not per line
        item["revision"] = entry.revision
    if entry.generation:
        item["generation"] = entry.generation
    return item


def decode_inventory(data: Mapping[str, str] | None) -> tuple[Inventory, list[str]]:
    """The inventory a ConfigMap's ``data`` holds, and a problem per line that could not be read.

    A damaged line is dropped (and reported) rather than failing the agent: the object it named is then merely
    not pruned, which is the safe side.
    """
    if not data:
        return Inventory(), []
    problems: list[str] = []
    entries: dict[ObjectKey, InventoryEntry] = {}
    inherited = str(data.get("revision", "")) if data.get(ENTRY_REVISIONS) == INHERITED else ""
    for number, line in enumerate(str(data.get("objects", "")).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            fields = [item["apiVersion"], item["kind"], item.get("namespace", ""), item["name"]]
            if not all(isinstance(value, str) for value in fields) or not fields[0] or not fields[3]:
                raise TypeError("apiVersion, kind, namespace and name must be strings")
            entry = InventoryEntry(
                ObjectRef(*fields),
                str(item.get("digest", PENDING_DIGEST)),
                Ownership.parse(item.get("owner")),
                str(item.get("uid") or ""),
                str(item.get("revision", inherited) or ""),
                _generation(item.get("generation")),
            )
            entries[entry.ref.key] = entry
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            problems.append(f"inventory line {number} is unreadable and was skipped: {error}")
    return Inventory(str(data.get("revision", "")), entries, str(data.get("repository") or "")), problems


def _generation(value: object) -> int:
    """A recorded generation; anything but a positive integer (a hand-edited line) reads as unknown."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def inventory_configmap(cluster: str, namespace: str, inventory: Inventory) -> Body:
    """The ConfigMap manifest that stores ``inventory`` (applied with server-side apply like any object)."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": inventory_name(cluster),
            "namespace": namespace,
            "labels": {"app.kubernetes.io/managed-by": "nova-agent", "app.kubernetes.io/name": "nova-agent"},
        },
        "data": encode_inventory(inventory),
    }
