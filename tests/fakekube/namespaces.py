"""Namespace deletion as kube-apiserver and the namespace controller do it: not at once, but in two steps.

DELETE marks the namespace (`deletionTimestamp`, `status.phase: Terminating`) and answers with it; while it
terminates, creates in it are refused by the NamespaceLifecycle admission (403 Forbidden); the namespace
controller then deletes its content and, once nothing is left, removes the namespace. Clients that delete a
namespace and recreate it, or expect it gone at once, fail on a real cluster, so the fake makes them wait
too: finalization runs `delay` seconds after the delete (at once when `delay` is 0). Content with finalizers
is marked deleted and the namespace waits for it, as upstream (a stuck finalizer keeps it Terminating).
"""

from __future__ import annotations

import copy
from typing import Any

from tests.fakekube import preparing
from tests.fakekube.delaying import Delayed
from tests.fakekube.resources import ResourceType
from tests.fakekube.statuses import ApiError
from tests.fakekube.store import ObjectStore

NAMESPACES = ("", "namespaces")


def terminating(namespace: dict[str, Any] | None) -> bool:
    return namespace is not None and (
        "deletionTimestamp" in namespace["metadata"]
        or (namespace.get("status") or {}).get("phase") == "Terminating"
    )


def being_terminated(resource_type: ResourceType, name: str, namespace: str) -> ApiError:
    """NamespaceLifecycle's refusal of a create in a terminating namespace."""
    details: dict[str, Any] = {"name": name}
    if resource_type.group:
        details["group"] = resource_type.group
    details["kind"] = resource_type.plural
    details["causes"] = [
        {
            "reason": "NamespaceTerminating",
            "message": f"namespace {namespace} is being terminated",
            "field": "metadata.namespace",
        }
    ]
    message = (
        f'{resource_type.group_resource} "{name}" is forbidden: unable to create new content in namespace '
        f"{namespace} because it is being terminated"
    )
    return ApiError(403, "Forbidden", message, details)


class NamespaceLifecycle:
    """Marks deleted namespaces Terminating and finalizes them `delay` seconds later."""

    def __init__(self, store: ObjectStore, delay: float) -> None:
        self.store = store
        self.delayed = Delayed(store.lock, delay)

    def stop(self) -> None:
        self.delayed.stop()

    def delete(self, namespace: dict[str, Any]) -> dict[str, Any]:
        """The namespace as DELETE answers it: marked Terminating (unchanged if it already was)."""
        with self.store.lock:
            if terminating(namespace):
                return namespace
            marked = copy.deepcopy(namespace)
            marked["metadata"].update(deletionTimestamp=preparing.now(), deletionGracePeriodSeconds=0)
            marked["status"] = {**(marked.get("status") or {}), "phase": "Terminating"}
            stored = self.store.put(NAMESPACES, marked)
        self.delayed.later(self._finalize, stored["metadata"]["name"])
        return stored

    def _finalize(self, name: str) -> None:
        """The namespace controller's pass (under the store lock): delete the content; remove the namespace
        once it is empty."""
        namespace = self.store.get(NAMESPACES, "", name)
        if not terminating(namespace):
            return
        remaining = False
        for store_key in self.store.namespaces_in_use(name):
            for obj in self.store.list_objects(store_key, name):
                if not obj["metadata"].get("finalizers"):
                    self.store.remove(store_key, obj)
                    continue
                remaining = True
                if "deletionTimestamp" not in obj["metadata"]:
                    marked = copy.deepcopy(obj)
                    marked["metadata"].update(deletionTimestamp=preparing.now(), deletionGracePeriodSeconds=0)
                    self.store.put(store_key, marked)
        if not remaining:
            assert namespace is not None
            self.store.remove(NAMESPACES, namespace)
            return
        self.delayed.retry(self._finalize, name)
