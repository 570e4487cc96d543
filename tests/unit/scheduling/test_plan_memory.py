"""A plan made from the memory of earlier plans is the plan made afresh (``scheduling.memory``).

Generated fleets of two shards (each shard's policies select only its clusters, so the fleet has several
components), with pins, spread-onto, tiers, Divide, Duplicate, autoscaled and cordoned clusters, go through
generated sequences of changes — a workload edited, scaled, added or deleted, a policy edited, a cluster's
capacity changed, a cluster removed, reschedule exclusions and failback holds — and after every change the
plan made with the memory of the plans before it, each file's digest and the previous placement equals, to
the byte, the plan made without any memory and with the whole fleet placed as one component. Added
workloads are named between the others, so that a cluster whose kept groups come from the memory takes a
group before them (``ledger.Ledger.restore_kept``).
"""

from __future__ import annotations

import copy
import hashlib
import pickle
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.api import inputs, loading
from nova_gitops.api.inputs import SourceSet
from nova_gitops.rendering import reports
from nova_gitops.scheduling import grouping, ledger, memory, planning
from nova_gitops.scheduling.plans import Plan, PreviousPlacement
from tests.builders import cluster, deployment, policy

SHARDS = ("a", "b")
PIN = "nova.elotl.co/cluster"
SPREAD_ONTO = "nova.elotl.co/spread-onto"
Documents = dict[str, dict[str, Any]]  # file name -> document


def file_of(document: dict[str, Any]) -> str:
    return f"{document['kind'].lower()}/{document['metadata']['name']}.yaml"


def loaded(documents: Documents) -> tuple[SourceSet, dict[str, str]]:
    """The source set of one file per document, and each file's digest (as the loader gives them)."""
    found = []
    digests = {}
    for name, document in sorted(documents.items()):
        text = yaml.dump(document, Dumper=yaml.CSafeDumper, sort_keys=False)
        parsed, problems = loading.load_documents(name, text)
        assert not problems, problems
        found += parsed
        digests[name] = hashlib.sha1(text.encode()).hexdigest()
    return inputs.build_source_set(found), digests


def shard_documents(draw: st.DrawFn, shard: str) -> list[dict[str, Any]]:
    names = [f"{shard}{index}" for index in range(draw(st.integers(1, 3)))]
    clusters = [
        cluster(
            name,
            nodes={
                f"{name}-n{node}": {"cpu": f"{draw(st.integers(500, 6000))}m", "memory": "16Gi"}
                for node in range(draw(st.integers(1, 2)))
            },
            labels={
                "shard": shard,
                "tier": draw(st.sampled_from(["gold", "silver"])),
                **({"nova.elotl.co/cordoned": "true"} if draw(st.integers(0, 4)) == 0 else {}),
            },
            autoscaled=draw(st.integers(0, 3)) == 0,
        )
        for name in names
    ]

    def selecting(style: str) -> dict[str, Any]:
        return {"labelSelectors": [{"matchLabels": {"style": style, "shard": shard}}]}

    mine = {"matchLabels": {"shard": shard}}
    ordered = {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gold", "silver"]}]}
    policies = [
        policy(
            f"{shard}-single",
            resourceSelectors=selecting("single"),
            clusterSelector=mine,
            **({"orderedClusterSelector": ordered} if draw(st.booleans()) else {}),
        ),
        policy(
            f"{shard}-grouped",
            resourceSelectors=selecting("grouped"),
            clusterSelector=mine,
            groupBy={"labelKey": "color"},
        ),
        policy(
            f"{shard}-divide",
            resourceSelectors=selecting("divide"),
            clusterSelector=mine,
            spreadConstraints={"spreadMode": "Divide", "topologyKey": "kubernetes.io/metadata.name"},
        ),
        policy(
            f"{shard}-duplicate",
            resourceSelectors=selecting("duplicate"),
            clusterSelector=mine,
            spreadConstraints={"spreadMode": "Duplicate", "topologyKey": "kubernetes.io/metadata.name"},
        ),
    ]
    workloads = [draw(workloads_of(shard, names, index)) for index in range(draw(st.integers(1, 6)))]
    return [*clusters, *policies, *workloads]


@st.composite
def workloads_of(draw: st.DrawFn, shard: str, clusters: list[str], index: int | str) -> dict[str, Any]:
    style = draw(st.sampled_from(["single", "single", "grouped", "divide", "duplicate"]))
    labels = {"style": style, "shard": shard}
    if style == "grouped":
        labels["color"] = draw(st.sampled_from(["blue", "green"]))
    intent = draw(st.sampled_from(["none", "none", "none", "pin", "spread"]))
    annotations = None
    if intent == "pin":
        annotations = {PIN: draw(st.sampled_from([*clusters, "gone"]))}
    elif intent == "spread":
        chosen = draw(st.lists(st.sampled_from(clusters), min_size=1, unique=True))
        annotations = {SPREAD_ONTO: ",".join(chosen) + draw(st.sampled_from(["", "::Duplicate"]))}
    return deployment(
        f"{shard}-w{index}",
        replicas=draw(st.integers(0, 4)),
        cpu=f"{draw(st.integers(50, 3000))}m",
        labels=labels,
        annotations=annotations,
    )


@st.composite
def fleets(draw: st.DrawFn) -> Documents:
    documents = [document for shard in SHARDS for document in shard_documents(draw, shard)]
    return {file_of(document): document for document in documents}


@st.composite
def changed(draw: st.DrawFn, documents: Documents) -> Documents:
    """The fleet after one change a user or an agent makes, or none (the previous placement, exclusions
    and failback holds may still change)."""
    after = copy.deepcopy(documents)
    of_kind = {
        kind: sorted(name for name, doc in after.items() if doc["kind"] == kind)
        for kind in ("Deployment", "SchedulePolicy", "Cluster")
    }
    change = draw(
        st.sampled_from(
            [
                "none",
                "none",
                "scale",
                "resize",
                "add",
                "delete",
                "policy",
                "capacity",
                "cordon",
                "remove cluster",
            ]
        )
    )
    if change in ("scale", "resize", "delete") and of_kind["Deployment"]:
        name = draw(st.sampled_from(of_kind["Deployment"]))
        if change == "delete":
            del after[name]
        elif change == "scale":
            after[name]["spec"]["replicas"] = draw(st.integers(0, 5))
        else:
            container = after[name]["spec"]["template"]["spec"]["containers"][0]
            container["resources"]["requests"]["cpu"] = f"{draw(st.integers(50, 3000))}m"
    elif change == "add":
        shard = draw(st.sampled_from(SHARDS))
        clusters = [
            name.split("/")[1][:-5]
            for name in of_kind["Cluster"]
            if after[name]["metadata"]["labels"]["shard"] == shard
        ]
        # named between the others ("a-w1b"): it lands before groups a kept cluster holds (``keeps``)
        added = draw(workloads_of(shard, clusters or ["gone"], f"{draw(st.integers(0, 6))}b"))
        after[file_of(added)] = added
    elif change == "policy" and of_kind["SchedulePolicy"]:
        name = draw(st.sampled_from(of_kind["SchedulePolicy"]))
        spec = after[name]["spec"]
        if "spreadConstraints" in spec:
            mode = spec["spreadConstraints"]["spreadMode"]
            spec["spreadConstraints"]["spreadMode"] = "Divide" if mode == "Duplicate" else "Duplicate"
        elif "orderedClusterSelector" in spec:
            del spec["orderedClusterSelector"]
        else:
            spec["orderedClusterSelector"] = {
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["silver", "gold"]}]
            }
    elif change in ("capacity", "cordon", "remove cluster") and of_kind["Cluster"]:
        name = draw(st.sampled_from(of_kind["Cluster"]))
        if change == "remove cluster":
            del after[name]
        elif change == "cordon":
            labels = after[name]["metadata"]["labels"]
            if labels.pop("nova.elotl.co/cordoned", None) is None:
                labels["nova.elotl.co/cordoned"] = "true"
        else:
            status = after[name]["status"]
            for node in status["availableResources"].values():
                node["cpu"] = f"{draw(st.integers(100, 6000))}m"
    return after


def placements(result: Plan) -> dict[str, tuple[str, ...]]:
    return {group.name: group.clusters for group in result.groups}


@settings(max_examples=200, deadline=None)
@given(fleets(), st.data())
def test_a_plan_from_memory_is_the_plan_made_afresh(documents: Documents, data: st.DataObject) -> None:
    remembered_memory: memory.PlanMemory | None = None
    previous = PreviousPlacement.empty()
    for step in range(data.draw(st.integers(1, 6))):
        if step:
            documents = data.draw(changed(documents))
        sources, digests = loaded(documents)
        groups = sorted(previous.groups)
        avoid = {}
        if groups and data.draw(st.booleans()):  # a reschedule request of an agent
            group = data.draw(st.sampled_from(groups))
            avoid = {group: dict.fromkeys(previous.groups[group], "pods Pending")}
        failback: bool | frozenset[str] = data.draw(st.sampled_from([True, False, frozenset(groups[:1])]))
        options: dict[str, Any] = {"previous": previous, "avoid": avoid, "failback": failback}
        fresh = planning.plan(sources, partitioned=False, **options)
        made = planning.plan(sources, recalled=remembered_memory, file_digests=digests, **options)
        assert made == fresh
        assert [group.reason for group in made.groups] == [group.reason for group in fresh.groups]
        assert made.warnings == fresh.warnings
        assert made.memory is not None
        remembered_memory = made.memory
        kept = data.draw(st.sampled_from(["this plan", "this plan", "as before", "none"]))
        if kept == "this plan":  # as publish and the controller do
            previous = reports.previous_of(made)
        elif kept == "none":  # a branch rendered elsewhere, or emptied by hand
            previous = PreviousPlacement.empty()


def two_shards(replicas: int = 1) -> Documents:
    """Shards a and b, one cluster, policy and workload each; ``replicas``: of shard a's workload."""
    documents = [
        document
        for shard in ("a", "b")
        for document in (
            cluster(f"{shard}0", labels={"shard": shard}),
            policy(
                shard,
                resourceSelectors={"labelSelectors": [{"matchLabels": {"shard": shard}}]},
                clusterSelector={"matchLabels": {"shard": shard}},
            ),
            deployment(f"w{shard}", labels={"shard": shard}, replicas=replicas if shard == "a" else 1),
        )
    ]
    return {file_of(document): document for document in documents}


def test_an_unchanged_fleet_is_planned_from_memory_alone() -> None:
    """Nothing changed: every part comes from the memory (nothing is measured or placed again)."""
    sources, digests = loaded(two_shards())
    first = planning.plan(sources, file_digests=digests)
    assert first.memory is not None and len(first.memory.components) == 2
    again = planning.plan(sources, recalled=first.memory, file_digests=digests)
    assert again == first
    assert again.memory == first.memory  # the same parts, found rather than made


def test_a_change_in_one_shard_replans_only_its_component() -> None:
    sources, digests = loaded(two_shards(1))
    first = planning.plan(sources, file_digests=digests)
    assert first.memory is not None
    sources, digests = loaded(two_shards(2))
    second = planning.plan(sources, recalled=first.memory, file_digests=digests)
    assert second == planning.plan(sources)
    assert second.memory is not None
    kept = set(first.memory.components) & set(second.memory.components)
    assert len(kept) == 1  # shard b's placement was found, shard a's made again


def test_a_component_found_whole_carries_its_clusters_keeps_to_the_next_plan() -> None:
    """Shard b's component is found whole while shard a changes; when a workload is then added to shard b,
    its cluster's kept groups come from the keeps that plan carried (without reading them)."""
    documents = two_shards()
    sources, digests = loaded(documents)
    made = planning.plan(sources, file_digests=digests)
    kept_of_b: dict[memory.Key, memory.Kept] = {}
    for change in ("none", "a", "b"):
        if change == "a":
            documents = two_shards(2)
        elif change == "b":
            added = deployment("wb2", labels={"shard": "b"})
            documents = {**documents, file_of(added): added}
        sources, digests = loaded(documents)
        previous = reports.previous_of(made)
        before, made = (
            made,
            planning.plan(sources, previous=previous, recalled=made.memory, file_digests=digests),
        )
        assert made == planning.plan(sources, previous=previous, partitioned=False)
        assert made.memory is not None and before.memory is not None
        if change == "none":
            kept_of_b = {key: kept for key, kept in made.memory.keeps.items() if key[1] == "b0"}
        assert kept_of_b  # the very parts: carried, then found, not made again
        assert all(made.memory.keeps[key] is kept for key, kept in kept_of_b.items())
    assert sum(1 for group in made.groups if group.clusters == ("b0",)) == 2


def test_objects_without_a_file_digest_are_always_planned_afresh() -> None:
    """A kustomize build's objects have no digest of their own: nothing holding them is remembered."""
    documents = {file_of(document): document for document in [cluster("a0"), policy("p"), deployment("w")]}
    sources, digests = loaded(documents)
    del digests["deployment/w.yaml"]
    result = planning.plan(sources, file_digests=digests)
    assert result.memory is not None
    assert not result.memory.components and not result.memory.measures


def test_a_spread_remembered_on_a_cordoned_cluster_is_not_reused_for_a_group_new_there() -> None:
    """A spread stays on a cordoned cluster it was on, and a group not on it before does not spread there:
    the same fleet with another previous placement is not the remembered spread."""
    duplicate = {"spreadMode": "Duplicate", "topologyKey": "kubernetes.io/metadata.name"}
    documents = {
        file_of(document): document
        for document in [
            cluster("c1"),
            cluster("c2", labels={"nova.elotl.co/cordoned": "true"}),
            policy("spread", spreadConstraints=duplicate),
            deployment("w"),
        ]
    }
    sources, digests = loaded(documents)
    group = planning.plan(sources).groups[0].name
    staying = planning.plan(sources, previous=PreviousPlacement({group: ("c1", "c2")}), file_digests=digests)
    assert staying.groups[0].clusters == ("c1", "c2")
    fresh = planning.plan(sources, recalled=staying.memory, file_digests=digests)
    assert fresh == planning.plan(sources)
    assert fresh.groups[0].clusters == ("c1",)


def test_a_cluster_kept_from_memory_gives_a_group_back_and_takes_one_between_its_groups() -> None:
    """The groups kept on a cluster come from the memory when its room and groups are unchanged; a group
    that fails back from between them, and a new group placed between them, leave the plan made afresh."""
    ordered = {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gold", "silver"]}]}

    def fleet(gold_cpu: str, sizes: dict[str, str]) -> Documents:
        documents = [
            cluster("gold", cpu=gold_cpu, labels={"tier": "gold"}),
            cluster("silver", cpu="16", labels={"tier": "silver"}),
            policy("p", orderedClusterSelector=ordered),
            *(deployment(name, cpu=cpu) for name, cpu in sizes.items()),
        ]
        return {file_of(document): document for document in documents}

    def group_of(workload: str) -> str:
        sources, _ = loaded({file_of(deployment(workload)): deployment(workload)})
        return grouping.form_groups("p", None, sources.workloads)[0].name

    workloads = sorted(["w1", "w2", "w3"], key=group_of)
    sizes = {name: "4" if name == workloads[0] else "2" for name in workloads}  # the first does not fit gold
    between = next(
        f"new{index}"
        for index in range(1000)
        if group_of(workloads[0]) < group_of(f"new{index}") < group_of(workloads[1])
    )
    steps = [("1", False), ("1", False), ("3", False), ("1", False), ("1", False), ("1", True)]
    previous, remembered = PreviousPlacement.empty(), None
    for step, (gold_cpu, add) in enumerate(steps):
        if add:
            sizes[between] = "2"
        sources, digests = loaded(fleet(gold_cpu, sizes))
        made = planning.plan(sources, previous=previous, recalled=remembered, file_digests=digests)
        assert made == planning.plan(sources, previous=previous, partitioned=False)
        assert made.memory is not None
        if step in (2, 5):  # the silver cluster's keeps were found, then changed
            assert remembered is not None and set(made.memory.keeps) & set(remembered.keeps)
        remembered, previous = made.memory, reports.previous_of(made)
    assert previous.groups[group_of(workloads[1])] == ("silver",)
    assert previous.groups[group_of(between)] == ("silver",)


def test_the_parts_of_a_memory_are_pickled_as_they_are() -> None:
    """The memory's parts are kept pickled (``publishing.planmemory``), by their fields: each comes back
    equal, groups, copies, usage, rooms, namespace needs and pods included."""
    sources, digests = loaded(two_shards())
    first = planning.plan(sources, file_digests=digests)
    made = planning.plan(sources, previous=reports.previous_of(first), file_digests=digests)
    assert made.memory is not None and made.memory.keeps and made.memory.components
    for parts in (made.memory.components, made.memory.spreads, made.memory.keeps, made.memory.measures):
        for part in parts.values():
            assert pickle.loads(pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL)) == part


def test_losing_a_cluster_fits_only_the_shares_that_changed(monkeypatch: Any) -> None:
    """Spreads fitted on each cluster are kept per cluster (``explicitfitting``): when a cluster is lost, a
    Duplicate's copies on the others are not fitted again (they are what fitting found before), and the plan
    is the plan made afresh."""
    duplicate = {"spreadMode": "Duplicate", "topologyKey": "kubernetes.io/metadata.name"}
    documents = [
        *(cluster(name, labels={"fleet": "yes"}) for name in ("c1", "c2", "c3")),
        policy("copies", spreadConstraints=duplicate, clusterSelector={"matchLabels": {"fleet": "yes"}}),
        deployment("web", labels={"app": "demo"}, replicas=2),
        deployment("api", labels={"app": "demo"}),
    ]
    sources, digests = loaded({file_of(document): document for document in documents})
    today = planning.plan(sources, file_digests=digests)
    without_c3 = {
        file_of(document): document for document in documents if document["metadata"]["name"] != "c3"
    }
    sources, digests = loaded(without_c3)
    fitted: list[str] = []
    consume = ledger.Ledger.consume_regardless

    def counted(self: ledger.Ledger, name: str, *args: Any) -> str:
        fitted.append(name)
        return consume(self, name, *args)

    monkeypatch.setattr(ledger.Ledger, "consume_regardless", counted)
    after = planning.plan(
        sources, previous=reports.previous_of(today), recalled=today.memory, file_digests=digests
    )
    assert fitted == []  # c1's and c2's copies, from the memory
    monkeypatch.undo()
    assert after == planning.plan(sources, previous=reports.previous_of(today), partitioned=False)
    assert {group.clusters for group in after.groups} == {("c1", "c2")}
