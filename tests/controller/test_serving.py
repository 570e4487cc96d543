"""Health, readiness and Prometheus metrics over real HTTP.

Behaviours covered:
- /readyz is 503 until a reconcile succeeds, then 200; /healthz follows the loop's liveness;
- with leader election, /readyz is 200 exactly while the controller leads (a follower is never an endpoint
  for webhooks), whatever the reconciles did;
- /metrics is the Prometheus text format with reconcile counts by outcome, the duration histogram
  (cumulative buckets, +Inf equals the count), commits, placement changes, unscheduled objects and
  reschedules by action; unknown paths are 404;
- the exposition keeps a fixed number of lines however many reconciles ran (memory stays flat);
- a scraper that asks for OpenMetrics gets it; two controllers in one process keep their own registries.
"""

from __future__ import annotations

import http.client
import io
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from nova_gitops.controller import looping, statusreading
from nova_gitops.controller.logs import JsonLog
from nova_gitops.controller.serving import Metrics, Server, metrics_server
from nova_gitops.controller.settings import Address
from nova_gitops.controller.sourcereading import DirectorySource
from tests.controller.helpers import Fleet


@pytest.fixture
def served() -> Iterator[tuple[Metrics, Server]]:
    metrics = Metrics()
    server = metrics_server(Address("127.0.0.1", 0), metrics).start()
    yield metrics, server
    server.close()


def get(server: Server, path: str) -> tuple[int, str, str]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type") or "", response.read().decode()
    finally:
        connection.close()


def test_readiness_follows_the_first_successful_reconcile(served: tuple[Metrics, Server]) -> None:
    metrics, server = served
    assert get(server, "/readyz")[0] == 503
    metrics.reconciled("failed", 0.1)
    assert get(server, "/readyz")[0] == 503
    metrics.reconciled("unchanged", 0.1)
    assert get(server, "/readyz")[0] == 200


def test_with_leader_election_readiness_is_leadership(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path)
    leading = threading.Event()
    settings = fleet.settings()
    controller = looping.Controller(
        settings,
        source=DirectorySource(fleet.source, watch_changes=False),
        status=statusreading.NoStatus(),
        clock=fleet.clock,
        log=JsonLog(io.StringIO()),
        is_leader=leading.is_set,
    )
    server = metrics_server(Address("127.0.0.1", 0), controller.metrics).start()
    try:
        assert get(server, "/readyz")[::2] == (503, "not the leader\n")
        leading.set()
        assert get(server, "/readyz")[::2] == (200, "leading\n")
        controller.metrics.reconciled("published", 0.1)
        leading.clear()
        assert get(server, "/readyz")[0] == 503
    finally:
        server.close()


def test_liveness_follows_the_loop(served: tuple[Metrics, Server]) -> None:
    metrics, server = served
    assert get(server, "/healthz")[0] == 200
    metrics.alive = lambda: False
    assert get(server, "/healthz")[0] == 503
    assert get(server, "/nothing")[0] == 404


def test_metrics_in_prometheus_text_format(served: tuple[Metrics, Server]) -> None:
    metrics, server = served
    metrics.reconciled("published", 0.2, moved=2, unscheduled=3)
    metrics.reconciled("unchanged", 3.0, unscheduled=1)
    metrics.rescheduled("moved")
    metrics.rescheduled("reported", 2)
    status, content_type, text = get(server, "/metrics")
    assert status == 200
    assert content_type.startswith("text/plain; version=0.0.4")
    samples = {
        name: float(value)
        for name, value in (line.rsplit(" ", 1) for line in text.splitlines() if not line.startswith("#"))
    }
    assert samples['nova_controller_reconciles_total{outcome="published"}'] == 1
    assert samples['nova_controller_reconciles_total{outcome="unchanged"}'] == 1
    assert samples['nova_controller_reconciles_total{outcome="failed"}'] == 0  # every outcome from the start
    assert samples["nova_controller_commits_total"] == 1
    assert samples["nova_controller_placement_changes_total"] == 2
    assert samples["nova_controller_unscheduled_objects"] == 1
    assert samples['nova_controller_reschedules_total{action="moved"}'] == 1
    assert samples['nova_controller_reschedules_total{action="reported"}'] == 2
    assert samples['nova_controller_reconcile_duration_seconds_bucket{le="0.25"}'] == 1
    assert samples['nova_controller_reconcile_duration_seconds_bucket{le="5.0"}'] == 2
    assert samples['nova_controller_reconcile_duration_seconds_bucket{le="+Inf"}'] == 2
    assert samples["nova_controller_reconcile_duration_seconds_count"] == 2
    assert samples["nova_rollout_wave"] == -1
    for line in text.splitlines():
        if line.startswith("# TYPE"):
            assert line.split()[3] in {"counter", "gauge", "histogram"}


def test_openmetrics_when_the_scraper_asks(served: tuple[Metrics, Server]) -> None:
    metrics, server = served
    metrics.reconciled("published", 0.2)
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        connection.request(
            "GET", "/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"}
        )
        response = connection.getresponse()
        text = response.read().decode()
    finally:
        connection.close()
    assert (response.getheader("Content-Type") or "").startswith("application/openmetrics-text")
    assert "# TYPE nova_controller_reconciles counter" in text and text.endswith("# EOF\n")


def test_two_controllers_in_one_process_keep_their_own_numbers() -> None:
    first, second = Metrics(), Metrics()
    first.reconciled("published", 0.1, moved=1)
    assert first.value("nova_controller_commits_total") == 1
    assert second.value("nova_controller_commits_total") == 0
    assert "nova_controller_commits_total 0.0" in second.exposition()


def test_the_exposition_does_not_grow() -> None:
    metrics = Metrics()
    metrics.reconciled("published", 0.1)
    lines = len(metrics.exposition().splitlines())
    for index in range(500):
        metrics.reconciled(("published", "unchanged", "failed")[index % 3], index / 100)
    assert len(metrics.exposition().splitlines()) == lines
