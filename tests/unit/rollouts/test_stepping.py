"""The gate logic (``rollouts.stepping.step``), as table tests over a fleet in memory.

Behaviours covered (each scenario also checks that applying a decision and asking again decides nothing):
- a wave passes when every released cluster is synced and healthy for the exact commit for bakeTime; the
  next wave is released in the same step; a wave whose clusters the change does not touch passes at once;
- bake not yet elapsed holds the next wave, and says how far the bake is;
- not healthy by healthTimeout fails the wave; Degraded, a reschedule request, an apply error or a refusal
  fail it at once; onFailure pause holds every later wave and says why; rollback points the wave's
  branches back at their previous commits and stops;
- a Healthy for an older revision (or one that names no revision) never passes a gate;
- a newer render starts over at wave 1, later waves skip the superseded commit, and clusters released by
  the superseded rollout whose wave had not passed stay gated;
- clusters whose directory did not change advance at once; remedial moves are released at once;
- maxParallel releases a wave in batches, in name order, with no bake between batches;
- promote passes a wave without its bake; pause holds; resume retries a failed wave; abort rolls back;
- without a strategy every cluster is released at once, as before rollouts.
"""

from __future__ import annotations

from datetime import timedelta

from nova_gitops.rollouts.health import ClusterFacts, WorkloadFacts
from nova_gitops.rollouts.records import Requests, Resume
from nova_gitops.rollouts.stepping import next_deadline
from tests.unit.rollouts.fleets import NEW, NEWER, OLD, Fleet, healthy, strategy, unhealthy, wave

WAVES = (wave("canary", "c1"), wave("prod", "p1", "p2", "p3"))
MINUTE = timedelta(minutes=1)


def moved(fleet: Fleet, index: int = -1) -> dict[str, str | None]:
    return {move.cluster: move.commit for move in fleet.history[index].moves}


def test_a_wave_passes_after_its_bake_and_the_next_is_released_in_the_same_step() -> None:
    fleet = Fleet(WAVES)
    first = fleet.step()
    assert moved(fleet) == {"c1": NEW}
    assert fleet.state(first, "canary") == "releasing"
    assert fleet.state(first, "prod") == "pending" and fleet.reason(first, "prod") == "waits for wave canary"
    assert first.clusters["p1"] == "waits for wave canary"
    fleet.report_healthy("c1")
    baking = fleet.step(MINUTE)
    assert fleet.reason(baking, "canary") == "baking, 0s of 5m"
    assert fleet.released["p1"] == OLD
    passed = fleet.step(5 * MINUTE)
    assert fleet.state(passed, "canary") == "passed"
    assert moved(fleet) == {"p1": NEW, "p2": NEW, "p3": NEW}
    fleet.report_healthy()
    fleet.step(MINUTE)
    done = fleet.step(5 * MINUTE)
    assert done.record.outcome == "complete" and done.current_wave is None


def test_bake_not_yet_elapsed_holds_the_next_wave() -> None:
    fleet = Fleet(WAVES)
    fleet.step()
    fleet.report_healthy("c1")
    fleet.step()
    decision = fleet.step(timedelta(minutes=4, seconds=59))
    assert fleet.reason(decision, "canary") == "baking, 4m59s of 5m"
    assert decision.moves == () and fleet.released["p1"] == OLD
    assert decision.current_wave == "canary"


def test_health_lost_during_bake_restarts_the_bake() -> None:
    fleet = Fleet(WAVES)
    fleet.step()
    fleet.report_healthy("c1")
    fleet.step()
    fleet.reports["c1"] = unhealthy(NEW)
    fleet.step(4 * MINUTE)
    fleet.report_healthy("c1")
    fleet.step(MINUTE)
    decision = fleet.step(4 * MINUTE)
    assert fleet.state(decision, "canary") == "baking" and fleet.released["p1"] == OLD


def test_not_healthy_by_the_health_timeout_fails_and_pauses() -> None:
    fleet = Fleet(WAVES)
    fleet.step()
    fleet.reports["c1"] = unhealthy(NEW)
    waiting = fleet.step(14 * MINUTE)
    assert fleet.state(waiting, "canary") == "waiting"
    assert "14m of 15m" in fleet.reason(waiting, "canary")
    failed = fleet.step(MINUTE)
    assert fleet.state(failed, "canary") == "paused"
    assert fleet.reason(failed, "canary") == (
        "paused: not healthy after 15m: Deployment shop/web on c1 not healthy yet "
        "(MinimumReplicasUnavailable: 1/3 available)"
    )
    assert failed.paused and fleet.reason(failed, "prod") == "waits for wave canary"
    fleet.report_healthy("c1")
    later = fleet.step(60 * MINUTE)
    assert fleet.state(later, "canary") == "paused" and fleet.released["p1"] == OLD


def test_degraded_pauses_at_once_and_says_why() -> None:
    fleet = Fleet(WAVES)
    fleet.step()
    fleet.reports["c1"] = unhealthy(NEW, "ProgressDeadlineExceeded", "Progressing")
    decision = fleet.step(MINUTE)
    assert fleet.reason(decision, "canary") == (
        "paused: Deployment shop/web Degraded on c1 (ProgressDeadlineExceeded: 1/3 available)"
    )
    assert decision.record.outcome == "paused" and fleet.released["c1"] == NEW


def test_degraded_with_rollback_points_the_wave_back_and_stops() -> None:
    fleet = Fleet(WAVES, strategy(on_failure="rollback"))
    fleet.step()
    fleet.reports["c1"] = ClusterFacts(
        NEW, (WorkloadFacts("Job", "shop", "migrate", False, NEW, "Failed", "BackoffLimitExceeded"),)
    )
    decision = fleet.step(MINUTE)
    assert moved(fleet) == {"c1": OLD}
    assert [move.kind for move in decision.moves] == ["rollback"]
    assert decision.record.outcome == "rolled-back"
    assert fleet.state(decision, "canary") == "rolled-back"
    fleet.reports["c1"] = healthy(OLD)
    later = fleet.step(60 * MINUTE)
    assert later.moves == () and fleet.state(later, "prod") == "pending"


def test_an_apply_error_or_a_refusal_fails_the_wave() -> None:
    fleet = Fleet(WAVES)
    fleet.step()
    fleet.reports["c1"] = ClusterFacts(
        NEW, healthy(NEW).workloads, last_error="Deployment shop/web: 422 invalid"
    )
    assert "c1: apply failed: Deployment shop/web: 422 invalid" in fleet.reason(fleet.step(), "canary")
    refused = Fleet(WAVES)
    refused.step()
    message = f"refused to sync revision {NEW[:12]}: it would delete 9 of the 10 objects"
    refused.reports["c1"] = ClusterFacts(OLD, healthy(OLD).workloads, last_error=message)
    assert f"c1: agent refused {NEW[:7]}" in refused.reason(refused.step(), "canary")


def test_a_transient_error_only_delays() -> None:
    fleet = Fleet(WAVES)
    fleet.step()
    fleet.reports["c1"] = ClusterFacts(
        OLD, healthy(OLD).workloads, last_error="git fetch: connection refused"
    )
    assert fleet.state(fleet.step(MINUTE), "canary") == "waiting"


def test_pods_pending_past_the_timeout_fail_the_wave() -> None:
    fleet = Fleet(WAVES)
    fleet.step()
    fleet.reports["c1"] = ClusterFacts(NEW, unhealthy(NEW).workloads, pending=("Deployment shop/web",))
    assert "Deployment shop/web Pending on c1" in fleet.reason(fleet.step(MINUTE), "canary")


def test_a_healthy_for_an_older_revision_never_passes() -> None:
    fleet = Fleet(WAVES)
    fleet.step()
    fleet.reports["c1"] = ClusterFacts(NEW, healthy(OLD).workloads)  # synced, but health is the old pods'
    decision = fleet.step(10 * MINUTE)
    assert f"Deployment shop/web on c1 reflects {OLD[:7]}, not {NEW[:7]}" in fleet.reason(decision, "canary")
    assert fleet.state(fleet.step(5 * MINUTE), "canary") == "paused"
    assert fleet.released["p1"] == OLD


def test_a_report_without_workload_revisions_proves_nothing() -> None:
    fleet = Fleet(WAVES)
    fleet.step()
    fleet.reports["c1"] = ClusterFacts(NEW, (WorkloadFacts("Deployment", "shop", "web", True),))
    assert "reports no workload revisions (upgrade it)" in fleet.reason(fleet.step(10 * MINUTE), "canary")


def test_a_newer_render_starts_over_at_wave_one() -> None:
    fleet = Fleet(WAVES)
    fleet.step()
    fleet.report_healthy("c1")
    fleet.step()
    fleet.step(5 * MINUTE)  # canary passed, prod released NEW
    assert fleet.released["p1"] == NEW
    fleet.render(NEWER)
    decision = fleet.step(MINUTE)
    assert moved(fleet) == {"c1": NEWER}
    assert fleet.state(decision, "canary") == "releasing" and fleet.state(decision, "prod") == "pending"
    assert decision.record.released_from["p1"] == OLD  # NEW never passed prod: a rollback returns to OLD
    fleet.report_healthy("c1")
    fleet.step()
    fleet.step(5 * MINUTE)
    assert moved(fleet) == {"p1": NEWER, "p2": NEWER, "p3": NEWER}


def test_a_newer_render_keeps_unproven_clusters_gated_even_when_it_does_not_change_them() -> None:
    fleet = Fleet(WAVES)
    fleet.step()
    fleet.reports["c1"] = unhealthy(NEW)
    fleet.render(NEWER, unchanged={"c1"})  # NEWER changes only prod; c1 still carries NEW's change
    decision = fleet.step(MINUTE)
    assert moved(fleet) == {"c1": NEWER}
    assert fleet.state(decision, "canary") == "waiting" and fleet.released["p1"] == OLD


def test_clusters_the_change_does_not_touch_advance_at_once() -> None:
    fleet = Fleet(WAVES, unchanged={"p2"})
    decision = fleet.step()
    assert moved(fleet) == {"c1": NEW, "p2": NEW}
    assert {move.cluster: move.kind for move in decision.moves} == {"c1": "release", "p2": "unchanged"}
    assert decision.clusters["p2"] == f"unchanged by {NEW[:7]}: advanced at once"


def test_a_wave_the_change_does_not_touch_passes_at_once() -> None:
    fleet = Fleet(WAVES, unchanged={"c1"})
    decision = fleet.step()
    assert fleet.state(decision, "canary") == "passed"
    assert moved(fleet) == {"c1": NEW, "p1": NEW, "p2": NEW, "p3": NEW}


def test_remedial_moves_are_released_at_once() -> None:
    fleet = Fleet(WAVES, remedial={"p3"})
    decision = fleet.step()
    assert {move.cluster: move.kind for move in decision.moves} == {"c1": "release", "p3": "remedial"}


def test_max_parallel_releases_in_batches_in_name_order_with_no_bake_between() -> None:
    fleet = Fleet((wave("canary", "c1"), wave("prod", "p3", "p1", "p2", max_parallel=2)))
    fleet.waves = (fleet.waves[0], wave("prod", "p1", "p2", "p3", max_parallel=2))  # waves_for sorts by name
    fleet.step()
    fleet.report_healthy("c1")
    fleet.step()
    releasing = fleet.step(5 * MINUTE)
    assert moved(fleet) == {"p1": NEW, "p2": NEW}
    assert fleet.reason(releasing, "prod") == f"released {NEW[:7]} to p1, p2 (1 more after them)"
    fleet.report_healthy("p1")
    assert fleet.step(MINUTE).moves == ()
    fleet.report_healthy("p2")
    fleet.step()
    assert moved(fleet) == {"p3": NEW}


def test_promote_passes_a_wave_without_its_bake() -> None:
    fleet = Fleet(WAVES)
    fleet.step()
    fleet.report_healthy("c1")
    fleet.step(MINUTE)
    fleet.request(promotes=frozenset({(NEW, "canary")}))
    decision = fleet.step(MINUTE)
    assert fleet.reason(decision, "canary") == "promoted"
    assert moved(fleet) == {"p1": NEW, "p2": NEW, "p3": NEW}


def test_a_promote_for_another_render_does_nothing() -> None:
    fleet = Fleet(WAVES)
    fleet.step()
    fleet.request(promotes=frozenset({(OLD, "canary")}))
    assert fleet.step(MINUTE).moves == ()


def test_pause_holds_and_resume_retries_a_failed_wave() -> None:
    fleet = Fleet(WAVES)
    fleet.request(paused=True, paused_reason="alice: change freeze")
    held = fleet.step()
    assert held.moves == () and fleet.reason(held, "canary") == "paused by request: alice: change freeze"
    fleet.request(paused=False)
    fleet.step()
    fleet.reports["c1"] = unhealthy(NEW, "CrashLoopBackOff", "ContainersReady")
    failed_at = fleet.now + MINUTE
    fleet.step(MINUTE)
    fleet.report_healthy("c1")
    fleet.request(resume=Resume(NEW, "canary", failed_at - MINUTE))  # given before the failure: stale
    assert fleet.state(fleet.step(MINUTE), "canary") == "paused"
    fleet.request(resume=Resume(NEW, "canary", fleet.now))
    resumed = fleet.step(MINUTE)
    assert fleet.state(resumed, "canary") == "baking"


def test_abort_rolls_back_every_cluster_the_rollout_released() -> None:
    fleet = Fleet(WAVES, unchanged={"p3"})
    fleet.step()
    fleet.report_healthy("c1")
    fleet.step()
    fleet.step(5 * MINUTE)
    fleet.request(abort=NEW)
    decision = fleet.step(MINUTE)
    assert moved(fleet) == {"c1": OLD, "p1": OLD, "p2": OLD}  # p3 was unchanged: its bytes are the same
    assert decision.record.outcome == "aborted"
    assert {status.state for status in decision.waves} == {"aborted"}


def test_without_a_strategy_every_cluster_is_released_at_once() -> None:
    fleet = Fleet(WAVES, None)
    decision = fleet.step()
    assert moved(fleet) == {"c1": NEW, "p1": NEW, "p2": NEW, "p3": NEW}
    assert decision.record.outcome == ""


def test_a_first_release_is_rolled_back_by_deleting_the_branch() -> None:
    fleet = Fleet(WAVES, strategy(on_failure="rollback"), released={"c1": None})
    fleet.step()
    fleet.reports["c1"] = unhealthy(NEW, "ImagePullBackOff", "ContainersReady")
    fleet.step(MINUTE)
    assert moved(fleet) == {"c1": None}


def test_requests_default_to_nothing() -> None:
    assert Requests() == Requests(False, "", None, frozenset(), "")


def test_the_next_deadline_is_the_end_of_a_bake_or_of_the_health_wait() -> None:
    fleet = Fleet(WAVES)
    released = fleet.step()
    assert next_deadline(fleet.strategy, fleet.waves, released) == fleet.now + 15 * MINUTE  # health timeout
    fleet.report_healthy("c1")
    baking = fleet.step(MINUTE)
    assert next_deadline(fleet.strategy, fleet.waves, baking) == fleet.now + 5 * MINUTE  # the bake's end
    passed = fleet.step(5 * MINUTE)
    fleet.report_healthy()
    assert next_deadline(fleet.strategy, fleet.waves, passed) == fleet.now + 15 * MINUTE  # prod released
    assert next_deadline(None, fleet.waves, passed) is None
    fleet.step(MINUTE)
    complete = fleet.step(5 * MINUTE)
    assert complete.current_wave is None and next_deadline(fleet.strategy, fleet.waves, complete) is None


def test_a_wave_whose_cluster_lost_its_report_waits_for_it_and_never_releases_to_it() -> None:
    """The canary's agent broke (its report missing or refused): the canary wave does not pass empty and
    let the change reach prod unverified; nothing moves for the canary; promote goes on without it."""
    fleet = Fleet(WAVES, unreported={"c1"})
    first = fleet.step()
    assert moved(fleet) == {} and fleet.released["c1"] == OLD
    assert fleet.state(first, "canary") == "waiting"
    assert "no usable report from c1" in fleet.reason(first, "canary")
    assert "kept in wave canary, running aaaaaaa" in first.clusters["c1"]
    assert first.record.members == {"c1": "canary", "p1": "prod", "p2": "prod", "p3": "prod"}
    timed_out = fleet.step(15 * MINUTE)
    assert fleet.state(timed_out, "canary") == "paused" and fleet.released["p1"] == OLD
    fleet.request(promotes=frozenset({(NEW, "canary")}))
    promoted = fleet.step()
    assert fleet.state(promoted, "canary") == "passed"
    assert fleet.released["c1"] == OLD and fleet.released["p1"] == NEW
