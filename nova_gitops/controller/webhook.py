"""The webhook receiver: a signed push wakes the loop early; nothing else gets through.

Checks, in order, before anything is read into memory: the method is POST; the body length is declared
(``Content-Length``; chunked bodies are refused) and at most 1 MiB (413 otherwise, without reading it). Then
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
from http.server import BaseHTTPRequestHandler

from nova_gitops.controller.logs import JsonLog
from nova_gitops.controller.ports import Triggers
from nova_gitops.controller.serving import Server
from nova_gitops.controller.settings import Address, WebhookSecrets

MAX_BODY_BYTES = 1024 * 1024
READ_TIMEOUT = 10.0
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


def _handler(secrets: WebhookSecrets, triggers: Triggers, log: JsonLog) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "nova-gitops"
        timeout = READ_TIMEOUT  # a client that stalls mid-body loses its connection, not a thread forever

        def do_POST(self) -> None:
            if self.headers.get("Transfer-Encoding"):
                return self._refuse(411, "send a Content-Length; chunked bodies are not accepted")
            length_text = self.headers.get("Content-Length")
            if length_text is None or not length_text.strip().isdigit():
                return self._refuse(411, "Content-Length required")
            length = int(length_text)
            if length > MAX_BODY_BYTES:
                return self._refuse(413, f"body over {MAX_BODY_BYTES} bytes")
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

        def log_message(self, format: str, *args: object) -> None:  # our JSON log says what matters
            return

    return Handler


def webhook_server(address: Address, secrets: WebhookSecrets, triggers: Triggers, log: JsonLog) -> Server:
    """A receiver bound to ``address`` only (``start()`` it; port 0 picks a free port)."""
    if not secrets.any:
        raise ValueError("the webhook needs at least one secret: it never accepts unsigned requests")
    return Server(address, _handler(secrets, triggers, log))
