"""Planner properties over generated fleets (Hypothesis):

- single placements never oversubscribe a cluster: what a plan places fits in what was available;
- the plan does not depend on the order of the source's documents;
- stickiness: re-planning with its own placement changes nothing (pins included), and changing one workload
  moves no other group.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.scheduling import planning
from nova_gitops.scheduling.plans import Plan, PreviousPlacement
from tests.builders import cluster, deployment, policy, source_set

MILLI_CPU = st.integers(min_value=50, max_value=3000)


@st.composite
def fleets(draw: st.DrawFn) -> list[dict[str, Any]]:
    clusters = [
        cluster(
            f"c{index}",
            nodes={
                f"c{index}-n{node}": {"cpu": f"{draw(st.integers(500, 8000))}m", "memory": "16Gi"}
                for node in range(draw(st.integers(1, 3)))
            },
            autoscaled=False,
        )
        for index in range(draw(st.integers(1, 4)))
    ]
    pins = st.none() | st.sampled_from([f"c{index}" for index in range(len(clusters))])
    workloads = [
        deployment(
            f"w{index}",
            replicas=draw(st.integers(0, 4)),
            cpu=f"{draw(MILLI_CPU)}m",
            annotations={"nova.elotl.co/cluster": pin} if (pin := draw(pins)) else None,
        )
        for index in range(draw(st.integers(1, 12)))
    ]
    return [*clusters, policy("p"), *workloads]


def placements(result: Plan) -> dict[str, tuple[str, ...]]:
    return {group.name: group.clusters for group in result.groups}


@settings(max_examples=80, deadline=None)
@given(fleets())
def test_single_placement_never_oversubscribes(documents: list[dict[str, Any]]) -> None:
    unpinned = [doc for doc in documents if not doc["metadata"].get("annotations")]  # pins land regardless
    result = planning.plan(source_set(*unpinned))
    for usage in result.clusters:
        for resource, amount in usage.placed.items():
            assert amount <= usage.available.get(resource, 0), (usage.cluster, resource)


@settings(max_examples=60, deadline=None)
@given(fleets(), st.randoms(use_true_random=False))
def test_plan_is_independent_of_document_order(documents: list[dict[str, Any]], random: Any) -> None:
    shuffled = list(documents)
    random.shuffle(shuffled)
    first, second = planning.plan(source_set(*documents)), planning.plan(source_set(*shuffled))
    assert placements(first) == placements(second)
    assert [group.reason for group in first.groups] == [group.reason for group in second.groups]


def previous_of(result: Plan) -> PreviousPlacement:
    return PreviousPlacement(
        placements(result),
        {group.name: group.reason for group in result.groups},
        {group.name: dict(group.requests) for group in result.groups},
    )


@settings(max_examples=80, deadline=None)
@given(fleets())
def test_replanning_with_its_own_placement_changes_nothing(documents: list[dict[str, Any]]) -> None:
    """Re-rendering unchanged input (pins included) gives the same plan: no commit churn."""
    sources = source_set(*documents)
    first = planning.plan(sources)
    again = planning.plan(sources, previous=previous_of(first))
    assert placements(again) == placements(first)
    assert [group.reason for group in again.groups] == [group.reason for group in first.groups]
    assert again.warnings == first.warnings


@settings(max_examples=60, deadline=None)
@given(fleets(), st.data())
def test_changing_one_workload_moves_no_other_group(
    documents: list[dict[str, Any]], data: st.DataObject
) -> None:
    first = planning.plan(source_set(*documents))
    workloads = [index for index, doc in enumerate(documents) if doc["kind"] == "Deployment"]
    changed_index = data.draw(st.sampled_from(workloads))
    changed = [dict(doc) for doc in documents]
    body = changed[changed_index]
    body["spec"] = {**body["spec"], "replicas": body["spec"]["replicas"] + 1}
    requests = {group.name: dict(group.requests) for group in first.groups}
    second = planning.plan(source_set(*changed), previous=PreviousPlacement(placements(first), {}, requests))
    changed_name = body["metadata"]["name"]
    before, after = placements(first), placements(second)
    for group in second.groups:
        if any(item.manifest.name == changed_name for item in group.objects):
            continue
        if before.get(group.name):  # placed before: still where it was
            assert after[group.name] == before[group.name], group.name
