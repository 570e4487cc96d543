"""The web view's server against requests a browser never sends (issue 27), over real sockets.

Behaviours covered:
- every method other than GET and HEAD is refused with 405 and ``Allow: GET, HEAD`` (not http.server's 501
  page), and every error answer — an unknown method, a request line that does not parse, too many headers —
  carries the same Content-Security-Policy and ``nosniff`` as the pages, as plain text;
- a page that fails to build answers a plain 500 that says nothing of the failure (no traceback, no data),
  under the same headers, instead of closing the connection;
- a query string the page does not read does not make it a new page: ``/?x=1``, ``/?x=2``… are answered from
  the page already built for ``/`` (else each costs a full build of the fleet page and a cache slot, and a
  group's page a ``git log``).
"""

from __future__ import annotations

import http.client
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from nova_gitops.controller import looping, uiserving, uistate
from nova_gitops.controller.serving import Server
from nova_gitops.controller.settings import Address
from nova_gitops.webui import pages
from tests.controller.helpers import Fleet, cluster_report, deployment, policy


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[looping.Controller, uistate.FleetView, Server]]:
    fleet = Fleet(tmp_path)
    fleet.write_source("policy.yaml", policy())
    fleet.write_source("apps.yaml", deployment("web", cpu="1"))
    fleet.report(cluster_report("wlc-1", cpu="4"))
    view = uistate.FleetView(title="demo", where="--repo file:///r.git --source ./fleet")
    controller = fleet.controller(observers=[view])
    controller.journal = view
    server = uiserving.ui_server(Address("127.0.0.1", 0), view).start()
    controller.reconcile_once()
    yield controller, view, server
    server.close()


def request(server: Server, path: str, method: str = "GET") -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.request(method, path)
    response = connection.getresponse()
    response.read()
    connection.close()
    return response


def raw(server: Server, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as connection:
        connection.sendall(data)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    return answer


def test_every_other_method_is_refused_with_405_under_the_policy(
    served: tuple[looping.Controller, uistate.FleetView, Server],
) -> None:
    _, _, server = served
    for method in ("OPTIONS", "TRACE", "CONNECT", "PROPFIND", "FOO", "POST"):
        response = request(server, "/", method)
        assert response.status == 405, method
        assert response.getheader("Allow") == "GET, HEAD"
        assert response.getheader("Content-Security-Policy") == pages.SERVER_CSP
        assert response.getheader("Content-Type") == "text/plain; charset=utf-8"


def test_requests_that_do_not_parse_get_plain_text_under_the_policy(
    served: tuple[looping.Controller, uistate.FleetView, Server],
) -> None:
    _, _, server = served
    for data in (
        b"GET / HTTP/1.1\r\n" + b"X: y\r\n" * 200 + b"Host: 127.0.0.1\r\n\r\n",
        b"GET / HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n",
        b"GET / HTTP/1.1 extra\r\nHost: 127.0.0.1\r\n\r\n",
    ):
        head, _, body = raw(server, data).partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.0 4") or head.startswith(b"HTTP/1.0 5"), head
        assert f"Content-Security-Policy: {pages.SERVER_CSP}".encode() in head
        assert b"X-Content-Type-Options: nosniff" in head
        assert b"Content-Type: text/plain; charset=utf-8" in head
        assert b"<" not in body


def test_a_page_that_fails_to_build_is_a_plain_500(
    served: tuple[looping.Controller, uistate.FleetView, Server], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, _, server = served

    def broken(*args: object, **kwargs: object) -> str:
        raise RuntimeError("secret-detail in /srv/fleet")

    monkeypatch.setattr(pages, "rollout_page", broken)
    response = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    response.request("GET", "/rollout")
    answer = response.getresponse()
    text = answer.read().decode()
    response.close()
    assert answer.status == 500 and "secret-detail" not in text and "Traceback" not in text
    assert answer.getheader("Content-Security-Policy") == pages.SERVER_CSP
    assert request(server, "/").status == 200, "the server goes on answering"


def test_a_query_the_page_does_not_read_is_the_same_page(
    served: tuple[looping.Controller, uistate.FleetView, Server], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, _, server = served
    built: list[str] = []
    fleet_page = pages.fleet_page

    def counting(*args: object, **kwargs: object) -> str:
        built.append("fleet")
        return fleet_page(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pages, "fleet_page", counting)
    for number in range(5):
        assert request(server, f"/?x={number}").status == 200
    assert request(server, "/").status == 200
    assert built == ["fleet"]


def test_the_loopback_host_check_reads_the_host_as_a_browser_sends_it(
    served: tuple[looping.Controller, uistate.FleetView, Server],
) -> None:
    _, _, server = served

    def answer(host: str) -> int:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        connection.request("GET", "/api/state", headers={"Host": host})
        status = connection.getresponse().status
        connection.close()
        return status

    for host in ("localhost", "LOCALHOST:8081", "[::1]", "[::1]:8081", "127.0.0.1", "127.0.0.1:8081"):
        assert answer(host) == 200, host
    for host in ("127.0.0.1:80@evil.example", "evil.example", "localhost.evil.example:80", "[::1]x:80"):
        assert answer(host) == 421, host


def test_an_ipv6_loopback_address_is_listened_on(tmp_path: Path) -> None:
    """``--ui-listen [::1]:8081`` (parse_address reads it as ``::1``) binds IPv6, not a refusal to start."""
    view = uistate.FleetView(title="demo", where="")
    server = uiserving.ui_server(Address("::1", 0), view).start()
    try:
        connection = http.client.HTTPConnection("::1", server.port, timeout=10)
        connection.request("GET", "/api/state")
        response = connection.getresponse()
        assert response.status == 200 and response.read() == b'{"version": 0}'
        connection.close()
    finally:
        server.close()


def test_a_first_reconcile_that_failed_is_shown_not_waited_for(tmp_path: Path) -> None:
    """A controller started on a broken source has no fleet to show; its view says why (the failed
    reconcile and its problems, as the Reconciles page would), on every page, not only "waiting"."""
    fleet = Fleet(tmp_path)
    fleet.write_source("policy.yaml", policy())
    (fleet.source / "broken.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: [\n")
    fleet.report(cluster_report("wlc-1", cpu="4"))
    view = uistate.FleetView(title="demo", where="")
    controller = fleet.controller(observers=[view])
    controller.journal = view
    server = uiserving.ui_server(Address("127.0.0.1", 0), view).start()
    try:
        with pytest.raises(Exception):  # noqa: B017  the loop logs it; the view shows it
            controller.reconcile_once()
        for path in ("/", "/reconciles"):
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
            connection.request("GET", path)
            response = connection.getresponse()
            html = response.read().decode()
            connection.close()
            assert response.status == 503 and "data-reload" in html
            assert "failed" in html and "broken.yaml" in html, path
    finally:
        server.close()


def test_a_page_number_in_other_digits_is_the_first_page(
    served: tuple[looping.Controller, uistate.FleetView, Server],
) -> None:
    """``?page=²`` or ``?page=①``: str.isdigit says yes, int() says no; the groups page is the first."""
    _, _, server = served
    for page in ("%C2%B2", "%E2%91%A0", "%EF%BC%92", "-1", "1e3"):
        assert request(server, f"/groups?page={page}").status == 200, page
