"""The webhook receiver: a signed push wakes the loop early; nothing else gets through.

Checks, in order, before anything is read into memory: the method is POST; the body length is declared
once (``Content-Length``; chunked bodies are refused, two Content-Length headers are 400) as ASCII digits
only — ``str.isdigit`` also accepts ``²``, which ``int`` refuses, and ``+5``, ``-1`` or ``0x5`` are not
HTTP (400) — and is at most 1 MiB (413 otherwise, without reading it). The whole request, slow or not,
must arrive within ``REQUEST_DEADLINE`` seconds, and at most ``MAX_CONNECTIONS`` are served at once
(``serving.Server``). Then
the body is read and its signature verified with a constant-time compare (``hmac.compare_digest``):

- GitHub (Gitea and Forgejo send the same): ``X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>``
- GitLab: ``X-Gitlab-Token: <token>`` (GitLab sends the token itself, not a signature)
- generic: ``X-Nova-Signature-256: [sha256=]<hex HMAC-SHA256(secret, body)>``

A request that carries none of the configured headers is unsigned (401); one whose signature is wrong is
refused (403). A good request only enqueues a trigger and answers 202: the receiver runs in threads of its
own and never waits for the loop, so a slow render never makes a git host's delivery time out.
The payload is not trusted for anything: the loop fetches the source itself.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from http.server import BaseHTTPRequestHandler

from nova_gitops.controller.logs import JsonLog
from nova_gitops.controller.ports import Triggers
from nova_gitops.controller.serving import MAX_CONNECTIONS, REQUEST_DEADLINE, DeadlineHandler, Server
from nova_gitops.controller.settings import Address, WebhookSecrets

MAX_BODY_BYTES = 1024 * 1024
MAX_HEADER_BYTES = 64 * 1024  # request line and headers
CONTENT_LENGTH = re.compile(r"[0-9]{1,18}")  # ASCII digits; more than 18 is over any limit (413)
GITHUB_HEADER = "X-Hub-Signature-256"
GITLAB_HEADER = "X-Gitlab-Token"
GENERIC_HEADER = "X-Nova-Signature-256"
TRIGGER_REASON = "webhook"


def hmac_sha256(secret: str, body: bytes) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify(secrets: WebhookSecrets, headers: dict[str, str], body: bytes) -> int:
    """The HTTP status a request deserves: 202 (accepted), 401 (unsigned) or 403 (bad signature).
    ``headers`` keys are lower-case."""
    checks: list[bool] = []
    github = headers.get(GITHUB_HEADER.lower())
    if secrets.github and github is not None:
        expected = "sha256=" + hmac_sha256(secrets.github, body)
        checks.append(hmac.compare_digest(github.strip().encode(), expected.encode()))
    gitlab = headers.get(GITLAB_HEADER.lower())
    if secrets.gitlab and gitlab is not None:
        checks.append(hmac.compare_digest(gitlab.encode(), secrets.gitlab.encode()))
    generic = headers.get(GENERIC_HEADER.lower())
    if secrets.generic and generic is not None:
        given = generic.strip().removeprefix("sha256=")
        checks.append(hmac.compare_digest(given.encode(), hmac_sha256(secrets.generic, body).encode()))
    if not checks:
        return 401
    return 202 if all(checks) else 403


def content_length(values: list[str]) -> tuple[int | None, int, str]:
    """``(length, 0, "")`` from the request's Content-Length header values, or ``(None, status, why)``.

    Strict: exactly one header, optional whitespace around ASCII digits, nothing else (RFC 9110 §8.6)."""
    if not values:
        return None, 411, "Content-Length required"
    if len(values) > 1:
        return None, 400, "more than one Content-Length"
    text = values[0].strip(" \t")
    if not text.isascii() or not text.isdigit():
        return None, 400, "Content-Length must be ASCII digits"
    if CONTENT_LENGTH.fullmatch(text) is None or int(text) > MAX_BODY_BYTES:
        return None, 413, f"body over {MAX_BODY_BYTES} bytes"
    return int(text), 0, ""


def _handler(secrets: WebhookSecrets, triggers: Triggers, log: JsonLog) -> type[BaseHTTPRequestHandler]:
    class Handler(DeadlineHandler):
        def do_POST(self) -> None:
            if self.headers.get("Transfer-Encoding"):
                return self._refuse(411, "send a Content-Length; chunked bodies are not accepted")
            length, status, why = content_length(self.headers.get_all("Content-Length") or [])
            if length is None:
                return self._refuse(status, why)
            body = self.rfile.read(length)
            if len(body) != length:
                return self._refuse(400, "body shorter than Content-Length")
            headers = {key.lower(): value for key, value in self.headers.items()}
            status = verify(secrets, headers, body)
            if status == 401:
                return self._refuse(401, "unsigned request: no configured signature header")
            if status == 403:
                return self._refuse(403, "signature does not match")
            triggers.put(TRIGGER_REASON)
            self._reply(202, "queued\n")
            return None

        def do_GET(self) -> None:
            self._refuse(405, "POST a push event")

        do_PUT = do_GET
        do_DELETE = do_GET

        def _refuse(self, code: int, why: str) -> None:
            log.warning("webhook request refused", status=code, why=why, peer=self.client_address[0])
            self.close_connection = True
            self._reply(code, why + "\n")

        def _reply(self, code: int, text: str) -> None:
            data = text.encode()
            self.send_response(code)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)

    return Handler


def webhook_server(
    address: Address,
    secrets: WebhookSecrets,
    triggers: Triggers,
    log: JsonLog,
    *,
    deadline: float = REQUEST_DEADLINE,
    max_connections: int = MAX_CONNECTIONS,
) -> Server:
    """A receiver bound to ``address`` only (``start()`` it; port 0 picks a free port). ``deadline`` is
    the time a whole request may take; ``max_connections`` how many are served at once."""
    if not secrets.any:
        raise ValueError("the webhook needs at least one secret: it never accepts unsigned requests")
    return Server(
        address,
        _handler(secrets, triggers, log),
        deadline=deadline,
        max_connections=max_connections,
        max_request_bytes=MAX_HEADER_BYTES + MAX_BODY_BYTES,
    )
