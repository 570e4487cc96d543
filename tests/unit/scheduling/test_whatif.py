"""What-if plans (``scheduling.whatif``) and what they strand (``scheduling.stranding``).

- each change is made to the loaded source as editing its files would make it: a cluster removed, added,
  cordoned, its capacity scaled; a workload scaled; bad changes are refused naming the flag;
- the what-if plans with today's placement as its previous placement, by the planner's own rules: with
  the plan memory it is the plan made afresh;
- what becomes unschedulable is said with why (no room, no candidate, pinned, a share) and what it lacks;
- property (issue 26, item 5): over generated fleets, the what-if of a change (a cluster removed, cordoned,
  its capacity scaled or a cluster added; a workload scaled) renders byte for byte what
  rendering the source with the change made to its files renders, from the same previous placement; and
  the files the what-if's diff renders (``rendering.whatifs``) give the diff of the two whole renders, and
  are those that differ between them but the summaries a diff does not read.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.api import clusters as cluster_api
from nova_gitops.api import loading, quantities
from nova_gitops.rendering import diffs, headroomformats, renders, reports, whatifs
from nova_gitops.scheduling import planning, whatif
from nova_gitops.scheduling.plans import Plan
from tests.builders import cluster, config_map, deployment, policy, source_set
from tests.unit.scheduling.test_plan_memory import Documents, fleets, loaded

SOURCE = reports.SourceInfo("fleet", None)


def fleet() -> list[dict[str, Any]]:
    return [
        cluster("a", cpu="4", labels={"env": "prod"}),
        cluster("b", cpu="4", labels={"env": "prod"}),
        cluster("gpu", cpu="4", labels={"env": "prod", "accelerator": "nvidia"}),
        policy(
            "web",
            clusterSelector={"matchLabels": {"env": "prod"}, "matchExpressions": [_no_gpu()]},
            resourceSelectors={"labelSelectors": [{"matchLabels": {"app": "web"}}]},
        ),
        policy(
            "train",
            clusterSelector={"matchLabels": {"accelerator": "nvidia"}},
            resourceSelectors={"labelSelectors": [{"matchLabels": {"app": "train"}}]},
        ),
        deployment("web", replicas=2, cpu="1", labels={"app": "web"}),
        deployment("train", replicas=1, cpu="2", labels={"app": "train"}),
        config_map("settings", labels={"app": "web"}),
    ]


def _no_gpu() -> dict[str, Any]:
    return {"key": "accelerator", "operator": "DoesNotExist"}


def today_of(*documents: dict[str, Any]) -> tuple[Any, Plan]:
    source = source_set(*documents)
    return source, planning.plan(source)


def test_without_removes_the_cluster_and_its_groups_move() -> None:
    source, today = today_of(*fleet())
    web = next(group for group in today.groups if group.policy == "web")
    result = whatif.what_if(source, [whatif.Without(web.clusters[0])], today=today)
    assert web.clusters[0] not in {c.name for c in result.source.clusters}
    moved = next(group for group in result.after.groups if group.name == web.name)
    assert moved.status == "scheduled" and moved.clusters != web.clusters
    assert result.unschedulable == ()


def test_losing_the_only_candidate_strands_with_the_whole_request() -> None:
    source, today = today_of(*fleet())
    result = whatif.what_if(source, [whatif.Without("gpu")], today=today)
    (stranded,) = result.unschedulable
    assert stranded.why == "no-candidate" and stranded.policy == "train"
    assert stranded.lacks == {"cpu": 2000, "memory": 64 * 2**20 * 1000}
    assert stranded.before == ("gpu",) and stranded.objects == ("Deployment.apps/demo/train",)


def test_a_group_whose_only_candidates_left_are_cordoned_has_no_candidate() -> None:
    # A moved group never lands on a cordoned cluster, so room there rescues nothing: the group lacks its
    # whole request on an open cluster, and the cordoned one is not "closest" with "enough in total".
    source, today = today_of(*fleet())
    result = whatif.what_if(source, [whatif.Without("a"), whatif.Cordon("b")], today=today)
    (stranded,) = result.unschedulable
    assert stranded.why == "no-candidate" and stranded.policy == "web"
    assert stranded.lacks == stranded.requests and stranded.lacks["cpu"] == 2000
    assert stranded.closest == ()


def test_a_pin_to_the_lost_cluster_strands_the_pinned_group() -> None:
    pinned = deployment("pinned", labels={"app": "none"}, annotations={"nova.elotl.co/cluster": "a"})
    source, today = today_of(*fleet(), pinned)
    result = whatif.what_if(source, [whatif.Without("a")], today=today)
    assert [(item.why, item.policy) for item in result.unschedulable] == [("pinned", None)]


def test_no_room_names_the_closest_clusters_and_what_they_lack() -> None:
    source, today = today_of(*fleet())
    result = whatif.what_if(source, [whatif.Scale("deployment/demo/web", 12)], today=today)
    (stranded,) = result.unschedulable
    assert stranded.why == "no-room"
    assert [closest.cluster for closest in stranded.closest] == ["a", "b"]
    assert stranded.lacks == stranded.closest[0].lacks == {"cpu": 8000}
    assert "does not have enough resources" in stranded.closest[0].verdict


def test_a_divide_share_that_does_not_fit_is_stranded_as_a_share() -> None:
    documents = [
        cluster("a", cpu="4"),
        cluster("b", cpu="4"),
        policy(
            "split",
            spreadConstraints={"spreadMode": "Divide", "topologyKey": "kubernetes.io/metadata.name"},
        ),
        deployment("web", replicas=6, cpu="1"),
    ]
    source, today = today_of(*documents)
    result = whatif.what_if(source, [whatif.Without("b")], today=today)
    (stranded,) = result.unschedulable
    assert stranded.why == "share" and stranded.mode == "divide"
    assert [closest.cluster for closest in stranded.closest] == ["a"]
    assert stranded.lacks == {"cpu": 2000}
    assert "a needs 6000m cpu for its 6 replicas, has 4000m" in stranded.reason


def test_a_pinned_group_that_no_longer_fits_its_cluster_is_stranded() -> None:
    # a pin is rendered as asked, with a warning: its pods would stay Pending, as a share's would
    pinned = deployment("pinned", cpu="3", labels={"app": "none"}, annotations={"nova.elotl.co/cluster": "a"})
    source, today = today_of(*fleet(), pinned)
    for change in (whatif.Capacity("a", 50), whatif.Scale("deployment/demo/pinned", 2)):
        result = whatif.what_if(source, [change], today=today)
        (stranded,) = result.unschedulable
        assert (stranded.why, stranded.policy, stranded.before) == ("share", None, ("a",))
        (closest,) = stranded.closest
        assert closest.cluster == "a" and "for the pinned group" in closest.verdict
        assert stranded.lacks == closest.lacks and stranded.lacks["cpu"] > 0
        assert "it no longer fits the cluster it is pinned to" in headroomformats.stranded_line(stranded)


def test_a_share_short_today_is_not_stranded_by_a_change_that_leaves_it_less_short() -> None:
    # b is short of the copy today (2 of 4 cpu left for 3); growing b changes the planner's words ("has
    # 2000m" -> "has 2600m") but strands nothing: the copy was Pending before the change
    documents = [
        cluster("a", cpu="4"),
        cluster("b", cpu="4"),
        policy(
            "copies",
            spreadConstraints={"spreadMode": "Duplicate", "topologyKey": "kubernetes.io/metadata.name"},
        ),
        deployment("web", replicas=3, cpu="1"),
        deployment("pinned", cpu="2", labels={"app": "none"}, annotations={"nova.elotl.co/cluster": "b"}),
    ]
    source, today = today_of(*documents)
    assert any(warning.startswith("b needs ") for group in today.groups for warning in group.warnings)
    result = whatif.what_if(source, [whatif.Capacity("b", 115)], today=today)
    assert any(warning.startswith("b needs ") for group in result.after.groups for warning in group.warnings)
    assert result.unschedulable == ()


def test_cordon_keeps_what_runs_and_capacity_scales_every_node() -> None:
    source, today = today_of(*fleet())
    applied = whatif.apply(source, [whatif.Cordon("a"), whatif.Capacity("b", 50)])
    by_name = {c.name: c for c in applied.source.clusters}
    assert by_name["a"].cordoned and not by_name["b"].cordoned
    (node,) = by_name["b"].nodes
    assert node.allocatable["cpu"] == 2000 and node.available["cpu"] == 2000
    assert whatif.what_if(source, [whatif.Cordon("a")], today=today).after.groups == today.groups


def test_scale_copies_the_body_and_leaves_the_source_alone() -> None:
    source, _ = today_of(*fleet())
    applied = whatif.apply(source, [whatif.Scale("deploy/web", 5)])
    web = next(m for m in applied.source.workloads if m.name == "web" and m.kind == "Deployment")
    assert web.body["spec"]["replicas"] == 5
    original = next(m for m in source.workloads if m.name == "web" and m.kind == "Deployment")
    assert original.body["spec"]["replicas"] == 2
    assert applied.changed_files == {"source.yaml"}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ([whatif.Without("nope")], "--without nope: no cluster nope in the inventory (clusters: a, b, gpu)"),
        ([whatif.Without("a"), whatif.Cordon("a")], "--cordon a: no cluster a in the inventory"),
        ([whatif.Capacity("a", 50), whatif.Capacity("a", 60)], "--capacity a=60: --capacity a=50 is given"),
        # the same flag twice is refused too: --capacity a=50 twice would keep 25 % of a's nodes
        ([whatif.Capacity("a", 50), whatif.Capacity("a", 50)], "--capacity a=50: --capacity a=50 is given"),
        ([whatif.Without("a"), whatif.Without("a")], "--without a: --without a is given too"),
        (
            [whatif.Scale("deploy/web", 3), whatif.Scale("deployment/demo/web", 3)],
            "--scale deploy/web=3 is given",
        ),
        ([whatif.Scale("deployment/nope", 2)], "--scale deployment/nope=2: no object deployment/nope"),
        ([whatif.Scale("configmap/settings", 2)], "ConfigMap/demo/settings has no replica count to scale"),
    ],
)
def test_bad_changes_are_refused_naming_the_flag(changes: list[whatif.Change], message: str) -> None:
    source, _ = today_of(*fleet())
    with pytest.raises(whatif.WhatIfError) as raised:
        whatif.apply(source, changes)
    assert message in str(raised.value)


def test_a_new_cluster_needs_a_new_name_unless_the_old_one_goes() -> None:
    source, _ = today_of(*fleet())
    parsed = parsed_cluster(cluster("a", cpu="64", labels={"env": "prod"}))
    with pytest.raises(whatif.WhatIfError, match="has a cluster a already; give --without a"):
        whatif.apply(source, [whatif.AddCluster(parsed)])
    applied = whatif.apply(source, [whatif.AddCluster(parsed), whatif.Without("a")])
    (node,) = next(c for c in applied.source.clusters if c.name == "a").nodes
    assert node.allocatable["cpu"] == 64000


def test_a_new_cluster_given_twice_is_named_with_where_each_is() -> None:
    source, _ = today_of(*fleet())
    first = parsed_cluster(cluster("new", cpu="8"), "new.yaml")
    again = parsed_cluster(cluster("new", cpu="16"), "other.yaml")
    with pytest.raises(whatif.WhatIfError) as raised:
        whatif.apply(source, [whatif.AddCluster(first), whatif.AddCluster(again)])
    assert "--add-cluster other.yaml: cluster new (other.yaml:1) is in new.yaml:1 too" in str(raised.value)


ADDED: dict[str, dict[str, Any]] = {}
"""Each Cluster document a test parsed, by its file's name (the property writes it into the source)."""


def parsed_cluster(document: dict[str, Any], file_name: str = "new.yaml") -> cluster_api.Cluster:
    ADDED[file_name] = document
    (loaded_document,), problems = loading.load_documents(file_name, yaml.safe_dump(document))
    assert not problems
    found = cluster_api.parse_cluster(loaded_document, [])
    assert found is not None
    return found


def test_todays_placement_is_what_the_group_files_read_back_give() -> None:
    _, today = today_of(*fleet())
    assert whatif.placement_of(today) == reports.previous_of(today)


# --- the property: a what-if is the render of the source with the change made to its files -------------


def edited(documents: Documents, change: whatif.Change) -> Documents:
    """``documents`` with ``change`` made to the files, as a user would make it."""
    after = copy.deepcopy(documents)
    if isinstance(change, whatif.Without):
        del after[f"cluster/{change.cluster}.yaml"]
    elif isinstance(change, whatif.Cordon):
        after[f"cluster/{change.cluster}.yaml"]["metadata"]["labels"]["nova.elotl.co/cordoned"] = "true"
    elif isinstance(change, whatif.Capacity):
        status = after[f"cluster/{change.cluster}.yaml"]["status"]
        for field in ("capacityResources", "availableResources"):
            status[field] = {
                node: {name: scaled_quantity(value, change.percent) for name, value in resources.items()}
                for node, resources in status[field].items()
            }
    elif isinstance(change, whatif.AddCluster):
        after[change.cluster.location.file] = ADDED[change.cluster.location.file]
    elif isinstance(change, whatif.Scale):
        after[f"deployment/{change.reference.split('/')[-1]}.yaml"]["spec"]["replicas"] = change.replicas
    return after


def scaled_quantity(value: str, percent: int) -> str:
    return f"{quantities.parse_quantity(value) * percent // 100}m"


@st.composite
def fleet_and_change(draw: st.DrawFn) -> tuple[Documents, whatif.Change]:
    documents = draw(fleets())
    names = sorted(doc["metadata"]["name"] for doc in documents.values() if doc["kind"] == "Cluster")
    workloads = sorted(doc["metadata"]["name"] for doc in documents.values() if doc["kind"] == "Deployment")
    kind = draw(st.sampled_from(["without", "cordon", "capacity", "scale", "add"]))
    if kind == "add":  # a cluster of either shard, with room from none to plenty
        shard = draw(st.sampled_from(["a", "b"]))
        cpu = f"{draw(st.integers(0, 8000))}m"
        added = cluster(
            "new", cpu=cpu, labels={"shard": shard, "tier": draw(st.sampled_from(["gold", "silver"]))}
        )
        return documents, whatif.AddCluster(parsed_cluster(added, "cluster/new.yaml"))
    if kind == "scale":
        name = draw(st.sampled_from(workloads))
        return documents, whatif.Scale(f"deployment/demo/{name}", draw(st.integers(0, 6)))
    name = draw(st.sampled_from(names))
    if kind == "without":
        return documents, whatif.Without(name)
    if kind == "cordon":
        return documents, whatif.Cordon(name)
    return documents, whatif.Capacity(name, draw(st.integers(0, 150)))


@settings(max_examples=40, deadline=None)
@given(fleet_and_change())
def test_a_what_if_renders_as_the_source_with_the_change_made(case: tuple[Documents, whatif.Change]) -> None:
    documents, change = case
    source, digests = loaded(documents)
    today = planning.plan(source, file_digests=digests)
    result = whatif.what_if(source, [change], today=today, recalled=today.memory, file_digests=digests)
    changed_source, _ = loaded(edited(documents, change))
    expected = planning.plan(changed_source, previous=whatif.placement_of(today))
    assert result.after == expected
    old, new = renders.render(today, SOURCE).files, renders.render(result.after, SOURCE).files
    assert new == renders.render(expected, SOURCE).files
    partial = whatifs.changed_files(today, result.after, SOURCE)
    whole = diffs.changed_files(old, new)
    assert partial.diff() == diffs.diff_renders(partial.files) == diffs.diff_renders(whole)
    assert {change.path for change in whole} - {change.path for change in partial.files} <= {
        path for path in old.keys() | new.keys() if diffs.is_summary(path)
    }


def test_a_change_that_moves_nothing_renders_no_cluster() -> None:
    """The Namespaces that follow their objects are made anew by each plan when the source has none: equal,
    not the same objects; the what-if's diff must not render every cluster for them."""
    source, today = today_of(cluster("a"), cluster("b"), policy("p"), deployment("one"), deployment("two"))
    assert today.followed_namespaces  # "demo", which the source does not define
    result = whatif.what_if(source, [whatif.Cordon("b")], today=today)
    assert whatifs.touched_clusters(today, result.after) == frozenset()
    assert whatifs.changed_files(today, result.after, SOURCE).diff().objects == ()
