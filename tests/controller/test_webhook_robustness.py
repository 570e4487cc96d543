"""The webhook receiver and the metrics server against clients that misbehave, over raw loopback sockets.

Behaviours covered:
- Content-Length is parsed strictly: ``²`` (which ``str.isdigit`` accepts and ``int`` refuses), ``-1``,
  ``+5`` and two differing headers get a 400 answer, a huge value a 413, without reading a body; optional
  whitespace around the digits is HTTP and accepted;
- a client that drips its request a byte at a time is cut off when the whole-request deadline passes, not
  when it stops sending (deadline injected small: tests never wait for the real 10 s);
- over the connection cap, new connections are answered 503 and closed without a thread each; threads stay
  within the cap; once slots free, a good signed request is accepted;
- the metrics server shares the same limits.

All loops are bounded in count and time; every socket is on 127.0.0.1.
"""

from __future__ import annotations

import io
import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from nova_gitops.controller import serving, webhook
from nova_gitops.controller.logs import JsonLog
from nova_gitops.controller.ports import Triggers
from nova_gitops.controller.settings import Address, WebhookSecrets

SECRET = "s3cret"
BODY = b'{"ref": "refs/heads/main"}'
LOOPBACK = Address("127.0.0.1", 0)


@pytest.fixture
def triggers() -> Triggers:
    return Triggers()


def start(triggers: Triggers, **limits: float) -> serving.Server:
    server = webhook.webhook_server(
        LOOPBACK,
        WebhookSecrets(generic=SECRET),
        triggers,
        JsonLog(io.StringIO()),
        **limits,  # type: ignore[arg-type]
    )
    return server.start()


@pytest.fixture
def server(triggers: Triggers) -> Iterator[serving.Server]:
    running = start(triggers, deadline=2.0)
    yield running
    running.close()


def until(condition: Callable[[], bool], what: str, timeout: float = 5.0) -> None:
    """Poll ``condition`` until it holds; past the deadline, fail saying what was awaited."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:g} s for {what}")
        time.sleep(0.01)


def connect(port: int) -> socket.socket:
    client = socket.create_connection(("127.0.0.1", port), timeout=5)
    client.settimeout(5)
    return client


def answer(client: socket.socket) -> bytes:
    """Everything the server sends until it closes (bounded: 5 s per read, 64 KiB in all)."""
    data = b""
    while len(data) < 65536:
        try:
            chunk = client.recv(4096)
        except ConnectionResetError:
            break
        if not chunk:
            break
        data += chunk
    return data


def request(port: int, headers: list[bytes], body: bytes = b"") -> bytes:
    with connect(port) as client:
        client.sendall(
            b"POST /hook HTTP/1.1\r\nHost: x\r\n" + b"".join(h + b"\r\n" for h in headers) + b"\r\n"
        )
        if body:
            client.sendall(body)
        return answer(client)


def signature(body: bytes = BODY) -> bytes:
    return f"X-Nova-Signature-256: sha256={webhook.hmac_sha256(SECRET, body)}".encode()


def status_of(response: bytes) -> int:
    return int(response.split(b" ", 2)[1]) if response.startswith(b"HTTP/") else 0


@pytest.mark.parametrize(
    ("length", "status"),
    [
        (b"\xb2", 400),  # superscript two: str.isdigit() says yes, int() says no
        (b"-1", 400),
        (b"+5", 400),
        (b"0x1a", 400),
        (b"5 5", 400),
        (b"", 400),
        (b"9" * 5000, 413),
        (b"99999999999999999999", 413),
        (str(webhook.MAX_BODY_BYTES + 1).encode(), 413),
    ],
    ids=[
        "superscript-two",
        "negative",
        "plus",
        "hex",
        "two-numbers",
        "empty",
        "5000-digits",
        "20-digits",
        "over",
    ],
)
def test_a_content_length_that_is_not_ascii_digits_is_answered(
    server: serving.Server, triggers: Triggers, length: bytes, status: int
) -> None:
    response = request(server.port, [b"Content-Length: " + length, signature()], BODY)
    assert status_of(response) == status, response
    assert triggers.wait(0) == []


def test_two_content_lengths_that_differ_are_a_400(server: serving.Server) -> None:
    headers = [b"Content-Length: %d" % len(BODY), b"Content-Length: 5", signature()]
    assert status_of(request(server.port, headers, BODY)) == 400


def test_whitespace_around_the_digits_is_http_and_accepted(
    server: serving.Server, triggers: Triggers
) -> None:
    headers = [b"Content-Length:   %d  " % len(BODY), signature()]
    assert status_of(request(server.port, headers, BODY)) == 202
    assert triggers.wait(0) == [webhook.TRIGGER_REASON]


def test_a_good_signed_request_is_still_accepted(server: serving.Server, triggers: Triggers) -> None:
    assert status_of(request(server.port, [b"Content-Length: %d" % len(BODY), signature()], BODY)) == 202


def test_a_dripping_client_is_cut_off_at_the_deadline(triggers: Triggers) -> None:
    """Each byte comes well within any per-read timeout; the deadline for the whole request still ends it."""
    deadline = 0.3
    running = start(triggers, deadline=deadline)
    try:
        with connect(running.port) as client:
            message = b"POST /hook HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n" + b"x" * 100
            started = time.monotonic()
            closed_at = None
            for byte in message:  # bounded: len(message) iterations, 20 ms each at most
                try:
                    client.sendall(bytes([byte]))
                except OSError:
                    closed_at = time.monotonic()
                    break
                time.sleep(0.02)
                if time.monotonic() - started > deadline * 10:
                    break
            client.settimeout(3)
            try:
                rest = client.recv(4096)
            except (ConnectionResetError, TimeoutError):
                rest = b"?"
            closed_at = closed_at or time.monotonic()
        assert rest in (b"", b"?") or rest.startswith(b"HTTP/")  # closed (EOF or reset), never served
        assert closed_at - started < deadline + 2.0  # loosely: well before the message finished dripping
        assert triggers.wait(0) == []
    finally:
        running.close()


def test_a_silent_client_is_closed_after_the_deadline(triggers: Triggers) -> None:
    running = start(triggers, deadline=0.2)
    try:
        with connect(running.port) as client:
            client.sendall(b"POST /hook HTTP/1.1\r\n")  # then nothing
            assert answer(client) == b""  # EOF from the server, within the 5 s read bound
    finally:
        running.close()


def test_over_the_cap_connections_are_refused_without_threads(triggers: Triggers) -> None:
    cap = 4
    running = start(triggers, deadline=5.0, max_connections=cap)  # idle clients outlive the test
    idle: list[socket.socket] = []
    try:
        base = threading.active_count()
        idle = [connect(running.port) for _ in range(cap)]
        # The server has accepted them when each holds a thread (and a slot), sending nothing.
        until(lambda: threading.active_count() >= base + cap, f"the server to take {cap} idle clients")
        extra = [connect(running.port) for _ in range(cap * 2)]
        replies = []
        for client in extra:
            with client:
                replies.append(answer(client))
        assert threading.active_count() <= base + cap
        assert all(status_of(reply) == 503 for reply in replies), replies
        assert running.refused == len(extra)
        for client in idle:
            client.close()
        accepted = 0
        for _ in range(50):  # bounded: the slots free once the server sees the idle clients' EOF
            try:
                reply = request(running.port, [b"Content-Length: %d" % len(BODY), signature()], BODY)
            except OSError:  # still over the cap: answered 503 and closed before the body was sent
                reply = b""
            if status_of(reply) == 202:
                accepted += 1
                break
            time.sleep(0.05)
        assert accepted == 1
    finally:
        for client in idle:
            client.close()
        running.close()


def test_the_metrics_server_shares_the_limits() -> None:
    metrics = serving.Metrics()
    running = serving.metrics_server(LOOPBACK, metrics, deadline=0.2, max_connections=1).start()
    try:
        base = threading.active_count()
        with connect(running.port) as holder:
            holder.sendall(b"GET /metrics HTTP/1.1\r\n")  # holds the only slot, then the deadline ends it
            until(lambda: threading.active_count() > base, "the server to give the holder its only slot")
            with connect(running.port) as other:
                assert status_of(answer(other)) in (0, 503)
            assert answer(holder) == b""
        statuses = []
        for _ in range(50):  # bounded: the holder's slot is released just after its connection closes
            with connect(running.port) as client:
                client.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
                statuses.append(status_of(answer(client)))
            if statuses[-1] != 503:
                break
            time.sleep(0.02)
        assert statuses[-1] == 200
    finally:
        running.close()


def test_the_content_length_parser_as_a_table() -> None:
    assert webhook.content_length(["12"]) == (12, 0, "")
    assert webhook.content_length([]) == (None, 411, "Content-Length required")
    assert webhook.content_length(["1", "1"])[1] == 400
    assert webhook.content_length(["\u00b2"])[1] == 400
    assert webhook.content_length(["\u0663"])[1] == 400  # Arabic-Indic three: isdigit and int both accept it
