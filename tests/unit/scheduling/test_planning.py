"""The planner's rules, docs/design.md §3, one behaviour per test:

- matching: namespace selector (implied name label, NotIn/DoesNotExist on absent keys), cluster-scoped
  objects, kinds, priority then name, overlap warning, "no SchedulePolicy matches";
- grouping: Nova's group names (FNV-1 of the label value; colliding values kept apart), groups placed whole;
- candidates: Ready=False excluded, Standby included, ordered tiers by name and by label;
- fit and capacity: per-node packing, capacity consumed within a render, autoscaler fallback, one reason
  per cluster when nothing fits;
- choice and stability: most free capacity then name, stickiness (on an autoscaled cluster even when it no
  longer fits), failback to a higher tier; pins land first and a sticky group that no longer fits beside one
  moves saying why; the issue's pin-beside-a-grown-group case is a fixed point;
- annotations beat policies; delegated mode; namespaces follow their objects.
"""

from __future__ import annotations

import hashlib

from nova_gitops.rendering import reports
from nova_gitops.scheduling import planning
from nova_gitops.scheduling.plans import PlanSettings, PreviousPlacement
from tests.builders import (
    cluster,
    config_map,
    deployment,
    group_of,
    namespace,
    placed_on,
    plan,
    policy,
    source_set,
)


def test_object_in_selected_namespace_matches_by_implied_name_label() -> None:
    result = plan(
        cluster("c1"),
        policy("p", namespaceSelector={"matchLabels": {"kubernetes.io/metadata.name": "demo"}}),
        deployment("web"),
        deployment("other", namespace="elsewhere"),
    )
    assert placed_on(result, "web") == {"c1": None}
    assert [entry.key.name for entry in result.unscheduled] == ["other"]
    assert result.unscheduled[0].reason == "no SchedulePolicy matches"


def test_not_in_matches_a_namespace_that_lacks_the_key() -> None:
    result = plan(
        cluster("c1"),
        namespace("demo"),
        policy(
            "p",
            namespaceSelector={"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["x"]}]},
        ),
        deployment("web"),
    )
    assert placed_on(result, "web") == {"c1": None}


def test_cluster_scoped_objects_pass_the_namespace_selector() -> None:
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "reader", "labels": {"app": "demo"}},
        "rules": [],
    }
    result = plan(cluster("c1"), policy("p", namespaceSelector={"matchLabels": {"team": "a"}}), role)
    assert placed_on(result, "reader") == {"c1": None}


def test_kinds_restrict_what_a_policy_selects() -> None:
    kinds = [{"group": "apps", "version": "v1", "kind": "Deployment"}]
    result = plan(
        cluster("c1"),
        policy("p", resourceSelectors={"labelSelectors": [{"matchLabels": {"app": "demo"}}], "kinds": kinds}),
        deployment("web"),
        config_map("settings"),
    )
    assert placed_on(result, "web") == {"c1": None}
    assert [entry.key.name for entry in result.unscheduled] == ["settings"]


def test_highest_priority_wins_then_name_and_overlap_is_warned() -> None:
    result = plan(
        cluster("c1", labels={"pool": "a"}),
        cluster("c2", labels={"pool": "b"}),
        policy("zeta", priority=5, clusterSelector={"matchLabels": {"pool": "b"}}),
        policy("alpha", clusterSelector={"matchLabels": {"pool": "a"}}),
        deployment("web"),
    )
    assert group_of(result, "web").policy == "zeta"
    assert any("matches several SchedulePolicies (zeta, alpha)" in warning for warning in result.warnings)

    tie = plan(cluster("c1"), policy("b-policy"), policy("a-policy"), deployment("web"))
    assert group_of(tie, "web").policy == "a-policy"


def test_group_names_follow_nova() -> None:
    """Nova's tutorial: ``color=blue`` is ``demo-policy-4f068569``, ``green`` is ``demo-policy-f73297b2``
    (32-bit FNV-1 of the label value); a group of one keeps our sha256 name."""
    result = plan(
        cluster("c1"),
        policy("demo-policy", groupBy={"labelKey": "color"}),
        deployment("blue-web", labels={"app": "demo", "color": "blue"}),
        config_map("blue-config", labels={"app": "demo", "color": "blue"}),
        deployment("green-web", labels={"app": "demo", "color": "green"}),
        deployment("loner"),
    )
    loner = "demo-policy-" + hashlib.sha256(b"apps/Deployment/demo/loner").hexdigest()[:8]
    assert group_of(result, "blue-web").name == "demo-policy-4f068569"
    assert group_of(result, "blue-config").name == "demo-policy-4f068569"
    assert group_of(result, "green-web").name == "demo-policy-f73297b2"
    assert group_of(result, "loner").name == loner
    assert group_of(result, "blue-web").group_by == ("color", "blue")


def test_label_values_whose_hashes_collide_stay_apart() -> None:
    """FNV-1("v132789") == FNV-1("v729192") == f3156229: Nova would merge them; the lesser value keeps the
    name, the other gets a sha256 name with a suffix, whatever the order of the documents."""
    documents = [
        cluster("c1"),
        policy("p", groupBy={"labelKey": "tier"}),
        deployment("one", labels={"app": "demo", "tier": "v729192"}),
        deployment("two", labels={"app": "demo", "tier": "v132789"}),
    ]
    for ordered in (documents, documents[::-1]):
        result = plan(*ordered)
        assert group_of(result, "two").name == "p-f3156229"
        other = "p-" + hashlib.sha256(b"tier=v729192").hexdigest()[:8] + "-2"
        assert group_of(result, "one").name == other
        assert [len(group.objects) for group in result.groups] == [1, 1]


def test_a_group_lands_whole_where_all_of_it_fits() -> None:
    result = plan(
        cluster("small", cpu="1"),
        cluster("big", cpu="4"),
        policy("p", groupBy={"labelKey": "color"}),
        deployment("a", cpu="600m", labels={"app": "demo", "color": "blue"}),
        deployment("b", cpu="600m", labels={"app": "demo", "color": "blue"}),
    )
    assert placed_on(result, "a") == placed_on(result, "b") == {"big": None}


def test_not_ready_clusters_are_skipped_and_standby_clusters_are_candidates() -> None:
    result = plan(
        cluster("down", ready="False", cpu="64"),
        cluster("sleepy", standby=True, cpu="2"),
        policy("p"),
        deployment("web"),
    )
    group = group_of(result, "web")
    assert group.clusters == ("sleepy",)
    assert "Cluster down skipped, it is not ready;" in group.reason


def test_ordered_selector_fills_the_first_tier_then_spills() -> None:
    ordered = {
        "matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["onprem", "cloud"]}
        ]
    }
    result = plan(
        cluster("cloud", cpu="64"),
        cluster("onprem", cpu="1"),
        policy("p", orderedClusterSelector=ordered),
        deployment("first", cpu="800m"),
        deployment("second", cpu="800m"),
    )
    placements = {name: next(iter(placed_on(result, name))) for name in ("first", "second")}
    assert sorted(placements.values()) == ["cloud", "onprem"]  # one fills onprem, the other spills
    spilled = next(name for name, cluster in placements.items() if cluster == "cloud")
    assert "Cluster onprem skipped, does not have enough resources" in group_of(result, spilled).reason


def test_ordered_tiers_by_label_and_capitalised_field_name() -> None:
    ordered = {
        "matchExpressions": [
            {"key": "nova.elotl.co/cluster.provider", "operator": "In", "values": ["gce", "aws"]}
        ]
    }
    result = plan(
        cluster("a-aws", provider="aws", cpu="64"),
        cluster("z-gce", provider="gce", cpu="2"),
        policy("p", OrderedClusterSelector=ordered),
        deployment("web"),
    )
    assert placed_on(result, "web") == {"z-gce": None}


def test_fit_is_per_node_not_per_cluster_total() -> None:
    three_small_nodes = {f"n{i}": {"cpu": "1", "memory": "4Gi"} for i in range(3)}
    result = plan(
        cluster("fragmented", nodes=three_small_nodes),
        cluster("one-big-node", cpu="2"),
        policy("p"),
        deployment("web", replicas=1, cpu="1500m"),
    )
    group = group_of(result, "web")
    assert group.clusters == ("one-big-node",)


def test_node_selector_and_taints_decide_fit() -> None:
    gpu_nodes = {
        "cpu-node": {"cpu": "8", "memory": "32Gi"},
        "gpu-node": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "1"},
    }
    taints = {"gpu-node": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]}
    tolerating = {
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "nodeSelector": {"gpu": "a100"},
    }
    result = plan(
        cluster("gpus", nodes=gpu_nodes, node_labels={"gpu-node": {"gpu": "a100"}}, node_taints=taints),
        cluster("plain", cpu="64"),
        policy("p"),
        deployment("train", extra_resources={"nvidia.com/gpu": 1}, pod_spec=tolerating),
    )
    assert placed_on(result, "train") == {"gpus": None}

    intolerant = plan(
        cluster("gpus", nodes=gpu_nodes, node_labels={"gpu-node": {"gpu": "a100"}}, node_taints=taints),
        policy("p"),
        deployment(
            "train", extra_resources={"nvidia.com/gpu": 1}, pod_spec={"nodeSelector": {"gpu": "a100"}}
        ),
    )
    assert intolerant.unscheduled and intolerant.unscheduled[0].key.name == "train"
    assert "Cluster gpus skipped, does not have enough resources" in intolerant.unscheduled[0].reason


def test_capacity_is_consumed_within_a_render() -> None:
    result = plan(
        cluster("c1", cpu="1"),
        cluster("c2", cpu="1"),
        policy("p"),
        deployment("a", cpu="700m"),
        deployment("b", cpu="700m"),
        deployment("c", cpu="700m"),
    )
    placed = sorted(cluster for name in ("a", "b", "c") for cluster in placed_on(result, name))
    assert placed == ["c1", "c2"]  # never two 700m pods on one 1-cpu cluster
    assert len(result.unscheduled) == 1


def test_nothing_fits_falls_back_to_an_autoscaled_cluster() -> None:
    result = plan(
        cluster("fixed", cpu="1"),
        cluster("elastic", cpu="1", autoscaled=True),
        policy("p"),
        deployment("huge", cpu="16"),
    )
    group = group_of(result, "huge")
    assert group.clusters == ("elastic",)
    assert (
        "Picked cluster elastic because no cluster has enough resources and it is autoscaled;" in group.reason
    )


def test_a_sticky_group_stays_on_an_autoscaled_cluster_that_no_longer_fits_it() -> None:
    """The autoscaler adds nodes for it, so it stays (moving it would not be a fixed point): the warning
    says the cluster must scale up, and the room others use is not counted on."""
    documents = [
        cluster("elastic", cpu="2", autoscaled=True),
        cluster("fixed", cpu="8"),
        policy("p"),
        deployment("web", cpu="1500m"),
    ]
    name = group_of(plan(*documents), "web").name
    grown = [*documents[:3], deployment("web", cpu="3")]
    result = planning.plan(
        source_set(*grown),
        previous=PreviousPlacement({name: ("elastic",)}, {name: "placed earlier;"}, {name: {"cpu": 1500}}),
    )
    assert placed_on(result, "web") == {"elastic": None}
    assert group_of(result, "web").reason == "placed earlier;"
    assert group_of(result, "web").warnings == (
        "cluster elastic must scale up for the group: needs 3000m cpu on one node, best node has 2000m",
    )
    assert planning.plan(source_set(*grown), previous=reports.previous_of(result)) == result


def test_unschedulable_group_gets_a_reason_per_cluster() -> None:
    result = plan(
        cluster("c1", cpu="1"), cluster("c2", cpu="900m"), policy("p"), deployment("huge", cpu="1500m")
    )
    (entry,) = result.unscheduled
    assert entry.policy == "p"
    assert "Cluster c1 skipped, does not have enough resources: needs 1500m cpu" in entry.reason
    assert "Cluster c2 skipped, does not have enough resources: needs 1500m cpu" in entry.reason
    assert group_of(result, "huge").status == "unschedulable"


def test_most_free_capacity_wins_then_name() -> None:
    result = plan(cluster("a", cpu="2"), cluster("b", cpu="8"), policy("p"), deployment("web"))
    assert placed_on(result, "web") == {"b": None}
    tie = plan(cluster("b", cpu="4"), cluster("a", cpu="4"), policy("p"), deployment("web"))
    assert placed_on(tie, "web") == {"a": None}
    assert group_of(tie, "web").reason == (
        "Multiple clusters matching policy p (empty cluster selector): a,b; "
        "Picked cluster a because it has enough resources; "
        "Cluster b fits, not chosen: a has as much free capacity and comes first by name;"
    )


def test_previous_placement_is_sticky_while_it_fits() -> None:
    documents = (cluster("a", cpu="2"), cluster("b", cpu="8"), policy("p"), deployment("web"))
    first = plan(*documents)
    name = group_of(first, "web").name
    sticky = plan(*documents, previous={name: ("a",)})
    assert placed_on(sticky, "web") == {"a": None}
    assert "Picked cluster a because it has enough resources;" in group_of(sticky, "web").reason


def test_a_group_that_stays_keeps_the_reason_that_placed_it() -> None:
    documents = (cluster("a", cpu="2"), cluster("b", cpu="8"), policy("p"), deployment("web"))
    name = group_of(plan(*documents), "web").name
    kept = planning.plan(
        source_set(*documents),
        previous=PreviousPlacement({name: ("b",)}, {name: "the reason of the earlier render;"}),
    )
    assert group_of(kept, "web").reason == "the reason of the earlier render;"
    moved = planning.plan(
        source_set(*documents),
        previous=PreviousPlacement({name: ("gone",)}, {name: "the reason of the earlier render;"}),
    )
    assert group_of(moved, "web").reason.endswith(
        "Picked cluster b because it has enough resources; "
        "Cluster a fits, not chosen: b has more free capacity;"
    )


def test_a_group_that_spilled_fails_back_when_the_higher_tier_fits_again() -> None:
    ordered = {
        "matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["primary", "overflow"]}
        ]
    }
    documents = (
        cluster("primary", cpu="4"),
        cluster("overflow", cpu="4"),
        policy("p", orderedClusterSelector=ordered),
        deployment("web"),
    )
    name = group_of(plan(*documents), "web").name
    result = plan(*documents, previous={name: ("overflow",)})
    assert placed_on(result, "web") == {"primary": None}
    held = plan(*documents, previous={name: ("overflow",)}, failback=False)
    assert placed_on(held, "web") == {"overflow": None}
    assert placed_on(plan(*documents, previous={name: ("overflow",)}, failback={name}), "web") == {
        "primary": None
    }
    assert placed_on(plan(*documents, previous={name: ("overflow",)}, failback={"other"}), "web") == {
        "overflow": None
    }


def test_avoided_clusters_are_skipped_with_the_reason() -> None:
    documents = (cluster("a", cpu="8"), cluster("b", cpu="2"), policy("p"), deployment("web"))
    name = group_of(plan(*documents), "web").name
    result = plan(*documents, avoid={name: {"a": "pods stayed Pending"}})
    assert placed_on(result, "web") == {"b": None}
    assert "Cluster a skipped, pods stayed Pending;" in group_of(result, "web").reason


def test_cluster_annotation_pins_and_beats_policies() -> None:
    pinned = deployment("web", annotations={"nova.elotl.co/cluster": "small"}, cpu="3")
    result = plan(cluster("small", cpu="1"), cluster("big", cpu="8"), policy("p"), pinned)
    group = group_of(result, "web")
    assert group.clusters == ("small",)
    assert group.policy is None
    assert any("does not have enough resources" in warning for warning in group.warnings)


def test_spread_onto_annotation_divides_over_the_named_clusters() -> None:
    spread = deployment("web", replicas=5, annotations={"nova.elotl.co/spread-onto": "a,b"})
    result = plan(cluster("a"), cluster("b"), cluster("c"), spread)
    assert placed_on(result, "web") == {"a": 3, "b": 2}
    duplicated = deployment("web", replicas=5, annotations={"nova.elotl.co/spread-onto": "a,c::Duplicate"})
    assert placed_on(plan(cluster("a"), cluster("c"), duplicated), "web") == {"a": None, "c": None}


def test_delegated_mode_marks_groups_delegated() -> None:
    result = plan(cluster("c1"), policy("p"), deployment("web"), settings=PlanSettings(delegated=True))
    assert group_of(result, "web").status == "delegated"


def test_namespaces_follow_their_objects() -> None:
    result = plan(
        cluster("c1"),
        namespace("demo", {"team": "a"}),
        policy("p"),
        deployment("web"),
        deployment("sys", namespace="kube-system"),
    )
    followed = {(ns.cluster, ns.manifest.name): ns for ns in result.followed_namespaces}
    assert set(followed) == {("c1", "demo")}
    assert followed["c1", "demo"].manifest.labels == {"team": "a"}
    assert not result.unscheduled  # the Namespace is placed by following, not unscheduled

    synthesized = plan(cluster("c1"), policy("p"), deployment("web", namespace="fresh"))
    assert [ns.manifest.name for ns in synthesized.followed_namespaces] == ["fresh"]

    off = plan(cluster("c1"), policy("p"), deployment("web"), settings=PlanSettings(namespace_follow=False))
    assert off.followed_namespaces == ()


def test_skipped_cluster_reason_uses_designs_words() -> None:
    """docs/design.md §3: "Cluster wlc-2 skipped, does not have enough resources: needs 1500m cpu on one node,
    best node has 900m" — the per-node words even when the cluster's total is short too."""
    result = plan(cluster("wlc-2", cpu="900m"), policy("p"), deployment("web", cpu="1500m"))
    (entry,) = result.unscheduled
    expected = "Cluster wlc-2 skipped, does not have enough resources: needs 1500m cpu on one node, best node"
    assert f"{expected} has 900m;" in entry.reason


def test_spread_shortfall_warning_uses_designs_words() -> None:
    """docs/design.md §3: "wlc-2 needs 2500m cpu for its 5 replicas, has 1000m"."""
    spread = {"spreadMode": "Duplicate", "topologyKey": "kubernetes.io/metadata.name"}
    result = plan(
        cluster("wlc-1", cpu="8"),
        cluster("wlc-2", cpu="1"),
        policy("p", spreadConstraints=spread),
        deployment("web", replicas=5, cpu="500m"),
    )
    assert "wlc-2 needs 2500m cpu for its 5 replicas, has 1000m" in group_of(result, "web").warnings


def test_replica_counts_kubernetes_refuses_or_that_cannot_be_divided_are_input_errors() -> None:
    import pytest

    from nova_gitops.errors import InputError

    with pytest.raises(InputError, match="more than Kubernetes allows"):
        plan(cluster("c1"), policy("p"), deployment("web", replicas=2**31))
    split = {"spreadMode": "Divide", "topologyKey": "kubernetes.io/metadata.name"}
    with pytest.raises(InputError, match="too many to divide"):
        plan(
            cluster("c1"),
            cluster("c2"),
            policy("p", spreadConstraints=split),
            deployment("web", replicas=2**31 - 1),
        )


def test_a_new_pin_lands_first_and_a_sticky_group_that_no_longer_fits_moves_saying_why() -> None:
    """Pins are explicit intent: placed before sticky groups, so a pin is not refused for room that a
    policy-placed group holds; the group moves, and its reason says why it left."""
    documents = [cluster("c1", cpu="1"), cluster("c2", cpu="1"), policy("p"), deployment("web", cpu="600m")]
    first = plan(*documents)
    name = group_of(first, "web").name
    assert placed_on(first, "web") == {"c1": None}
    pinned = deployment("admin", cpu="600m", annotations={"nova.elotl.co/cluster": "c1"})
    second = planning.plan(source_set(*documents, pinned), previous=reports.previous_of(first))
    assert placed_on(second, "admin") == {"c1": None}
    assert group_of(second, "admin").warnings == ()
    assert placed_on(second, "web") == {"c2": None}
    assert group_of(second, "web").name == name
    assert group_of(second, "web").reason.endswith(
        "Cluster c1 skipped, does not have enough resources: needs 600m cpu on one node, best node has 400m;"
        " Picked cluster c2 because it has enough resources;"
    )


def test_a_new_pin_beside_a_grown_sticky_group_gives_a_plan_that_is_a_fixed_point() -> None:
    """The issue's case: a pin that lands next to a sticky group that grew was refused ("needs 5000m"), and
    rendering that output again with it as previous moved the group: a commit with no input change."""
    clusters = [cluster("c1", cpu="8"), cluster("c2", cpu="8"), policy("p")]
    first = plan(*clusters, deployment("web", replicas=2, cpu="1"))
    assert placed_on(first, "web") == {"c1": None}
    grown = source_set(
        *clusters,
        deployment("web", replicas=5, cpu="1"),
        deployment("admin", cpu="5", annotations={"nova.elotl.co/cluster": "c1"}),
    )
    second = planning.plan(grown, previous=reports.previous_of(first))
    assert placed_on(second, "admin") == {"c1": None}
    assert second.warnings == ()
    assert placed_on(second, "web") == {"c2": None}
    assert planning.plan(grown, previous=reports.previous_of(second)) == second


def test_spread_onto_ties_go_to_the_cluster_named_first() -> None:
    spread = deployment("web", replicas=3, annotations={"nova.elotl.co/spread-onto": "small,big"})
    result = plan(cluster("big"), cluster("small"), spread)
    assert placed_on(result, "web") == {"big": 1, "small": 2}
    assert group_of(result, "web").reason.startswith(
        "Spread over clusters named by annotation nova.elotl.co/spread-onto: big,small"
    )


def test_a_standby_cluster_is_a_candidate_even_while_not_ready() -> None:
    result = plan(cluster("sleepy", ready="False", standby=True), policy("p"), deployment("web"))
    assert placed_on(result, "web") == {"sleepy": None}


def test_divide_splits_a_jobs_completions_by_the_percentages_too() -> None:
    """docs/design.md §3: "pod controllers' replicas (Jobs: parallelism, and completions when set) are split
    over domains by percentageSplit"."""
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "etl", "namespace": "demo", "labels": {"app": "demo"}},
        "spec": {
            "parallelism": 1,
            "completions": 10,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "10m"}}}
                    ],
                }
            },
        },
    }
    split = {
        "spreadMode": "Divide",
        "topologyKey": "kubernetes.io/metadata.name",
        "percentageSplit": [
            {"topologyValue": "a", "percentage": 70},
            {"topologyValue": "b", "percentage": 30},
        ],
    }
    result = plan(cluster("a"), cluster("b"), policy("p", spreadConstraints=split), job)
    copies = {copy.cluster: copy for copy in group_of(result, "etl").objects[0].copies}
    assert {name: copy.completions for name, copy in copies.items()} == {"a": 7, "b": 3}
    assert {name: copy.replicas for name, copy in copies.items()} == {"a": 1, "b": 0}
    assert any("b gets 3 completions" in warning for warning in group_of(result, "etl").warnings)
