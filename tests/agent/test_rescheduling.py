"""Reschedule requests: a workload short of replicas whose matching pods stay unscheduled longer than the
pending timeout gets a request in Nova's wording with its schedule group and the time it started waiting; not
before the timeout; not for scheduled-but-pending pods; not for workloads that have their replicas; not for
pods of other workloads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from nova_agent.rescheduling import reschedule_requests
from nova_gitops.api import labels as nova_labels

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
TIMEOUT = timedelta(minutes=2)


def deployment(name: str = "web", available: int = 0) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": "shop",
            "annotations": {nova_labels.SCHEDULE_GROUP: "policy-1a2b3c4d"},
        },
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}}},
        "status": {"availableReplicas": available},
    }


def pending_pod(app: str, minutes_ago: float, scheduled: str | None = "False") -> dict[str, Any]:
    created = (NOW - timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")
    status: dict[str, Any] = {"phase": "Pending"}
    if scheduled is not None:
        status["conditions"] = [{"type": "PodScheduled", "status": scheduled, "lastTransitionTime": created}]
    return {
        "metadata": {
            "name": f"{app}-p",
            "namespace": "shop",
            "labels": {"app": app},
            "creationTimestamp": created,
        },
        "status": status,
    }


def test_pending_past_timeout_becomes_a_request_in_novas_wording() -> None:
    [request] = reschedule_requests([deployment()], [pending_pod("web", 3)], NOW, TIMEOUT)
    assert request.as_entry() == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "namespace": "shop",
        "name": "web",
        "group": "policy-1a2b3c4d",
        "reason": "deployment shop/web does not have minimum replicas available",
        "since": "2026-01-01T11:57:00Z",
    }


def test_pending_without_conditions_counts_from_creation() -> None:
    assert (
        len(reschedule_requests([deployment()], [pending_pod("web", 5, scheduled=None)], NOW, TIMEOUT)) == 1
    )


def test_no_request_before_timeout_or_when_scheduled_or_available_or_unrelated() -> None:
    assert reschedule_requests([deployment()], [pending_pod("web", 1)], NOW, TIMEOUT) == []
    assert reschedule_requests([deployment()], [pending_pod("web", 9, scheduled="True")], NOW, TIMEOUT) == []
    assert reschedule_requests([deployment(available=2)], [pending_pod("web", 9)], NOW, TIMEOUT) == []
    assert reschedule_requests([deployment()], [pending_pod("other", 9)], NOW, TIMEOUT) == []
