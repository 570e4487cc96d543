"""A hand-written rollout record makes no release (issue 21 item 7, docs/rollouts.md, "What the record can
and cannot do"): a wave passes on health the controller observed, or on a promote request.

Behaviours covered, each with a record someone else wrote on ``nova/rollout``:
- in a running controller (it remembers what it decided), a ``passedAt`` on a Degraded canary is not
  trusted: the canary fails as its report says, and the next wave is not released; a note says why;
- a ``healthySince`` pushed back an hour does not shorten the bake;
- a controller that just started takes the record's passes as claims: a claimed pass of a wave that is
  not healthy now releases nothing later (the wave is held: "passed, but not healthy now ..."), and a record
  that leaves the canary out of ``releasedFrom`` cannot make its wave pass without it (``verify``);
- every step re-checks the health of each wave that passed before releasing a later one: a canary that
  turns Degraded after its pass holds the next batch; a wave passed by a promote request does not;
- a record that does not read, in a running controller, is replaced by what it observed: no wave passes
  unjudged; after a restart with the record genuine, the rollout goes on where it was, without a new bake;
- a record claiming a rollback (to a commit it names) is taken for what it can only do: hold and return
  (the ref move itself is refused by the controller unless it goes back in history: tests/controller);
- property: whatever is forged into the record among random histories, a wave is released only after each
  earlier one was promoted by request or is healthy, on every cluster the rollout released to it.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.rollouts import health, records
from nova_gitops.rollouts.health import ClusterFacts
from nova_gitops.rollouts.records import Record, WaveRecord
from tests.unit.rollouts.fleets import NEW, OLD, Fleet, healthy, strategy, unhealthy, wave
from tests.unit.rollouts.test_step_properties import apply, events, fleets

MINUTE = timedelta(minutes=1)
DEGRADED = ("ProgressDeadlineExceeded", "Progressing")


def forged(record: Record, name: str, **changes: object) -> Record:
    """``record`` with wave ``name`` changed as someone else wrote it."""
    waves = tuple(
        replace(each, **changes) if each.name == name else each  # type: ignore[arg-type]
        for each in record.waves
    )
    return replace(record, waves=waves)


def moved(fleet: Fleet) -> dict[str, str | None]:
    return {move.cluster: move.commit for move in fleet.history[-1].moves}


def test_a_pass_written_by_someone_else_on_a_degraded_canary_is_not_trusted() -> None:
    fleet = Fleet((wave("canary", "c1"), wave("prod", "p1")))
    fleet.step()
    fleet.reports["c1"] = unhealthy(NEW, *DEGRADED)
    fleet.record = forged(fleet.record, "canary", passed_at=fleet.now)
    decision = fleet.step(MINUTE)
    assert fleet.released["p1"] == OLD
    assert fleet.state(decision, "canary") == "paused"
    assert "Degraded on c1" in fleet.reason(decision, "canary")
    [note] = decision.notes
    assert (
        "says wave canary of bbbbbbbbbbbb passed at 2026-01-01T12:00:00+00:00, which this controller did"
        in (note)
    )


def test_a_bake_start_pushed_back_does_not_shorten_the_bake() -> None:
    fleet = Fleet((wave("canary", "c1"), wave("prod", "p1")))
    fleet.step()
    fleet.report_healthy("c1")
    fleet.step(MINUTE)  # healthy: the bake starts now
    fleet.record = forged(fleet.record, "canary", healthy_since=fleet.now - 60 * MINUTE)
    decision = fleet.step(MINUTE)
    assert fleet.state(decision, "canary") == "baking" and fleet.released["p1"] == OLD
    assert fleet.reason(decision, "canary") == "baking, 1m of 5m"
    assert "has been healthy since" in decision.notes[0]
    fleet.step(4 * MINUTE)
    assert fleet.released["p1"] == NEW  # the real bake, to the minute


def test_after_a_restart_a_claimed_pass_of_a_wave_not_healthy_now_releases_nothing() -> None:
    fleet = Fleet((wave("canary", "c1"), wave("prod", "p1")))
    fleet.step()
    fleet.reports["c1"] = unhealthy(NEW, *DEGRADED)
    fleet.record = forged(fleet.record, "canary", passed_at=fleet.now)
    fleet.observed = None  # the controller restarts: it has seen nothing
    decision = fleet.step(MINUTE)
    assert fleet.released["p1"] == OLD and decision.moves == ()
    assert fleet.state(decision, "canary") == "held"
    assert fleet.reason(decision, "canary").startswith(
        "passed, but not healthy now (0s of 15m, then the rollout pauses): Deployment shop/web Degraded"
    )
    assert fleet.reason(decision, "prod") == "waits for wave canary (passed, but not healthy now)"
    assert decision.current_wave == "canary"
    fleet.report_healthy("c1")  # healthy again: the claim stands, and the next wave goes
    fleet.step(MINUTE)
    assert fleet.released["p1"] == NEW


def test_after_a_restart_a_canary_left_out_of_the_record_is_judged_all_the_same() -> None:
    fleet = Fleet((wave("canary", "c1"), wave("prod", "p1")))
    fleet.step()
    assert fleet.released["c1"] == NEW
    fleet.reports["c1"] = unhealthy(NEW, *DEGRADED)
    fleet.record = replace(fleet.record, released_from={})  # "the canary was never released"
    fleet.observed = None
    decision = fleet.step(MINUTE)
    assert fleet.released["p1"] == OLD
    assert decision.record.verify == ("c1",)
    assert fleet.state(decision, "canary") == "paused" and "Degraded on c1" in fleet.reason(
        decision, "canary"
    )


def test_a_record_that_no_longer_reads_is_replaced_by_what_the_controller_observed() -> None:
    fleet = Fleet((wave("canary", "c1"), wave("prod", "p1")))
    fleet.step()
    fleet.reports["c1"] = unhealthy(NEW)
    fleet.record = Record()  # garbage on nova/rollout reads as the empty record
    decision = fleet.step(MINUTE)
    assert fleet.released["p1"] == OLD and fleet.state(decision, "canary") == "waiting"
    assert "not trusted; its own record is kept" in decision.notes[0]


def test_a_wave_that_passed_and_then_degraded_holds_the_next_batch() -> None:
    fleet = Fleet((wave("canary", "c1"), wave("prod", "p1", "p2", max_parallel=1)))
    fleet.step()
    fleet.report_healthy("c1")
    fleet.step()
    fleet.step(5 * MINUTE)
    assert moved(fleet) == {"p1": NEW}
    fleet.report_healthy("p1")
    fleet.reports["c1"] = unhealthy(NEW, *DEGRADED)
    decision = fleet.step(MINUTE)
    assert fleet.released["p2"] == OLD
    assert fleet.reason(decision, "canary").startswith("passed, but not healthy now (0s of 15m, then the")
    fleet.report_healthy("c1")
    fleet.step(MINUTE)
    assert fleet.released["p2"] == NEW


def test_a_wave_promoted_by_request_is_not_held_by_its_health() -> None:
    fleet = Fleet((wave("canary", "c1"), wave("prod", "p1", "p2", max_parallel=1)))
    fleet.step()
    fleet.reports["c1"] = unhealthy(NEW, *DEGRADED)
    fleet.request(promotes=frozenset({(NEW, "canary")}))
    fleet.step(MINUTE)
    assert fleet.released["p1"] == NEW
    fleet.report_healthy("p1")
    fleet.step(MINUTE)
    assert fleet.released["p2"] == NEW


def test_after_a_restart_a_genuine_record_goes_on_where_it_was() -> None:
    fleet = Fleet((wave("canary", "c1"), wave("prod", "p1")))
    fleet.step()
    fleet.report_healthy("c1")
    fleet.step()
    fleet.step(5 * MINUTE)  # canary passed, prod released
    fleet.report_healthy("p1")
    fleet.step(MINUTE)  # prod baking since now
    fleet.observed = None  # restart
    decision = fleet.step(4 * MINUTE)
    assert fleet.state(decision, "canary") == "passed" and fleet.state(decision, "prod") == "baking"
    assert decision.notes == ()
    assert fleet.step(MINUTE).record.outcome == "complete"


def test_a_claimed_rollback_returns_only_what_the_record_names() -> None:
    """The pure step holds a rollback the record claims; whether the branch may move there is the
    controller's check (a rollback only goes back in a branch's history)."""
    fleet = Fleet((wave("canary", "c1"), wave("prod", "p1")), strategy(on_failure="rollback"))
    fleet.step()
    fleet.record = replace(fleet.record, outcome="rolled-back", rolled_back=("c1",))
    decision = fleet.step(MINUTE)
    assert moved(fleet) == {"c1": OLD} and decision.record.outcome == "rolled-back"
    assert fleet.released["p1"] == OLD


def test_an_observed_wave_record_survives_a_forged_wave_list() -> None:
    fleet = Fleet((wave("canary", "c1"), wave("prod", "p1")))
    fleet.step()
    fleet.report_healthy("c1")
    fleet.step()
    fleet.record = replace(fleet.record, waves=(WaveRecord("canary", passed_at=fleet.now),))
    decision = fleet.step(MINUTE)
    assert fleet.state(decision, "canary") == "baking" and fleet.released["p1"] == OLD
    assert healthy(NEW) == fleet.reports["c1"]


def test_after_a_restart_a_claimed_pass_of_a_wave_never_released_is_dropped() -> None:
    fleet = Fleet((wave("canary", "c1"), wave("prod", "p1")))
    fleet.step()
    fleet.released["c1"] = OLD  # the canary never got the change (say, its release is still to come)
    fleet.record = forged(
        replace(fleet.record, released_from={}), "canary", passed_at=fleet.now, healthy_since=fleet.now
    )
    fleet.observed = None
    decision = fleet.step(MINUTE)
    assert moved(fleet) == {"c1": NEW} and fleet.released["p1"] == OLD
    assert fleet.state(decision, "canary") == "releasing"


def test_a_cluster_that_joins_a_passed_wave_does_not_hold_the_rollout() -> None:
    fleet = Fleet((wave("canary", "c1"), wave("prod", "p1", "p2", max_parallel=1)))
    fleet.step()
    fleet.report_healthy("c1")
    fleet.step()
    fleet.step(5 * MINUTE)  # canary passed, p1 released
    fleet.waves = (wave("canary", "c1", "c2"), fleet.waves[1])  # c2 labelled canary now
    fleet.released["c2"] = OLD
    fleet.reports["c2"] = healthy(OLD)
    fleet.report_healthy("p1")
    fleet.step(MINUTE)
    assert fleet.released["p2"] == NEW


def test_a_canary_dropped_from_the_record_in_a_running_controller_is_judged_all_the_same() -> None:
    fleet = Fleet((wave("canary", "c1"), wave("prod", "p1")))
    fleet.step()
    fleet.reports["c1"] = unhealthy(NEW, *DEGRADED)
    fleet.record = replace(fleet.record, released_from={})
    decision = fleet.step(MINUTE)
    assert fleet.released["p1"] == OLD and "Degraded on c1" in fleet.reason(decision, "canary")
    assert any("no longer lists c1 as released" in note for note in decision.notes)


forgeries = st.tuples(
    st.sampled_from(["pass", "bake", "drop", "outcome", "garbage"]),
    st.integers(0, 8),
    st.sampled_from(records.OUTCOMES),
    st.booleans(),  # and the controller restarts before its next step (it has observed nothing)
)


def forge(fleet: Fleet, forgery: tuple[object, ...]) -> None:
    kind, index, outcome, restart = forgery
    record = fleet.record
    assert isinstance(index, int)
    if kind in ("pass", "bake") and record.waves:
        name = record.waves[index % len(record.waves)].name
        moment = fleet.now - timedelta(hours=2)
        changes = {"passed_at": moment, "failed_at": None, "failure": ""} if kind == "pass" else {}
        fleet.record = forged(record, name, **changes, healthy_since=moment)
    elif kind == "drop" and record.released_from:
        dropped = sorted(record.released_from)[index % len(record.released_from)]
        fleet.record = replace(
            record, released_from={k: v for k, v in record.released_from.items() if k != dropped}
        )
    elif kind == "outcome":
        fleet.record = replace(record, outcome=outcome)  # type: ignore[arg-type]
    elif kind == "garbage":
        fleet.record = Record()
    if restart:
        fleet.observed = None


@settings(max_examples=400, deadline=None)
@given(fleets(), st.lists(st.one_of(events, forgeries), max_size=30))
def test_no_record_releases_a_wave_after_one_that_is_not_healthy_nor_promoted(
    fleet: Fleet, history: list[tuple[object, ...]]
) -> None:
    """Whatever is written into the record (passes, bake starts, clusters left out, outcomes, garbage,
    restarts of the controller) among reports, renders, pauses, promotes and aborts: a release to a wave
    happens only when every earlier wave was promoted by request, or every cluster of it the rollout
    released through a gate is healthy for the target at that step, or it passed (as the step took it) and
    a later wave was promoted by request (a person went on past its hold)."""
    gated: dict[str, set[str]] = {}  # target → clusters released through a gate (the truth, not the record)
    for event in history:
        if event[0] in ("pass", "bake", "drop", "outcome", "garbage"):
            forge(fleet, event)
        else:
            apply(fleet, event)
        target = fleet.target
        situation = fleet.situation()
        decision = fleet.step()
        for move in decision.moves:
            if move.kind != "release":
                continue
            index = next(number for number, each in enumerate(fleet.waves) if move.cluster in each.clusters)
            for position, earlier in enumerate(fleet.waves[:index]):
                promoted = {name for revision, name in situation.requests.promotes if revision == target}
                if earlier.name in promoted:
                    continue
                after = {each.name for each in fleet.waves[position + 1 :]}
                if decision.record.wave(earlier.name).passed_at is not None and promoted & after:
                    continue
                for cluster in sorted(gated.get(target, set()) & set(earlier.clusters)):
                    verdict = health.judge(
                        cluster,
                        situation.reports.get(cluster),
                        target,
                        situation.rendered_at(cluster, target),
                    )
                    assert verdict.state == "healthy", f"{move.cluster} released while {verdict.reason}"
        gated.setdefault(target, set()).update(m.cluster for m in decision.moves if m.kind == "release")
        for move in decision.moves:  # its agent has not reported since the move
            fleet.reports[move.cluster] = ClusterFacts()


def test_after_a_restart_a_record_that_does_not_read_judges_the_clusters_that_run_the_target() -> None:
    fleet = Fleet((wave("canary", "c1"), wave("prod", "p1")))
    fleet.step()
    fleet.reports["c1"] = unhealthy(NEW, *DEGRADED)
    fleet.record, fleet.observed = Record(), None  # garbage on nova/rollout, and a controller just started
    decision = fleet.step(MINUTE)
    assert decision.record.verify == ("c1",) and fleet.released["p1"] == OLD
    assert fleet.state(decision, "canary") == "paused" and "Degraded on c1" in fleet.reason(
        decision, "canary"
    )


def untouched_canary_fleet(**settings: object) -> Fleet:
    """The canary wave holds c1, which the change touches, and c2, which it does not (advanced at once);
    c2 runs an app of its own that is Degraded, which has nothing to do with the change."""
    fleet = Fleet(
        (wave("canary", "c1", "c2"), wave("prod", "p1")),
        strategy(on_failure="rollback"),
        unchanged={"c2"},
        **settings,  # type: ignore[arg-type]
    )
    fleet.reports["c2"] = unhealthy(OLD, *DEGRADED)
    fleet.step()
    assert moved(fleet) == {"c1": NEW, "c2": NEW}  # c2 at once, c1 through the gate
    fleet.report_healthy("c1")
    fleet.reports["c2"] = unhealthy(NEW, *DEGRADED)
    assert fleet.state(fleet.step(MINUTE), "canary") == "baking"
    return fleet


def test_after_a_restart_a_cluster_the_change_did_not_touch_is_not_judged() -> None:
    """Review of issue 21: a restart put every cluster running the target that ``releasedFrom`` does not
    list in ``verify``, so c2's unrelated Degraded app failed the canary wave, and with
    ``onFailure: rollback`` the healthy canary was rolled back (while ``rollout status`` said baking)."""
    fleet = untouched_canary_fleet()
    fleet.observed = None  # the controller restarted
    decision = fleet.step(MINUTE)
    assert decision.record.verify == () and decision.record.outcome == "progressing"
    assert fleet.state(decision, "canary") == "baking" and fleet.released["c1"] == NEW
    fleet.step(4 * MINUTE)
    assert fleet.released["p1"] == NEW  # the canary's bake, as recorded before the restart


def test_after_a_restart_a_cluster_moved_only_by_reschedules_is_not_judged() -> None:
    fleet = Fleet(
        (wave("canary", "c1", "c2"), wave("prod", "p1")), strategy(on_failure="rollback"), remedial={"c2"}
    )
    fleet.step()
    assert moved(fleet) == {"c1": NEW, "c2": NEW}
    fleet.report_healthy("c1")
    fleet.reports["c2"] = unhealthy(NEW, *DEGRADED)
    fleet.step(MINUTE)
    fleet.observed = None
    decision = fleet.step(MINUTE)
    assert decision.record.verify == () and fleet.state(decision, "canary") == "baking"


def test_a_record_that_does_not_read_after_a_restart_judges_the_canary_but_not_an_untouched_cluster() -> None:
    fleet = untouched_canary_fleet()
    fleet.reports["c1"] = unhealthy(NEW, *DEGRADED)
    fleet.record, fleet.observed = Record(), None
    decision = fleet.step(MINUTE)
    assert decision.record.verify == ("c1",)
    assert decision.record.outcome == "rolled-back" and "Degraded on c1" in fleet.reason(decision, "canary")
    assert moved(fleet) == {}  # what c1 ran before is lost with the record (never guessed); c2 stays


def test_a_record_that_lists_an_untouched_cluster_to_verify_does_not_make_it_fail_the_wave() -> None:
    """A record written before the fix (or by hand) naming c2 in ``verify`` does not make c2's unrelated
    app fail the canary wave either: the controller recomputes from git that the change left it as it was."""
    fleet = untouched_canary_fleet()
    fleet.record = replace(fleet.record, verify=("c2",))
    fleet.observed = None
    decision = fleet.step(MINUTE)
    assert decision.record.verify == () and fleet.state(decision, "canary") == "baking"


def test_a_record_that_drops_the_canary_still_has_it_judged_beside_an_untouched_cluster() -> None:
    fleet = untouched_canary_fleet()
    fleet.reports["c1"] = unhealthy(NEW, *DEGRADED)
    fleet.record = replace(fleet.record, released_from={})
    fleet.observed = None
    decision = fleet.step(MINUTE)
    assert decision.record.verify == ("c1",) and "Degraded on c1" in fleet.reason(decision, "canary")
    assert fleet.released["p1"] == OLD


def test_after_a_restart_claimed_passes_of_every_wave_release_nothing_past_an_unhealthy_one() -> None:
    """A record claiming every wave passed, the last one never released: the claimed pass of the last
    wave is dropped (it released none of its clusters), so the canary is re-checked before it is released
    — a passed wave is not re-checked only once every later wave has really passed."""
    fleet = Fleet((wave("canary", "c1"), wave("prod", "p1")))
    fleet.step()
    fleet.reports["c1"] = unhealthy(NEW, *DEGRADED)
    fleet.record = forged(fleet.record, "canary", passed_at=fleet.now, healthy_since=fleet.now)
    fleet.record = forged(fleet.record, "prod", passed_at=fleet.now, healthy_since=fleet.now)
    fleet.observed = None
    decision = fleet.step(MINUTE)
    assert fleet.released["p1"] == OLD and decision.moves == ()
    assert fleet.state(decision, "canary") == "held"
