"""Reschedule exclusions and the failback hold, as pure functions of reports and the clock.

Behaviours covered:
- a request excludes its cluster for its group from the moment the controller sees it;
- the exclusion lasts the cool-down even after the agent stops reporting, and ends when the cool-down ends
  or the cluster's reported capacity changes (or the cluster stops reporting);
- a released request still reported with the same ``since`` is not acted on again; a new episode is;
- spread groups are forgotten on request; the avoid map quotes the agent's reason in Nova's wording;
- the failback hold keeps each group's first moment, forgets groups that stop wanting to move, and is due
  after ``failback_after``;
- property: memory never holds an exclusion past its cool-down, nor anything about unreported requests
  once their exclusions ended (memory stays bounded).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.api.statusreports import RescheduleRequest
from nova_gitops.controller import rescheduling
from nova_gitops.controller.rescheduling import FailbackHold, RescheduleMemory, failback_candidates, update

REASON = "deployment demo/web does not have minimum replicas available"


def request(group: str = "g", cluster: str = "wlc-2", since: str = "t0") -> RescheduleRequest:
    return RescheduleRequest("apps/v1", "Deployment", "demo", "web", group, REASON, since, cluster=cluster)


def test_a_request_excludes_its_cluster_for_its_group() -> None:
    result = update(RescheduleMemory(), [request()], {"wlc-2": "cap"}, now=0.0, cooldown=600)
    assert [exclusion.key for exclusion in result.started] == [("g", "wlc-2")]
    assert result.memory.avoid() == {
        "g": {"wlc-2": f"does not have enough resources (rescheduling triggered: {REASON})"}
    }


def test_the_exclusion_outlives_the_request_until_the_cool_down_ends() -> None:
    memory = update(RescheduleMemory(), [request()], {"wlc-2": "cap"}, now=0.0, cooldown=600).memory
    for now, excluded in ((10.0, True), (599.0, True), (600.0, False)):
        result = update(memory, [], {"wlc-2": "cap"}, now=now, cooldown=600)
        assert bool(result.memory.avoid()) is excluded, now
    assert update(memory, [], {"wlc-2": "cap"}, now=600.0, cooldown=600).ended[0].key == ("g", "wlc-2")


def test_a_capacity_change_or_a_silent_cluster_ends_it_early() -> None:
    memory = update(RescheduleMemory(), [request()], {"wlc-2": "cap"}, now=0.0, cooldown=600).memory
    assert update(memory, [], {"wlc-2": "bigger"}, now=1.0, cooldown=600).memory.avoid() == {}
    assert update(memory, [], {}, now=1.0, cooldown=600).memory.avoid() == {}


def test_a_released_request_is_not_re_armed_but_a_new_episode_is() -> None:
    capacities = {"wlc-2": "cap"}
    memory = update(RescheduleMemory(), [request()], capacities, now=0.0, cooldown=10).memory
    released = update(memory, [request()], capacities, now=10.0, cooldown=10)
    assert released.memory.avoid() == {} and released.started == ()
    still = update(released.memory, [request()], capacities, now=20.0, cooldown=10)
    assert still.memory.avoid() == {}
    again = update(still.memory, [request(since="t1")], capacities, now=21.0, cooldown=10)
    assert list(again.memory.avoid()) == ["g"]
    gone = update(still.memory, [], capacities, now=21.0, cooldown=10)
    assert gone.memory.released == frozenset()


def test_spread_groups_are_forgotten() -> None:
    memory = update(
        RescheduleMemory(), [request("g"), request("spread")], {"wlc-2": "cap"}, now=0.0, cooldown=600
    ).memory
    assert list(memory.without_groups({"spread"}).avoid()) == ["g"]


def test_requests_from_clusters_without_a_report_are_ignored() -> None:
    assert update(RescheduleMemory(), [request()], {}, now=0.0, cooldown=600).memory.avoid() == {}


def test_the_failback_hold() -> None:
    hold = FailbackHold().observe({"a", "b"}, 100.0)
    hold = hold.observe({"a", "b"}, 150.0)
    assert hold.waiting == {"a": 100.0, "b": 100.0}
    hold = hold.observe({"a"}, 200.0)  # b's higher tier filled up again: its wait starts over
    assert hold.due(399.0, 300.0) == ()
    assert hold.due(400.0, 300.0) == ("a",)
    hold = hold.observe({"a", "b"}, 400.0)
    assert hold.waiting["b"] == 400.0


def test_failback_candidates_are_previously_placed_groups_that_would_move() -> None:
    held = {"a": ("wlc-2",), "b": ("wlc-1",), "new": ("wlc-2",)}
    free = {"a": ("wlc-1",), "b": ("wlc-1",), "new": ("wlc-1",)}
    previous = {"a": ("wlc-2",), "b": ("wlc-1",)}
    assert failback_candidates(held, free, previous) == {"a"}


events = st.lists(
    st.tuples(
        st.floats(min_value=0, max_value=100),  # time step
        st.lists(
            st.tuples(st.sampled_from("gh"), st.sampled_from(["c1", "c2"]), st.sampled_from(["s0", "s1"])),
            max_size=4,
        ),
        st.sampled_from(["cap-a", "cap-b"]),
    ),
    max_size=20,
)


@settings(max_examples=150, deadline=None)
@given(events, st.floats(min_value=1, max_value=300))
def test_memory_never_outlives_its_rules(
    steps: list[tuple[float, list[tuple[str, str, str]], str]], cooldown: float
) -> None:
    memory = RescheduleMemory()
    now = 0.0
    for step, reported, capacity in steps:
        now += step
        requests = [request(group, cluster, since) for group, cluster, since in reported]
        memory = update(memory, requests, {"c1": capacity, "c2": "fixed"}, now=now, cooldown=cooldown).memory
        for exclusion in memory.exclusions.values():
            assert now - exclusion.since < cooldown
            assert exclusion.capacity == {"c1": capacity, "c2": "fixed"}[exclusion.cluster]
        identities = {(r.group, r.cluster, r.since) for r in requests}
        assert memory.released <= identities
        assert len(memory.exclusions) <= 4


def test_avoid_reason_completes_nova_wording() -> None:
    exclusion = rescheduling.Exclusion("g", "wlc-2", REASON, 0.0, "cap", "t0")
    assert f"Cluster wlc-2 skipped, {exclusion.avoid_reason()};".startswith(
        "Cluster wlc-2 skipped, does not have enough resources"
    )
