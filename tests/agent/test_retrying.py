"""Retry decisions: a schema-violating apply (500 "failed to create typed patch object") and 422/400 are the
object's validation errors, and so are 403 (forbidden by RBAC) and 413 (too large), backed off as long; 409 a
conflict; other 5xx/429 transient; a failed object is retried only after its backoff or when its manifest
changes; the agent's back-offs keep their parameters and one cluster's jitter is reproducible. (The back-off
formula itself is tested with the shared client, tests/unit/clients/test_backoff.py.)"""

from __future__ import annotations

import pytest

from nova_agent.retrying import (
    STATUS_PUSH_BACKOFF,
    FailureKind,
    classify_api_failure,
    cluster_jitter,
    may_retry,
    pass_backoff,
    record_failure,
)


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


def test_failed_passes_back_off_from_the_interval_with_up_to_ten_percent_jitter() -> None:
    backoff = pass_backoff(interval=30.0)
    delays = [backoff.delay(attempt, cluster_jitter("c1")) for attempt in range(1, 8)]
    for attempt, delay in enumerate(delays, start=1):
        plain = min(600.0, 30.0 * 2 ** (attempt - 1))
        assert plain <= delay <= min(600.0, plain * 1.1)
    assert delays[-1] == 600.0
    assert pass_backoff(interval=900.0).delay(5, cluster_jitter("c1")) == 900.0  # a long interval is the cap


def test_one_clusters_jitter_is_the_same_on_every_run_and_differs_between_clusters() -> None:
    first, again, other = cluster_jitter("c1"), cluster_jitter("c1"), cluster_jitter("c2")
    ours = [first() for _ in range(5)]
    assert ours == [again() for _ in range(5)]
    assert ours != [other() for _ in range(5)]


def test_status_pushes_back_off_briefly_without_jitter() -> None:
    assert [STATUS_PUSH_BACKOFF.delay(attempt) for attempt in range(1, 7)] == [0.2, 0.4, 0.8, 1.6, 3.2, 5.0]


def test_failed_object_waits_for_backoff_unless_its_manifest_changes() -> None:
    failure = record_failure(None, "d1", FailureKind.INVALID, "bad", now=100.0)
    assert not may_retry(failure, "d1", 101.0)
    assert may_retry(failure, "d2", 101.0)
    assert may_retry(failure, "d1", failure.retry_at)
    again = record_failure(failure, "d1", FailureKind.INVALID, "bad", now=failure.retry_at)
    assert again.attempts == 2 and again.retry_at - failure.retry_at > failure.retry_at - 100.0
