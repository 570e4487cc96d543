"""The capacity ledger a plan consumes, and the order single placement tries clusters in.

Behaviours covered:
- a cluster's rooms stay in node-name order through fits, commits and placements regardless (the invariant
  that lets fits skip sorting), whatever order the nodes were reported in;
- the ledger fits the same tuple of demands on many clusters as if each fit were fresh, and a list of
  demands changed between fits is fitted as it is now;
- ``ranked`` orders clusters by ``score`` (most left free first), then name, also after a placement
  changed one cluster's room (its remembered scores are not reused);
- a policy's candidates know their clusters, names and each cluster's tier;
- single placements are packed in group-name order whatever order they arrive or leave in, so a cluster's
  state depends only on what is placed there (what makes a plan a fixed point).
"""

from __future__ import annotations

from random import Random

from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.api.clusters import Cluster
from nova_gitops.scheduling import candidates, demand, fitting
from nova_gitops.scheduling.ledger import Ledger
from tests.builders import cluster, policy, source_set


def fleet(*documents: dict[str, object]) -> list[Cluster]:
    return sorted(source_set(*documents).clusters, key=lambda found: found.name)


def pod_demands(cpu: int, count: int, selector: dict[str, str] | None = None) -> tuple[demand.PodDemand, ...]:
    shape = demand.PodShape({"cpu": cpu, "memory": 1000}, dict(sorted((selector or {}).items())), (), ())
    return (demand.PodDemand(shape, count),)


node_names = st.lists(
    st.sampled_from(["b", "a", "n10", "n2", "z-1", "m"]), min_size=1, max_size=5, unique=True
)
steps = st.lists(
    st.tuples(st.integers(50, 3000), st.integers(0, 4), st.booleans(), st.booleans()), min_size=1, max_size=8
)


@settings(max_examples=100, deadline=None)
@given(names=node_names, cpus=st.lists(st.integers(0, 4000), min_size=5, max_size=5), work=steps)
def test_rooms_stay_in_node_name_order(
    names: list[str], cpus: list[int], work: list[tuple[int, int, bool, bool]]
) -> None:
    nodes = {name: {"cpu": f"{cpu}m", "memory": "4Gi"} for name, cpu in zip(names, cpus, strict=False)}
    (only,) = fleet(cluster("c1", nodes=nodes))
    ledger = Ledger([only])
    expected = sorted(names)
    assert [room.name for room in ledger.rooms("c1")] == expected
    for cpu, count, regardless, constrained in work:
        pods = pod_demands(cpu, count, {"zone": "x"} if constrained else None)
        need = demand.total_requests(pods)
        if regardless:
            ledger.consume_regardless("c1", pods, need)
        else:
            fit = ledger.fit("c1", pods, need)
            if fit.ok:
                ledger.commit("c1", fit, need)
        assert [room.name for room in ledger.rooms("c1")] == expected


def test_the_same_demands_fit_on_each_cluster_as_they_would_alone() -> None:
    clusters = fleet(
        cluster("c1", nodes={"n1": {"cpu": "1", "memory": "1Gi"}, "n2": {"cpu": "2", "memory": "1Gi"}}),
        cluster("c2", nodes={"n1": {"cpu": "500m", "memory": "1Gi"}}),
    )
    ledger = Ledger(clusters)
    pods = pod_demands(400, 3)
    need = demand.total_requests(pods)
    for name in ("c1", "c2", "c1"):
        alone = fitting.fit(ledger.rooms(name), pods)
        assert ledger.consume_regardless(name, pods, need) == ("" if alone.ok else alone.shortfall)
        if alone.ok:
            assert ledger.rooms(name) == alone.after


def test_a_list_of_demands_changed_between_fits_is_fitted_as_it_is_now() -> None:
    ledger = Ledger(fleet(cluster("c1", nodes={"n1": {"cpu": "1", "memory": "1Gi"}})))
    pods = list(pod_demands(400, 2))
    assert ledger.fit("c1", pods, demand.total_requests(pods)).ok
    pods[0] = pod_demands(400, 3)[0]
    assert not ledger.fit("c1", pods, demand.total_requests(pods)).ok


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 8000), st.integers(0, 8000)), min_size=1, max_size=6), st.data())
def test_ranked_is_by_score_then_name(sizes: list[tuple[int, int]], data: st.DataObject) -> None:
    clusters = fleet(*(cluster(f"c{index}", cpu=f"{cpu}m") for index, (cpu, _) in enumerate(sizes)))
    ledger = Ledger(clusters)
    for index, (_, used) in enumerate(sizes):
        ledger.consume_regardless(f"c{index}", pod_demands(used, 1), {"cpu": used})
    need = data.draw(st.sampled_from([{}, {"cpu": 100}, {"cpu": 300, "memory": 1000}, {"nvidia.com/gpu": 1}]))

    def by_score() -> list[Cluster]:
        return sorted(clusters, key=lambda found: (-ledger.score(found.name, need), found.name))

    assert list(ledger.ranked(clusters, need)) == by_score()
    changed = data.draw(st.sampled_from(clusters)).name  # a placement changes one cluster's room: re-ranked
    ledger.consume_regardless(changed, pod_demands(data.draw(st.integers(1, 4000)), 1), {"cpu": 1})
    assert list(ledger.ranked(clusters, need)) == by_score()


def test_candidates_know_their_clusters_names_and_tiers() -> None:
    clusters = fleet(
        cluster("a", labels={"tier": "gold"}),
        cluster("b", labels={"tier": "silver"}),
        cluster("c", labels={"tier": "gold"}),
        cluster("d", labels={"tier": "gold"}, ready="False"),
    )
    ordered = {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["silver", "gold"]}]}
    (chosen_policy,) = source_set(policy("p", orderedClusterSelector=ordered)).policies
    chosen = candidates.candidates(chosen_policy, clusters)
    assert [[found.name for found in tier] for tier in chosen.tiers] == [["b"], ["a", "c"]]
    assert [found.name for found in chosen.clusters] == ["b", "a", "c"]
    assert chosen.names == ("b", "a", "c")
    assert [chosen.tier_of(name) for name in ("a", "b", "c", "d")] == [1, 0, 1, None]
    assert chosen.not_ready == ("d",)


single_groups = st.lists(st.tuples(st.integers(50, 3000), st.integers(1, 4)), min_size=1, max_size=7).map(
    lambda sizes: [(f"g{index}", cpu, count) for index, (cpu, count) in enumerate(sizes)]
)


def state(ledger: Ledger, name: str) -> tuple[object, ...]:
    return (ledger.rooms(name), ledger.overflowing(name), dict(ledger.free(name)), dict(ledger.placed[name]))


@settings(max_examples=150, deadline=None)
@given(
    single_groups, st.lists(st.integers(500, 4000), min_size=1, max_size=3), st.randoms(use_true_random=False)
)
def test_a_clusters_state_depends_on_what_is_placed_not_on_the_order(
    groups: list[tuple[str, int, int]], cpus: list[int], random: Random
) -> None:
    """Single placements are packed in group-name order whatever order they arrive in: inserted groups that
    were accepted leave the cluster as if inserted by name; on an autoscaled cluster (overflow), every order
    gives the same state."""
    nodes = {f"n{index}": {"cpu": f"{cpu}m", "memory": "16Gi"} for index, cpu in enumerate(cpus)}
    clusters = fleet(cluster("c1", nodes=nodes))
    shuffled = list(groups)
    random.shuffle(shuffled)

    def place(order: list[tuple[str, int, int]], overflow: bool) -> tuple[Ledger, list[str]]:
        ledger = Ledger(clusters)
        accepted = []
        for name, cpu, count in order:
            pods = pod_demands(cpu, count)
            trial = ledger.try_insert("c1", name, pods, demand.total_requests(pods), overflow=overflow)
            if trial.ok:
                ledger.accept(trial)
                accepted.append(name)
        return ledger, accepted

    for overflow in (False, True):
        ledger, accepted = place(shuffled, overflow)
        by_name, _ = place(sorted((g for g in groups if g[0] in accepted), key=lambda g: g[0]), overflow)
        assert state(ledger, "c1") == state(by_name, "c1")
        kept = []
        for name in accepted:  # taking a group off is refused only where a group after it would not fit
            removal = ledger.try_remove("c1", name)
            if removal.ok:
                ledger.accept(removal)
            else:
                kept.append(name)
        rest, _ = place(sorted((g for g in groups if g[0] in kept), key=lambda g: g[0]), overflow)
        assert state(ledger, "c1") == state(rest, "c1")


@settings(max_examples=150, deadline=None)
@given(
    single_groups,
    single_groups,
    st.lists(st.integers(500, 4000), min_size=1, max_size=3),
    st.booleans(),
    st.randoms(use_true_random=False),
)
def test_a_restored_cluster_takes_later_changes_as_the_one_it_was_kept_from(
    kept: list[tuple[str, int, int]],
    later: list[tuple[str, int, int]],
    cpus: list[int],
    overflow: bool,
    random: Random,
) -> None:
    """A cluster's single placements put back from what ``kept`` gave (the plan memory's keeps) take groups
    inserted before, between and after them and groups taken off exactly as the cluster they were kept
    from, though a restored cluster holds the nodes' room after its last group only."""
    nodes = {f"n{index}": {"cpu": f"{cpu}m", "memory": "16Gi"} for index, cpu in enumerate(cpus)}
    clusters = fleet(cluster("c1", nodes=nodes, autoscaled=overflow))
    later = [(f"{name[:1]}{index}x", cpu, count) for index, (name, cpu, count) in enumerate(later)]
    entries = {name: pod_demands(cpu, count) for name, cpu, count in (*kept, *later)}
    made = Ledger(clusters)
    for name, _, _ in kept:
        trial = made.try_insert(
            "c1", name, entries[name], demand.total_requests(entries[name]), overflow=overflow
        )
        if trial.ok:
            made.accept(trial)
    restored = Ledger(clusters)
    restored.restore_kept(
        "c1", made.kept("c1"), {name: (pods, demand.total_requests(pods)) for name, pods in entries.items()}
    )
    assert state(restored, "c1") == state(made, "c1")
    changes = [*(("insert", name) for name, _, _ in later), *(("remove", name) for name, _, _ in kept)]
    random.shuffle(changes)
    placed = set(made.kept("c1").names)
    for change, name in changes:
        if change == "insert":
            need = demand.total_requests(entries[name])
            trials = [
                ledger.try_insert("c1", name, entries[name], need, overflow=overflow)
                for ledger in (made, restored)
            ]
        elif name in placed:
            trials = [ledger.try_remove("c1", name) for ledger in (made, restored)]
        else:
            continue
        assert trials[0] == trials[1]
        if trials[0].ok:
            made.accept(trials[0])
            restored.accept(trials[1])
            placed ^= {name}
        assert state(restored, "c1") == state(made, "c1")
