"""A stand-in kubelet for real API servers that have no nodes (``../shared/realk8s``), as kwok is one.

``StandInKubelet(api_client)`` registers Nodes with the capacity, labels and taints a test asks for and plays
each one's kubelet: it renews the node's Lease in ``kube-node-lease`` and keeps its ``Ready`` condition
fresh (so the node lifecycle controller never taints it ``not-ready``/``unreachable``), and it watches the
pods kube-scheduler binds to the node and writes their status as a kubelet would (``podstates``: Running
and Ready by default, or the state a container's image or the pod's ``stand-in.nova.test/state``
annotation asks for: CrashLoopBackOff with a growing restartCount, ImagePullBackOff, ErrImagePull,
CreateContainerConfigError, InvalidImageName, exits). It confirms graceful deletions (a pod on its node
with a ``deletionTimestamp`` is deleted with grace 0, first marked terminal when it carries finalizers, so
their owners see it finished; the API server keeps it until they are removed). ``stop()`` removes its
nodes, their Leases and their pods.

Usage::

    with StandInKubelet(api_client, prefix="t1") as kubelet:
        node = kubelet.add_node("n1", allocatable={"cpu": "2", "memory": "4Gi", "pods": "110"})
        ...  # pods the scheduler binds to `node` run

Design:
- Watch-based, as a kubelet: one list-then-watch per node (``fieldSelector=spec.nodeName=<node>``), resumed
  from the last resourceVersion (bookmarks keep it fresh) and relisted on 410 Gone or a cut stream. A
  heartbeat thread renews Leases every ``heartbeat`` seconds and re-reads nothing: it re-evaluates only the
  crash-looping pods it already holds (their restartCount grows with time).
- Several kubelets may share a cluster (tests, the demo's two clusters): every node is named with the
  kubelet's ``prefix``, carries the annotation ``stand-in.nova.test/kubelet: <kubelet id>``, and each
  kubelet touches only pods bound to its own nodes. kube-scheduler may still bind one test's pod to another
  test's node when both run at once on one cluster; that node's kubelet runs it like any other.
- A node left behind by a kubelet that died (its Lease older than ``STALE_AFTER``) is removed by the next
  kubelet that starts, with its pods.
- Writes are JSON merge patches of the status subresource, computed from the pod just seen and written
  only when they change something, so there are no 409 conflicts and no write loops.

Nothing here imports pytest: ``examples/demo`` uses it on two clusters. ``errors`` collects what went wrong
in the threads (they never raise); ``check()`` raises it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import secrets
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any, Final, Self

from nova_gitops.clients.kuberest import KubeApiError, KubeRest, KubeUnavailable
from tests.realkube import podstates

Body = dict[str, Any]
Clock = Callable[[], datetime]

log = logging.getLogger(__name__)

KUBELET_ANNOTATION: Final = "stand-in.nova.test/kubelet"
LEASE_NAMESPACE: Final = "kube-node-lease"
LEASE_DURATION: Final = 40
STALE_AFTER: Final = timedelta(minutes=2)
NOT_READY_TAINT: Final = "node.kubernetes.io/not-ready"
DEFAULT_ALLOCATABLE: Final = {"cpu": "4", "memory": "16Gi", "pods": "110"}
MERGE_PATCH: Final = "application/merge-patch+json"
KUBELET_VERSION: Final = "v1.36.2"


def system_clock() -> datetime:
    return datetime.now(UTC)


def micro_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(slots=True)
class _Node:
    name: str
    ip: str
    ready: bool
    uid: str = ""
    pods: dict[str, Body] = field(default_factory=dict)  # "namespace/name" → the pod as last seen
    stopping: threading.Event = field(default_factory=threading.Event)
    response: Any = None  # the watch being streamed, shut down to stop at once
    thread: threading.Thread | None = None


class StandInKubelet:
    """The kubelet of every node it registers; start with ``start()`` or ``with``, end with ``stop()``."""

    def __init__(
        self,
        api_client: Any,
        *,
        prefix: str = "",
        heartbeat: float = 5.0,
        clock: Clock = system_clock,
        watch_timeout: int = 240,
    ) -> None:
        """``api_client``: a ``kubernetes.client.ApiClient`` (the caller keeps and closes it, after
        ``stop()``); ``prefix``: put before every node name (``<prefix>-<name>``), to keep tests apart;
        ``heartbeat``: seconds between Lease renewals (the controller's grace period is 50 s)."""
        self.rest = KubeRest(api_client, request_timeout=30.0)
        self.prefix = prefix
        self.heartbeat = heartbeat
        self.clock = clock
        self.watch_timeout = watch_timeout
        self.id = f"{prefix or 'kubelet'}-{secrets.token_hex(3)}"
        self.errors: list[str] = []
        self.reconnects = 0  # watches resumed or relisted: a watch ends every watch_timeout seconds
        self._nodes: dict[str, _Node] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._paused = False
        self._heartbeat_thread: threading.Thread | None = None

    # ----- lifecycle

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> Self:
        """Remove nodes that dead kubelets left behind, then start the heartbeat."""
        if self._heartbeat_thread is not None:
            return self
        self._remove_stale_nodes()
        self._stopping.clear()
        self._heartbeat_thread = threading.Thread(
            target=self._beat, name=f"kubelet-{self.id}-heartbeat", daemon=True
        )
        self._heartbeat_thread.start()
        return self

    def stop(self) -> None:
        """Stop every thread and remove every node of this kubelet, with its Lease and its pods."""
        self._stopping.set()
        if self._heartbeat_thread is not None:
            self._heartbeat_thread.join(timeout=10)
            self._heartbeat_thread = None
        for name in list(self._nodes):
            self.remove_node(name)

    def pause(self) -> None:
        """Leave pods as they are (bound, not started) until ``resume()``: lets a test see what happens
        before its pods run, whatever the timing. Deletions are still confirmed."""
        self._paused = True

    def resume(self) -> None:
        """Run the pods again, starting with those bound while paused."""
        self._paused = False
        for node in list(self._nodes.values()):
            for pod in list(node.pods.values()):
                self._guarded(node, pod, self._sync_pod)

    def check(self) -> None:
        """Raise what went wrong in the kubelet's threads, if anything did."""
        if self.errors:
            raise AssertionError("the stand-in kubelet failed: " + "; ".join(self.errors[:5]))

    # ----- nodes

    def node_name(self, name: str) -> str:
        """The name a node asked for as ``name`` gets (``<prefix>-<name>``)."""
        return f"{self.prefix}-{name}" if self.prefix and not name.startswith(f"{self.prefix}-") else name

    @property
    def nodes(self) -> list[str]:
        return sorted(self._nodes)

    def add_node(
        self,
        name: str,
        allocatable: Mapping[str, str] | None = None,
        labels: Mapping[str, str] | None = None,
        taints: Sequence[Mapping[str, Any]] = (),
        capacity: Mapping[str, str] | None = None,
        ready: bool = True,
        wait: bool = True,
    ) -> str:
        """Register a Node (default 4 cpu, 16Gi memory, 110 pods) and start running its pods; returns its
        name. With ``wait``, returns once the node lifecycle controller has lifted the ``not-ready`` taint
        every new node gets (a Ready node only), so the scheduler can use it at once."""
        full = self.node_name(name)
        if self._heartbeat_thread is None:
            self.start()
        allocated = dict(allocatable or DEFAULT_ALLOCATABLE)
        node = _Node(full, podstates.pod_ip("node", full), ready)
        body: Body = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": full,
                "labels": {
                    "kubernetes.io/hostname": full,
                    "kubernetes.io/os": "linux",
                    "kubernetes.io/arch": "amd64",
                    **dict(labels or {}),
                },
                "annotations": {KUBELET_ANNOTATION: self.id},
            },
            "spec": {"taints": [dict(taint) for taint in taints]} if taints else {},
            "status": self._node_status(node, allocated, dict(capacity or allocated)),
        }
        created = self.rest.request("POST", "/api/v1/nodes", body=body)
        node.uid = str(created["metadata"]["uid"])
        with self._lock:
            self._nodes[full] = node
        self._renew_lease(node)
        node.thread = threading.Thread(
            target=self._run_node, args=(node,), name=f"kubelet-{full}", daemon=True
        )
        node.thread.start()
        if wait and ready:
            self.wait_for(lambda: self._schedulable(full), f"node {full} to lose the not-ready taint")
        return full

    def remove_node(self, name: str) -> None:
        """Stop the node's kubelet, then delete its pods (grace 0, as the pod GC does for a deleted node),
        its Lease and the Node."""
        full = self.node_name(name)
        with self._lock:
            node = self._nodes.pop(full, None)
        if node is None:
            return
        node.stopping.set()
        if node.response is not None:
            with contextlib.suppress(Exception):
                node.response.shutdown()
        if node.thread is not None:
            node.thread.join(timeout=10)
        self._delete_node_objects(full)

    def set_node_ready(self, name: str, ready: bool) -> None:
        """The node's kubelet reports Ready (or NotReady: the node lifecycle controller then taints it)."""
        node = self._nodes[self.node_name(name)]
        node.ready = ready
        self._patch_node_conditions(node)

    def _node_status(self, node: _Node, allocatable: Mapping[str, str], capacity: Mapping[str, str]) -> Body:
        return {
            "capacity": dict(capacity),
            "allocatable": dict(allocatable),
            "conditions": self._conditions(node, None),
            "addresses": [
                {"type": "InternalIP", "address": node.ip},
                {"type": "Hostname", "address": node.name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": node.name,
                "containerRuntimeVersion": "containerd://1.7.0",
                "kernelVersion": "6.1.0",
                "kubeProxyVersion": "",
                "kubeletVersion": KUBELET_VERSION,
                "machineID": node.name,
                "operatingSystem": "linux",
                "osImage": "stand-in kubelet (nova-gitops tests)",
                "systemUUID": node.name,
            },
        }

    def _conditions(self, node: _Node, previous: Sequence[Mapping[str, Any]] | None) -> list[Body]:
        now = podstates.stamp(self.clock())
        before = {str(c.get("type")): c for c in previous or []}

        def made(kind: str, status: str, reason: str, message: str) -> Body:
            old = before.get(kind)
            since = old.get("lastTransitionTime") if old is not None and old.get("status") == status else None
            return {
                "type": kind,
                "status": status,
                "reason": reason,
                "message": message,
                "lastHeartbeatTime": now,
                "lastTransitionTime": since or now,
            }

        return [
            made("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory"),
            made("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            made("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
            made("Ready", "True", "KubeletReady", "kubelet is posting ready status")
            if node.ready
            else made("Ready", "False", "KubeletNotReady", "container runtime is down (stand-in kubelet)"),
        ]

    def _patch_node_conditions(self, node: _Node) -> None:
        current = self.rest.request("GET", f"/api/v1/nodes/{node.name}")
        conditions = self._conditions(node, (current.get("status") or {}).get("conditions"))
        self.rest.request(
            "PATCH",
            f"/api/v1/nodes/{node.name}/status",
            body={"status": {"conditions": conditions}},
            content_type=MERGE_PATCH,
        )

    def _schedulable(self, name: str) -> bool:
        node = self.rest.request("GET", f"/api/v1/nodes/{name}")
        taints = (node.get("spec") or {}).get("taints") or []
        return not any(taint.get("key") == NOT_READY_TAINT for taint in taints)

    def _renew_lease(self, node: _Node) -> None:
        path = f"/apis/coordination.k8s.io/v1/namespaces/{LEASE_NAMESPACE}/leases/{node.name}"
        renewed = micro_time(self.clock())
        try:
            self.rest.request("PATCH", path, body={"spec": {"renewTime": renewed}}, content_type=MERGE_PATCH)
        except KubeApiError as error:
            if error.status != 404:
                raise
            lease = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {
                    "name": node.name,
                    "namespace": LEASE_NAMESPACE,
                    "ownerReferences": [
                        {"apiVersion": "v1", "kind": "Node", "name": node.name, "uid": node.uid}
                    ],
                },
                "spec": {
                    "holderIdentity": node.name,
                    "leaseDurationSeconds": LEASE_DURATION,
                    "renewTime": renewed,
                },
            }
            self.rest.request(
                "POST", f"/apis/coordination.k8s.io/v1/namespaces/{LEASE_NAMESPACE}/leases", body=lease
            )

    def _beat(self) -> None:
        """Renew every Lease each heartbeat, refresh Ready every few, and let crash loops count restarts."""
        beats = 0
        while not self._stopping.wait(self.heartbeat):
            beats += 1
            for node in list(self._nodes.values()):
                if node.stopping.is_set():
                    continue
                try:
                    self._renew_lease(node)
                    if beats % 6 == 0:
                        self._patch_node_conditions(node)
                    for pod in [] if self._paused else list(node.pods.values()):
                        self._sync_pod(node, pod)
                except (KubeApiError, KubeUnavailable) as error:
                    if not node.stopping.is_set():
                        self._error(f"heartbeat of {node.name}: {error}")

    def _remove_stale_nodes(self) -> None:
        """Nodes of stand-in kubelets whose Lease is older than STALE_AFTER (or gone): their kubelet died."""
        listing = self.rest.request("GET", "/api/v1/nodes")
        leases = self.rest.request("GET", f"/apis/coordination.k8s.io/v1/namespaces/{LEASE_NAMESPACE}/leases")
        renewed = {
            lease["metadata"]["name"]: podstates.parse_stamp(lease.get("spec", {}).get("renewTime"))
            for lease in leases.get("items") or []
        }
        now = self.clock()
        for node in listing.get("items") or []:
            metadata = node["metadata"]
            if KUBELET_ANNOTATION not in (metadata.get("annotations") or {}):
                continue
            last = renewed.get(metadata["name"])
            if last is None or now - last > STALE_AFTER:
                log.info("removing node %s: its stand-in kubelet is gone", metadata["name"])
                self._delete_node_objects(metadata["name"])

    def _delete_node_objects(self, name: str) -> None:
        """Cordon the node (no new pod is bound to it), delete its pods, its Lease and the Node, then any pod
        bound while that went on: a pod left on a deleted node would hold its namespace's deletion until
        the pod garbage collector's quarantine ends."""
        with contextlib.suppress(KubeApiError, KubeUnavailable):
            self.rest.request(
                "PATCH",
                f"/api/v1/nodes/{name}",
                body={"spec": {"unschedulable": True}},
                content_type=MERGE_PATCH,
            )
        self._delete_pods_on(name)
        for path in (
            f"/apis/coordination.k8s.io/v1/namespaces/{LEASE_NAMESPACE}/leases/{name}",
            f"/api/v1/nodes/{name}",
        ):
            try:
                self.rest.request("DELETE", path)
            except KubeApiError as error:
                if error.status != 404:
                    self._error(f"delete {path}: {error}")
            except KubeUnavailable as error:
                self._error(f"delete {path}: {error}")
        self._delete_pods_on(name)

    def _delete_pods_on(self, name: str) -> None:
        with contextlib.suppress(KubeApiError, KubeUnavailable):
            pods = self.rest.request(
                "GET", "/api/v1/pods", query=[("fieldSelector", f"spec.nodeName={name}")]
            )
            for pod in pods.get("items") or []:
                self._delete_pod(pod)

    # ----- pods

    def _run_node(self, node: _Node) -> None:
        """List-then-watch the node's pods until the node stops; relist on 410 Gone or a cut stream."""
        selector = [("fieldSelector", f"spec.nodeName={node.name}")]
        version: str | None = None
        failures = 0
        while not node.stopping.is_set():
            try:
                if version is None:
                    listing = self.rest.request("GET", "/api/v1/pods", query=selector)
                    version = str(listing["metadata"]["resourceVersion"])
                    seen = set()
                    for pod in listing.get("items") or []:
                        seen.add(_key(pod))
                        self._on_pod(node, pod)
                    for gone in set(node.pods) - seen:
                        node.pods.pop(gone, None)
                version = self._watch(node, selector, version)
                self.reconnects += 1
                failures = 0
            except (KubeApiError, KubeUnavailable, OSError, ValueError) as error:
                if node.stopping.is_set():
                    return
                failures += 1
                version = None
                log.debug("watch of %s pods: %s; relisting", node.name, error)
                if failures > 3:
                    self._error(f"watch of pods on {node.name}: {error}")
                node.stopping.wait(min(0.1 * 2**failures, 2.0))

    def _watch(self, node: _Node, selector: list[tuple[str, str]], version: str) -> str | None:
        """Stream watch events from ``version``; the version to resume from (None: relist)."""
        from urllib3.exceptions import HTTPError

        query = [
            *selector,
            ("watch", "true"),
            ("resourceVersion", version),
            ("allowWatchBookmarks", "true"),
            ("timeoutSeconds", str(self.watch_timeout)),
        ]
        response = self.rest.send("GET", "/api/v1/pods", query, timeout=(10.0, self.watch_timeout + 30.0))
        if not 200 <= response.status <= 299:
            body = response.read()
            if response.status == 410:
                return None
            raise KubeApiError(
                int(response.status), str(response.reason or ""), body.decode(errors="replace")
            )
        stream = response.response
        node.response = stream
        try:
            for line in _lines(stream, node.stopping):
                event = json.loads(line)
                kind, body = event.get("type"), event.get("object") or {}
                if kind == "ERROR":
                    if body.get("code") == 410:
                        return None
                    raise KubeApiError(
                        int(body.get("code") or 500), str(body.get("reason")), str(body.get("message"))
                    )
                version = str((body.get("metadata") or {}).get("resourceVersion") or version)
                if kind == "DELETED":
                    node.pods.pop(_key(body), None)
                elif kind in ("ADDED", "MODIFIED"):
                    self._on_pod(node, body)
        except (HTTPError, OSError) as error:
            if node.stopping.is_set():
                return version
            raise KubeUnavailable(f"the watch of pods on {node.name} was cut: {error}") from error
        finally:
            node.response = None
            with contextlib.suppress(Exception):
                stream.release_conn()
        return version

    def _on_pod(self, node: _Node, pod: Body) -> None:
        if node.stopping.is_set():
            return
        key = _key(pod)
        if pod["metadata"].get("deletionTimestamp"):
            node.pods.pop(key, None)
            self._guarded(node, pod, lambda _node, body: self._confirm_deletion(body))
            return
        node.pods[key] = pod
        if not self._paused:
            self._guarded(node, pod, self._sync_pod)

    def _guarded(self, node: _Node, pod: Body, action: Callable[[_Node, Body], None]) -> None:
        """Run ``action``; a failure goes to ``errors`` (a pod gone or changed meanwhile is not one)."""
        try:
            action(node, pod)
        except KubeApiError as error:
            if error.status not in (404, 409) and not node.stopping.is_set():
                self._error(f"pod {_key(pod)} on {node.name}: {error}")
        except KubeUnavailable as error:
            if not node.stopping.is_set():
                self._error(f"pod {_key(pod)} on {node.name}: {error}")

    def _sync_pod(self, node: _Node, pod: Body) -> None:
        """Write the status the test asks for, when it changes anything; a finished pod stays finished."""
        current = pod.get("status") or {}
        if current.get("phase") in ("Succeeded", "Failed"):
            node.pods.pop(_key(pod), None)
            return
        wanted = podstates.pod_status(pod, node.ip, self.clock())
        if not podstates.differs(current, wanted):
            return
        metadata = pod["metadata"]
        path = f"/api/v1/namespaces/{metadata['namespace']}/pods/{metadata['name']}/status"
        patch = {"metadata": {"uid": metadata["uid"]}, "status": wanted}
        try:
            updated = self.rest.request("PATCH", path, body=patch, content_type=MERGE_PATCH)
        except KubeApiError as error:
            replaced = error.status == 422 and "metadata.uid" in error.message  # a new pod of that name
            if error.status == 404 or replaced:
                node.pods.pop(_key(pod), None)
                return
            raise
        if not node.stopping.is_set():
            node.pods[_key(updated)] = updated

    def _confirm_deletion(self, pod: Body) -> None:
        """As a kubelet after the grace period: a pod with finalizers is first reported terminal (its
        containers stopped by SIGTERM) so that their owner (the Job controller) sees it finished; then
        delete with grace 0, the API server keeping it until its finalizers are removed."""
        metadata = pod["metadata"]
        status = pod.get("status") or {}
        if metadata.get("finalizers") and status.get("phase") not in ("Succeeded", "Failed"):
            stopped = [
                {
                    **container,
                    "ready": False,
                    "started": False,
                    "state": {
                        "terminated": {
                            "exitCode": 143,
                            "reason": "Error",
                            "startedAt": status.get("startTime") or podstates.stamp(self.clock()),
                            "finishedAt": podstates.stamp(self.clock()),
                        }
                    },
                }
                for container in status.get("containerStatuses") or []
            ]
            path = f"/api/v1/namespaces/{metadata['namespace']}/pods/{metadata['name']}/status"
            patch = {
                "metadata": {"uid": metadata["uid"]},
                "status": {"phase": "Failed", "containerStatuses": stopped},
            }
            with contextlib.suppress(KubeApiError):
                self.rest.request("PATCH", path, body=patch, content_type=MERGE_PATCH)
        self._delete_pod(pod)

    def _delete_pod(self, pod: Body) -> None:
        metadata = pod["metadata"]
        options = {
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "gracePeriodSeconds": 0,
            "preconditions": {"uid": metadata["uid"]},
        }
        path = f"/api/v1/namespaces/{metadata['namespace']}/pods/{metadata['name']}"
        try:
            self.rest.request("DELETE", path, body=options)
        except KubeApiError as error:
            if error.status not in (404, 409):
                raise

    # ----- waiting

    def wait_for(self, condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
        """Return once ``condition()`` holds; AssertionError naming ``what`` after ``timeout`` seconds.
        Checks at once, then with a back-off from 20 ms to 0.5 s."""
        wait_for(condition, what, timeout)

    def _error(self, message: str) -> None:
        log.warning("stand-in kubelet %s: %s", self.id, message)
        self.errors.append(message)


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Wait until ``condition()`` holds (a back-off from 20 ms to 0.5 s between checks), or raise
    AssertionError naming ``what``. A waiting primitive for conditions on a real cluster, never a sleep
    standing in for one."""
    import time

    pause = threading.Event()  # never set: a wait that a signal does not cut short
    deadline = time.monotonic() + timeout
    delay = 0.02
    while True:
        if condition():
            return
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        pause.wait(min(delay, left))
        delay = min(delay * 2, 0.5)


def _key(pod: Mapping[str, Any]) -> str:
    metadata = pod.get("metadata") or {}
    return f"{metadata.get('namespace', '')}/{metadata.get('name', '')}"


def _lines(stream: Any, stopping: threading.Event) -> Iterator[bytes]:
    """The JSON lines of a watch stream (an event may span chunks)."""
    pending = b""
    for chunk in stream.stream(64 * 1024, decode_content=True):
        if stopping.is_set():
            return
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            if line.strip():
                yield line
    if pending.strip():
        yield pending
