"""RolloutStrategy: the source document that orders clusters into waves, validated like a policy.

Behaviours covered:
- a valid strategy is read into ``SourceSet.rollout`` with its defaults (bakeTime 5m, healthTimeout 15m,
  onFailure pause) and per-wave overrides, and is not a workload (never rendered); no strategy → None;
- durations are Go's ``5m``/``30s``/``1h30m``; anything else is an error naming the field;
- strict validation with file:line and ``RolloutStrategy <name>``: an unknown field (with "did you mean"),
  a duplicate or reserved wave name, a missing selector, a bad selector, maxParallel < 1, a bad onFailure;
- at most one strategy per source.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import yaml

from nova_gitops.api import inputs, loading, rollouts
from nova_gitops.errors import InputError
from tests.builders import cluster, source_set

STRATEGY: dict[str, Any] = {
    "apiVersion": "gitops.nova.elotl.co/v1alpha1",
    "kind": "RolloutStrategy",
    "metadata": {"name": "fleet"},
    "spec": {
        "waves": [
            {"name": "canary", "clusterSelector": {"matchLabels": {"tier": "canary"}}, "maxParallel": 1},
            {"name": "prod", "clusterSelector": {"matchLabels": {"tier": "prod"}}, "bakeTime": "1h30m"},
        ],
        "maxParallel": 2,
    },
}


def with_spec(**spec: Any) -> dict[str, Any]:
    return {**STRATEGY, "spec": {**STRATEGY["spec"], **spec}}


def problems_of(*documents: dict[str, Any]) -> list[str]:
    text = yaml.dump_all(documents, sort_keys=False)
    loaded, problems = loading.load_documents("source.yaml", text)
    assert not problems
    with pytest.raises(InputError) as raised:
        inputs.build_source_set(loaded, texts={"source.yaml": text})
    return [str(problem) for problem in raised.value.problems if problem.is_error]


def test_a_strategy_is_read_with_defaults_and_not_rendered() -> None:
    found = source_set(STRATEGY, cluster("c1"))
    strategy = found.rollout
    assert strategy is not None
    assert [wave.name for wave in strategy.waves] == ["canary", "prod"]
    assert strategy.bake_time == timedelta(minutes=5)
    assert strategy.health_timeout == timedelta(minutes=15)
    assert strategy.on_failure == "pause"
    assert strategy.max_parallel == 2
    assert strategy.waves[0].max_parallel == 1 and strategy.waves[1].bake_time == timedelta(
        hours=1, minutes=30
    )
    assert found.workloads == ()


def test_no_strategy_means_none() -> None:
    assert source_set(cluster("c1")).rollout is None


def test_a_strategy_without_waves_puts_every_cluster_in_the_implicit_wave() -> None:
    found = source_set(with_spec(waves=[], bakeTime="0s", onFailure="rollback"))
    assert found.rollout is not None
    assert found.rollout.waves == () and found.rollout.bake_time == timedelta(0)
    assert found.rollout.on_failure == "rollback"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("5m", timedelta(minutes=5)),
        ("30s", timedelta(seconds=30)),
        ("1h30m", timedelta(hours=1, minutes=30)),
        ("2h", timedelta(hours=2)),
        ("0s", timedelta(0)),
        ("", None),
        ("5", None),
        ("1.5h", None),
        ("30m1h", None),
        ("1d", None),
        (" 5m", None),
    ],
)
def test_durations(text: str, expected: timedelta | None) -> None:
    assert rollouts.parse_duration(text) == expected
    if expected is not None:
        assert rollouts.parse_duration(rollouts.format_duration(expected)) == expected


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            {"bakeTme": "5m"},
            "RolloutStrategy fleet: spec.bakeTme: unknown field (a RolloutStrategy is read strictly",
        ),
        ({"bakeTme": "5m"}, "did you mean bakeTime?"),
        ({"bakeTime": "5 minutes"}, "RolloutStrategy fleet: spec.bakeTime: must be a duration such as 30s"),
        ({"bakeTime": 300}, "spec.bakeTime: must be a duration such as 30s, 5m or 1h30m, got the number 300"),
        ({"healthTimeout": "0s"}, "spec.healthTimeout: must be more than 0s"),
        ({"maxParallel": 0}, "spec.maxParallel: must be a whole number of 1 or more"),
        (
            {"onFailure": "Rollback"},
            "spec.onFailure: must be pause or rollback, got 'Rollback'; did you mean rollback?",
        ),
        (
            {"waves": [{"name": "a", "clusterSelector": {}}, {"name": "a", "clusterSelector": {}}]},
            "spec.waves[1].name: duplicate wave 'a': also spec.waves[0]",
        ),
        ({"waves": [{"name": "others", "clusterSelector": {}}]}, "'others' is the implicit last wave"),
        (
            {"waves": [{"name": "Canary", "clusterSelector": {}}]},
            "spec.waves[0].name: 'Canary' is not a wave name",
        ),
        ({"waves": [{"name": "a"}]}, "spec.waves[0].clusterSelector: required"),
        (
            {"waves": [{"name": "a", "clusterSelector": {"matchLabel": {"x": "y"}}}]},
            "did you mean matchLabels?",
        ),
        (
            {"waves": [{"name": "a", "clusterSelector": {}, "bake": "5m"}]},
            "spec.waves[0].bake: unknown field",
        ),
        ({"waves": [{"name": "a", "clusterSelector": {}, "maxParallel": True}]}, "spec.waves[0].maxParallel"),
    ],
)
def test_invalid_strategies_are_errors_naming_it_at_its_line(change: dict[str, Any], expected: str) -> None:
    found = problems_of(with_spec(**change))
    assert any(expected in problem for problem in found), found
    assert all(problem.startswith("source.yaml:") for problem in found)


def test_an_error_points_at_the_fields_line() -> None:
    (problem,) = problems_of(with_spec(bakeTime="soon"))
    text = yaml.dump(with_spec(bakeTime="soon"), sort_keys=False)
    line = next(number for number, row in enumerate(text.splitlines(), 1) if row.startswith("  bakeTime:"))
    assert problem.startswith(f"source.yaml:{line}: RolloutStrategy fleet: spec.bakeTime:")


def test_at_most_one_strategy_per_source() -> None:
    other = {**STRATEGY, "metadata": {"name": "second"}}
    found = problems_of(STRATEGY, other)
    assert any(
        "RolloutStrategy second: metadata.name: a source holds at most one RolloutStrategy: "
        "fleet is at source.yaml:1" in problem
        for problem in found
    ), found
