"""Lease leader election: the pure decision table, and candidates racing on a real Lease over the API.

Behaviours covered:
- decide: no lease → create; ours → renew; released (empty holder) → acquire; another holder's record seen
  unchanged for a whole lease duration on *our* monotonic clock → acquire, sooner → wait;
- records: a renewal keeps acquireTime and transitions, a take-over counts a transition, a release leaves no
  holder and a 1 s duration; MicroTime format;
- over the API (fake or real cluster): the first candidate creates the Lease and leads, the second waits while
  the leader renews, takes over only after the leader stopped renewing for a lease duration, and the old
  leader then knows it lost; a released Lease is taken over at once; two candidates creating at once cannot
  both lead (409); the Lease carries holderIdentity, leaseDurationSeconds, acquireTime, renewTime;
- a leader whose renewals fail keeps leading until the renew deadline, then stops (fake only: injected 500s);
- campaign() calls on_started/on_stopped and releases the Lease when stopped;
- bad timings are refused.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nova_gitops.controller import leaderelection
from nova_gitops.controller.leaderelection import Action, KubeLeases, LeaderElector, LeaseRecord, decide
from nova_gitops.controller.ports import ManualClock
from nova_gitops.sources.kubeapi import KubeApi
from tests.fakekube.fixtures import KubeTarget

WALL = datetime(2026, 1, 1, 12, 0, 0, 123456, tzinfo=UTC)


def held_by(holder: str, duration: int = 15) -> LeaseRecord:
    return LeaseRecord(holder, duration, "2026-01-01T00:00:00.000000Z", "2026-01-01T00:00:10.000000Z", 2, "7")


@pytest.mark.parametrize(
    ("observed", "seen_at", "now", "expected"),
    [
        (None, 0.0, 0.0, Action.CREATE),
        (held_by("me"), 0.0, 100.0, Action.RENEW),
        (held_by(""), 0.0, 0.0, Action.ACQUIRE),
        (held_by("other"), 0.0, 14.9, Action.WAIT),
        (held_by("other"), 0.0, 15.0, Action.ACQUIRE),
        (held_by("other"), 50.0, 60.0, Action.WAIT),
    ],
)
def test_decision_table(observed: LeaseRecord | None, seen_at: float, now: float, expected: Action) -> None:
    assert decide(observed, seen_at, now, "me") is expected


@given(st.integers(0, 1000), st.integers(1, 3600))
def test_renewal_keeps_acquire_time_and_takeover_counts_a_transition(transitions: int, duration: int) -> None:
    observed = LeaseRecord("other", 15, "t0", "t1", transitions, "9")
    renewed = leaderelection.next_record(
        LeaseRecord("me", 15, "t0", "t1", transitions, "9"), Action.RENEW, "me", duration, "t2"
    )
    assert (renewed.acquire_time, renewed.renew_time, renewed.transitions) == ("t0", "t2", transitions)
    taken = leaderelection.next_record(observed, Action.ACQUIRE, "me", duration, "t2")
    assert (taken.holder, taken.acquire_time, taken.transitions) == ("me", "t2", transitions + 1)
    assert taken.resource_version == "9" and taken.duration_seconds == duration
    released = leaderelection.released_record(taken, "t3")
    assert (released.holder, released.duration_seconds) == ("", 1)


def test_micro_time_and_identity() -> None:
    assert leaderelection.micro_time(WALL) == "2026-01-01T12:00:00.123456Z"
    identity = leaderelection.default_identity({"POD_NAME": "nova-gitops-7d9f"})
    assert identity.startswith("nova-gitops-7d9f_") and identity != leaderelection.default_identity({})


def test_bad_timings_are_refused() -> None:
    leases = KubeLeases(KubeApi(None), "ns")
    with pytest.raises(ValueError, match="retry period < renew deadline < lease duration"):
        LeaderElector(leases, "a", lease_duration=10, renew_deadline=10, retry_period=2)


def _candidate(kube: KubeTarget, identity: str, clock: ManualClock) -> LeaderElector:
    leases = KubeLeases(KubeApi(kube.api_client), kube.namespace)
    # the wall clock moves with the candidate's clock, as a real one does (renewTime changes each renewal)
    return LeaderElector(
        leases, identity, clock=clock, wall_clock=lambda: WALL + timedelta(seconds=clock.now() - 1000)
    )


def test_candidates_take_turns_on_one_lease(kube: KubeTarget) -> None:
    clock_a, clock_b = ManualClock(), ManualClock()
    a, b = _candidate(kube, "a", clock_a), _candidate(kube, "b", clock_b)
    assert a.step() and a.is_leader
    assert not b.step()
    for _ in range(20):  # the leader renews every 2 s: b never sees the record stand still for 15 s
        clock_a.advance(2)
        clock_b.advance(2)
        assert a.step() and not b.step()
    lease = KubeApi(kube.api_client).get(leaderelection.LEASES, kube.namespace, "nova-gitops-controller")
    assert lease is not None
    assert lease["spec"]["holderIdentity"] == "a" and lease["spec"]["leaseDurationSeconds"] == 15
    assert lease["spec"]["renewTime"] == "2026-01-01T12:00:40.123456Z"
    assert lease["spec"]["acquireTime"] == "2026-01-01T12:00:00.123456Z"
    clock_b.advance(14.9)  # a stopped renewing (it hangs): b waits a whole lease duration
    assert not b.step()
    clock_b.advance(0.2)
    assert b.step() and b.is_leader
    clock_a.advance(9.9)  # a's own deadline has not passed yet, but the next attempt shows it lost
    assert not a.step() and not a.is_leader
    record = b.port.get()
    assert record is not None and record.holder == "b" and record.transitions == 1


def test_a_released_lease_is_taken_over_at_once(kube: KubeTarget) -> None:
    clock = ManualClock()
    a, b = _candidate(kube, "a", clock), _candidate(kube, "b", clock)
    assert a.step() and not b.step()
    a.release()
    assert not a.is_leader
    assert b.step()
    assert not a.step()


def test_two_candidates_creating_at_once_cannot_both_lead(kube: KubeTarget) -> None:
    clock = ManualClock()
    a, b = _candidate(kube, "a", clock), _candidate(kube, "b", clock)
    # both read "no lease" before either writes
    a._observe(None)
    b._observe(None)
    # Lease times are MicroTime: a real server refuses anything but RFC 3339 with microseconds (400)
    t, t2 = "2026-01-01T12:00:00.000000Z", "2026-01-01T12:00:02.000000Z"
    assert a.port.create(leaderelection.next_record(None, Action.CREATE, "a", 15, t)).holder == "a"
    with pytest.raises(leaderelection.LeaseConflict):
        b.port.create(leaderelection.next_record(None, Action.CREATE, "b", 15, t))
    # and a stale update loses too
    stale = a.port.get()
    assert stale is not None
    a.port.update(leaderelection.next_record(stale, Action.RENEW, "a", 15, t2))
    with pytest.raises(leaderelection.LeaseConflict):
        b.port.update(leaderelection.next_record(stale, Action.ACQUIRE, "b", 15, t2))


@pytest.mark.fake_only("injects 500s on every Lease request")
def test_a_leader_that_cannot_renew_steps_down_at_the_renew_deadline(kube: KubeTarget) -> None:
    assert kube.fake is not None
    clock = ManualClock()
    a = _candidate(kube, "a", clock)
    assert a.step()
    kube.fake.fail_next("*", "/leases", status=500, times=100)
    clock.advance(2)
    assert a.step()  # failed renewal, still within the deadline
    clock.advance(7.9)
    assert a.is_leader
    clock.advance(0.2)
    assert not a.step() and not a.is_leader


def test_campaign_leads_and_releases_when_stopped(kube: KubeTarget) -> None:
    leases = KubeLeases(KubeApi(kube.api_client), kube.namespace, "campaign")
    elector = LeaderElector(leases, "a", lease_duration=3, renew_deadline=2, retry_period=0.05)
    stop, started, events = threading.Event(), threading.Event(), []

    def on_started() -> None:
        events.append("started")
        started.set()

    thread = threading.Thread(
        target=elector.campaign, args=(stop, on_started, lambda: events.append("stopped")), daemon=True
    )
    thread.start()
    assert started.wait(10)
    stop.set()
    thread.join(10)
    assert events == ["started", "stopped"]
    record = leases.get()
    assert record is not None and record.holder == "" and record.duration_seconds == 1
