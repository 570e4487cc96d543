"""Prune planning and the mass-prune guard: pure decisions on what may be deleted.

Only objects in the inventory are candidates (the syncing step also checks that the live object still carries
our target-cluster label). A render that would delete more than ``max_percent`` of the inventory, or all of
it, is far more often a broken render (an empty directory, a wrong cluster name, a truncated push) than an
intent, so it is refused unless the rendered commit says ``Nova-Allow-Mass-Prune: true`` in its trailers.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Final

from nova_agent.inventories import Inventory
from nova_agent.ordering import delete_order
from nova_agent.resources import ObjectKey, ObjectRef

MASS_PRUNE_TRAILER: Final = "Nova-Allow-Mass-Prune"


@dataclass(frozen=True, slots=True)
class PrunePlan:
    """Objects to delete, in delete order; ``refusal`` explains why none may be deleted, when so."""

    deletions: tuple[ObjectRef, ...]
    inventory_size: int
    refusal: str | None = None

    @property
    def refused(self) -> bool:
        return self.refusal is not None


def is_mass_prune(deletions: int, inventory_size: int, max_percent: int) -> bool:
    """More than ``max_percent`` of the inventory, or all of a non-empty inventory (integer arithmetic)."""
    if deletions == 0 or inventory_size == 0:
        return False
    return deletions >= inventory_size or deletions * 100 > max_percent * inventory_size


def replacement_budget(inventory_size: int, deletions: int, max_percent: int) -> int:
    """How many objects a pass may replace (delete and re-create) besides its ``deletions``: as many as keep
    the two together within ``max_percent`` of the inventory, and at least one when the percentage allows
    any deletion (one object is never a mass, and a Job re-split by the planner must be able to reach a small
    cluster); 0 when ``max_percent`` is 0."""
    if max_percent <= 0:
        return 0
    return max(0, max(1, inventory_size * max_percent // 100) - deletions)


def plan_prune(
    inventory: Inventory,
    desired_keys: Collection[ObjectKey],
    *,
    max_percent: int,
    allow_mass_prune: bool,
    revision: str,
) -> PrunePlan:
    deletions = delete_order(entry.ref for key, entry in inventory.entries.items() if key not in desired_keys)
    size = len(inventory)
    if not allow_mass_prune and is_mass_prune(len(deletions), size, max_percent):
        share = "all" if len(deletions) >= size else f"{len(deletions) * 100 // size}%"
        refusal = (
            f"refused to sync revision {revision[:12]}: it would delete {len(deletions)} of the {size} "
            f"objects this agent applied ({share}, more than --max-prune-percent {max_percent}); if that is "
            f"intended, render a commit with the trailer '{MASS_PRUNE_TRAILER}: true'"
        )
        return PrunePlan((), size, refusal)
    return PrunePlan(tuple(deletions), size)


def allows_mass_prune(trailers: dict[str, list[str]]) -> bool:
    """Whether a commit's trailers carry ``Nova-Allow-Mass-Prune: true`` (key and value case-insensitive)."""
    for key, values in trailers.items():
        if key.lower() == MASS_PRUNE_TRAILER.lower() and any(v.strip().lower() == "true" for v in values):
            return True
    return False
