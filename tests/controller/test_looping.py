"""The loop: when to reconcile (pure), and a real run that starts, reacts to triggers and stops.

Behaviours covered:
- at start a reconcile is due at once; after success the next is at the poll interval;
- a trigger makes a reconcile due after the debounce; a burst of triggers is one reconcile, but a steady
  stream cannot push it beyond 10 × debounce after the first;
- backoff: TemporaryError retries after its delay; invalid input waits for the next trigger or poll;
  other failures back off exponentially up to max_backoff;
- run(): reconciles at start, reconciles again on a trigger, survives a failing reconcile, only reconciles
  while leading, and returns promptly when stop is set;
- a directory source's watcher turns file saves into triggers (and ignores .git churn).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from nova_gitops import errors
from nova_gitops.api.problems import Problem, SourceLocation
from nova_gitops.controller import looping
from nova_gitops.controller.looping import (
    LoopState,
    after_failure,
    after_success,
    after_trigger,
    backoff_delay,
)
from nova_gitops.controller.ports import MonotonicClock
from nova_gitops.controller.sourcereading import DirectorySource, is_source_file
from tests.controller.helpers import Fleet, cluster_report, deployment, policy


def test_start_poll_and_success() -> None:
    state = looping.start(100.0)
    assert looping.is_due(state, 100.0)
    state = after_success(state, 101.0, interval=30.0)
    assert not looping.is_due(state, 130.9)
    assert looping.is_due(state, 131.0)
    assert looping.wait_time(state, 121.0) == pytest.approx(10.0)


def test_a_rollout_deadline_before_the_next_poll_wakes_the_loop_then() -> None:
    state = after_success(looping.start(0.0), 10.0, interval=30.0, wake_in=4.0)
    assert not looping.is_due(state, 13.9) and looping.is_due(state, 14.0)
    assert after_success(state, 14.0, 30.0, wake_in=45.0).due_at is None  # the poll comes first
    assert after_success(state, 14.0, 30.0, wake_in=-2.0).due_at == pytest.approx(14.0 + looping.MIN_WAKE)


def test_a_burst_of_triggers_is_one_reconcile_but_cannot_starve_it() -> None:
    state = after_success(looping.start(0.0), 0.0, interval=30.0)
    state = after_trigger(state, 1.0, debounce=0.5)
    assert state.due_at == pytest.approx(1.5)
    state = after_trigger(state, 1.4, debounce=0.5)
    assert state.due_at == pytest.approx(1.9)  # pushed back by the second save
    for moment in (1.8, 2.2, 2.6, 3.0, 3.4, 3.8, 4.2, 4.6, 5.0, 5.4, 5.8, 6.2):
        state = after_trigger(state, moment, debounce=0.5)
    assert state.due_at == pytest.approx(6.0)  # 10 × debounce after the first trigger
    assert not looping.is_due(state, 5.9) and looping.is_due(state, 6.0)
    assert after_success(state, 6.0, 30.0).first_trigger is None


@pytest.mark.parametrize(
    ("error", "failures", "delay"),
    [
        (errors.TemporaryError("busy", delay=7.0), 1, 7.0),
        (errors.TemporaryError("busy", delay=900.0), 1, 300.0),
        (errors.InputError([Problem(SourceLocation("a.yaml", 1), "bad")]), 3, None),
        (errors.SafetyError("mass delete"), 1, None),
        (errors.RepoError("host down"), 1, 2.0),
        (errors.RepoError("host down"), 3, 8.0),
        (RuntimeError("bug"), 20, 300.0),
    ],
)
def test_backoff(error: BaseException, failures: int, delay: float | None) -> None:
    assert backoff_delay(error, failures, max_backoff=300.0) == delay


def test_after_failure_keeps_polling() -> None:
    state = after_failure(LoopState(None, 0.0), 10.0, errors.InputError([]), interval=30.0, max_backoff=300.0)
    assert state.due_at is None and state.next_poll == 40.0 and state.failures == 1
    state = after_failure(state, 40.0, errors.RepoError("down"), interval=30.0, max_backoff=300.0)
    assert state.due_at == 44.0 and state.failures == 2


def wait_for(condition: Callable[[], bool], what: str = "", timeout: float = 20.0) -> None:
    """Poll ``condition`` until it holds; past the deadline, fail saying what was awaited."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.02)
    raise AssertionError(f"not reached within {timeout:g} s: {what or condition}")


@pytest.fixture
def fleet(tmp_path: Path) -> Fleet:
    fleet = Fleet(tmp_path)
    fleet.write_source("policy.yaml", policy())
    fleet.write_source("web.yaml", deployment())
    fleet.report(cluster_report("wlc-1"), cluster_report("wlc-2", cpu="8"))
    return fleet


def test_run_reconciles_on_start_and_on_triggers_survives_errors_and_stops(fleet: Fleet) -> None:
    controller = fleet.controller(interval=3600.0, debounce=0.0)
    controller.clock = MonotonicClock()
    controller.reconciler.clock = controller.clock
    stop = threading.Event()
    thread = threading.Thread(target=controller.run, args=(stop,))
    thread.start()
    try:
        wait_for(lambda: controller.metrics.value("nova_controller_commits_total") == 1)
        (fleet.source / "broken.yaml").write_text("kind: [\n")
        controller.triggers.put("test")
        wait_for(lambda: controller.metrics.value("nova_controller_reconciles_total", outcome="failed") == 1)
        (fleet.source / "broken.yaml").unlink()
        fleet.write_source("web.yaml", deployment(replicas=3))
        controller.triggers.put("test")
        wait_for(lambda: controller.metrics.value("nova_controller_commits_total") == 2)
        assert thread.is_alive()
        assert controller.metrics.alive()
    finally:
        stop.set()
        controller.triggers.put(looping.STOP_REASON)
        thread.join(timeout=10)
    assert not thread.is_alive()
    assert not controller.metrics.alive()


def test_a_new_report_on_the_status_branch_reconciles_without_waiting_for_the_poll(fleet: Fleet) -> None:
    controller = fleet.controller(interval=3600.0, debounce=0.0, status_watch_interval=0.05)
    controller.clock = MonotonicClock()
    controller.reconciler.clock = controller.clock
    stop = threading.Event()
    thread = threading.Thread(target=controller.run, args=(stop,))
    thread.start()
    try:
        wait_for(lambda: controller.metrics.value("nova_controller_commits_total") == 1)
        reconciles = "nova_controller_reconcile_duration_seconds_count"  # every reconcile, any outcome
        reconciled = controller.metrics.value(reconciles) or 0
        fleet.report(cluster_report("wlc-1"), cluster_report("wlc-2", cpu="6"))  # an agent reported
        wait_for(lambda: (controller.metrics.value(reconciles) or 0) > reconciled)  # the poll is an hour away
    finally:
        stop.set()
        controller.triggers.put(looping.STOP_REASON)
        thread.join(timeout=10)
    assert not thread.is_alive()


def test_only_the_leader_reconciles(fleet: Fleet) -> None:
    leading = threading.Event()
    controller = fleet.controller(interval=3600.0, debounce=0.0)
    controller.clock = MonotonicClock()
    controller.reconciler.clock = controller.clock
    controller.is_leader = leading.is_set
    stop = threading.Event()
    thread = threading.Thread(target=controller.run, args=(stop,))
    thread.start()
    try:
        # A trigger makes a reconcile due; the loop counts a second trigger only after it went round once
        # more with that reconcile due, where a leader would have reconciled.
        triggers = "nova_controller_triggers_total"
        controller.triggers.put("test")
        wait_for(lambda: controller.metrics.value(triggers) == 1, "the follower took the first trigger")
        controller.triggers.put("test")
        wait_for(
            lambda: controller.metrics.value(triggers) == 2, "the follower went round with a reconcile due"
        )
        assert not controller.metrics.value("nova_controller_reconcile_duration_seconds_count")
        leading.set()
        wait_for(lambda: controller.metrics.value("nova_controller_commits_total") == 1)
    finally:
        stop.set()
        thread.join(timeout=10)


def test_the_directory_watcher_turns_saves_into_triggers(tmp_path: Path) -> None:
    root = tmp_path / "source"
    (root / ".git").mkdir(parents=True)
    stop = threading.Event()
    source = DirectorySource(root, debounce_ms=50, stop=stop)
    changes = source.changes()
    assert changes is not None
    seen = threading.Event()

    def consume() -> None:
        for _ in changes:
            seen.set()
            return

    thread = threading.Thread(target=consume, daemon=True)
    thread.start()
    # The watcher says nothing when it has started: save again until a save is seen (one before the start
    # is missed, as it would be by any watcher).
    deadline = time.monotonic() + 20
    saves = 0
    while not seen.is_set() and time.monotonic() < deadline:
        saves += 1
        (root / "app.yaml").write_text(f"kind: ConfigMap  # save {saves}\n")
        seen.wait(0.2)
    assert seen.is_set(), f"the watcher turned none of {saves} saves into a trigger within 20 s"
    stop.set()
    thread.join(timeout=5)


@pytest.mark.parametrize(
    ("path", "counts"),
    [
        ("app.yaml", True),
        ("apps/web/deploy.yml", True),
        (".git/index", False),
        (".github/ci.yaml", False),
        ("README.md", False),
    ],
)
def test_which_files_are_source_files(path: str, counts: bool) -> None:
    from watchfiles import Change

    assert is_source_file(Change.modified, path) is counts


def test_files_a_kustomization_may_read_are_source_files(tmp_path: Path) -> None:
    from watchfiles import Change

    (tmp_path / "apps" / "web" / "config").mkdir(parents=True)
    (tmp_path / "apps" / "web" / "kustomization.yaml").write_text("resources: []\n")
    assert is_source_file(Change.modified, "apps/web/Kustomization", tmp_path)
    assert is_source_file(Change.modified, "apps/web/config/app.properties", tmp_path)
    assert not is_source_file(Change.modified, "apps/README.md", tmp_path)
    assert not is_source_file(Change.modified, ".git/index", tmp_path)
