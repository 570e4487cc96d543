"""The capacity ledger a plan consumes, and the order single placement tries clusters in.

Behaviours covered:
- a cluster's rooms stay in node-name order through fits, commits and placements regardless (the invariant
  that lets fits skip sorting), whatever order the nodes were reported in;
- the ledger fits the same tuple of demands on many clusters as if each fit were fresh, and a list of
  demands changed between fits is fitted as it is now;
- ``ranked`` orders clusters by ``score`` (most left free first), then name, also after a placement
  changed one cluster's room (its remembered scores are not reused);
- a policy's candidates know their clusters, names and each cluster's tier.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.api.clusters import Cluster
from nova_gitops.scheduling import candidates, demand, fitting
from nova_gitops.scheduling.placing import Ledger
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
