"""The object store: objects by resource and (namespace, name), one global resourceVersion counter, and a
bounded history of change events that watches replay from.

As in etcd behind kube-apiserver, every write takes the next resourceVersion, and a watch can resume from any
version still in the history; older versions are "too old" (410 Expired). Stored objects are never mutated
in place: a write replaces the whole dict, so snapshots handed to watchers stay valid without copying.
`listeners` is the seam for a later simulated-cluster mode (controllers reacting to events, kwok-like).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

StoreKey = tuple[str, str]
ObjectKey = tuple[str, str]


@dataclass(frozen=True, slots=True)
class ChangeEvent:
    """One committed change, as a watch replays it."""

    resource_version: int
    event_type: str
    store_key: StoreKey
    obj: dict[str, Any]
    previous: dict[str, Any] | None

    @property
    def namespace(self) -> str:
        return str(self.obj.get("metadata", {}).get("namespace", ""))


class TooOld(Exception):
    """The requested resourceVersion has left the history."""


class ObjectStore:
    """Thread-safe: every method takes `lock` (an RLock, so callers may hold it across several calls)."""

    def __init__(self, history_limit: int = 1000) -> None:
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.listeners: list[Callable[[ChangeEvent], None]] = []
        self._objects: dict[StoreKey, dict[ObjectKey, dict[str, Any]]] = {}
        self._history: deque[ChangeEvent] = deque(maxlen=history_limit)
        self._last_rv = 0
        self._oldest_replayable = 0

    @property
    def current_rv(self) -> int:
        with self.lock:
            return self._last_rv

    def get(self, store_key: StoreKey, namespace: str, name: str) -> dict[str, Any] | None:
        with self.lock:
            return self._objects.get(store_key, {}).get((namespace, name))

    def list_objects(self, store_key: StoreKey, namespace: str | None = None) -> list[dict[str, Any]]:
        """Objects in etcd key order (namespace, then name); all namespaces when namespace is None."""
        with self.lock:
            objects = self._objects.get(store_key, {})
            return [objects[key] for key in sorted(objects) if namespace is None or key[0] == namespace]

    def resource_keys(self) -> list[StoreKey]:
        with self.lock:
            return list(self._objects)

    def namespaces_in_use(self, namespace: str) -> list[StoreKey]:
        with self.lock:
            return [
                key for key, objects in self._objects.items() if any(ns == namespace for ns, _ in objects)
            ]

    def _record(
        self, event_type: str, store_key: StoreKey, obj: dict[str, Any], previous: dict[str, Any] | None
    ) -> None:
        if len(self._history) == self._history.maxlen:
            self._oldest_replayable = self._history[0].resource_version
        event = ChangeEvent(self._last_rv, event_type, store_key, obj, previous)
        self._history.append(event)
        self.changed.notify_all()
        for listener in list(self.listeners):
            listener(event)

    def put(self, store_key: StoreKey, obj: dict[str, Any]) -> dict[str, Any]:
        """Store obj under the next resourceVersion (written into obj) and record ADDED or MODIFIED."""
        with self.lock:
            self._last_rv += 1
            obj["metadata"]["resourceVersion"] = str(self._last_rv)
            key = (str(obj["metadata"].get("namespace", "")), str(obj["metadata"]["name"]))
            previous = self._objects.setdefault(store_key, {}).get(key)
            self._objects[store_key][key] = obj
            self._record("ADDED" if previous is None else "MODIFIED", store_key, obj, previous)
            return obj

    def remove(self, store_key: StoreKey, obj: dict[str, Any]) -> dict[str, Any]:
        """Remove obj; the DELETED event carries the object at a new resourceVersion, as upstream."""
        with self.lock:
            key = (str(obj["metadata"].get("namespace", "")), str(obj["metadata"]["name"]))
            previous = self._objects.get(store_key, {}).pop(key)
            self._last_rv += 1
            final = {**previous, "metadata": {**previous["metadata"], "resourceVersion": str(self._last_rv)}}
            self._record("DELETED", store_key, final, previous)
            return final

    def drop_resource(self, store_key: StoreKey) -> None:
        """Delete every object of a resource (its CRD went away)."""
        with self.lock:
            for obj in list(self._objects.get(store_key, {}).values()):
                self.remove(store_key, obj)
            self._objects.pop(store_key, None)

    def events_after(self, store_key: StoreKey, resource_version: int) -> list[ChangeEvent]:
        """Events of one resource after resource_version; TooOld once the history no longer reaches back."""
        with self.lock:
            if resource_version < self._oldest_replayable:
                raise TooOld(f"too old resource version: {resource_version} ({self._oldest_replayable + 1})")
            return [
                event
                for event in self._history
                if event.resource_version > resource_version and event.store_key == store_key
            ]
