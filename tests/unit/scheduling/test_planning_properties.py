"""Planner properties over generated fleets (Hypothesis):

- single placements never oversubscribe a cluster: what a plan places fits in what was available;
- the plan does not depend on the order of the source's documents;
- stickiness: re-planning with its own placement changes nothing (pins included), and changing one workload
  (not a pin: pins are placed first) moves no other group;
- every plan is a fixed point: for generated sources with pins, spread-onto, growth, tiers, Divide,
  Duplicate, autoscaled and cordoned clusters, and any previous placement P,
  ``plan(S, previous=plan(S, previous=P)) == plan(S, previous=P)``.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.rendering import reports
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
    if body["metadata"].get("annotations"):
        return  # a pin is explicit intent, placed first: when it grows, a neighbour may have to move
    before, after = placements(first), placements(second)
    for group in second.groups:
        if any(item.manifest.name == changed_name for item in group.objects):
            continue
        if before.get(group.name):  # placed before: still where it was
            assert after[group.name] == before[group.name], group.name


SPREAD_ONTO = "nova.elotl.co/spread-onto"
PIN = "nova.elotl.co/cluster"


@st.composite
def mixed_sources(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Clusters in two tiers (some cordoned), policies that place single, grouped, divided and duplicated,
    and workloads with pins (some to a cluster that does not exist) and spread-onto annotations."""
    count = draw(st.integers(1, 4))
    names = [f"c{index}" for index in range(count)]
    clusters = [
        cluster(
            name,
            nodes={
                f"{name}-n{node}": {"cpu": f"{draw(st.integers(500, 6000))}m", "memory": "16Gi"}
                for node in range(draw(st.integers(1, 3)))
            },
            labels={
                "tier": draw(st.sampled_from(["gold", "silver"])),
                **({"nova.elotl.co/cordoned": "true"} if draw(st.booleans()) and draw(st.booleans()) else {}),
            },
            autoscaled=draw(st.booleans()) and draw(st.booleans()),
        )
        for name in names
    ]
    ordered = {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gold", "silver"]}]}
    by_name = {
        "matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": draw(st.permutations(names))}
        ]
    }
    tiers = draw(st.sampled_from([None, ordered, by_name]))

    def selecting(app: str) -> dict[str, Any]:
        return {"labelSelectors": [{"matchLabels": {"app": app}}]}

    single = {"resourceSelectors": selecting("single")}
    if tiers is not None:
        single["orderedClusterSelector"] = tiers
    split = None
    if count >= 2 and draw(st.booleans()):
        split = [{"topologyValue": "c0", "percentage": 70}, {"topologyValue": "c1", "percentage": 30}]
    divide = {"spreadMode": "Divide", "topologyKey": "kubernetes.io/metadata.name"}
    if split:
        divide["percentageSplit"] = split
    policies = [
        policy("single", **single),
        policy("grouped", resourceSelectors=selecting("grouped"), groupBy={"labelKey": "color"}),
        policy("divide", resourceSelectors=selecting("divide"), spreadConstraints=divide),
        policy(
            "duplicate",
            resourceSelectors=selecting("duplicate"),
            spreadConstraints={"spreadMode": "Duplicate", "topologyKey": "kubernetes.io/metadata.name"},
        ),
    ]
    intents = st.one_of(
        st.just({}),
        st.just({}),
        st.builds(lambda name: {PIN: name}, st.sampled_from([*names, "gone"])),
        st.builds(
            lambda chosen, mode: {SPREAD_ONTO: ",".join(chosen) + mode},
            st.lists(st.sampled_from(names), min_size=1, max_size=count, unique=True),
            st.sampled_from(["", "::Duplicate"]),
        ),
    )
    workloads = []
    for index in range(draw(st.integers(1, 10))):
        app = draw(st.sampled_from(["single", "single", "grouped", "divide", "duplicate"]))
        labels = {"app": app}
        if app == "grouped":
            labels["color"] = draw(st.sampled_from(["blue", "green"]))
        workloads.append(
            deployment(
                f"w{index}",
                replicas=draw(st.integers(0, 4)),
                cpu=f"{draw(MILLI_CPU)}m",
                labels=labels,
                annotations=draw(intents) or None,
            )
        )
    return [*clusters, *policies, *workloads]


@st.composite
def any_previous(draw: st.DrawFn, result: Plan, cluster_names: list[str]) -> PreviousPlacement:
    """Any previous placement of the plan's groups: absent, unplaced, on clusters that exist or not, with
    its reason or another, with smaller (the group grew), equal, larger or unknown requests."""
    groups: dict[str, tuple[str, ...]] = {}
    reasons: dict[str, str] = {}
    requests: dict[str, dict[str, int]] = {}
    for group in result.groups:
        where = draw(st.sampled_from(["absent", "unplaced", "one", "some"]))
        if where == "absent":
            continue
        pool = [*cluster_names, "gone"]
        if where == "unplaced":
            groups[group.name] = ()
        elif where == "one":
            groups[group.name] = (draw(st.sampled_from(pool)),)
        else:
            groups[group.name] = tuple(sorted(draw(st.lists(st.sampled_from(pool), min_size=1, unique=True))))
        reasons[group.name] = draw(st.sampled_from([group.reason, "an earlier render's reason;"]))
        scale = draw(st.sampled_from([None, 1, 2, 3]))  # requests / scale: smaller when scale > 1
        if scale is not None:
            requests[group.name] = {resource: amount // scale for resource, amount in group.requests.items()}
    return PreviousPlacement(groups, reasons, requests)


def summary(result: Plan) -> tuple[object, ...]:
    return (
        placements(result),
        {group.name: group.reason for group in result.groups},
        result.warnings,
        [(usage.cluster, dict(usage.placed)) for usage in result.clusters],
    )


@settings(max_examples=150, deadline=None)
@given(mixed_sources(), st.booleans(), st.data())
def test_every_plan_is_a_fixed_point(
    documents: list[dict[str, Any]], failback: bool, data: st.DataObject
) -> None:
    """plan(S, previous=plan(S, previous=P)) == plan(S, previous=P) for any P: re-rendering a render's own
    output never commits a change (pins, spread-onto, growth, tiers, Divide, Duplicate, autoscaling)."""
    sources = source_set(*documents)
    cluster_names = [doc["metadata"]["name"] for doc in documents if doc["kind"] == "Cluster"]
    previous = data.draw(any_previous(planning.plan(sources), cluster_names))
    once = planning.plan(sources, previous=previous, failback=failback)
    twice = planning.plan(sources, previous=reports.previous_of(once), failback=failback)
    assert summary(twice) == summary(once)
    assert twice == once
