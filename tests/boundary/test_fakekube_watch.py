"""Watches on the fake API server through kubernetes.watch.Watch, as controllers and agents use them.

Behaviours covered:
- without a resourceVersion a watch starts with ADDED for existing objects, then streams ADDED, MODIFIED,
  DELETED as they happen, in order (kube-root-ca.crt, which the root CA publisher writes in every namespace
  when it gets to it, left aside);
- from a resourceVersion it replays exactly the later changes; label selectors filter, and an object leaving
  the selection is reported DELETED;
- a resourceVersion older than the bounded history ends in ApiException 410 (Expired);
- timeoutSeconds ends the stream; bookmarks carry only a resourceVersion;
- stopping the server ends open watches.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from kubernetes import client, watch

from tests.fakekube.clienting import configmap
from tests.fakekube.fixtures import KubeTarget, client_for
from tests.fakekube.server import FakeKubeServer

ROOT_CA = "kube-root-ca.crt"


def _collect(
    api_client: client.ApiClient, namespace: str, count: int, **kwargs: Any
) -> list[tuple[str, str]]:
    core = client.CoreV1Api(api_client)
    events: list[tuple[str, str]] = []
    watcher = watch.Watch()
    for event in watcher.stream(core.list_namespaced_config_map, namespace, timeout_seconds=10, **kwargs):
        if event["raw_object"]["metadata"]["name"] == ROOT_CA:
            continue
        events.append((event["type"], event["raw_object"]["metadata"]["name"]))
        if len(events) == count:
            watcher.stop()
    return events


def test_watch_lists_existing_objects_then_streams_changes(kube: KubeTarget) -> None:
    core = client.CoreV1Api(kube.api_client)
    core.create_namespaced_config_map(kube.namespace, configmap("before", {"a": "1"}))
    events: list[tuple[str, str]] = []
    watcher = watch.Watch()

    def writer() -> None:
        core.create_namespaced_config_map(kube.namespace, configmap("after", {"a": "1"}))
        core.patch_namespaced_config_map("after", kube.namespace, {"data": {"a": "2"}})
        core.delete_namespaced_config_map("after", kube.namespace)

    started = False
    for event in watcher.stream(core.list_namespaced_config_map, kube.namespace, timeout_seconds=10):
        if event["object"].metadata.name == ROOT_CA:
            continue  # the root CA publisher's, in every namespace, written when that controller gets to it
        events.append((event["type"], event["object"].metadata.name))
        if not started:
            started = True
            threading.Thread(target=writer).start()
        if len(events) == 4:
            watcher.stop()
    assert events == [("ADDED", "before"), ("ADDED", "after"), ("MODIFIED", "after"), ("DELETED", "after")]


def test_watch_from_a_resource_version_replays_later_changes_with_selectors(kube: KubeTarget) -> None:
    core = client.CoreV1Api(kube.api_client)
    start = core.list_namespaced_config_map(kube.namespace).metadata.resource_version
    core.create_namespaced_config_map(kube.namespace, configmap("blue", {}, {"color": "blue"}))
    core.create_namespaced_config_map(kube.namespace, configmap("red", {}, {"color": "red"}))
    core.patch_namespaced_config_map("blue", kube.namespace, {"metadata": {"labels": {"color": "green"}}})
    events = _collect(kube.api_client, kube.namespace, 2, resource_version=start, label_selector="color=blue")
    assert events == [("ADDED", "blue"), ("DELETED", "blue")]
    everything = _collect(kube.api_client, kube.namespace, 3, resource_version=start)
    assert everything == [("ADDED", "blue"), ("ADDED", "red"), ("MODIFIED", "blue")]


@pytest.mark.fake_only("needs a watch history of 3 versions (the fake's history_limit) to expire one")
def test_too_old_resource_version_is_410() -> None:
    fake = FakeKubeServer(history_limit=3)
    api_client = client_for(fake)
    try:
        core = client.CoreV1Api(api_client)
        start = core.list_namespaced_config_map("default").metadata.resource_version
        for index in range(5):
            core.create_namespaced_config_map("default", configmap(f"cm-{index}", {}))
        with pytest.raises(client.ApiException) as caught:
            _collect(api_client, "default", 1, resource_version=start)
        assert caught.value.status == 410
        assert "too old resource version" in str(caught.value.reason)
    finally:
        api_client.close()
        fake.stop()


@pytest.mark.fake_only("needs bookmarks every 0.1 s (the fake's bookmark_interval)")
def test_timeout_ends_the_stream_and_bookmarks_carry_a_resource_version() -> None:
    fake = FakeKubeServer(bookmark_interval=0.1)
    api_client = client_for(fake)
    try:
        core = client.CoreV1Api(api_client)
        current = core.list_namespaced_config_map("default").metadata.resource_version
        watcher = watch.Watch()
        kinds = [
            event["type"]
            for event in watcher.stream(
                core.list_namespaced_config_map,
                "default",
                resource_version=current,
                timeout_seconds=1,
                allow_watch_bookmarks=True,
            )
        ]
        assert kinds and set(kinds) == {"BOOKMARK"}
        assert watcher.resource_version == current
    finally:
        api_client.close()
        fake.stop()


def test_stopping_the_server_ends_open_watches() -> None:
    fake = FakeKubeServer()
    api_client = client_for(fake)
    ended = threading.Event()

    def watch_forever() -> None:
        core = client.CoreV1Api(api_client)
        try:
            for _ in watch.Watch().stream(core.list_namespaced_config_map, "default", resource_version="1"):
                pass
        except Exception:  # the connection may be cut rather than ended cleanly; either ends the watch
            pass
        ended.set()

    thread = threading.Thread(target=watch_forever, daemon=True)
    thread.start()
    while not any(r.query.get("watch") for r in fake.requests):
        thread.join(0.02)
    fake.stop()
    assert ended.wait(10)
    api_client.close()
