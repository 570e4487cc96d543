"""Retry decisions: a schema-violating apply (500 "failed to create typed patch object") and 422/400 are the
object's validation errors, and so are 403 (forbidden by RBAC) and 413 (too large), backed off as long; 409 a
conflict; other 5xx/429 transient; backoff grows exponentially up to its cap; jitter is bounded and
deterministic; a failed object is retried only after its backoff or when its manifest changes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nova_agent.retrying import FailureKind, backoff_delay, classify_api_failure, may_retry, record_failure


@pytest.mark.parametrize(
    ("status", "message", "kind"),
    [
        (
            500,
            "failed to create typed patch object (/v1, Kind=Widget): .spec.size: expected integer",
            FailureKind.INVALID,
        ),
        (422, "Deployment.apps is invalid", FailureKind.INVALID),
        (400, "bad request", FailureKind.INVALID),
        (403, 'secrets is forbidden: User "nova-agent" cannot patch resource', FailureKind.INVALID),
        (413, "Request entity too large: limit is 3145728", FailureKind.INVALID),
        (409, "Apply failed with 1 conflict", FailureKind.CONFLICT),
        (500, "etcdserver: request timed out", FailureKind.TRANSIENT),
        (503, "unavailable", FailureKind.TRANSIENT),
        (429, "too many requests", FailureKind.TRANSIENT),
        (404, 'namespaces "x" not found', FailureKind.TRANSIENT),
    ],
)
def test_classification(status: int, message: str, kind: FailureKind) -> None:
    assert classify_api_failure(status, message) is kind


@settings(max_examples=100)
@given(st.integers(1, 60), st.floats(0.1, 100), st.floats(1, 1000), st.text(max_size=5))
def test_backoff_grows_and_is_capped(attempt: int, base: float, cap: float, key: str) -> None:
    delay = backoff_delay(attempt, base=base, cap=cap, jitter_key=key)
    assert 0 < delay <= cap
    assert backoff_delay(attempt + 1, base=base, cap=cap) >= backoff_delay(attempt, base=base, cap=cap)
    assert delay == backoff_delay(attempt, base=base, cap=cap, jitter_key=key)


def test_failed_object_waits_for_backoff_unless_its_manifest_changes() -> None:
    failure = record_failure(None, "d1", FailureKind.INVALID, "bad", now=100.0)
    assert not may_retry(failure, "d1", 101.0)
    assert may_retry(failure, "d2", 101.0)
    assert may_retry(failure, "d1", failure.retry_at)
    again = record_failure(failure, "d1", FailureKind.INVALID, "bad", now=failure.retry_at)
    assert again.attempts == 2 and again.retry_at - failure.retry_at > failure.retry_at - 100.0
