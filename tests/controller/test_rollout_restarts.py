"""A controller killed between writing the rollout record and moving the release branches resumes where it
was (issue 12 item 5): the next step, by the same or a new controller, moves the branches the record says
were released, once; a second controller that read the branches before the first moved them loses its lease
and moves nothing (docs/rollouts.md, "State, and why restarts are safe")."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from nova_gitops import errors
from nova_gitops.controller.rolloutstep import RolloutDriver
from nova_gitops.publishing.releases import MoveOutcome, RefMove
from tests.controller.helpers import Fleet, cluster_report, deployment
from tests.controller.test_rollouts import WallClock, healthy_report, released, rollout_fleet


class Killed(Exception):
    """The process died here."""


@pytest.fixture
def fleet(tmp_path: Path) -> Fleet:
    return rollout_fleet(tmp_path)


def driver_of(controller: object) -> RolloutDriver:
    rollout = controller.reconciler.rollout  # type: ignore[attr-defined]
    assert isinstance(rollout, RolloutDriver)
    return rollout


def test_killed_after_the_record_before_the_refs_the_next_step_releases_once(fleet: Fleet) -> None:
    clock = WallClock()
    first = fleet.controller(wall_clock=clock)
    releases = driver_of(first).releases

    def die(moves: Mapping[str, RefMove]) -> MoveOutcome:
        raise Killed

    releases.move = die  # type: ignore[method-assign]
    with pytest.raises(Killed):
        first.reconcile_once()
    assert released(fleet) == {}  # the record was written, no branch moved
    successor = fleet.controller(wall_clock=clock)  # a new process: everything comes from git
    successor.reconcile_once()
    target = fleet.head()
    assert released(fleet) == {"wlc-1": target}
    outcome = successor.reconcile_once()
    assert outcome.rollout is not None and outcome.rollout.moved is MoveOutcome.NOTHING  # not twice


def test_a_stale_controller_loses_its_lease_and_moves_nothing(fleet: Fleet) -> None:
    clock = WallClock()
    leader = fleet.controller(wall_clock=clock)
    leader.reconcile_once()
    first = fleet.head()
    fleet.report(healthy_report("wlc-1", first, labels={"tier": "canary"}), cluster_report("wlc-2"))
    stale_driver = driver_of(fleet.controller(wall_clock=clock))
    reading = stale_driver.releases.read_state()  # a controller that read the branches, then stalled
    leader.reconcile_once()
    clock.advance(minutes=10)
    leader.reconcile_once()  # the canary baked: wlc-2 released
    fleet.write_source("web.yaml", deployment(replicas=3))
    leader.reconcile_once()  # a newer render on main
    second = fleet.head()
    assert released(fleet) == {"wlc-1": second, "wlc-2": first}
    late = stale_driver.releases.move({"wlc-2": RefMove(reading.released.get("wlc-2"), second)})
    assert late is MoveOutcome.LOST  # decided on a wlc-2 without a branch: its lease no longer holds
    assert released(fleet) == {"wlc-1": second, "wlc-2": first}  # the gate of wlc-2 was not skipped


def test_a_replica_that_lost_the_lease_moves_no_branch(fleet: Fleet) -> None:
    controller = fleet.controller(wall_clock=WallClock())
    driver_of(controller).is_leader = lambda: False  # lost after the publish, before the rollout step
    with pytest.raises(errors.TemporaryError, match="lost the leader Lease"):
        controller.reconcile_once()
    assert released(fleet) == {}
