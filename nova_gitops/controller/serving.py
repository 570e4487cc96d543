"""``/healthz``, ``/readyz`` and ``/metrics`` (Prometheus text format 0.0.4) on the configured address.

The metrics are a handful of counters and one histogram kept in a fixed-size structure (no label can grow
without bound: outcomes and reschedule actions are closed sets), so memory stays flat however long the
controller runs. The server runs in a daemon thread and only reads these numbers under a lock.

- ``/healthz``: 200 while the loop thread (and, with leader election, the election thread) is alive; it is
  restarted by Kubernetes when this fails.
- ``/readyz``: without leader election, 200 once a reconcile has succeeded since start, 503 before. With
  leader election, 200 exactly while this replica leads: only the leader reconciles, so a Service whose
  endpoints follow readiness sends webhooks to the leader alone instead of half of them to a follower that
  would drop them (deploy/overlays/webhook probes it).

Both servers (this one and the webhook receiver) are ``Server``, which bounds what a client can hold
(issue 9, item 8): a **deadline for the whole request** (``REQUEST_DEADLINE``: request line, headers, body
and answer; a per-read timeout alone lets a client that drips one byte a second reset the clock with each
byte), a **byte budget** per connection, and a **cap on concurrent connections** (``MAX_CONNECTIONS``):
over the cap a new connection gets a ``503`` written without blocking and is closed by the accepting
thread, so no thread is spawned for it. One request per connection (HTTP/1.0), so the deadline is per
request.
"""

from __future__ import annotations

import contextlib
import io
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from nova_gitops.controller.settings import Address

DURATION_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
OUTCOMES = ("published", "unchanged", "superseded", "failed")
RESCHEDULE_ACTIONS = ("moved", "reported", "stuck")
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
REQUEST_DEADLINE = 10.0  # seconds for a whole request: request line, headers, body and the answer
MAX_CONNECTIONS = 32  # connections served at once; more are answered 503 and closed without a thread
MAX_REQUEST_BYTES = 64 * 1024  # what a GET (request line and headers) may send
OVERLOADED = (
    b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n"
    b"Retry-After: 1\r\nConnection: close\r\n\r\ntoo busy\r\n"
)


class Metrics:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reconciles = dict.fromkeys(OUTCOMES, 0)
        self.duration_buckets = [0] * len(DURATION_BUCKETS)
        self.duration_sum = 0.0
        self.duration_count = 0
        self.commits = 0
        self.placement_changes = 0
        self.unscheduled = 0
        self.reschedules = dict.fromkeys(RESCHEDULE_ACTIONS, 0)
        self.failbacks = 0
        self.triggers = 0
        self.ready = False
        self.rollout_wave = -1  # index of the wave in progress; -1: no rollout (complete, or no strategy)
        self.rollout_paused = False
        self.rollout_seconds = 0.0  # since the rollout in progress started
        self.alive: Callable[[], bool] = lambda: True
        self.leading: Callable[[], bool] | None = None  # None: no leader election

    def reconciled(
        self, outcome: str, duration: float, *, moved: int = 0, unscheduled: int | None = None
    ) -> None:
        with self._lock:
            self.reconciles[outcome if outcome in self.reconciles else "failed"] += 1
            for index, bound in enumerate(DURATION_BUCKETS):
                if duration <= bound:
                    self.duration_buckets[index] += 1
            self.duration_sum += duration
            self.duration_count += 1
            if outcome == "published":
                self.commits += 1
                self.placement_changes += moved
            if unscheduled is not None:
                self.unscheduled = unscheduled
            if outcome != "failed":
                self.ready = True

    def rescheduled(self, action: str, count: int = 1) -> None:
        with self._lock:
            self.reschedules[action] += count

    def failed_back(self, count: int) -> None:
        with self._lock:
            self.failbacks += count

    def rolled_out(self, wave: int, paused: bool, seconds: float) -> None:
        with self._lock:
            self.rollout_wave, self.rollout_paused, self.rollout_seconds = wave, paused, seconds

    def triggered(self) -> None:
        with self._lock:
            self.triggers += 1

    def exposition(self) -> str:
        """The Prometheus text format."""
        with self._lock:
            lines = [
                "# HELP nova_controller_reconciles_total Reconciles, by outcome.",
                "# TYPE nova_controller_reconciles_total counter",
                *(
                    f'nova_controller_reconciles_total{{outcome="{name}"}} {n}'
                    for name, n in self.reconciles.items()
                ),
                "# HELP nova_controller_reconcile_duration_seconds Time of one reconcile.",
                "# TYPE nova_controller_reconcile_duration_seconds histogram",
                *(
                    f'nova_controller_reconcile_duration_seconds_bucket{{le="{bound}"}} {count}'
                    for bound, count in zip(DURATION_BUCKETS, self.duration_buckets, strict=True)
                ),
                f'nova_controller_reconcile_duration_seconds_bucket{{le="+Inf"}} {self.duration_count}',
                f"nova_controller_reconcile_duration_seconds_sum {self.duration_sum:.6f}",
                f"nova_controller_reconcile_duration_seconds_count {self.duration_count}",
                "# HELP nova_controller_commits_total Commits pushed to the rendered repository.",
                "# TYPE nova_controller_commits_total counter",
                f"nova_controller_commits_total {self.commits}",
                "# HELP nova_controller_placement_changes_total Groups moved between clusters by commits.",
                "# TYPE nova_controller_placement_changes_total counter",
                f"nova_controller_placement_changes_total {self.placement_changes}",
                "# HELP nova_controller_unscheduled_objects Objects the last plan could not place.",
                "# TYPE nova_controller_unscheduled_objects gauge",
                f"nova_controller_unscheduled_objects {self.unscheduled}",
                "# HELP nova_controller_reschedules_total Reschedule requests by action taken.",
                "# TYPE nova_controller_reschedules_total counter",
                *(
                    f'nova_controller_reschedules_total{{action="{name}"}} {n}'
                    for name, n in self.reschedules.items()
                ),
                "# HELP nova_controller_failbacks_total Groups moved back to a higher tier.",
                "# TYPE nova_controller_failbacks_total counter",
                f"nova_controller_failbacks_total {self.failbacks}",
                "# HELP nova_controller_triggers_total Webhook and watch triggers received.",
                "# TYPE nova_controller_triggers_total counter",
                f"nova_controller_triggers_total {self.triggers}",
                "# HELP nova_rollout_wave Index of the wave the rollout is at (-1: none in progress).",
                "# TYPE nova_rollout_wave gauge",
                f"nova_rollout_wave {self.rollout_wave}",
                "# HELP nova_rollout_paused 1 while the rollout is paused (a failed gate or a request).",
                "# TYPE nova_rollout_paused gauge",
                f"nova_rollout_paused {int(self.rollout_paused)}",
                "# HELP nova_rollout_duration_seconds Time since the rollout in progress started.",
                "# TYPE nova_rollout_duration_seconds gauge",
                f"nova_rollout_duration_seconds {self.rollout_seconds:.3f}",
            ]
        return "\n".join(lines) + "\n"


class RequestTooLarge(ConnectionAbortedError):
    """The client sent more than the connection's byte budget."""


class _DeadlineSocket(io.RawIOBase):
    """The connection's bytes, read and written within one deadline and one byte budget.

    Before every ``recv`` and ``send`` the socket timeout is set to what is left of the deadline, so a
    client that drips a byte at a time gets no more time in total than one that sends nothing."""

    def __init__(self, connection: socket.socket, deadline: float, budget: int) -> None:
        self.connection = connection
        self.deadline = deadline
        self.budget = budget

    def _arm(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("request deadline passed")
        self.connection.settimeout(left)

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.budget <= 0:
            raise RequestTooLarge("request over its byte budget")
        self._arm()
        view = memoryview(buffer)
        received = self.connection.recv_into(view[: min(len(view), self.budget)])
        self.budget -= received
        return received

    def write(self, data: Any) -> int:
        self._arm()
        self.connection.sendall(data)
        return len(data)


class DeadlineHandler(BaseHTTPRequestHandler):
    """A request handler whose reads and writes share one deadline and a byte budget (see ``Server``).

    Timeouts, resets and an exhausted budget close the connection quietly: they are the client's doing."""

    server_version = "nova-gitops"

    def setup(self) -> None:
        limits = getattr(self.server, "limits", None)
        deadline, budget = limits if isinstance(limits, tuple) else (REQUEST_DEADLINE, MAX_REQUEST_BYTES)
        self.connection = self.request
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, True)
        raw = _DeadlineSocket(self.connection, time.monotonic() + deadline, budget)
        self.rfile = io.BufferedReader(raw)
        self.wfile = raw  # type: ignore[assignment]  # unbuffered: every write is sent within the deadline

    def handle(self) -> None:
        try:
            super().handle()
        except OSError:  # TimeoutError, RequestTooLarge, a reset: the connection is closed below
            self.close_connection = True

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            self.rfile.close()

    def log_message(self, format: str, *args: object) -> None:  # our JSON log says what matters
        return


def _handler(metrics: Metrics) -> type[BaseHTTPRequestHandler]:
    class Handler(DeadlineHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                self._send(200, metrics.exposition(), CONTENT_TYPE)
            elif path == "/healthz":
                alive = metrics.alive()
                self._send(200 if alive else 503, "ok\n" if alive else "loop stopped\n")
            elif path == "/readyz" and metrics.leading is not None:
                leading = metrics.leading()
                self._send(200 if leading else 503, "leading\n" if leading else "not the leader\n")
            elif path == "/readyz":
                ready = metrics.ready
                self._send(200 if ready else 503, "ok\n" if ready else "no successful reconcile yet\n")
            else:
                self._send(404, "not found\n")

        def _send(self, code: int, text: str, content_type: str = "text/plain; charset=utf-8") -> None:
            body = text.encode()
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


class _BoundedHTTPServer(ThreadingHTTPServer):
    """``ThreadingHTTPServer`` with a cap on the threads it runs (one per connection being served)."""

    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        *,
        deadline: float,
        max_connections: int,
        max_request_bytes: int,
    ) -> None:
        super().__init__(address, handler)
        self.limits = (deadline, max_request_bytes)
        self.slots = threading.BoundedSemaphore(max_connections)
        self.refused = 0  # connections answered 503 because every slot was taken

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            self.refused += 1
            try:  # the accepting thread must never wait on a client: a best-effort answer, then close
                request.setblocking(False)
                request.send(OVERLOADED)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:  # no traceback on stderr per client
        return


class Server:
    """A small HTTP server in a daemon thread; ``address.port`` 0 picks a free port (see ``port``).

    ``handler`` should derive from ``DeadlineHandler``. ``deadline`` (seconds for a whole request),
    ``max_connections`` and ``max_request_bytes`` (per connection) bound what clients can hold; tests
    pass small values."""

    def __init__(
        self,
        address: Address,
        handler: type[BaseHTTPRequestHandler],
        *,
        deadline: float = REQUEST_DEADLINE,
        max_connections: int = MAX_CONNECTIONS,
        max_request_bytes: int = MAX_REQUEST_BYTES,
    ) -> None:
        self.httpd = _BoundedHTTPServer(
            (address.host, address.port),
            handler,
            deadline=deadline,
            max_connections=max_connections,
            max_request_bytes=max_request_bytes,
        )
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="nova-http", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def refused(self) -> int:
        return self.httpd.refused

    def start(self) -> Server:
        self.thread.start()
        return self

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def metrics_server(
    address: Address,
    metrics: Metrics,
    *,
    deadline: float = REQUEST_DEADLINE,
    max_connections: int = MAX_CONNECTIONS,
) -> Server:
    return Server(address, _handler(metrics), deadline=deadline, max_connections=max_connections)
