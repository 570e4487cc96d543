"""Properties of the gate logic over random fleets and random histories (hypothesis).

Behaviours covered, whatever the reports, the clock, newer renders, pauses, promotes and aborts:
- a wave is released only when every earlier wave has passed (or was promoted) for the same target;
- a cluster's released commit never goes back to an older render, except by a rollback move;
- ``step`` is idempotent: with its decision applied, asking again moves nothing and keeps the record
  (checked by ``Fleet.step`` after every step);
- a wave that passed and is not healthy now holds the rollout for less than ``healthTimeout``: then it
  fails as ``onFailure`` says (a pause by request holds that off).
"""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.rollouts.health import ClusterFacts, WorkloadFacts
from nova_gitops.rollouts.waves import Wave
from tests.unit.rollouts.fleets import Fleet, healthy, strategy, unhealthy, wave

REVISIONS = tuple(str(index) * 40 for index in range(1, 7))  # in render order: a higher index is newer


def rank(commit: str | None) -> int:
    return -1 if commit is None else REVISIONS.index(commit)


@st.composite
def fleets(draw: st.DrawFn) -> Fleet:
    sizes = draw(st.lists(st.integers(0, 3), min_size=1, max_size=3))
    waves: list[Wave] = []
    for index, size in enumerate(sizes):
        names = tuple(f"w{index}-c{number}" for number in range(size))
        bake = draw(st.sampled_from([timedelta(0), timedelta(minutes=5)]))
        waves.append(wave(f"w{index}", *names, max_parallel=draw(st.sampled_from([None, 1, 2])), bake=bake))
    on_failure = draw(st.sampled_from(["pause", "rollback"]))
    fleet = Fleet(tuple(waves), strategy(on_failure=on_failure), target=REVISIONS[1])
    for name in fleet.clusters:
        fleet.released[name] = REVISIONS[0]
        fleet.reports[name] = healthy(REVISIONS[0])
    return fleet


events = st.one_of(
    st.tuples(st.just("tick"), st.sampled_from([0, 1, 5, 16])),
    st.tuples(
        st.just("report"), st.integers(0, 8), st.sampled_from(["healthy", "slow", "degraded", "stale"])
    ),
    st.tuples(st.just("render"), st.integers(0, 8)),
    st.tuples(st.just("promote"), st.integers(0, 2)),
    st.tuples(st.just("pause"), st.booleans()),
    st.tuples(st.just("abort"), st.just(0)),
)


def apply(fleet: Fleet, event: tuple[object, ...]) -> None:
    kind, value = event[0], event[1]
    clusters = fleet.clusters
    if kind == "tick" and isinstance(value, int):
        fleet.now += timedelta(minutes=value)
    elif kind == "report" and clusters and isinstance(value, int):
        name = clusters[value % len(clusters)]
        commit = fleet.released[name] or REVISIONS[0]
        fleet.reports[name] = {
            "healthy": healthy(commit),
            "slow": unhealthy(commit),
            "degraded": unhealthy(commit, "ProgressDeadlineExceeded", "Progressing"),
            "stale": ClusterFacts(commit, (WorkloadFacts("Deployment", "shop", "web", True, REVISIONS[0]),)),
        }[str(event[2])]
    elif kind == "render" and isinstance(value, int) and rank(fleet.target) + 1 < len(REVISIONS):
        untouched = {name for number, name in enumerate(clusters) if (value >> number) & 1}
        fleet.render(REVISIONS[rank(fleet.target) + 1], unchanged=untouched)
    elif kind == "promote" and isinstance(value, int):
        name = fleet.waves[value % len(fleet.waves)].name
        fleet.request(promotes=fleet.requests.promotes | {(fleet.target, name)})
    elif kind == "pause":
        fleet.request(paused=bool(value))
    elif kind == "abort":
        fleet.request(abort=fleet.target)


@settings(max_examples=300, deadline=None)
@given(fleets(), st.lists(events, max_size=25))
def test_waves_in_order_never_backwards_and_idempotent(
    fleet: Fleet, history: list[tuple[object, ...]]
) -> None:
    for event in history:
        apply(fleet, event)
        before = dict(fleet.released)
        decision = fleet.step()  # asserts idempotence
        passed = {record.name for record in decision.record.waves if record.passed_at is not None}
        for move in decision.moves:
            if move.kind == "release":
                index = next(
                    number for number, each in enumerate(fleet.waves) if move.cluster in each.clusters
                )
                earlier = {each.name for each in fleet.waves[:index]}
                assert earlier <= passed, f"{move.cluster} released before {sorted(earlier - passed)} passed"
            if move.kind != "rollback":
                assert rank(move.commit) >= rank(before[move.cluster]), f"{move} goes back"
        assert fleet.strategy is not None
        for status in decision.waves:
            if status.state == "held":
                since = decision.record.wave(status.name).held_since
                assert since is not None and fleet.now - since < fleet.strategy.health_timeout
