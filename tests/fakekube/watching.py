"""Watch streams: newline-delimited JSON events over chunked HTTP, replayed from the store's history.

As on the real server: no resourceVersion (or "0") starts with a synthetic ADDED per existing object; a
version still in the history resumes right after it; a version that fell out of the history gets an ERROR
event carrying a 410 Expired Status on a 200 stream (the kubernetes client's Watch turns that into
ApiException(410)). With selectors, an object entering the selection is ADDED and one leaving it is DELETED.
BOOKMARK events carry only a resourceVersion when the client allows them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any

from tests.fakekube import selecting, statuses
from tests.fakekube.preparing import Target, present
from tests.fakekube.store import ChangeEvent, ObjectStore, TooOld

Emit = Callable[[dict[str, Any]], None]


class WatchStream:
    def __init__(
        self,
        store: ObjectStore,
        target: Target,
        bookmark_interval: float,
        default_timeout: float,
        stopping: Callable[[], bool],
    ) -> None:
        query = target.query
        self.store = store
        self.target = target
        self.by_labels = selecting.label_selector(query.get("labelSelector"))
        self.by_fields = selecting.field_selector(
            query.get("fieldSelector"), target.resource_type.group, target.resource_type.plural
        )
        self.bookmarks = query.get("allowWatchBookmarks") in ("true", "1")
        self.bookmark_interval = bookmark_interval
        self.timeout = float(query.get("timeoutSeconds") or default_timeout)
        self.stopping = stopping
        raw_rv = query.get("resourceVersion") or "0"
        if not raw_rv.isdigit():
            raise statuses.bad_request(f"invalid resource version: {raw_rv!r}")
        self.start_rv = int(raw_rv)

    def _visible(self, obj: Mapping[str, Any] | None) -> bool:
        if obj is None:
            return False
        metadata = obj.get("metadata", {})
        if self.target.namespace and metadata.get("namespace") != self.target.namespace:
            return False
        return self.by_labels(metadata.get("labels") or {}) and self.by_fields(obj)

    def _translate(self, event: ChangeEvent) -> dict[str, Any] | None:
        now_visible, was_visible = self._visible(event.obj), self._visible(event.previous)
        if event.event_type == "DELETED":
            event_type = "DELETED" if was_visible else None
        elif now_visible:
            event_type = "MODIFIED" if was_visible else "ADDED"
        else:
            event_type = "DELETED" if was_visible else None
        if event_type is None:
            return None
        return {"type": event_type, "object": present(self.target.resource_type, event.obj)}

    def _bookmark(self, resource_version: int) -> dict[str, Any]:
        resource_type = self.target.resource_type
        return {
            "type": "BOOKMARK",
            "object": {
                "kind": resource_type.kind,
                "apiVersion": resource_type.api_version,
                "metadata": {"resourceVersion": str(resource_version)},
            },
        }

    def run(self, emit: Emit) -> None:
        deadline = time.monotonic() + self.timeout
        store_key = self.target.resource_type.store_key
        with self.store.lock:
            if self.start_rv == 0:
                cursor = self.store.current_rv
                initial = [
                    {"type": "ADDED", "object": present(self.target.resource_type, obj)}
                    for obj in self.store.list_objects(store_key, self.target.namespace or None)
                    if self._visible(obj)
                ]
            else:
                cursor, initial = self.start_rv, []
        for event in initial:
            emit(event)
        last_bookmark = time.monotonic()
        while not self.stopping():
            with self.store.changed:
                try:
                    pending = self.store.events_after(store_key, cursor)
                    if not pending:
                        wait = min(deadline - time.monotonic(), self.bookmark_interval)
                        if wait > 0:
                            self.store.changed.wait(wait)
                        pending = self.store.events_after(store_key, cursor)
                except TooOld as too_old:
                    emit({"type": "ERROR", "object": statuses.expired(str(too_old)).body()})
                    return
                latest = self.store.current_rv
            for change in pending:
                cursor = change.resource_version
                translated = self._translate(change)
                if translated is not None:
                    emit(translated)
            if self.bookmarks and time.monotonic() - last_bookmark >= self.bookmark_interval:
                cursor = max(cursor, latest)
                emit(self._bookmark(cursor))
                last_bookmark = time.monotonic()
            if time.monotonic() >= deadline:
                return


def encode(event: dict[str, Any]) -> bytes:
    return json.dumps(event, separators=(",", ":")).encode() + b"\n"
