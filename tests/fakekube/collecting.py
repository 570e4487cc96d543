"""Cascading deletion by `propagationPolicy`, as kube-apiserver and the garbage collector do it.

- Orphan: the dependents stay, without their ownerReference to the deleted owner.
- Background (the default): the owner goes at once; its dependents go a moment later (`delay`), each
  deleted in the background in turn; a dependent another live owner still owns only loses the reference.
- Foreground: the owner stays, with `deletionTimestamp` and the `foregroundDeletion` finalizer, until its
  dependents are gone, then goes (unless other finalizers hold it).
Dependents are found by the owner's uid in `metadata.ownerReferences`, in any resource. Simplifications: the
collector acts only on deletions it saw (references to owners that never existed are left alone), and
dependents of dependents are collected in the same pass, not one level per moment.
"""

from __future__ import annotations

import copy
from typing import Any

from tests.fakekube import preparing
from tests.fakekube.delaying import Delayed
from tests.fakekube.statuses import ApiError
from tests.fakekube.store import ObjectStore, StoreKey

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"
POLICIES = ("Orphan", "Background", "Foreground")


def _invalid_options(cause: str, reason: str) -> ApiError:
    """DeleteOptions validation's answer, before the object is looked up."""
    details = {
        "name": "",
        "group": "meta.k8s.io",
        "kind": "DeleteOptions",
        "causes": [{"reason": reason, "message": cause, "field": "propagationPolicy"}],
    }
    message = f'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: {cause}'
    return ApiError(422, "Invalid", message, details)


def policy(options: Any, query: dict[str, str]) -> str:
    """The propagation policy a DELETE asks for (body or query), Background when it asks for none."""
    options = options if isinstance(options, dict) else {}
    chosen = options.get("propagationPolicy") or query.get("propagationPolicy")
    orphan = options.get("orphanDependents", query.get("orphanDependents"))
    if chosen is not None and orphan is not None:
        raise _invalid_options(
            f'Invalid value: "{chosen}": orphanDependents and deletionPropagation cannot be both set',
            "FieldValueInvalid",
        )
    if chosen is None and orphan is not None:
        chosen = "Orphan" if orphan in (True, "true") else "Background"
    if chosen is None:
        return "Background"
    if chosen not in POLICIES:
        raise _invalid_options(
            f'Unsupported value: "{chosen}": supported values: "Foreground", "Background", "Orphan", "nil"',
            "FieldValueNotSupported",
        )
    return str(chosen)


def _uid(obj: dict[str, Any]) -> str:
    return str(obj["metadata"].get("uid", ""))


class GarbageCollector:
    """Runs cascades `delay` seconds after the deletion (at once when `delay` is 0)."""

    def __init__(self, store: ObjectStore, delay: float) -> None:
        self.store = store
        self.delayed = Delayed(store.lock, delay)

    def stop(self) -> None:
        self.delayed.stop()

    def _dependents(self, uid: str) -> list[tuple[StoreKey, dict[str, Any]]]:
        return [
            (store_key, obj)
            for store_key in self.store.resource_keys()
            for obj in self.store.list_objects(store_key)
            if any(ref.get("uid") == uid for ref in obj["metadata"].get("ownerReferences") or [])
        ]

    def _live_uids(self) -> set[str]:
        return {
            _uid(obj)
            for store_key in self.store.resource_keys()
            for obj in self.store.list_objects(store_key)
            if "deletionTimestamp" not in obj["metadata"]
        }

    def orphan(self, owner: dict[str, Any]) -> None:
        """Orphan: drop the references to `owner` from its dependents, before the owner goes."""
        uid = _uid(owner)
        for store_key, obj in self._dependents(uid):
            changed = copy.deepcopy(obj)
            refs = [ref for ref in changed["metadata"]["ownerReferences"] if ref.get("uid") != uid]
            if refs:
                changed["metadata"]["ownerReferences"] = refs
            else:
                del changed["metadata"]["ownerReferences"]
            self.store.put(store_key, changed)

    def owner_gone(self, owner: dict[str, Any]) -> None:
        """Background: the owner is gone; collect its dependents a moment later."""
        self.delayed.later(self._collect, _uid(owner))

    def _collect(self, uid: str) -> None:
        live = self._live_uids()
        for store_key, obj in self._dependents(uid):
            current = self.store.get(
                store_key, str(obj["metadata"].get("namespace", "")), obj["metadata"]["name"]
            )
            if current is None:
                continue
            refs = current["metadata"].get("ownerReferences") or []
            if any(ref.get("uid") in live for ref in refs if ref.get("uid") != uid):
                changed = copy.deepcopy(current)
                changed["metadata"]["ownerReferences"] = [ref for ref in refs if ref.get("uid") != uid]
                self.store.put(store_key, changed)
            else:
                self._delete(store_key, current)

    def _delete(self, store_key: StoreKey, obj: dict[str, Any]) -> None:
        if obj["metadata"].get("finalizers"):
            if "deletionTimestamp" not in obj["metadata"]:
                marked = copy.deepcopy(obj)
                marked["metadata"].update(deletionTimestamp=preparing.now(), deletionGracePeriodSeconds=0)
                self.store.put(store_key, marked)
            return
        self.store.remove(store_key, obj)
        self._collect(_uid(obj))

    def foreground(self, store_key: StoreKey, owner: dict[str, Any]) -> dict[str, Any]:
        """Foreground: mark the owner (deletionTimestamp, foregroundDeletion finalizer); its dependents and
        then the owner go a moment later. Returns the marked owner, as DELETE answers it."""
        marked = copy.deepcopy(owner)
        finalizers = list(marked["metadata"].get("finalizers") or [])
        if FOREGROUND not in finalizers:
            finalizers.append(FOREGROUND)
        marked["metadata"]["finalizers"] = finalizers
        marked["metadata"].setdefault("deletionTimestamp", preparing.now())
        marked["metadata"].setdefault("deletionGracePeriodSeconds", 0)
        stored = self.store.put(store_key, marked)
        self.delayed.later(
            self._finish_foreground,
            store_key,
            str(owner["metadata"].get("namespace", "")),
            owner["metadata"]["name"],
        )
        return stored

    def _finish_foreground(self, store_key: StoreKey, namespace: str, name: str) -> None:
        owner = self.store.get(store_key, namespace, name)
        if owner is None or FOREGROUND not in (owner["metadata"].get("finalizers") or []):
            return
        self._collect(_uid(owner))
        if self._dependents(_uid(owner)):  # dependents held by their finalizers: the owner waits
            self.delayed.retry(self._finish_foreground, store_key, namespace, name)
            return
        finalizers = [f for f in owner["metadata"]["finalizers"] if f != FOREGROUND]
        if finalizers:
            released = copy.deepcopy(owner)
            released["metadata"]["finalizers"] = finalizers
            self.store.put(store_key, released)
        else:
            self.store.remove(store_key, owner)
