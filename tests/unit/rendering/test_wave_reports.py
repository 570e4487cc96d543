"""The wave plan of a change as ``diff`` shows it, and the wave column of PLACEMENT.md (docs/rollouts.md).

Behaviours covered (table tests on a three-wave strategy: canary by label with a 30m bake, prod with
maxParallel 2, and the implicit ``others``):
- text, Markdown and JSON give, per wave in order, the clusters the change releases there and in which
  batches, the bake it waits; then the clusters the change does not touch; then the earliest total time
  (the sum of the bakes of the waves it changes) and when the last release happens;
- a change touching no cluster releases nothing through a gate and takes 0s; a wave selecting no cluster
  says so and passes at once;
- Markdown names at most ``MARKDOWN_NAME_LIMIT`` clusters in a cell, then how many more;
- a RenderDiff without a plan formats exactly as before (no Rollout section, no ``rollout`` key);
- PLACEMENT.md's capacity table has a Wave column (position and name) only when the source has waves;
- the Markdown and text samples in docs/rollouts.md are what the formatters print.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from nova_gitops.rendering import diffformats, diffs, reports, waveplans
from nova_gitops.rollouts import plans, waves
from nova_gitops.scheduling.planparts import ClusterUsage
from nova_gitops.scheduling.plans import Plan
from tests.builders import cluster, source_set

STRATEGY: dict[str, Any] = {
    "apiVersion": "gitops.nova.elotl.co/v1alpha1",
    "kind": "RolloutStrategy",
    "metadata": {"name": "fleet"},
    "spec": {
        "waves": [
            {"name": "canary", "clusterSelector": {"matchLabels": {"tier": "canary"}}, "bakeTime": "30m"},
            {"name": "prod", "clusterSelector": {"matchLabels": {"tier": "prod"}}, "maxParallel": 2},
        ],
    },
}
FLEET = (
    cluster("canary-1", labels={"tier": "canary"}),
    *(cluster(f"prod-{x}", labels={"tier": "prod"}) for x in "abc"),
    cluster("dev-1", labels={"tier": "dev"}),
    cluster("dev-2", labels={"tier": "dev"}),
)


def fleet_waves(*extra: dict[str, Any], strategy: dict[str, Any] = STRATEGY) -> tuple[waves.Wave, ...]:
    found = source_set(strategy, *FLEET, *extra)
    return waves.waves_for(found.rollout, found.clusters)


CANARY_AND_PROD = plans.plan_change(fleet_waves(), {"canary-1", "prod-a", "prod-b", "prod-c"})
NOTHING = plans.plan_change(fleet_waves(), set())
PATCH = "--- a/clusters/canary-1/demo/configmap-x.yaml\n+++ b/clusters/canary-1/demo/configmap-x.yaml\n"
DIFF = diffs.RenderDiff(
    objects=(
        diffs.ObjectChange("clusters/canary-1/demo/configmap-x.yaml", "canary-1", "changed", "x", PATCH),
    ),
    clusters=(diffs.ClusterCounts("canary-1", changed=1),),
)


def test_text_of_a_change_in_two_waves() -> None:
    assert waveplans.text_lines(CANARY_AND_PROD) == [
        "wave canary: changes canary-1; bake 30m",
        "wave prod: changes prod-a, prod-b, prod-c in 2 batches of 2 (prod-a, prod-b | prod-c); bake 5m",
        "wave others: changes none of its clusters (passes at once)",
        "not touched (advanced at once): dev-1, dev-2",
        "earliest complete: 35m (last release after 30m, if every cluster is healthy as soon as it is "
        "released)",
    ]


def test_text_of_a_change_touching_no_cluster() -> None:
    assert waveplans.text_lines(NOTHING) == [
        "wave canary: changes none of its clusters (passes at once)",
        "wave prod: changes none of its clusters (passes at once)",
        "wave others: changes none of its clusters (passes at once)",
        "not touched (advanced at once): canary-1, dev-1, dev-2, prod-a, prod-b, prod-c",
        "earliest complete: 0s (the change releases nothing through a gate)",
    ]


def test_a_wave_selecting_no_cluster_and_one_batch() -> None:
    empty_wave = {"name": "edge", "clusterSelector": {"matchLabels": {"tier": "edge"}}}
    strategy = {**STRATEGY, "spec": {**STRATEGY["spec"], "waves": [empty_wave, *STRATEGY["spec"]["waves"]]}}
    plan = plans.plan_change(fleet_waves(strategy=strategy), {"prod-a", "dev-1"})
    assert waveplans.text_lines(plan)[:4] == [
        "wave edge: no clusters (passes at once)",
        "wave canary: changes none of its clusters (passes at once)",
        "wave prod: changes prod-a; bake 5m",
        "wave others: changes dev-1; bake 5m",
    ]
    assert waveplans.text_lines(plan)[-1].startswith("earliest complete: 10m (last release after 5m, ")


def test_markdown_of_a_change_in_two_waves() -> None:
    assert waveplans.markdown(CANARY_AND_PROD) == (
        "#### Rollout\n\n"
        "| wave | changes | batches | bake |\n"
        "|---|---|---|---|\n"
        "| `canary` | `canary-1` | 1 | 30m |\n"
        "| `prod` | `prod-a`, `prod-b`, `prod-c` | 2 of 2: `prod-a`, `prod-b` · `prod-c` | 5m |\n"
        "| `others` | — | — | passes at once |\n\n"
        "Not touched (advanced at once): `dev-1`, `dev-2`\n\n"
        "**Earliest complete: 35m** (last release after 30m, if every cluster is healthy as soon as it is "
        "released)\n\n"
    )


def test_markdown_bounds_the_names_in_a_cell() -> None:
    many = [cluster(f"dev-{index:03}", labels={"tier": "dev"}) for index in range(40)]
    plan = plans.plan_change(fleet_waves(*many), {f"dev-{index:03}" for index in range(40)})
    (others,) = [line for line in waveplans.markdown(plan).splitlines() if line.startswith("| `others`")]
    assert "`dev-029`, … and 10 more" in others and "`dev-030`" not in others.split("|")[2]


def test_json_of_a_change_in_two_waves() -> None:
    assert waveplans.json_data(CANARY_AND_PROD) == {
        "waves": [
            {
                "name": "canary",
                "changed": ["canary-1"],
                "unchanged": [],
                "maxParallel": None,
                "batches": [["canary-1"]],
                "bakeTime": {"duration": "30m", "seconds": 1800},
            },
            {
                "name": "prod",
                "changed": ["prod-a", "prod-b", "prod-c"],
                "unchanged": [],
                "maxParallel": 2,
                "batches": [["prod-a", "prod-b"], ["prod-c"]],
                "bakeTime": {"duration": "5m", "seconds": 300},
            },
            {
                "name": "others",
                "changed": [],
                "unchanged": ["dev-1", "dev-2"],
                "maxParallel": None,
                "batches": [],
                "bakeTime": {"duration": "0s", "seconds": 0},
            },
        ],
        "untouched": ["dev-1", "dev-2"],
        "earliestComplete": {"duration": "35m", "seconds": 2100},
        "earliestLastRelease": {"duration": "30m", "seconds": 1800},
    }


@pytest.mark.parametrize("output", ["text", "markdown", "json"])
def test_a_diff_without_a_plan_formats_as_before(output: str) -> None:
    formatted = diffformats.FORMATTERS[output](DIFF)
    assert "Rollout" not in formatted and "rollout" not in formatted
    with_plan = diffformats.FORMATTERS[output](dataclasses.replace(DIFF, rollout=CANARY_AND_PROD))
    if output == "json":
        document = json.loads(with_plan)
        assert document.pop("rollout") == waveplans.json_data(CANARY_AND_PROD)
        assert document == json.loads(formatted)
    else:
        section = (
            "Rollout:\n" + "".join(f"  {line}\n" for line in waveplans.text_lines(CANARY_AND_PROD))
            if output == "text"
            else waveplans.markdown(CANARY_AND_PROD)
        )
        assert section in with_plan and with_plan.replace(section, "") == formatted


def usage(name: str) -> ClusterUsage:
    return ClusterUsage(name, {"cpu": 4000}, {"cpu": 4000}, {})


def test_placement_md_has_a_wave_column_only_with_waves() -> None:
    plan = Plan((), (), (), tuple(usage(name) for name in ("canary-1", "dev-1", "prod-a")), ())
    source = reports.SourceInfo("src", None)
    without = reports.placement_markdown(plan, source)
    assert "| Cluster | Groups | cpu used / free |" in without and "Wave" not in without
    with_waves = reports.placement_markdown(plan, source, waves=fleet_waves())
    assert "| Cluster | Wave | Groups | cpu used / free |\n| --- | --- | ---: | ---: |" in with_waves
    assert "| `canary-1` | 1. canary | 0 | 0 / 4 |" in with_waves
    assert "| `dev-1` | 3. others | 0 | 0 / 4 |" in with_waves
    assert "| `prod-a` | 2. prod | 0 | 0 / 4 |" in with_waves
    assert (
        with_waves.replace("| Wave ", "")
        .replace("| --- | --- |", "| --- |")
        .startswith(without.split("| `canary-1`")[0])
    )


def test_the_samples_in_the_rollouts_doc_are_what_diff_prints() -> None:
    doc = (Path(__file__).parents[3] / "docs" / "rollouts.md").read_text(encoding="utf-8")
    assert f"```markdown\n{waveplans.markdown(CANARY_AND_PROD).rstrip()}\n```" in doc
    text = "Rollout:\n" + "".join(f"  {line}\n" for line in waveplans.text_lines(CANARY_AND_PROD))
    assert f"```\n{text}```" in doc
