"""A hand-written ``rollout/record.yaml`` makes no release (issue 21 item 7), with real git.

The canary ``wlc-1`` reports its Deployment Degraded for the released commit, and the controller has
paused the rollout for it. Then someone with write access to ``nova/rollout`` pushes a record of their own.

Behaviours covered:
- a record saying the canary passed (``passedAt``, the failure removed) does not release ``wlc-2``: not to
  the running controller, which logs that it did not observe that pass, nor to a controller started after
  the push, which re-checks the canary's health before releasing anything later;
- a record claiming a rollback of ``wlc-2`` "back" to the commit being rolled out (``releasedFrom`` naming
  the target) moves no branch forward: the controller refuses a rollback that is not a move back in the
  branch's history, and says so in its log;
- ``rollout promote`` (a request, in the open) still passes the Degraded canary and releases ``wlc-2``.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from nova_gitops.controller.logs import JsonLog
from nova_gitops.controller.looping import Controller
from nova_gitops.controller.rolloutstep import RECORD_PATH, ROLLOUT_BRANCH
from tests.controller.helpers import Fleet, cluster_report, git
from tests.controller.test_rollout_commands import CANARY, rollout
from tests.controller.test_rollouts import WallClock, healthy_report, released, rollout_fleet


@pytest.fixture
def fleet(tmp_path: Path) -> Fleet:
    return rollout_fleet(tmp_path)


def record(fleet: Fleet) -> dict[str, Any]:
    found: dict[str, Any] = yaml.safe_load(git(fleet.remote, "show", f"{ROLLOUT_BRANCH}:{RECORD_PATH}"))
    return found


def push_record(fleet: Fleet, data: dict[str, Any]) -> None:
    """Someone with write access to nova/rollout commits a record of their own."""
    work = fleet.root / "record-work"
    if not work.exists():
        git(fleet.root, "clone", "--quiet", "--branch", ROLLOUT_BRANCH, fleet.url, str(work))
    git(work, "pull", "--quiet", "--rebase", "origin", ROLLOUT_BRANCH)
    (work / RECORD_PATH).write_text(yaml.safe_dump(data, sort_keys=False))
    git(work, "add", "-A")
    git(work, "commit", "--quiet", "-m", "rollout: canary passed (by hand)")
    git(work, "push", "--quiet", "origin", f"HEAD:{ROLLOUT_BRANCH}")


def degraded_canary(fleet: Fleet, clock: WallClock) -> tuple[Controller, io.StringIO]:
    controller = fleet.controller(wall_clock=clock)
    logged = io.StringIO()
    controller.log = JsonLog(logged)
    controller.reconcile_once()
    target = fleet.head()
    degraded = healthy_report(
        "wlc-1",
        target,
        labels=CANARY,
        healthy=False,
        condition="Progressing",
        reason="ProgressDeadlineExceeded",
    )
    fleet.report(degraded, cluster_report("wlc-2"))
    controller.reconcile_once()
    assert record(fleet)["outcome"] == "paused" and released(fleet) == {"wlc-1": target}
    return controller, logged


def forged_pass(fleet: Fleet) -> dict[str, Any]:
    data = record(fleet)
    for wave in data["waves"]:
        if wave["name"] == "canary":
            wave.pop("failedAt", None)
            wave.pop("failure", None)
            wave["healthySince"] = wave["passedAt"] = data["startedAt"]
    data["outcome"] = "progressing"
    return data


def refusals(logged: io.StringIO) -> list[str]:
    entries = [json.loads(line) for line in logged.getvalue().splitlines()]
    return [entry["problem"] for entry in entries if entry.get("event") == "rollout input refused"]


def test_a_forged_pass_of_a_degraded_canary_releases_nothing(fleet: Fleet) -> None:
    clock = WallClock()
    controller, logged = degraded_canary(fleet, clock)
    target = fleet.head()
    push_record(fleet, forged_pass(fleet))
    clock.advance(minutes=10)
    controller.reconcile_once()
    controller.reconcile_once()
    assert released(fleet) == {"wlc-1": target}
    assert any("says wave canary of" in note and "did not observe" in note for note in refusals(logged))
    assert record(fleet)["outcome"] == "paused"  # its own record again

    push_record(fleet, forged_pass(fleet))
    restarted = fleet.controller(wall_clock=clock)  # a controller that did not see the forgery happen
    restarted.reconcile_once()
    restarted.reconcile_once()
    assert released(fleet) == {"wlc-1": target}


def test_a_forged_rollback_moves_no_branch_forward(fleet: Fleet) -> None:
    clock = WallClock()
    controller, logged = degraded_canary(fleet, clock)
    target = fleet.head()
    data = record(fleet)
    data.update(outcome="rolled-back", rolledBack=["wlc-2"], releasedFrom={"wlc-2": target})
    push_record(fleet, data)
    controller.reconcile_once()
    assert released(fleet) == {"wlc-1": target}  # wlc-2 not "rolled back" to the target
    assert any(note.startswith("not rolling wlc-2 back to") for note in refusals(logged))


def test_a_promote_request_still_passes_the_canary(fleet: Fleet) -> None:
    clock = WallClock()
    controller, _ = degraded_canary(fleet, clock)
    target = fleet.head()
    promoted = rollout(fleet, "promote", "--wave", "canary")
    assert promoted.exit_code == 0, promoted.output
    controller.reconcile_once()
    assert released(fleet) == {"wlc-1": target, "wlc-2": target}
