"""Leadership around a running controller: the Lease is held for as long as this replica may still push.

Behaviours covered:
- SIGTERM during a reconcile (the loop's stop event set): the election keeps the Lease until the reconcile
  has finished and the loop returned; only then is the Lease released (empty holder);
- a replica that loses the Lease during a reconcile pushes nothing (TemporaryError, the branch is untouched),
  and publishes normally once leading again;
- an unexpected exception in an election step is reported and the campaign goes on (it still leads);
- /healthz fails once the election thread has died while the loop still runs;
"""

from __future__ import annotations

import io
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from nova_gitops import errors
from nova_gitops.controller import leaderelection, looping, serving, starting, statusreading
from nova_gitops.controller.leaderelection import KubeLeases, LeaderElector
from nova_gitops.controller.logs import JsonLog
from nova_gitops.controller.ports import SourceSnapshot
from nova_gitops.controller.settings import Address
from nova_gitops.controller.sourcereading import DirectorySource
from nova_gitops.sources.kubeapi import KubeApi
from tests.controller.helpers import Fleet, deployment, git, policy
from tests.fakekube.fixtures import KubeTarget


class BlockingSource:
    """A directory source whose read waits until ``release`` is set (a long reconcile)."""

    def __init__(self, root: Path) -> None:
        self.inner = DirectorySource(root, watch_changes=False)
        self.reading, self.release = threading.Event(), threading.Event()

    @contextmanager
    def read(self) -> Iterator[SourceSnapshot]:
        self.reading.set()
        assert self.release.wait(30)
        with self.inner.read() as snapshot:
            yield snapshot

    def changes(self) -> Iterator[None] | None:
        return None


def _fleet(tmp_path: Path) -> Fleet:
    fleet = Fleet(tmp_path)
    fleet.write_source("app.yaml", policy(clusterSelector={}), deployment())
    return fleet


def _elector(kube: KubeTarget, identity: str = "a") -> LeaderElector:
    leases = KubeLeases(KubeApi(kube.api_client), kube.namespace, "leadership")
    return LeaderElector(leases, identity, lease_duration=3, renew_deadline=2, retry_period=0.05)


def test_sigterm_during_a_reconcile_keeps_the_lease_until_the_loop_returns(
    tmp_path: Path, kube: KubeTarget
) -> None:
    fleet = _fleet(tmp_path)
    source = BlockingSource(fleet.source)
    elector = _elector(kube)
    leading = threading.Event()
    controller = fleet.controller(source=source)
    controller.is_leader = lambda: elector.is_leader
    campaign = leaderelection.Campaign(elector, on_started=leading.set).start()
    assert leading.wait(10)
    stop = threading.Event()
    thread = threading.Thread(target=starting.serve, args=(controller, stop), kwargs={"campaign": campaign})
    thread.start()
    assert source.reading.wait(10)
    stop.set()  # what the SIGTERM handler does
    controller.triggers.put(looping.STOP_REASON)
    thread.join(0.5)  # several retry periods: a campaign waiting on the loop's event would release now
    record = elector.port.get()
    assert record is not None and record.holder == "a" and elector.is_leader
    source.release.set()
    thread.join(30)
    assert not thread.is_alive() and not campaign.alive
    record = elector.port.get()
    assert record is not None and record.holder == ""


class LosingSource:
    """A directory source during whose read this replica loses the Lease (``leading`` is cleared)."""

    def __init__(self, root: Path, leading: threading.Event) -> None:
        self.inner = DirectorySource(root, watch_changes=False)
        self.leading = leading

    @contextmanager
    def read(self) -> Iterator[SourceSnapshot]:
        with self.inner.read() as snapshot:
            self.leading.clear()
            yield snapshot

    def changes(self) -> Iterator[None] | None:
        return None


def test_a_replica_that_loses_the_lease_mid_reconcile_does_not_push(tmp_path: Path) -> None:
    fleet = _fleet(tmp_path)
    leading = threading.Event()
    leading.set()
    settings = fleet.settings()
    controller = looping.Controller(
        settings,
        source=LosingSource(fleet.source, leading),
        status=statusreading.GitStatusReader(
            settings.status_url, settings.status_branch, cache_dir=settings.cache_dir
        ),
        clock=fleet.clock,
        log=JsonLog(io.StringIO()),
        is_leader=leading.is_set,
    )
    with pytest.raises(errors.TemporaryError, match="lost the leader election"):
        controller.reconcile_once()
    assert git(fleet.remote, "branch", "--list", "main") == ""
    controller.source = controller.reconciler.source = DirectorySource(fleet.source, watch_changes=False)
    leading.set()
    controller.reconcile_once()
    assert fleet.commit_count() == 1


class FlakyLeases:
    """A LeasePort whose first ``get`` fails with an exception the election does not expect."""

    def __init__(self, inner: KubeLeases) -> None:
        self.inner, self.failed = inner, False

    def get(self) -> leaderelection.LeaseRecord | None:
        if not self.failed:
            self.failed = True
            raise RuntimeError("unexpected")
        return self.inner.get()

    def create(self, record: leaderelection.LeaseRecord) -> leaderelection.LeaseRecord:
        return self.inner.create(record)

    def update(self, record: leaderelection.LeaseRecord) -> leaderelection.LeaseRecord:
        return self.inner.update(record)


def test_an_unexpected_error_in_a_step_is_reported_and_the_campaign_goes_on(kube: KubeTarget) -> None:
    leases = FlakyLeases(KubeLeases(KubeApi(kube.api_client), kube.namespace, "flaky"))
    elector = LeaderElector(leases, "a", lease_duration=3, renew_deadline=2, retry_period=0.05)
    reported: list[str] = []
    leading = threading.Event()
    campaign = leaderelection.Campaign(
        elector, on_started=leading.set, on_error=lambda error: reported.append(str(error))
    ).start()
    assert leading.wait(10) and campaign.alive
    campaign.end()
    assert reported == ["unexpected"] and not campaign.alive


def _healthz(port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code


def test_healthz_fails_when_the_election_thread_is_dead(tmp_path: Path, kube: KubeTarget) -> None:
    fleet = _fleet(tmp_path)
    elector = _elector(kube)
    controller = fleet.controller()
    campaign = leaderelection.Campaign(elector).start()
    server = serving.metrics_server(Address("127.0.0.1", 0), controller.metrics).start()
    stop = threading.Event()
    thread = threading.Thread(
        target=starting.serve,
        args=(controller, stop),
        kwargs={"campaign": campaign, "closers": [server.close]},
    )
    thread.start()
    try:
        while (
            controller.metrics.value("nova_controller_reconciles_total", outcome="published") == 0
            and thread.is_alive()
        ):
            stop.wait(0.05)
        assert _healthz(server.port) == 200
        campaign.stop.set()  # the election thread ends while the loop goes on
        campaign.thread.join(10)
        assert _healthz(server.port) == 503
    finally:
        stop.set()
        controller.triggers.put(looping.STOP_REASON)
        thread.join(30)
