"""``/healthz``, ``/readyz`` and ``/metrics`` on the configured address.

The metrics are prometheus_client's: it owns the exposition formats (the Prometheus text format, and
OpenMetrics when a scraper asks for it), escaping, histogram buckets and thread safety, which a hand-written
exposition had to get right again (as nova_agent/metrics.py already does). Each ``Metrics`` keeps a
``CollectorRegistry`` of its own, never the library's process-global one, so tests and two controllers in one
process never share or clash over a series. No label can grow without bound (outcomes and reschedule
actions are closed sets; a headroom loss is a cluster or a domain value of the fleet, and the series of one
gone is removed), so memory stays flat however long the controller runs. Every metric is described
in docs/metrics.md. The HTTP server stays ours rather than prometheus_client's ``start_http_server``: it also
answers the probes, and it bounds what a client can hold (below).

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
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import choose_encoder

from nova_gitops.controller.settings import Address

DURATION_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
OUTCOMES = ("published", "unchanged", "superseded", "failed")
RESCHEDULE_ACTIONS = ("moved", "reported", "stuck")
REQUEST_DEADLINE = 10.0  # seconds for a whole request: request line, headers, body and the answer
MAX_CONNECTIONS = 32  # connections served at once; more are answered 503 and closed without a thread
MAX_REQUEST_BYTES = 64 * 1024  # what a GET (request line and headers) may send
OVERLOADED = (
    b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n"
    b"Retry-After: 1\r\nConnection: close\r\n\r\ntoo busy\r\n"
)


def _rollout_gauges(registry: CollectorRegistry) -> tuple[Gauge, Gauge, Gauge, Gauge]:
    """The rollout's gauges: the wave it is at, whether it is paused, for how long it has run, and whether
    its requests do not read."""
    return (
        Gauge(
            "nova_rollout_wave",
            "Index of the wave the rollout is at (-1: none in progress).",
            registry=registry,
        ),
        Gauge(
            "nova_rollout_paused",
            "1 while the rollout is paused (a failed gate or a request).",
            registry=registry,
        ),
        Gauge(
            "nova_rollout_duration_seconds",
            "Time since the rollout in progress started.",
            registry=registry,
        ),
        Gauge(
            "nova_rollout_requests_unreadable",
            "1 while rollout/requests.yaml does not read: the rollout is held paused for it.",
            registry=registry,
        ),
    )


class Metrics:
    """The controller's metrics in a registry of its own (see the module docstring), plus the health and
    readiness facts ``/healthz`` and ``/readyz`` answer from. Documented in docs/metrics.md."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.reconciles = Counter(
            "nova_controller_reconciles", "Reconciles, by outcome.", ["outcome"], registry=self.registry
        )
        self.duration = Histogram(
            "nova_controller_reconcile_duration_seconds",
            "Time of one reconcile.",
            buckets=DURATION_BUCKETS,
            registry=self.registry,
        )
        self.commits = Counter(
            "nova_controller_commits", "Commits pushed to the rendered repository.", registry=self.registry
        )
        self.placement_changes = Counter(
            "nova_controller_placement_changes",
            "Groups moved between clusters by commits.",
            registry=self.registry,
        )
        self.unscheduled = Gauge(
            "nova_controller_unscheduled_objects",
            "Objects the last plan could not place.",
            registry=self.registry,
        )
        self.reschedules = Counter(
            "nova_controller_reschedules",
            "Reschedule requests by action taken.",
            ["action"],
            registry=self.registry,
        )
        self.failbacks = Counter(
            "nova_controller_failbacks", "Groups moved back to a higher tier.", registry=self.registry
        )
        self.triggers = Counter(
            "nova_controller_triggers", "Webhook and watch triggers received.", registry=self.registry
        )
        self.rollout_wave, self.rollout_paused, self.rollout_seconds, self.rollout_requests_unreadable = (
            _rollout_gauges(self.registry)
        )
        self.headroom_stranded = Gauge(
            "nova_headroom_stranded_groups",
            "Groups the loss of a cluster (or of every cluster with LABEL=VALUE) would strand.",
            ["lost"],
            registry=self.registry,
        )
        self.headroom_computed_at = Gauge(
            "nova_headroom_computed_timestamp_seconds",
            "When the failover headroom of the last placement was computed (Unix time).",
            registry=self.registry,
        )
        self._losses: frozenset[str] = frozenset()
        for outcome in OUTCOMES:  # every series exists from the start: rate() and absent() need no guess
            self.reconciles.labels(outcome)
        for action in RESCHEDULE_ACTIONS:
            self.reschedules.labels(action)
        self.rollout_wave.set(-1)
        self.ready = False
        self.alive: Callable[[], bool] = lambda: True
        self.leading: Callable[[], bool] | None = None  # None: no leader election

    def reconciled(
        self, outcome: str, duration: float, *, moved: int = 0, unscheduled: int | None = None
    ) -> None:
        self.reconciles.labels(outcome if outcome in OUTCOMES else "failed").inc()
        self.duration.observe(duration)
        if outcome == "published":
            self.commits.inc()
            self.placement_changes.inc(moved)
        if unscheduled is not None:
            self.unscheduled.set(unscheduled)
        if outcome != "failed":
            self.ready = True

    def rescheduled(self, action: str, count: int = 1) -> None:
        self.reschedules.labels(action).inc(count)

    def failed_back(self, count: int) -> None:
        self.failbacks.inc(count)

    def rolled_out(self, wave: int, paused: bool, seconds: float, requests_unreadable: bool = False) -> None:
        self.rollout_wave.set(wave)
        self.rollout_paused.set(int(paused))
        self.rollout_seconds.set(seconds)
        self.rollout_requests_unreadable.set(int(requests_unreadable))

    def headroom_computed(self, stranded: Mapping[str, int], at: float) -> None:
        """A failover headroom computed at ``at`` (Unix time): a series per current loss (loss name →
        groups it strands); the series of a loss no longer computed (a cluster gone) is removed, so the
        label set is the fleet's clusters (or domain values), bounded like the fleet."""
        for gone in self._losses - stranded.keys():
            self.headroom_stranded.remove(gone)
        for lost, count in stranded.items():
            self.headroom_stranded.labels(lost).set(count)
        self._losses = frozenset(stranded)
        self.headroom_computed_at.set(at)

    def triggered(self) -> None:
        self.triggers.inc()

    def scrape(self, accept: str = "") -> tuple[bytes, str]:
        """The scrape and its content type, in the format ``accept`` (a request's Accept header) asks for:
        the Prometheus text format by default, OpenMetrics when the scraper asks for it."""
        encoder, content_type = choose_encoder(accept)
        return encoder(self.registry), content_type

    def exposition(self) -> str:
        """The scrape in the Prometheus text format."""
        return self.scrape()[0].decode()

    def value(self, name: str, **labels: str) -> float | None:
        """The current value of one sample (e.g. ``nova_rollout_paused``), None when there is none."""
        return self.registry.get_sample_value(name, labels)


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
                body, content_type = metrics.scrape(self.headers.get("Accept", ""))
                self._send(200, body, content_type)
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

        def _send(
            self, code: int, text: str | bytes, content_type: str = "text/plain; charset=utf-8"
        ) -> None:
            body = text if isinstance(text, bytes) else text.encode()
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
        if ":" in address[0]:  # an IPv6 address (parse_address takes ``[::1]:PORT`` as ``::1``)
            self.address_family = socket.AF_INET6
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
