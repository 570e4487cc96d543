"""A ``rollout/requests.yaml`` that does not read never lifts a pause (issue 21 item 6), with real git.

Behaviours covered, the canary healthy and baked each time, so that only the requests hold the next wave:
- a hand edit with a merge-conflict marker (the pause on one side), or ``paused: "true"`` (a string): the
  next step releases nothing more; the record says paused; the controller logs why once (file and line),
  ``nova_rollout_requests_unreadable`` is 1 and ``nova_rollout_paused`` 1; ``rollout status`` says paused,
  why, and the problem (``requestsProblem``);
- a file over the size limit (1 MiB) is such a file too, not an error that stops the step;
- a command over such a file (``promote``) writes a clean file that stays paused, and says so;
  ``rollout resume`` lifts the pause and the rollout goes on; the metric goes back to 0.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from nova_gitops.controller.logs import JsonLog
from nova_gitops.controller.looping import Controller
from nova_gitops.controller.rolloutstep import RECORD_PATH, REQUESTS_PATH, ROLLOUT_BRANCH
from tests.controller.helpers import Fleet, cluster_report, git
from tests.controller.test_rollout_commands import CANARY, push_requests, rollout, status
from tests.controller.test_rollouts import WallClock, healthy_report, released, rollout_fleet

HEAD = "apiVersion: gitops.nova.elotl.co/v1alpha1\nkind: RolloutRequests\n"
CONFLICTED = (
    f"{HEAD}<<<<<<< ours\npaused: true\npausedReason: incident\n=======\npaused: false\n>>>>>>> theirs\n"
)
STRING = f'{HEAD}paused: "true"\npausedReason: change freeze\n'


@pytest.fixture
def fleet(tmp_path: Path) -> Fleet:
    return rollout_fleet(tmp_path)


def baked_canary(fleet: Fleet, clock: WallClock) -> tuple[Controller, io.StringIO]:
    """The canary released, healthy for its commit and baking: the next step after 5 minutes would
    release wlc-2."""
    controller = fleet.controller(wall_clock=clock)
    logged = io.StringIO()
    controller.log = JsonLog(logged)
    controller.reconcile_once()
    fleet.report(healthy_report("wlc-1", fleet.head(), labels=CANARY), cluster_report("wlc-2"))
    controller.reconcile_once()
    return controller, logged


@pytest.mark.parametrize(("text", "line"), [(CONFLICTED, 3), (STRING, 3)], ids=["conflict", "string"])
def test_requests_that_do_not_read_hold_the_rollout_paused(fleet: Fleet, text: str, line: int) -> None:
    clock = WallClock()
    controller, logged = baked_canary(fleet, clock)
    target = fleet.head()
    push_requests(fleet, text)
    clock.advance(minutes=6)
    controller.reconcile_once()
    controller.reconcile_once()
    assert released(fleet) == {"wlc-1": target}  # the bake is over, but wlc-2 is not released
    record = git(fleet.remote, "show", f"{ROLLOUT_BRANCH}:{RECORD_PATH}")
    assert "outcome: paused" in record
    assert controller.metrics.value("nova_rollout_requests_unreadable") == 1
    assert controller.metrics.value("nova_rollout_paused") == 1
    warnings = [json.loads(entry) for entry in logged.getvalue().splitlines()]
    told = [entry for entry in warnings if entry.get("event") == "rollout input refused"]
    assert len(told) == 1, told  # once, when it appears
    assert f"{REQUESTS_PATH}:{line}: " in told[0]["problem"]
    found = status(fleet)
    assert found["paused"] is True
    assert str(found["pausedReason"]).startswith(f"paused: the requests do not read: {REQUESTS_PATH}:{line}:")
    assert str(found["requestsProblem"]).startswith(f"{REQUESTS_PATH}:{line}: ")


def test_a_command_over_such_a_file_keeps_it_paused_and_resume_lifts_it(fleet: Fleet) -> None:
    clock = WallClock()
    controller, _ = baked_canary(fleet, clock)
    target = fleet.head()
    push_requests(fleet, STRING)
    promoted = rollout(fleet, "promote", "--wave", "others")
    assert promoted.exit_code == 0, promoted.output
    assert "warning: the requests did not read (rollout/requests.yaml:3: paused: " in promoted.output
    assert "it stays paused until `nova-gitops rollout resume`" in promoted.output
    clock.advance(minutes=6)
    controller.reconcile_once()
    assert released(fleet) == {"wlc-1": target}
    assert status(fleet)["requestsProblem"] is None  # a clean file now, still paused
    assert "kept paused: the requests did not read when they were rewritten (rollout/requests.yaml:3:" in str(
        status(fleet)["pausedReason"]
    )
    resumed = rollout(fleet, "resume")
    assert resumed.exit_code == 0, resumed.output
    controller.reconcile_once()
    assert released(fleet) == {"wlc-1": target, "wlc-2": target}
    assert controller.metrics.value("nova_rollout_requests_unreadable") == 0


def test_a_requests_file_over_the_size_limit_is_a_pause_not_an_error(fleet: Fleet) -> None:
    clock = WallClock()
    controller, _ = baked_canary(fleet, clock)
    target = fleet.head()
    push_requests(fleet, f"{HEAD}pausedReason: {'x' * (1024 * 1024)}\n")
    clock.advance(minutes=6)
    controller.reconcile_once()  # no error: the step runs, and holds
    assert released(fleet) == {"wlc-1": target}
    assert controller.metrics.value("nova_rollout_requests_unreadable") == 1
    assert "over the 1048576 limit" in str(status(fleet)["requestsProblem"])
