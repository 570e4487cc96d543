"""Spread placement's copies and capacity warnings (docs/design.md §3 "Spread").

Behaviours covered:
- an override reaches only the object it names, in the clusters of its topology value; every other copy
  has none, and copies without shares or overrides are plain (replicas and completions as in the source);
- Divide: clusters with equal shares each consume their share and each get their own warning; a cluster
  with a different share gets its own figures;
- the members' pods given by the planner or read by the spread give the same result.
"""

from __future__ import annotations

from typing import Any

from nova_gitops.api.clusters import Cluster
from nova_gitops.api.objects import Manifest
from nova_gitops.api.policies import SpreadConstraints
from nova_gitops.scheduling import demand, distributing
from nova_gitops.scheduling.ledger import Ledger
from nova_gitops.scheduling.planparts import ClusterCopy
from tests.builders import cluster, config_map, deployment, policy, source_set


def spread_of(*documents: dict[str, Any]) -> tuple[SpreadConstraints, list[Cluster], list[Manifest]]:
    sources = source_set(*documents)
    (found,) = sources.policies
    assert found.spread is not None
    clusters = sorted(sources.clusters, key=lambda item: item.name)
    members = sorted(sources.workloads, key=lambda manifest: manifest.key)
    return found.spread, clusters, members


def test_an_override_reaches_only_the_object_it_names_in_its_topology() -> None:
    override = {
        "topologyValue": "c2",
        "resources": [
            {
                "kind": "Deployment",
                "apiVersion": "apps/v1",
                "name": "web",
                "override": [{"fieldPath": "spec.replicas", "value": {"staticValue": 1}}],
            }
        ],
    }
    spread, clusters, members = spread_of(
        cluster("c1"),
        cluster("c2"),
        cluster("c3"),
        policy(
            "p",
            spreadConstraints={
                "spreadMode": "Duplicate",
                "topologyKey": "kubernetes.io/metadata.name",
                "overrides": [override],
            },
        ),
        deployment("web"),
        deployment("api"),
        config_map("settings"),
    )
    result = distributing.spread_group("p", spread, clusters, members, Ledger(clusters))
    assert result is not None
    copies = {plan.manifest.name: plan.copies for plan in result.objects}
    assert [len(copy.overrides) for copy in copies["web"]] == [0, 1, 0]
    assert copies["web"][1].overrides[0].value == 1
    plain = (ClusterCopy("c1"), ClusterCopy("c2"), ClusterCopy("c3"))
    assert copies["api"] == plain
    assert copies["settings"] == plain


def test_divide_warns_each_cluster_of_an_equal_share_with_its_own_figures() -> None:
    spread, clusters, members = spread_of(
        cluster("c1", cpu="800m"),
        cluster("c2", cpu="900m"),
        cluster("c3", cpu="8"),
        policy("p", spreadConstraints={"spreadMode": "Divide", "topologyKey": "kubernetes.io/metadata.name"}),
        deployment("web", replicas=8, cpu="500m"),
    )
    ledger = Ledger(clusters)
    result = distributing.spread_group("p", spread, clusters, members, ledger)
    assert result is not None
    assert [copy.replicas for copy in result.objects[0].copies] == [3, 3, 2]
    assert result.warnings == (
        "c1 needs 1500m cpu for its 3 replicas, has 800m",
        "c2 needs 1500m cpu for its 3 replicas, has 900m",
    )
    assert [ledger.placed[name]["cpu"] for name in ("c1", "c2", "c3")] == [1500, 1500, 1000]
    assert ledger.free("c3")["cpu"] == 7000


def test_pods_given_by_the_planner_or_read_here_give_the_same_spread() -> None:
    spread, clusters, members = spread_of(
        cluster("c1", cpu="1"),
        cluster("c2", cpu="2"),
        policy("p", spreadConstraints={"spreadMode": "Divide", "topologyKey": "kubernetes.io/metadata.name"}),
        deployment("web", replicas=5, cpu="300m"),
        deployment("api", replicas=0, cpu="300m"),
        config_map("settings"),
    )
    given = [demand.pod_demands(manifest.body) for manifest in members]
    first, second = Ledger(clusters), Ledger(clusters)
    assert distributing.spread_group("p", spread, clusters, members, first, member_pods=given) == (
        distributing.spread_group("p", spread, clusters, members, second)
    )
    assert first.placed == second.placed


def rollout(name: str, kind: str, api_version: str, replicas: int) -> dict[str, Any]:
    body = deployment(name, replicas=replicas, cpu="100m")
    return {**body, "apiVersion": api_version, "kind": kind}


def test_divide_splits_custom_kinds_shaped_like_a_deployment_like_one() -> None:
    spread, clusters, members = spread_of(
        cluster("c1"),
        cluster("c2"),
        policy(
            "p",
            spreadConstraints={
                "spreadMode": "Divide",
                "topologyKey": "kubernetes.io/metadata.name",
                "percentageSplit": [
                    {"topologyValue": "c1", "percentage": 70},
                    {"topologyValue": "c2", "percentage": 30},
                ],
            },
        ),
        rollout("canary", "Rollout", "argoproj.io/v1alpha1", 5),
        rollout("clones", "CloneSet", "apps.kruise.io/v1alpha1", 10),
        config_map("settings"),
    )
    counts = {member.kind: distributing.replica_count(member) for member in members}
    assert counts == {"Rollout": 5, "CloneSet": 10, "ConfigMap": None}
    result = distributing.spread_group("p", spread, clusters, members, Ledger(clusters))
    assert result is not None
    replicas = {plan.manifest.kind: [copy.replicas for copy in plan.copies] for plan in result.objects}
    assert replicas == {"Rollout": [4, 1], "CloneSet": [7, 3], "ConfigMap": [None, None]}


def test_divide_copies_a_declared_kind_whole_with_a_warning() -> None:
    worker = {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "train", "namespace": "demo", "labels": {"app": "demo"}},
        "spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": 4, "template": worker}}},
    }
    spread, clusters, members = spread_of(
        cluster("c1"),
        cluster("c2"),
        policy("p", spreadConstraints={"spreadMode": "Divide", "topologyKey": "kubernetes.io/metadata.name"}),
        job,
    )
    result = distributing.spread_group("p", spread, clusters, members, Ledger(clusters))
    assert result is not None
    assert [copy.replicas for copy in result.objects[0].copies] == [None, None]
    assert result.warnings == (
        "PyTorchJob demo/train is not divided (its pods are declared in pod sets, not one replica count): "
        "every cluster gets it whole",
    )
