"""Waves from a RolloutStrategy and the wave plan of a change (what ``diff`` will show).

Behaviours covered:
- a cluster is in the first wave that selects it; clusters no wave selects form the implicit last wave
  ``others``; clusters are in name order; a wave's own maxParallel/bakeTime override the strategy's;
- without a strategy, one ungated wave holds every cluster;
- the plan lists, per wave, the clusters the change touches and those it does not, the batches, and the
  earliest total time: the sum of the bake times of the waves that change something;
- batches are `maxParallel` changed clusters in name order (the last one shorter).
"""

from __future__ import annotations

from datetime import timedelta

from nova_gitops.rollouts import plans, waves
from tests.builders import cluster, source_set
from tests.unit.api.test_rollout_strategies import STRATEGY, with_spec

FLEET = (
    cluster("wlc-b", labels={"tier": "prod"}),
    cluster("wlc-a", labels={"tier": "prod"}),
    cluster("canary-1", labels={"tier": "canary"}),
    cluster("dev-1", labels={"tier": "dev"}),
)


def test_each_cluster_is_in_the_first_wave_that_selects_it_and_the_rest_come_last() -> None:
    overlapping = with_spec(
        waves=[
            *STRATEGY["spec"]["waves"],
            {"name": "again", "clusterSelector": {"matchLabels": {"tier": "prod"}}},
        ]
    )
    found = source_set(overlapping, *FLEET)
    ordered = waves.waves_for(found.rollout, found.clusters)
    assert [(wave.name, wave.clusters) for wave in ordered] == [
        ("canary", ("canary-1",)),
        ("prod", ("wlc-a", "wlc-b")),
        ("again", ()),
        ("others", ("dev-1",)),
    ]
    assert [wave.max_parallel for wave in ordered] == [1, 2, 2, 2]
    assert ordered[1].bake_time == timedelta(hours=1, minutes=30) and ordered[0].bake_time == timedelta(
        minutes=5
    )
    assert ordered[-1].implicit and waves.wave_of(ordered, "wlc-b") == ordered[1]


def test_without_a_strategy_one_ungated_wave_holds_every_cluster() -> None:
    found = source_set(*FLEET)
    (only,) = waves.waves_for(None, found.clusters)
    assert only.ungated and only.clusters == ("canary-1", "dev-1", "wlc-a", "wlc-b")


def test_the_plan_of_a_change() -> None:
    found = source_set(STRATEGY, *FLEET)
    ordered = waves.waves_for(found.rollout, found.clusters)
    plan = plans.plan_change(ordered, {"wlc-a", "wlc-b", "dev-1"})
    assert [(wave.name, wave.changed, wave.unchanged, wave.batches) for wave in plan.waves] == [
        ("canary", (), ("canary-1",), 0),
        ("prod", ("wlc-a", "wlc-b"), (), 1),
        ("others", ("dev-1",), (), 1),
    ]
    assert plan.untouched == ("canary-1",)
    assert plan.earliest == timedelta(hours=1, minutes=35)
    assert plan.earliest_last_release == timedelta(hours=1, minutes=30)
    assert [wave.name for wave in plan.changing_waves] == ["prod", "others"]


def test_a_change_without_a_strategy_takes_no_time() -> None:
    found = source_set(*FLEET)
    plan = plans.plan_change(waves.waves_for(None, found.clusters), {"wlc-a"})
    assert plan.earliest == timedelta(0) and plan.untouched == ("canary-1", "dev-1", "wlc-b")


def test_batches_are_max_parallel_clusters_in_name_order() -> None:
    wave = waves.Wave("prod", ("a", "b", "c", "d", "e"), 4, timedelta(minutes=5))
    (planned,) = plans.plan_change([wave], {"e", "d", "c", "b", "a"}).waves
    assert planned.batches == 2 and planned.batched == (("a", "b", "c", "d"), ("e",))
    (whole,) = plans.plan_change([waves.Wave("all", ("a", "b"), None, timedelta(0))], {"a", "b"}).waves
    assert whole.batched == (("a", "b"),)
    (none,) = plans.plan_change([wave], set()).waves
    assert none.batched == ()


def test_a_cluster_without_a_usable_report_stays_in_the_wave_it_was_in_while_its_branch_exists() -> None:
    found = source_set(with_spec(), *FLEET[:2])  # canary-1 and dev-1 sent no usable report
    assert found.rollout is not None
    ordered = waves.waves_for(found.rollout, found.clusters)
    members = {"canary-1": "canary", "dev-1": "others", "gone": "prod", "wlc-a": "prod"}
    branches = {"canary-1": "a" * 40, "dev-1": "a" * 40, "wlc-a": "a" * 40}  # "gone": its branch deleted
    kept, unreported = waves.keep_unreported(found.rollout, ordered, members, branches)
    assert unreported == {"canary-1", "dev-1"}
    assert [(wave.name, wave.clusters) for wave in kept] == [
        ("canary", ("canary-1",)),
        ("prod", ("wlc-a", "wlc-b")),
        ("others", ("dev-1",)),  # the implicit wave, back for the cluster it had
    ]
    assert waves.keep_unreported(found.rollout, ordered, {}, branches) == (ordered, frozenset())
