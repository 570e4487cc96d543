"""Which Events a rollout step tells in control-plane mode (``rollouts.events``): releases and rollbacks on
the Cluster moved, only when git took the moves; wave outcomes and completion on the RolloutStrategy, only
when the step wrote the record; nothing about waves without a strategy."""

from __future__ import annotations

from nova_gitops.rollouts.decisions import Decision, Move, WaveStatus
from nova_gitops.rollouts.events import rollout_events
from nova_gitops.rollouts.records import Record

TARGET = "a1b2c3d" + "0" * 33
BEFORE = "f9e8d7c" + "0" * 33


def decision(*moves: Move, waves: tuple[WaveStatus, ...] = ()) -> Decision:
    return Decision(moves, Record(target=TARGET), waves, {})


def told(events: list) -> list[tuple[str, str, str, str]]:  # type: ignore[type-arg]
    return [(event.kind, event.name, event.type, event.reason) for event in events]


def test_releases_and_rollbacks_are_told_on_the_cluster_when_git_took_them() -> None:
    step = decision(
        Move("wlc-1", TARGET, "release"),
        Move("wlc-2", TARGET, "unchanged"),
        Move("wlc-3", TARGET, "remedial"),
        Move("wlc-4", BEFORE, "rollback"),
        Move("wlc-5", None, "rollback"),
    )
    events = rollout_events(step, None, moved=True, recorded=False)
    assert told(events) == [
        ("Cluster", "wlc-1", "Normal", "Released"),
        ("Cluster", "wlc-3", "Normal", "Released"),
        ("Cluster", "wlc-4", "Warning", "RolledBack"),
        ("Cluster", "wlc-5", "Warning", "RolledBack"),
    ]
    assert events[0].message == "revision a1b2c3d released to wlc-1"
    assert events[1].message == "revision a1b2c3d a reschedule, released at once to wlc-3"
    assert events[2].message == "rollout of a1b2c3d rolled wlc-4 back to f9e8d7c"
    assert "first release undone" in events[3].message
    assert {event.api_version for event in events} == {"cluster.elotl.co/v1alpha1"}
    assert rollout_events(step, None, moved=False, recorded=False) == []  # a lost race told nothing


def test_wave_outcomes_are_told_on_the_strategy_when_the_record_changed() -> None:
    waves = (
        WaveStatus("canary", "passed", "promoted"),
        WaveStatus("prod", "paused", "paused: web on wlc-2 is Degraded (ProgressDeadlineExceeded)"),
        WaveStatus("others", "pending", "waits for prod"),
    )
    events = rollout_events(decision(waves=waves), "fleet", moved=False, recorded=True)
    assert told(events) == [
        ("RolloutStrategy", "fleet", "Normal", "WavePassed"),
        ("RolloutStrategy", "fleet", "Warning", "RolloutPaused"),
    ]
    assert events[0].message == "rollout of a1b2c3d: wave canary promoted"
    assert events[1].message.startswith("rollout of a1b2c3d: wave prod paused: web on wlc-2 is Degraded")
    assert events[0].occasion == (TARGET, "canary")
    assert rollout_events(decision(waves=waves), "fleet", moved=False, recorded=False) == []
    assert rollout_events(decision(waves=waves), None, moved=False, recorded=True) == []


def test_a_complete_rollout_is_told_once_with_its_last_wave() -> None:
    waves = (WaveStatus("canary", "passed", "passed"), WaveStatus("others", "passed", "passed"))
    events = rollout_events(decision(waves=waves), "fleet", moved=False, recorded=True)
    assert told(events)[-1] == ("RolloutStrategy", "fleet", "Normal", "RolloutComplete")
    assert events[-1].occasion == (TARGET,)


def test_a_rolled_back_wave_and_an_abort_say_so() -> None:
    waves = (
        WaveStatus("canary", "rolled-back", "web on wlc-1 is Degraded"),
        WaveStatus("others", "aborted", "rollout of a1b2c3d aborted by request: rolled back"),
    )
    events = rollout_events(decision(waves=waves), "fleet", moved=True, recorded=True)
    assert [event.message for event in events] == [
        "rollout of a1b2c3d: wave canary rolled back: web on wlc-1 is Degraded",
        "rollout of a1b2c3d: wave others: rollout of a1b2c3d aborted by request: rolled back",
    ]
