"""A wave that passed and is not healthy now holds the later waves, and the hold is bounded (review of issue
21; docs/rollouts.md, "A passed wave stays healthy, or the rollout holds").

Before, such a wave held every later wave for good: ``healthTimeout`` never applied, ``rollout promote`` of
it was refused ("has passed already"), and a promote of a later wave was accepted and did nothing, since the
step never reached that wave's gate.

Behaviours covered:
- the wave is ``held``; it is the current wave; its reason says since when of ``healthTimeout``, what
  happens then, and how to go on; the later waves say what they wait for; ``rollout status`` says it in its
  headline; the controller wakes at the timeout (``next_deadline``);
- healthy again before the timeout: the rollout goes on, and a later loss starts a new clock;
- not healthy for ``healthTimeout``: the rollout fails as ``onFailure`` says — ``pause`` (``resume``
  retries it with a new clock), ``rollback`` (the wave and every later one this rollout released return;
  the clusters not released yet never get the change);
- an agent that stops reporting holds the same way, and times out the same way;
- ``rollout promote`` of the held wave is accepted and lets the rollout go on, as does a promote of any
  later wave (the person takes responsibility; the promote is a commit naming its author);
- a pause by request holds the clock's consequence: no failure while paused;
- in a running controller, a record that drops or delays ``heldSince`` does not delay the timeout.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from nova_gitops.rollouts import requesting, statuses, stepping
from tests.unit.rollouts.fleets import NEW, OLD, Fleet, strategy, unhealthy, wave

MINUTE = timedelta(minutes=1)
DEGRADED = ("ProgressDeadlineExceeded", "Progressing")
WAVES = (wave("canary", "c1"), wave("prod", "p1", "p2", max_parallel=1))


def held_canary(on_failure: str = "pause") -> Fleet:
    """The canary passed, p1 (prod's first batch) got the change, then the canary turned Degraded."""
    fleet = Fleet(WAVES, strategy(on_failure=on_failure))
    fleet.step()
    fleet.report_healthy("c1")
    fleet.step(MINUTE)
    fleet.step(5 * MINUTE)
    assert fleet.released == {"c1": NEW, "p1": NEW, "p2": OLD}
    fleet.report_healthy("p1")
    fleet.reports["c1"] = unhealthy(NEW, *DEGRADED)
    return fleet


def test_a_passed_wave_that_is_not_healthy_now_is_held_and_says_how_to_go_on() -> None:
    fleet = held_canary()
    situation = fleet.situation()
    decision = fleet.step(MINUTE)
    assert fleet.released["p2"] == OLD
    assert fleet.state(decision, "canary") == "held" and decision.current_wave == "canary"
    reason = fleet.reason(decision, "canary")
    assert reason.startswith("passed, but not healthy now (0s of 15m, then the rollout pauses): ")
    assert "Deployment shop/web Degraded on c1" in reason
    assert "`nova-gitops rollout promote --wave canary` goes on without it" in reason
    assert fleet.reason(decision, "prod") == "waits for wave canary (passed, but not healthy now)"
    assert stepping.next_deadline(fleet.strategy, WAVES, decision) == fleet.now + 15 * MINUTE
    shown = statuses.document(WAVES, situation, decision, fleet.now)
    assert shown["currentWave"] == "canary" and not shown["paused"]
    assert statuses.headline(shown).splitlines()[1] == reason
    later = fleet.step(4 * MINUTE)
    assert fleet.reason(later, "canary").startswith("passed, but not healthy now (4m of 15m, then")


def test_healthy_again_the_rollout_goes_on_and_a_later_loss_starts_a_new_clock() -> None:
    fleet = held_canary()
    fleet.step(MINUTE)
    fleet.step(10 * MINUTE)
    fleet.report_healthy("c1")
    fleet.step(MINUTE)
    assert fleet.released["p2"] == NEW
    fleet.reports["c1"] = unhealthy(NEW, *DEGRADED)
    fleet.step(MINUTE)
    decision = fleet.step(10 * MINUTE)
    assert fleet.state(decision, "canary") == "held"
    assert fleet.reason(decision, "canary").startswith("passed, but not healthy now (10m of 15m")


def test_not_healthy_for_the_health_timeout_pauses_and_resume_retries_with_a_new_clock() -> None:
    fleet = held_canary("pause")
    fleet.step(MINUTE)
    decision = fleet.step(15 * MINUTE)
    assert decision.paused and fleet.state(decision, "canary") == "paused"
    assert fleet.reason(decision, "canary").startswith(
        "paused: passed, but not healthy for 15m: Deployment shop/web Degraded on c1"
    )
    assert requesting.failed_wave(decision) == "canary"
    assert requesting.refusal("resume", decision, fleet.requests) == ""
    assert fleet.released == {"c1": NEW, "p1": NEW, "p2": OLD}  # a pause moves nothing
    assert fleet.step(60 * MINUTE).paused  # until resumed
    fleet.requests = requesting.resumed(fleet.requests, NEW, "canary", fleet.now)
    retried = fleet.step(MINUTE)
    assert fleet.state(retried, "canary") == "held" and not retried.paused
    assert fleet.reason(retried, "canary").startswith("passed, but not healthy now (0s of 15m")
    fleet.report_healthy("c1")
    fleet.step(MINUTE)
    assert fleet.released["p2"] == NEW


def test_not_healthy_for_the_health_timeout_rolls_back_the_wave_and_what_came_after_it() -> None:
    fleet = held_canary("rollback")
    fleet.step(MINUTE)
    decision = fleet.step(15 * MINUTE)
    assert decision.record.outcome == "rolled-back"
    assert fleet.released == {"c1": OLD, "p1": OLD, "p2": OLD}
    assert fleet.state(decision, "canary") == "rolled-back"
    assert fleet.reason(decision, "canary").startswith("passed, but not healthy for 15m: Deployment shop/web")
    again = fleet.step(MINUTE)
    assert again.moves == () and fleet.state(again, "canary") == "rolled-back"


def test_an_agent_that_stops_reporting_holds_and_times_out_the_same_way() -> None:
    fleet = held_canary()
    fleet.report_healthy("c1")
    fleet.unreported.add("c1")
    del fleet.reports["c1"]
    decision = fleet.step(MINUTE)
    assert fleet.state(decision, "canary") == "held"
    assert "no usable report from c1" in fleet.reason(decision, "canary")
    assert fleet.step(15 * MINUTE).paused


def test_promoting_the_held_wave_goes_on_without_it() -> None:
    fleet = held_canary()
    held = fleet.step(MINUTE)
    assert requesting.refusal("promote", held, fleet.requests, "canary") == ""
    fleet.requests = requesting.promoted(fleet.requests, NEW, "canary")
    decision = fleet.step(MINUTE)
    assert fleet.released["p2"] == NEW
    assert fleet.state(decision, "canary") == "passed" and fleet.reason(decision, "canary") == "promoted"
    assert decision.record.wave("canary").promoted and decision.record.wave("canary").held_since is None
    fleet.report_healthy("p2")
    fleet.step(MINUTE)
    assert fleet.step(30 * MINUTE).record.outcome == "complete"  # not re-checked any more: a person decided


def test_promoting_a_later_wave_goes_on_past_the_held_one() -> None:
    fleet = held_canary()
    held = fleet.step(MINUTE)
    assert requesting.refusal("promote", held, fleet.requests, "prod") == ""
    fleet.requests = requesting.promoted(fleet.requests, NEW, "prod")
    decision = fleet.step(MINUTE)
    assert fleet.released["p2"] == NEW and fleet.state(decision, "prod") == "passed"
    assert fleet.state(decision, "canary") == "passed"
    assert "but wave prod was promoted by request" in fleet.reason(decision, "canary")
    assert decision.record.outcome == "complete"
    assert fleet.step(30 * MINUTE).record.outcome == "complete"


def test_after_the_timeout_a_promote_of_the_wave_or_a_later_one_goes_on() -> None:
    for promoted in ("canary", "prod"):
        fleet = held_canary()
        fleet.step(MINUTE)
        failed = fleet.step(15 * MINUTE)
        assert failed.paused
        assert requesting.refusal("promote", failed, fleet.requests, promoted) == ""
        fleet.requests = requesting.promoted(fleet.requests, NEW, promoted)
        decision = fleet.step(MINUTE)
        assert fleet.released["p2"] == NEW and not decision.paused, promoted


def test_a_pause_by_request_holds_off_the_timeout() -> None:
    fleet = held_canary("rollback")
    fleet.step(MINUTE)
    fleet.requests = requesting.paused(fleet.requests, "alice: looking")
    decision = fleet.step(30 * MINUTE)
    assert fleet.released == {"c1": NEW, "p1": NEW, "p2": OLD}
    assert fleet.state(decision, "canary") == "paused"
    assert "paused by request: alice: looking" in fleet.reason(decision, "canary")
    assert "passed, but not healthy now" in fleet.reason(decision, "canary")


def test_a_record_that_drops_or_delays_the_hold_does_not_delay_the_timeout() -> None:
    fleet = held_canary()
    fleet.step(MINUTE)
    fleet.step(10 * MINUTE)
    canary = fleet.record.wave("canary")
    fleet.record = replace(
        fleet.record,
        waves=tuple(
            replace(each, held_since=None) if each.name == "canary" else each for each in fleet.record.waves
        ),
    )
    fleet.step(MINUTE)
    fleet.record = replace(
        fleet.record,
        waves=tuple(
            replace(each, held_since=fleet.now) if each.name == "canary" else each
            for each in fleet.record.waves
        ),
    )
    decision = fleet.step(4 * MINUTE)
    assert canary.held_since is not None and decision.paused  # 15 minutes after the hold began


def test_no_hold_without_a_loss_of_health() -> None:
    fleet = Fleet(WAVES)
    fleet.step()
    fleet.report_healthy("c1")
    fleet.step(MINUTE)
    decision = fleet.step(5 * MINUTE)
    assert fleet.state(decision, "canary") == "passed" and decision.record.wave("canary").held_since is None
    assert fleet.released == {"c1": NEW, "p1": NEW, "p2": OLD}


def test_the_promote_command_says_what_the_next_step_does() -> None:
    fleet = held_canary()
    held = fleet.step(MINUTE)
    assert requesting.promote_effect(held, "canary") == (
        "at its next step the controller stops holding the rollout on wave canary, which passed but is not "
        "healthy now, and no longer re-checks it and releases wave prod"
    )
    assert requesting.promote_effect(held, "prod") == (
        "at its next step the controller goes on past wave canary (passed, not healthy now) and passes wave "
        "prod without its gate"
    )
    waiting = Fleet(WAVES).step()
    assert requesting.promote_effect(waiting, "prod") == (
        "wave prod passes without its gate once wave canary before it has passed (a promote does not pass "
        "an earlier wave's gate)"
    )
    assert requesting.promote_effect(waiting, "canary") == (
        "at its next step the controller passes wave canary without its gate and releases wave prod"
    )


def test_a_complete_rollout_is_not_held_nor_failed_by_a_later_loss_of_health() -> None:
    """The re-check holds later waves; once every wave passed there is nothing left to hold, so a canary
    that degrades an hour after the rollout completed (a node lost) neither reopens the rollout nor, at
    ``healthTimeout``, pauses it or rolls the whole fleet back."""
    fleet = Fleet(WAVES, strategy(on_failure="rollback"))
    fleet.step()
    fleet.report_healthy("c1")
    fleet.step(MINUTE)
    fleet.step(5 * MINUTE)
    fleet.report_healthy("p1")
    fleet.step(MINUTE)
    fleet.report_healthy("p2")
    fleet.step(MINUTE)
    fleet.step(5 * MINUTE)
    assert fleet.step(MINUTE).record.outcome == "complete"
    fleet.reports["c1"] = unhealthy(NEW, *DEGRADED)
    fleet.reports["p1"] = unhealthy(NEW, *DEGRADED)
    for _ in range(3):
        decision = fleet.step(60 * MINUTE)
        assert decision.record.outcome == "complete" and decision.moves == ()
    assert fleet.released == {"c1": NEW, "p1": NEW, "p2": NEW}
