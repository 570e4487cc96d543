"""The webhook receiver over real HTTP on loopback.

Behaviours covered:
- GitHub (X-Hub-Signature-256), GitLab (X-Gitlab-Token) and generic (X-Nova-Signature-256) requests with the
  right secret are accepted (202) and enqueue exactly one trigger each;
- a wrong signature is refused (403), an unsigned request (401), an oversized body (413, not read), a
  missing Content-Length (411), a GET (405); none of them triggers anything;
- a header of a method that is not configured does not count as a signature;
- the receiver refuses to start without a secret; secrets never appear in its log lines.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import io
import json
from collections.abc import Iterator

import pytest

from nova_gitops.controller import webhook
from nova_gitops.controller.logs import JsonLog
from nova_gitops.controller.ports import Triggers
from nova_gitops.controller.serving import Server
from nova_gitops.controller.settings import Address, WebhookSecrets

GITHUB_SECRET = "gh-s3cret-value"
GITLAB_TOKEN = "gl-t0ken-value"
GENERIC_SECRET = "generic-s3cret"
BODY = json.dumps({"ref": "refs/heads/main", "after": "0" * 40}).encode()


class Receiver:
    def __init__(self, secrets: WebhookSecrets) -> None:
        self.triggers = Triggers()
        self.log_stream = io.StringIO()
        self.server: Server = webhook.webhook_server(
            Address("127.0.0.1", 0),
            secrets,
            self.triggers,
            JsonLog(self.log_stream, secrets=[GITHUB_SECRET, GITLAB_TOKEN, GENERIC_SECRET]),
        ).start()

    def post(self, body: bytes, headers: dict[str, str], *, length: int | None = None) -> int:
        connection = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=10)
        try:
            connection.putrequest("POST", "/")
            for key, value in headers.items():
                connection.putheader(key, value)
            if length is not None:
                connection.putheader("Content-Length", str(length))
            connection.endheaders()
            if length is not None and length <= len(body):
                connection.send(body[:length])
            response = connection.getresponse()
            response.read()
            return response.status
        finally:
            connection.close()

    def get(self) -> int:
        connection = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=10)
        try:
            connection.request("GET", "/")
            response = connection.getresponse()
            response.read()
            return response.status
        finally:
            connection.close()

    def queued(self) -> list[str]:
        return self.triggers.wait(0)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    receiver = Receiver(WebhookSecrets(github=GITHUB_SECRET, gitlab=GITLAB_TOKEN, generic=GENERIC_SECRET))
    yield receiver
    receiver.server.close()


def signature(secret: str, body: bytes) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Hub-Signature-256": "sha256=" + signature(GITHUB_SECRET, BODY), "X-GitHub-Event": "push"},
        {"X-Gitlab-Token": GITLAB_TOKEN, "X-Gitlab-Event": "Push Hook"},
        {"X-Nova-Signature-256": "sha256=" + signature(GENERIC_SECRET, BODY)},
        {"X-Nova-Signature-256": signature(GENERIC_SECRET, BODY)},
    ],
    ids=["github", "gitlab", "generic", "generic-bare-hex"],
)
def test_good_signatures_are_accepted_and_enqueue_one_trigger(
    receiver: Receiver, headers: dict[str, str]
) -> None:
    assert receiver.post(BODY, headers, length=len(BODY)) == 202
    assert receiver.queued() == [webhook.TRIGGER_REASON]


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"X-Hub-Signature-256": "sha256=" + signature("wrong", BODY)}, 403),
        ({"X-Hub-Signature-256": signature(GITHUB_SECRET, BODY)}, 403),  # without the sha256= prefix
        ({"X-Gitlab-Token": "wrong"}, 403),
        ({"X-Nova-Signature-256": "sha256=" + signature(GENERIC_SECRET, BODY + b" ")}, 403),
        ({}, 401),
        ({"X-Hub-Signature": "sha1=abc"}, 401),  # the old SHA-1 header is not a signature we accept
        (
            {"X-Hub-Signature-256": "sha256=" + signature(GITHUB_SECRET, BODY), "X-Gitlab-Token": "wrong"},
            403,
        ),
    ],
    ids=[
        "github-wrong",
        "github-no-prefix",
        "gitlab-wrong",
        "generic-tampered",
        "unsigned",
        "sha1",
        "one-bad",
    ],
)
def test_bad_and_unsigned_requests_are_refused_and_trigger_nothing(
    receiver: Receiver, headers: dict[str, str], status: int
) -> None:
    assert receiver.post(BODY, headers, length=len(BODY)) == status
    assert receiver.queued() == []


def test_oversized_and_unsized_bodies_are_refused_without_reading(receiver: Receiver) -> None:
    headers = {"X-Hub-Signature-256": "sha256=" + signature(GITHUB_SECRET, b"")}
    # only the headers are sent: the answer comes without the receiver waiting for (or reading) the body
    assert receiver.post(b"", headers, length=webhook.MAX_BODY_BYTES + 1) == 413
    assert receiver.post(BODY, {"X-Gitlab-Token": GITLAB_TOKEN}) == 411
    assert receiver.get() == 405
    assert receiver.queued() == []


def test_a_method_that_is_not_configured_is_no_signature() -> None:
    receiver = Receiver(WebhookSecrets(github=GITHUB_SECRET))
    try:
        assert receiver.post(BODY, {"X-Gitlab-Token": "anything"}, length=len(BODY)) == 401
        assert receiver.queued() == []
    finally:
        receiver.server.close()


def test_it_never_starts_without_a_secret() -> None:
    with pytest.raises(ValueError, match="never accepts unsigned"):
        webhook.webhook_server(Address("127.0.0.1", 0), WebhookSecrets(), Triggers(), JsonLog(io.StringIO()))


def test_secrets_never_reach_the_log(receiver: Receiver) -> None:
    receiver.post(BODY, {"X-Gitlab-Token": GITLAB_TOKEN + "x"}, length=len(BODY))
    receiver.post(BODY, {}, length=len(BODY))
    text = receiver.log_stream.getvalue()
    assert "webhook request refused" in text
    for secret in (GITHUB_SECRET, GITLAB_TOKEN, GENERIC_SECRET):
        assert secret not in text
    assert GITHUB_SECRET not in repr(WebhookSecrets(github=GITHUB_SECRET))
