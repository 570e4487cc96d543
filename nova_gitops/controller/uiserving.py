"""The read-only web view on ``--ui-listen`` (issue 27): the fleet's pages from what the controller holds.

It is ``serving.Server`` — the bounded HTTP server the metrics and the webhook use (a deadline per request,
a byte budget, a cap on connections) — with a handler that answers GET and HEAD only and changes nothing:

- ``/`` (fleet), ``/groups`` (``?q=`` searches, ``?page=`` pages), ``/groups/<name>``, ``/rollout``,
  ``/reconciles``: HTML from ``webui.pages``; ``/static/ui.css`` and ``/static/ui.js``: ours;
- ``/api/state``: ``{"version": N}``, which the page's script polls to fetch itself again after a reconcile
  (no reload: it moves the fresh page's regions in).

Every answer carries a Content-Security-Policy that allows scripts and styles from the server only
(``webui.pages.SERVER_CSP``: no inline script, no framing), ``nosniff``, ``no-referrer`` and ``no-store``.
A page is rendered once per version of the view and answered from memory until the next reconcile
(``RenderedPages``), so many open tabs cost the controller little; an answer is never over
``MAX_RESPONSE_BYTES``. Bound to a loopback address (the default), the server answers only requests whose
``Host`` names a loopback host: a web page elsewhere cannot read the fleet through DNS rebinding. Exposing
it wider is for an authenticating proxy (docs/ui.md).
"""

from __future__ import annotations

import ipaddress
import json
import threading
from collections import OrderedDict
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, unquote, urlsplit

from nova_gitops.clients import collection
from nova_gitops.controller.serving import MAX_CONNECTIONS, REQUEST_DEADLINE, DeadlineHandler, Server
from nova_gitops.controller.settings import Address
from nova_gitops.controller.uistate import FleetView, Snapshot
from nova_gitops.webui import pages

MAX_RESPONSE_BYTES = 4 * 1024 * 1024
"""The largest answer: a page that would be larger says so instead (the groups table is paged well below)."""
CACHED_PAGES = 64
"""Pages kept rendered for the current version (by path and query)."""
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]", "::1")
STATIC_TYPES = {"ui.css": "text/css; charset=utf-8", "ui.js": "text/javascript; charset=utf-8"}
HTML = "text/html; charset=utf-8"


def is_loopback(host: str) -> bool:
    if host.strip("[]") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_of(header: str) -> str:
    """The host a ``Host`` header names, lower-case, without its port (``[::1]:8081`` → ``[::1]``, ``[::1]``
    → ``[::1]``); anything after the host but a port keeps it whole, so it is no loopback name."""
    value = header.strip().lower()
    name, colon, port = value.rpartition(":")
    if colon and port.isdigit() and (not name.startswith("[") or name.endswith("]")):
        return name
    return value


class RenderedPages:
    """Pages rendered for one version of the view, by path and query; a new version starts afresh."""

    def __init__(self, view: FleetView) -> None:
        self.view = view
        self._lock = threading.Lock()
        self._version = -1
        self._pages: OrderedDict[str, tuple[int, bytes]] = OrderedDict()

    def page(self, target: str) -> tuple[int, bytes]:
        target = _page_of(target)
        snapshot = self.view.snapshot()
        with self._lock:
            if snapshot.version != self._version:
                self._version, self._pages = snapshot.version, OrderedDict()
            found = self._pages.get(target)
            if found is not None:
                self._pages.move_to_end(target)
                return found
        with collection.paused():  # a K=5 page builds ~100k small objects beside the controller's millions
            answer = _answer(snapshot, target, self.view)
        with self._lock:
            if snapshot.version == self._version:
                self._pages[target] = answer
                while len(self._pages) > CACHED_PAGES:
                    self._pages.popitem(last=False)
        return answer


def _page_of(target: str) -> str:
    """The page a request names: its path, with the query only for the groups table, the one page that reads
    one (``/?x=1``, ``/?x=2``… are ``/``, not a new build of the fleet page each, nor a ``git log`` each for
    a group's page)."""
    parts = urlsplit(target)
    return target if parts.path == "/groups" else parts.path


def _answer(snapshot: Snapshot, target: str, view: FleetView) -> tuple[int, bytes]:
    """The status and HTML of the page at ``target`` (a path and query)."""
    parts = urlsplit(target)
    try:
        query = parse_qs(parts.query, max_num_fields=8)
    except ValueError:  # more fields than any page of ours reads
        return 400, b"too many query fields\n"
    path = parts.path
    model = snapshot.model
    stamp, version = snapshot.stamp, snapshot.version
    if model is None:  # the first reconcile has not finished: a page that loads itself again after it
        tried = view.reconcile_rows()  # the failed ones: why there is no fleet yet
        return 503, pages.waiting_page(view.title, stamp=stamp, version=version, reconciles=tried).encode()
    if path == "/":
        return 200, pages.fleet_page(model, stamp=stamp, version=version).encode()
    if path == "/groups":
        asked = pages.GroupsQuery.of(query.get("q", [""])[0], query.get("page", ["1"])[0])
        return 200, pages.groups_page(model, asked, stamp=stamp, version=version).encode()
    if path.startswith("/groups/"):
        name = unquote(path.removeprefix("/groups/"))
        found = model.find(name)
        history = view.group_history(found.policy, found.name) if found is not None else None
        code, html = pages.group_page(model, name, stamp=stamp, version=version, history=history)
        return code, html.encode()
    if path == "/rollout":
        return 200, pages.rollout_page(model, stamp=stamp, version=version).encode()
    if path == "/reconciles":
        return 200, pages.reconciles_page(model, stamp=stamp, version=version).encode()
    return 404, b"not found\n"


class _LockedDown(DeadlineHandler):
    """Every answer of the view under the same headers (the policy, ``nosniff``, no caching), http.server's
    own refusals included; writing methods refused."""

    def _refuse(self, code: int, text: str) -> None:
        self._send(code, text.encode(), "text/plain; charset=utf-8", True)

    def _send(self, code: int, data: bytes, content_type: str, body: bool) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Content-Security-Policy", pages.SERVER_CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Cache-Control", "no-store")
        if code == 405:
            self.send_header("Allow", "GET, HEAD")
        self.end_headers()
        if body:
            self.wfile.write(data)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (a method we have no ``do_`` for, a request line or headers that
        do not parse) as our answers: plain text under the same policy, never its HTML page, and a method
        other than GET or HEAD is 405 like the writing ones: the view changes nothing."""
        self.close_connection = True
        if self.request_version == "HTTP/0.9":  # the request line did not parse: answer in HTTP/1.0
            self.request_version = "HTTP/1.0"
        code = 405 if code == 501 else code
        self._send(
            code,
            f"{code} {self.responses.get(code, ('error',))[0]}\n".encode(),
            "text/plain; charset=utf-8",
            self.command != "HEAD",
        )

    def do_POST(self) -> None:  # read-only: nothing here changes anything
        self._refuse(405, "read-only\n")

    do_PUT = do_DELETE = do_PATCH = do_POST


def _handler(view: FleetView, rendered: RenderedPages, loopback_only: bool) -> type[BaseHTTPRequestHandler]:
    class Handler(_LockedDown):
        def do_HEAD(self) -> None:
            self._serve(body=False)

        def do_GET(self) -> None:
            self._serve(body=True)

        def _serve(self, *, body: bool) -> None:
            if loopback_only and not is_loopback(host_of(self.headers.get("Host") or "")):
                return self._refuse(421, "this view answers only requests for a loopback host\n")
            target = self.path if self.path.startswith("/") else "/"
            path = urlsplit(target).path
            if path.startswith("/static/"):
                name = path.removeprefix("/static/")
                if name not in STATIC_TYPES:
                    return self._refuse(404, "not found\n")
                return self._send(200, pages.static(name), STATIC_TYPES[name], body)
            if path == "/api/state":
                state = json.dumps({"version": view.version}).encode()
                return self._send(200, state, "application/json", body)
            try:
                code, html = rendered.page(target)
            except Exception:  # a bug of ours: say so plainly, show nothing of it (no traceback, no data)
                return self._refuse(500, "this page could not be built\n")
            if len(html) > MAX_RESPONSE_BYTES:
                return self._refuse(507, "page too large: narrow it with a search (?q=)\n")
            self._send(
                code, html, HTML if html.startswith(b"<!doctype") else "text/plain; charset=utf-8", body
            )

    return Handler


def ui_server(
    address: Address,
    view: FleetView,
    *,
    deadline: float = REQUEST_DEADLINE,
    max_connections: int = MAX_CONNECTIONS,
) -> Server:
    """The web view's server on ``address`` (not yet started)."""
    pages.warm()
    handler = _handler(view, RenderedPages(view), loopback_only=is_loopback(address.host))
    return Server(address, handler, deadline=deadline, max_connections=max_connections)
