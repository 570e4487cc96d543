"""A wave that passed and is not healthy now holds the rollout for ``healthTimeout`` at most (review of issue
21), through the controller and ``nova-gitops rollout`` with real git.

Three waves: ``canary`` (``wlc-1``), ``early`` (``wlc-2``), ``others`` (``wlc-3``). The canary passes, the
early wave gets the change, and then the canary's Deployment stops being Available.

Behaviours covered:
- ``rollout status`` says the canary is ``held``, as the current wave, what it waits for, until when and how
  to go on; ``wlc-3`` is not released;
- ``rollout promote --wave early`` (a later wave) is accepted, says what it does, and the next step goes on
  past the canary: ``early`` passes and ``wlc-3`` gets the change (before: accepted, and nothing happened);
- left alone for ``healthTimeout``, the rollout pauses with the reason; ``rollout resume`` retries with a new
  clock; ``rollout promote`` (the current wave: the canary) goes on without it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from nova_gitops.controller import rolloutcommands
from nova_gitops.controller.looping import Controller
from tests.controller.helpers import Fleet, deployment, policy
from tests.controller.test_rollout_commands import rollout
from tests.controller.test_rollout_waves import WAVES, report_all
from tests.controller.test_rollouts import SPREAD, WallClock, released


@pytest.fixture
def fleet(tmp_path: Path) -> Fleet:
    fleet = Fleet(tmp_path)
    fleet.write_source("policy.yaml", policy(spreadConstraints=SPREAD))
    fleet.write_source("web.yaml", deployment())
    fleet.write_source("rollout.yaml", WAVES)
    report_all(fleet, {})
    return fleet


@pytest.fixture
def clock() -> WallClock:
    """The controller's clock, at the real time: the commands read the real clock."""
    clock = WallClock()
    clock.now = datetime.now(UTC).replace(microsecond=0)
    return clock


def held_canary(fleet: Fleet, clock: WallClock) -> tuple[Controller, str]:
    controller = fleet.controller(wall_clock=clock)
    controller.reconcile_once()
    target = fleet.head()
    report_all(fleet, {"wlc-1": target})
    controller.reconcile_once()
    clock.advance(minutes=6)
    controller.reconcile_once()
    assert released(fleet) == {"wlc-1": target, "wlc-2": target}
    report_all(fleet, {"wlc-1": target, "wlc-2": target}, **{"wlc-1": "MinimumReplicasUnavailable"})
    controller.reconcile_once()
    return controller, target


def wave_of(found: dict[str, Any], name: str) -> dict[str, Any]:
    return next(wave for wave in found["waves"] if wave["name"] == name)


def where(fleet: Fleet) -> rolloutcommands.Where:
    return rolloutcommands.Where(
        repo_url=fleet.url, source=str(fleet.source), cache_dir=fleet.root / "engineer"
    )


def status(fleet: Fleet, clock: WallClock) -> dict[str, Any]:
    """``rollout status`` at the controller's time (the command itself reads the real clock)."""
    found = rolloutcommands.status(where(fleet), clock())
    assert found is not None
    return found


def test_status_says_the_canary_is_held_and_a_promote_of_a_later_wave_goes_on(
    fleet: Fleet, clock: WallClock
) -> None:
    controller, target = held_canary(fleet, clock)
    clock.advance(minutes=10)
    controller.reconcile_once()
    assert "wlc-3" not in released(fleet)
    found = status(fleet, clock)
    canary = wave_of(found, "canary")
    assert found["currentWave"] == "canary" and canary["state"] == "held"
    assert canary["reason"].startswith("passed, but not healthy now (10m of 15m, then the rollout pauses)")
    assert "then the rollout pauses): Deployment demo/web on wlc-1 not healthy yet" in canary["reason"]
    assert "`nova-gitops rollout promote --wave canary` goes on without it" in canary["reason"]
    assert wave_of(found, "early")["reason"] == "waits for wave canary (passed, but not healthy now)"
    table = rollout(fleet, "status").output.splitlines()  # the real clock: 0s held so far
    assert table[1].startswith("passed, but not healthy now (0s of 15m, then the rollout pauses): Deployment")
    promoted = rollout(fleet, "promote", "--wave", "early")
    assert promoted.exit_code == 0, promoted.output
    assert (
        "next: at its next step the controller goes on past wave canary (passed, not healthy now) and passes "
        "wave early without its gate and releases wave others"
    ) in promoted.output
    controller.reconcile_once()
    assert released(fleet) == {"wlc-1": target, "wlc-2": target, "wlc-3": target}
    assert "but wave early was promoted by request" in wave_of(status(fleet, clock), "canary")["reason"]


def test_held_past_the_health_timeout_the_rollout_pauses_until_resumed_or_promoted(
    fleet: Fleet, clock: WallClock
) -> None:
    controller, target = held_canary(fleet, clock)
    clock.advance(minutes=16)
    outcome = controller.reconcile_once()
    assert outcome.rollout is not None and outcome.rollout.decision is not None
    assert outcome.rollout.decision.paused and controller.metrics.value("nova_rollout_paused") == 1
    found = status(fleet, clock)
    assert found["paused"] is True and wave_of(found, "canary")["state"] == "paused"
    assert found["pausedReason"].startswith("paused: passed, but not healthy for 15m: Deployment demo/web")
    clock.advance(minutes=1)
    resumed = rolloutcommands.request(where(fleet), "resume", now=clock(), environ={"GIT_AUTHOR_NAME": "Ops"})
    assert "retrying wave canary" in resumed, resumed
    controller.reconcile_once()
    canary = wave_of(status(fleet, clock), "canary")
    assert canary["state"] == "held" and canary["reason"].startswith("passed, but not healthy now (0s of 15m")
    promoted = rollout(fleet, "promote")  # the current wave: the canary
    assert promoted.exit_code == 0, promoted.output
    assert "stops holding the rollout on wave canary" in promoted.output
    controller.reconcile_once()
    assert released(fleet) == {"wlc-1": target, "wlc-2": target}
    report_all(fleet, {"wlc-1": target, "wlc-2": target}, **{"wlc-1": "MinimumReplicasUnavailable"})
    controller.reconcile_once()
    assert wave_of(status(fleet, clock), "canary")["reason"] == "promoted"
