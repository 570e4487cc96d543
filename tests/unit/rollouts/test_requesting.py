"""People's requests as changes of ``Requests``, and when a command has nothing to act on.

Behaviours covered:
- each request applied twice is applied once (declarative), and promote keeps only the current target's
  promotes; a promote written by ``requesting`` passes the wave at the controller's next step;
- resume clears a pause and, for a wave a failure paused, retries it at the next step;
- refusals: promote or abort with no rollout in progress, promote of a passed wave, resume with nothing
  paused; none for a rollout in progress;
- status as data: the current wave, a released cluster's health and the wave a pause holds.
"""

from __future__ import annotations

from datetime import timedelta

from nova_gitops.rollouts import requesting, statuses
from nova_gitops.rollouts.records import Requests
from tests.unit.rollouts.fleets import NEW, OLD, Fleet, strategy, unhealthy, wave

WAVES = (wave("canary", "c1"), wave("prod", "p1"))
MINUTE = timedelta(minutes=1)


def test_requests_are_declarative() -> None:
    found = Requests(promotes=frozenset({(OLD, "canary")}))
    promoted = requesting.promoted(found, NEW, "canary")
    assert promoted.promotes == frozenset({(NEW, "canary")})  # the old render's promote is dropped
    assert requesting.promoted(promoted, NEW, "canary") == promoted
    paused = requesting.paused(promoted, "alice: freeze")
    assert requesting.paused(paused, "alice: freeze") == paused and paused.promotes == promoted.promotes
    assert requesting.aborted(requesting.aborted(paused, NEW), NEW).abort == NEW


def test_a_promote_passes_the_wave_at_the_next_step() -> None:
    fleet = Fleet(WAVES)
    fleet.step()
    fleet.requests = requesting.promoted(fleet.requests, NEW, "canary")
    fleet.step(MINUTE)
    assert fleet.released == {"c1": NEW, "p1": NEW}


def test_resume_retries_the_wave_a_failure_paused() -> None:
    fleet = Fleet(WAVES, strategy=strategy(on_failure="pause"))
    fleet.step()
    fleet.reports["c1"] = unhealthy(NEW, reason="ProgressDeadlineExceeded")
    failed = fleet.step(MINUTE)
    assert failed.paused and requesting.failed_wave(failed) == "canary"
    assert requesting.refusal("resume", failed, fleet.requests) == ""
    fleet.requests = requesting.resumed(fleet.requests, NEW, "canary", fleet.now + MINUTE)
    fleet.report_healthy("c1")
    retried = fleet.step(2 * MINUTE)
    assert fleet.state(retried, "canary") == "baking"


def test_refusals_say_why_nothing_is_done() -> None:
    fleet = Fleet(WAVES)
    first = fleet.step()
    assert requesting.refusal("promote", first, Requests(), "canary") == ""
    assert requesting.refusal("abort", first, Requests()) == ""
    assert requesting.refusal("resume", first, Requests()).startswith("nothing to resume")
    assert requesting.refusal("resume", first, Requests(paused=True)) == ""
    assert requesting.refusal("promote", None, Requests()).startswith("nothing to promote: no rollout")
    fleet.requests = requesting.promoted(fleet.requests, NEW, "canary")
    promoted = fleet.step(MINUTE)
    assert requesting.refusal("promote", promoted, Requests(), "canary") == (
        f"nothing to promote: wave canary of {NEW[:12]} has passed already"
    )
    fleet.requests = requesting.aborted(fleet.requests, NEW)
    aborted = fleet.step(MINUTE)
    assert (
        requesting.refusal("abort", aborted, Requests())
        == f"nothing to abort: the rollout of {NEW[:12]} is aborted"
    )
    assert fleet.released == {"c1": OLD, "p1": OLD}


def test_status_shows_the_current_wave_and_what_holds_it() -> None:
    fleet = Fleet(WAVES)
    fleet.step()
    fleet.requests = requesting.paused(fleet.requests, "alice: freeze")
    situation = fleet.situation()
    decision = fleet.step(MINUTE)
    found = statuses.document(WAVES, situation, decision, fleet.now)
    assert (found["currentWave"], found["paused"]) == ("canary", True)
    assert found["pausedReason"] == "paused by request: alice: freeze"
    assert [(row[0], row[1]) for row in statuses.wave_rows(found)] == [
        ("canary", "paused"),
        ("prod", "pending"),
    ]
    clusters = {item["name"]: item for item in found["clusters"]}
    assert clusters["c1"]["released"] == NEW and clusters["c1"]["health"] == "waiting"
    assert clusters["p1"]["released"] == OLD and clusters["p1"]["reason"] == "waits for wave canary"
