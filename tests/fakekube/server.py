"""FakeKubeServer: a small kube-apiserver on 127.0.0.1 for tests, driven by the real `kubernetes` client.

It speaks the real REST protocol (discovery, CRUD, list/watch, server-side apply, status subresource,
Status errors), so tests exercise our code and the client library exactly as against a cluster; the same
tests run against a real cluster when one is configured (see `fixtures`). Python methods, not HTTP, are the
test hooks: add nodes, create pods and set their phase (there is no kubelet or scheduler here), inject
failures, and inspect the recorded requests and stored objects.
"""

from __future__ import annotations

import contextlib
import copy
import json
import re
import socket
import threading
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple

from tests.fakekube import routing, statuses, watching
from tests.fakekube.operations import Operations
from tests.fakekube.preparing import Target
from tests.fakekube.resources import ResourceTable, ResourceType
from tests.fakekube.statuses import ApiError
from tests.fakekube.store import ObjectStore


class RecordedRequest(NamedTuple):
    """One HTTP request the server received, for assertions on what a client did."""

    method: str
    path: str
    query: dict[str, str]
    content_type: str


WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@dataclass(slots=True)
class _Injection:
    method: str
    path_pattern: re.Pattern[str]
    status: int
    message: str
    remaining: int


class FakeKubeServer:
    """A started fake API server; `url` is its address. Stop it with `stop()`."""

    def __init__(
        self,
        crd_established_delay: float = 0.0,
        namespace_deletion_delay: float = 0.2,
        garbage_collection_delay: float = 0.1,
        history_limit: int = 1000,
        bookmark_interval: float = 1.0,
        watch_timeout: float = 1800.0,
    ) -> None:
        self.store = ObjectStore(history_limit)
        self.table = ResourceTable()
        self.operations = Operations(
            self.store, self.table, crd_established_delay, namespace_deletion_delay, garbage_collection_delay
        )
        self.requests: list[RecordedRequest] = []
        self.bookmark_interval = bookmark_interval
        self.watch_timeout = watch_timeout
        self._injections: list[_Injection] = []
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._guard = threading.Lock()
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _handler_class(self))
        self._http.daemon_threads = True
        self._thread = threading.Thread(
            target=self._http.serve_forever, args=(0.05,), name="fakekube", daemon=True
        )
        self._thread.start()
        self.operations.create(
            Target(self._type("", "namespaces"), query={}),
            {"metadata": {"name": "default"}},
            "kube-apiserver",
        )

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        """Stop serving: end watches, close connections, cancel pending CRD establishment."""
        self._stopping.set()
        self.operations.stop()
        with self.store.changed:
            self.store.changed.notify_all()
        self._http.shutdown()
        with self._guard:
            for connection in list(self._connections):
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)
        self._http.server_close()
        self._thread.join(timeout=5)

    # ----- test hooks

    def write_requests(self) -> list[RecordedRequest]:
        """Recorded requests that could change state (POST, PUT, PATCH, DELETE)."""
        return [request for request in self.requests if request.method in WRITE_METHODS]

    def fail_next(
        self,
        method: str,
        path_regex: str,
        status: int = 500,
        message: str = "injected failure",
        times: int = 1,
    ) -> None:
        """The next `times` requests with this method ("*" for any) whose path matches fail with `status`."""
        with self._guard:
            self._injections.append(
                _Injection(method.upper(), re.compile(path_regex), status, message, times)
            )

    def objects(self, resource: str) -> list[dict[str, Any]]:
        """Stored objects of a resource named `plural` or `plural.group` (e.g. "deployments.apps")."""
        plural, _, group = resource.partition(".")
        return [copy.deepcopy(obj) for obj in self.store.list_objects((group, plural))]

    def add_node(
        self,
        name: str,
        allocatable: Mapping[str, str] | None = None,
        labels: Mapping[str, str] | None = None,
        taints: Sequence[Mapping[str, Any]] = (),
        capacity: Mapping[str, str] | None = None,
        ready: bool = True,
    ) -> dict[str, Any]:
        """A Node with this allocatable (default 4 cpu, 16Gi memory, 110 pods), labels and taints."""
        allocated = dict(allocatable or {"cpu": "4", "memory": "16Gi", "pods": "110"})
        node_labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", **(labels or {})}
        body: dict[str, Any] = {"metadata": {"name": name, "labels": node_labels}, "spec": {}}
        if taints:
            body["spec"]["taints"] = [dict(taint) for taint in taints]
        node_type = self._type("", "nodes")
        self.operations.create(Target(node_type, query={}), body, "kubelet")
        status = {
            "capacity": dict(capacity or allocated),
            "allocatable": allocated,
            "conditions": [
                {"type": "Ready", "status": "True" if ready else "False", "reason": "KubeletReady"}
            ],
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": name,
                "containerRuntimeVersion": "containerd://1.7.0",
                "kernelVersion": "6.1.0",
                "kubeProxyVersion": "",
                "kubeletVersion": routing.VERSION_INFO["gitVersion"],
                "machineID": name,
                "operatingSystem": "linux",
                "osImage": "fakekube",
                "systemUUID": name,
            },
        }
        node, _ = self.operations.update(
            Target(node_type, "", name, "status", {}),
            {"metadata": {"name": name}, "status": status},
            "kubelet",
        )
        return node

    def create_pod(
        self,
        namespace: str,
        name: str,
        requests: Mapping[str, str] | None = None,
        node_name: str | None = None,
        labels: Mapping[str, str] | None = None,
        phase: str = "Pending",
        owner: Mapping[str, Any] | None = None,
        image: str = "registry.example/app:1",
    ) -> dict[str, Any]:
        """A single-container Pod (as a controller would create it), optionally bound and in a phase."""
        container: dict[str, Any] = {"name": "app", "image": image}
        if requests:
            container["resources"] = {"requests": dict(requests)}
        body: dict[str, Any] = {
            "metadata": {"name": name, "labels": dict(labels or {})},
            "spec": {"containers": [container]},
        }
        if node_name:
            body["spec"]["nodeName"] = node_name
        if owner:
            body["metadata"]["ownerReferences"] = [dict(owner)]
        self.operations.create(
            Target(self._type("", "pods"), namespace, query={}), body, "kube-controller-manager"
        )
        return self.set_pod_phase(namespace, name, phase)

    def set_pod_phase(
        self, namespace: str, name: str, phase: str, reason: str | None = None, message: str | None = None
    ) -> dict[str, Any]:
        """Set a Pod's status as a kubelet (Running: Ready; Pending with a reason: Unschedulable)."""
        target = Target(self._type("", "pods"), namespace, name, "status", {})
        pod = self.operations.get(target)
        status: dict[str, Any] = {**pod.get("status", {}), "phase": phase}
        ready = "True" if phase == "Running" else "False"
        conditions = [{"type": "Ready", "status": ready}, {"type": "ContainersReady", "status": ready}]
        if phase == "Pending" and reason:
            conditions.append(
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": reason,
                    **({"message": message} if message else {}),
                }
            )
        status["conditions"] = conditions
        for key, value in (("reason", reason), ("message", message)):
            if value is None:
                status.pop(key, None)
            else:
                status[key] = value
        updated, _ = self.operations.update(target, {**pod, "status": status}, "kubelet")
        return updated

    def _type(self, group: str, plural: str) -> ResourceType:
        resource_type = self.table.find_any_version(group, plural)
        if resource_type is None:
            raise statuses.not_found(ResourceType(group, "", plural, "", False), plural)
        return resource_type

    # ----- request handling (called from handler threads)

    def _injected(self, method: str, path: str) -> ApiError | None:
        with self._guard:
            for injection in self._injections:
                if injection.method in ("*", method) and injection.path_pattern.search(path):
                    injection.remaining -= 1
                    if injection.remaining <= 0:
                        self._injections.remove(injection)
                    return statuses.injected(injection.status, injection.message)
        return None

    def _register(self, connection: socket.socket, open_: bool) -> None:
        with self._guard:
            (self._connections.add if open_ else self._connections.discard)(connection)

    def handle(self, handler: _Handler) -> None:
        parsed = urllib.parse.urlsplit(handler.path)
        query = {key: values[-1] for key, values in urllib.parse.parse_qs(parsed.query).items()}
        content_type = handler.headers.get("Content-Type", "").split(";")[0].strip()
        method = handler.command
        self.requests.append(RecordedRequest(method, parsed.path, query, content_type))
        body = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
        try:
            failure = self._injected(method, parsed.path)
            if failure is not None:
                raise failure
            segments = [urllib.parse.unquote(part) for part in parsed.path.split("/") if part]
            if segments[:1] == ["openapi"]:
                raise statuses.unknown_path()
            with self.store.lock:
                document = routing.discovery(segments, self.table, f"127.0.0.1:{self.port}")
            if document is not None:
                if method != "GET":
                    raise statuses.method_not_allowed()
                handler.send_json(200, document)
                return
            with self.store.lock:
                route = routing.resource_route(segments, self.table)
            user_agent = handler.headers.get("User-Agent", "unknown")
            manager = query.get("fieldManager") or user_agent.split("/")[0]
            self._dispatch(handler, method, route, query, content_type, body, manager)
        except ApiError as error:
            handler.send_json(error.code, error.body())
        except (BrokenPipeError, ConnectionResetError):
            raise
        except Exception as error:  # a bug in the fake: answer like a server would, and keep serving
            handler.send_json(500, statuses.internal(f"fakekube internal error: {error!r}").body())

    def _dispatch(
        self,
        handler: _Handler,
        method: str,
        route: routing.ResourceRoute,
        query: dict[str, str],
        content_type: str,
        body: bytes,
        manager: str,
    ) -> None:
        target = Target(route.resource_type, route.namespace, route.name, route.subresource, query)
        verbs = route.resource_type.verbs
        if route.is_collection:
            if method == "GET" and query.get("watch") in ("true", "1"):
                self._watch(handler, target)
            elif method == "GET" and "list" in verbs:
                handler.send_json(200, self.operations.list_collection(target))
            elif method == "POST" and "create" in verbs:
                created, warnings = self.operations.create(target, _json(body), manager)
                handler.send_json(201, created, warnings)
            elif method == "DELETE" and "deletecollection" in verbs:
                listed = self.operations.list_collection(target)
                for item in listed["items"]:
                    self.operations.delete(
                        Target(
                            target.resource_type,
                            target.namespace or item["metadata"].get("namespace", ""),
                            item["metadata"]["name"],
                            "",
                            query,
                        ),
                        None,
                    )
                handler.send_json(
                    200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
                )
            else:
                raise statuses.method_not_allowed()
        elif method == "GET":
            handler.send_json(200, self.operations.get(target))
        elif method == "PUT":
            updated, warnings = self.operations.update(target, _json(body), manager)
            handler.send_json(200, updated, warnings)
        elif method == "PATCH":
            code, patched, warnings = self.operations.patch(target, body, content_type, manager)
            handler.send_json(code, patched, warnings)
        elif method == "DELETE" and not route.subresource:
            handler.send_json(200, self.operations.delete(target, _json(body) if body else None))
        else:
            raise statuses.method_not_allowed()

    def _watch(self, handler: _Handler, target: Target) -> None:
        stream = watching.WatchStream(
            self.store, target, self.bookmark_interval, self.watch_timeout, self._stopping.is_set
        )
        handler.start_chunked()
        try:
            stream.run(lambda event: handler.write_chunk(watching.encode(event)))
            handler.write_chunk(b"")
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass
        handler.close_connection = True


def _json(body: bytes) -> Any:
    try:
        return json.loads(body or b"null")
    except ValueError as error:
        raise statuses.bad_request(f"error decoding request body as JSON: {error}") from error


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are separate writes: without this each waits ~40 ms
    server_version = "fakekube"
    fake: FakeKubeServer

    def setup(self) -> None:
        super().setup()
        self.fake._register(self.connection, True)

    def finish(self) -> None:
        self.fake._register(self.connection, False)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read `requests` instead of a log."""

    def send_json(self, code: int, document: Any, warnings: Sequence[str] = ()) -> None:
        payload = json.dumps(document).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for warning in warnings:
            self.send_header("Warning", f'299 - "{warning}"')
        self.end_headers()
        self.wfile.write(payload)

    def start_chunked(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()

    def write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _serve(self) -> None:
        try:
            self.fake.handle(self)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve


def _handler_class(fake: FakeKubeServer) -> type[_Handler]:
    return type("FakeKubeHandler", (_Handler,), {"fake": fake})
