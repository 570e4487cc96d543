"""Nova's public tutorials (elotl/try-nova) and the v0.9–v1.5 docs' policy examples render as they say.

One case per tutorial, as a table. Each case is written here from scratch, modelled on the tutorial: a Cluster
list shaped like Nova's (two kind workload clusters, ``kind-workload-1`` and ``kind-workload-2``, with the
capacity the tutorial's story needs), the tutorial's policy shape, and its workloads in miniature. Workloads
name no namespace where the tutorial applies them with ``kubectl apply -n NS``: the case passes ``-n NS``.
``nova-gitops render`` runs in-process into a temporary directory and the case asserts, from the placement
files (each group's, and the ``placement.yaml`` index) and the rendered tree, what the tutorial says happens.

A case the code does not (yet) render as the tutorial says is marked ``xfail(strict=True)`` with the reason,
so it fails the day it passes and the mark must go; today every case renders as its tutorial says.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from nova_gitops.cli.main import cli
from nova_gitops.scheduling.spreading import divide
from tests import placements

Doc = dict[str, Any]


# --- inputs shaped as Nova's --------------------------------------------------------------------------------


def nova_cluster(
    name: str, cpu: str = "8", memory: str = "32Gi", *, standby: bool = False, ready: str = "True"
) -> Doc:
    """A Cluster as Nova's control plane reports it: per-node resources, no node labels."""
    nodes = {f"{name}-control-plane": {"cpu": cpu, "memory": memory, "pods": "110"}}
    conditions: list[Doc] = [{"type": "Ready", "status": ready, "reason": "ClusterReady"}]
    if standby:
        conditions.append({"type": "Standby", "status": "True", "reason": "ClusterStandby"})
    return {
        "apiVersion": "cluster.elotl.co/v1alpha1",
        "kind": "Cluster",
        "metadata": {
            "name": name,
            "labels": {"nova.elotl.co/cluster.provider": "kind", "nova.elotl.co/cluster.region": "local"},
        },
        "spec": {"name": name, "provider": "kind", "region": "local", "kubernetesversion": "v1.30.0"},
        "status": {"conditions": conditions, "capacityResources": nodes, "availableResources": nodes},
    }


def kind_clusters(cpu1: str = "8", cpu2: str = "8") -> list[Doc]:
    return [nova_cluster("kind-workload-1", cpu1), nova_cluster("kind-workload-2", cpu2)]


def schedule_policy(name: str, spec: Doc) -> Doc:
    return {
        "apiVersion": "policy.elotl.co/v1alpha1",
        "kind": "SchedulePolicy",
        "metadata": {"name": name},
        "spec": spec,
    }


def by_name(*names: str) -> Doc:
    return {
        "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": list(names)}]
    }


def in_namespace(name: str) -> Doc:
    return {"matchLabels": {"kubernetes.io/metadata.name": name}}


def pod_template(labels: dict[str, str], cpu: str, pod_spec: Doc | None = None) -> Doc:
    container = {
        "name": "main",
        "image": "nginx:stable",
        "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}},
    }
    return {"metadata": {"labels": labels}, "spec": {"containers": [container], **(pod_spec or {})}}


def workload(
    name: str,
    labels: dict[str, str],
    *,
    replicas: int = 1,
    cpu: str = "100m",
    kind: str = "Deployment",
    api_version: str = "apps/v1",
    namespace: str | None = None,
    annotations: dict[str, str] | None = None,
    pod_spec: Doc | None = None,
) -> Doc:
    metadata: Doc = {"name": name, "labels": labels}
    if namespace:
        metadata["namespace"] = namespace
    if annotations:
        metadata["annotations"] = annotations
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": metadata,
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": pod_template({"app": name}, cpu, pod_spec),
        },
    }


def plain(
    kind: str, name: str, labels: dict[str, str], *, api_version: str = "v1", namespace: str | None = None
) -> Doc:
    metadata: Doc = {"name": name, "labels": labels}
    if namespace:
        metadata["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata}


def service(name: str, labels: dict[str, str], namespace: str | None = None) -> Doc:
    document = plain("Service", name, labels, namespace=namespace)
    document["spec"] = {"ports": [{"port": 80}], "selector": {"app": name}}
    return document


# --- reading a render ---------------------------------------------------------------------------------------


@dataclass
class Render:
    root: Path
    placement: Doc

    def group(self, name: str) -> Doc:
        groups = {group["name"]: group for group in self.placement["groups"]}
        assert name in groups, f"no group {name}: {sorted(groups)}"
        return groups[name]

    def clusters_of(self, object_name: str) -> list[str]:
        return sorted(self.group_holding(object_name)["clusters"])

    def group_holding(self, object_name: str) -> Doc:
        for group in self.placement["groups"]:
            if any(item["name"] == object_name for item in group["objects"]):
                return group
        raise AssertionError(f"{object_name} is in no group; unscheduled: {self.placement['unscheduled']}")

    def replicas_of(self, object_name: str) -> dict[str, int]:
        objects = self.group_holding(object_name)["objects"]
        (item,) = [i for i in objects if i["name"] == object_name and "replicas" in i]
        return item["replicas"]

    def manifest(self, cluster: str, relative: str) -> Doc:
        return yaml.safe_load((self.root / "clusters" / cluster / relative).read_text())


@dataclass
class Tutorial:
    documents: list[Doc]
    check: Callable[[Render], None]
    namespace: str | None = None
    xfail: str | None = None
    before: list[Doc] | None = None  # rendered first; its output is the case's --previous
    options: tuple[str, ...] = ()  # more render options the tutorial's setup implies


# --- the tutorials ------------------------------------------------------------------------------------------


def policy_based() -> Tutorial:
    """Policy-based scheduling: the guestbook (redis + frontend), applied with -n guestbook, goes to the one
    cluster the policy's clusterSelector names."""
    app = {"app": "guestbook"}
    redis = {"app": "redis"}
    documents = [
        *kind_clusters(),
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "guestbook"}},
        schedule_policy(
            "app-guestbook",
            {
                "namespaceSelector": in_namespace("guestbook"),
                "clusterSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kind-workload-1"}},
                "resourceSelectors": {"labelSelectors": [{"matchLabels": redis}, {"matchLabels": app}]},
            },
        ),
        workload("redis-leader", redis),
        service("redis-leader", redis),
        workload("redis-follower", redis, replicas=2),
        workload("frontend", app, replicas=3),
        service("frontend", app),
    ]

    def check(render: Render) -> None:
        for name in ("redis-leader", "redis-follower", "frontend"):
            assert render.clusters_of(name) == ["kind-workload-1"]
        assert render.manifest("kind-workload-1", "guestbook/deployment-frontend.yaml")["metadata"][
            "namespace"
        ] == ("guestbook")
        assert not list((render.root / "clusters/kind-workload-2").glob("guestbook/*"))
        assert render.placement["unscheduled"] == []

    return Tutorial(documents, check, namespace="guestbook")


def annotation_based() -> Tutorial:
    """Annotation-based scheduling: ``nova.elotl.co/cluster`` sends an object to that cluster, no policy
    needed."""
    pin = {"nova.elotl.co/cluster": "kind-workload-2"}
    documents = [*kind_clusters(), workload("nginx", {"app": "nginx"}, replicas=3, annotations=pin)]

    def check(render: Render) -> None:
        assert render.clusters_of("nginx") == ["kind-workload-2"]
        assert render.manifest("kind-workload-2", "default/deployment-nginx.yaml")["spec"]["replicas"] == 3

    return Tutorial(documents, check)


def group_scheduling() -> Tutorial:
    """Group scheduling: demo-policy groups by ``color``; each colour's ServiceAccount, Deployment and
    Service go together, in ScheduleGroups named ``demo-policy-4f068569`` (blue) and ``demo-policy-f73297b2``
    (green). Each cluster has room for one colour only, so the two groups land on different clusters."""
    documents: list[Doc] = [
        *kind_clusters("2", "2"),
        schedule_policy(
            "demo-policy",
            {
                "namespaceSelector": in_namespace("nginx-group-demo"),
                "groupBy": {"labelKey": "color"},
                "resourceSelectors": {"labelSelectors": [{"matchLabels": {"nginxGroupScheduleDemo": "yes"}}]},
            },
        ),
    ]
    for color in ("blue", "green"):
        labels = {"color": color, "nginxGroupScheduleDemo": "yes"}
        documents += [
            plain("ServiceAccount", f"{color}-serviceaccount", labels),
            workload(f"{color}-nginx-deployment", labels, replicas=3, cpu="500m"),
            service(f"{color}-nginx-service", labels),
        ]

    def check(render: Render) -> None:
        blue, green = render.group("demo-policy-4f068569"), render.group("demo-policy-f73297b2")
        assert blue["groupBy"] == {"key": "color", "value": "blue"}
        assert green["groupBy"] == {"key": "color", "value": "green"}
        assert {item["name"] for item in blue["objects"]} == {
            "blue-serviceaccount",
            "blue-nginx-deployment",
            "blue-nginx-service",
        }
        assert len(blue["clusters"]) == len(green["clusters"]) == 1
        assert blue["clusters"] != green["clusters"]
        for cluster in blue["clusters"]:
            deployed = render.manifest(cluster, "nginx-group-demo/deployment-blue-nginx-deployment.yaml")
            assert (
                deployed["metadata"]["annotations"]["nova.elotl.co/schedule-group"] == "demo-policy-4f068569"
            )

    return Tutorial(documents, check, namespace="nginx-group-demo")


def capacity_based() -> Tutorial:
    """Capacity-based scheduling: a hog pod has taken most of kind-workload-1, so the group that needs more
    than is left there goes to kind-workload-2 ("Cluster … skipped, does not have enough resources")."""
    labels = {"color": "blue", "nginxGroupScheduleDemo": "yes"}
    documents = [
        *kind_clusters("1", "8"),
        schedule_policy(
            "demo-policy",
            {
                "namespaceSelector": in_namespace("nginx-group-demo"),
                "groupBy": {"labelKey": "color"},
                "resourceSelectors": {"labelSelectors": [{"matchLabels": {"nginxGroupScheduleDemo": "yes"}}]},
            },
        ),
        workload("blue-nginx-deployment", labels, replicas=4, cpu="500m"),
        service("blue-nginx-service", labels),
    ]

    def check(render: Render) -> None:
        assert render.group("demo-policy-4f068569")["clusters"] == ["kind-workload-2"]

    return Tutorial(documents, check, namespace="nginx-group-demo")


def capacity_based_reason() -> Tutorial:
    """The same tutorial's ScheduleGroup event: every candidate with its verdict, in Nova's wording."""
    tutorial = capacity_based()

    def check(render: Render) -> None:
        reason = render.group("demo-policy-4f068569")["reason"]
        assert "Cluster kind-workload-1 skipped, does not have enough resources" in reason
        assert "Picked cluster kind-workload-2 because it has enough resources" in reason

    return Tutorial(
        tutorial.documents,
        check,
        namespace=tutorial.namespace,
    )


def spread_divide_equal() -> Tutorial:
    """Spread scheduling: a spreadConstraints policy without a mode or split divides the 10 nginx replicas
    equally over the two clusters; the ServiceAccount (no replicas) goes to both."""
    labels = {"app": "nginx", "group-policy": "nginx-spread"}
    documents = [
        *kind_clusters(),
        schedule_policy(
            "spread-group-policy",
            {
                "namespaceSelector": in_namespace("default"),
                "groupBy": {"labelKey": "app"},
                "spreadConstraints": {"topologyKey": "kubernetes.io/metadata.name"},
                "clusterSelector": by_name("kind-workload-1", "kind-workload-2"),
                "resourceSelectors": {"labelSelectors": [{"matchLabels": {"group-policy": "nginx-spread"}}]},
            },
        ),
        workload("nginx2", labels, replicas=10, namespace="default"),
        plain("ServiceAccount", "nginx-sa", labels, namespace="default"),
    ]

    def check(render: Render) -> None:
        assert render.replicas_of("nginx2") == {"kind-workload-1": 5, "kind-workload-2": 5}
        assert render.clusters_of("nginx-sa") == ["kind-workload-1", "kind-workload-2"]
        assert render.group_holding("nginx2")["mode"] == "divide"

    return Tutorial(documents, check)


def spread_percentage() -> Tutorial:
    """Spread with a v0.9 list percentageSplit: 10 replicas at 20/80 are 2 on kind-workload-1, 8 on -2."""
    labels = {"app": "nginx", "group-policy": "nginx-spread"}
    split = [
        {"topologyValue": "kind-workload-1", "percentage": 20},
        {"topologyValue": "kind-workload-2", "percentage": 80},
    ]
    documents = [
        *kind_clusters(),
        schedule_policy(
            "spread-group-policy",
            {
                "namespaceSelector": in_namespace("default"),
                "groupBy": {"labelKey": "app"},
                "spreadConstraints": {"topologyKey": "kubernetes.io/metadata.name", "percentageSplit": split},
                "clusterSelector": by_name("kind-workload-1", "kind-workload-2"),
                "resourceSelectors": {"labelSelectors": [{"matchLabels": {"group-policy": "nginx-spread"}}]},
            },
        ),
        workload("nginx2", labels, replicas=10, namespace="default"),
        plain("ServiceAccount", "nginx-sa", labels, namespace="default"),
    ]

    def check(render: Render) -> None:
        assert render.replicas_of("nginx2") == {"kind-workload-1": 2, "kind-workload-2": 8}
        assert render.manifest("kind-workload-2", "default/deployment-nginx2.yaml")["spec"]["replicas"] == 8
        assert render.clusters_of("nginx-sa") == ["kind-workload-1", "kind-workload-2"]

    return Tutorial(documents, check)


def spread_duplicate_overrides() -> Tutorial:
    """Spread Duplicate with overrides (the Istio multi-network example): every cluster gets the istio-system
    Namespace, each with its own ``topology.istio.io/network`` label."""
    labels = {"release": "istio"}
    overrides = [
        {
            "topologyValue": cluster,
            "resources": [
                {
                    "kind": "Namespace",
                    "apiVersion": "v1",
                    "name": "istio-system",
                    "override": [
                        {
                            "fieldPath": "metadata.labels['topology.istio.io/network']",
                            "value": {"staticValue": network},
                        }
                    ],
                }
            ],
        }
        for cluster, network in (("kind-workload-1", "west-network"), ("kind-workload-2", "central-network"))
    ]
    documents = [
        *kind_clusters(),
        schedule_policy(
            "spread-namespace-policy",
            {
                "namespaceSelector": {},
                "resourceSelectors": {"labelSelectors": [{"matchLabels": labels}]},
                "groupBy": {"labelKey": "release"},
                "clusterSelector": by_name("kind-workload-1", "kind-workload-2"),
                "spreadConstraints": {
                    "spreadMode": "Duplicate",
                    "topologyKey": "kubernetes.io/metadata.name",
                    "overrides": overrides,
                },
            },
        ),
        plain("Namespace", "istio-system", labels),
        workload("istiod", labels, replicas=2, namespace="istio-system"),
    ]

    def check(render: Render) -> None:
        assert render.replicas_of("istiod") == {"kind-workload-1": 2, "kind-workload-2": 2}
        for cluster, network in (("kind-workload-1", "west-network"), ("kind-workload-2", "central-network")):
            namespace = render.manifest(cluster, "_cluster/namespace-istio-system.yaml")
            assert namespace["metadata"]["labels"]["topology.istio.io/network"] == network
            assert namespace["metadata"]["labels"]["release"] == "istio"

    return Tutorial(documents, check)


def fill_and_spill() -> Tutorial:
    """Fill-and-spill: orderedClusterSelector lists kind-workload-2 first; groups fill it, and the group that
    no longer fits spills to kind-workload-1."""
    documents: list[Doc] = [
        *kind_clusters("8", "2"),
        schedule_policy(
            "fill-and-spill-policy-1",
            {
                "namespaceSelector": {
                    "matchExpressions": [
                        {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["default"]}
                    ]
                },
                "groupBy": {"labelKey": "test"},
                "orderedClusterSelector": by_name("kind-workload-2", "kind-workload-1"),
                "resourceSelectors": {"labelSelectors": [{"matchLabels": {"groupingFeatureTest": "true"}}]},
            },
        ),
    ]
    for index in (1, 2):
        labels = {"test": f"group-{index}", "groupingFeatureTest": "true"}
        documents.append(workload(f"nginx-group-{index}", labels, replicas=3, cpu="500m"))

    def check(render: Render) -> None:
        assert render.clusters_of("nginx-group-1") == ["kind-workload-2"]
        assert render.clusters_of("nginx-group-2") == ["kind-workload-1"]

    return Tutorial(documents, check)


def standby_cluster() -> Tutorial:
    """Just-in-time standby workload clusters: a Standby cluster is still a candidate; placing there wakes
    it."""
    documents = [
        nova_cluster("kind-workload-1", "1"),
        nova_cluster("kind-workload-2", standby=True),
        schedule_policy(
            "app-policy",
            {
                "namespaceSelector": in_namespace("default"),
                "resourceSelectors": {"labelSelectors": [{"matchLabels": {"app": "nginx"}}]},
            },
        ),
        workload("nginx", {"app": "nginx"}, replicas=4, cpu="500m"),
    ]

    def check(render: Render) -> None:
        assert render.clusters_of("nginx") == ["kind-workload-2"]

    return Tutorial(documents, check)


def custom_resources() -> Tutorial:
    """Sample workloads: a CRD and its CronTab object, applied with -n, go where the policy sends them; the
    CRD (cluster-scoped) goes with its object."""
    labels = {"app": "crontab"}
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com", "labels": labels},
        "spec": {
            "group": "stable.example.com",
            "scope": "Namespaced",
            "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object"}},
                }
            ],
        },
    }
    crontab = plain("CronTab", "my-new-cron-object", labels, api_version="stable.example.com/v1")
    crontab["spec"] = {"cronSpec": "* * * * */5", "image": "my-awesome-cron-image"}
    documents = [
        *kind_clusters(),
        schedule_policy(
            "crontab-policy",
            {
                "clusterSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kind-workload-2"}},
                "resourceSelectors": {"labelSelectors": [{"matchLabels": labels}]},
            },
        ),
        crd,
        crontab,
    ]

    def check(render: Render) -> None:
        assert render.clusters_of("my-new-cron-object") == ["kind-workload-2"]
        assert render.clusters_of("crontabs.stable.example.com") == ["kind-workload-2"]
        rendered = render.manifest("kind-workload-2", "crontabs/crontab-my-new-cron-object.yaml")
        assert rendered["metadata"]["namespace"] == "crontabs"

    return Tutorial(documents, check, namespace="crontabs")


def v15_map_split() -> Tutorial:
    """Nova v1.5 docs: ``percentageSplit`` as a map ``cluster: percent`` with no ``topologyKey`` and no
    ``groupBy``; each object is its own group. 5 replicas at 70/30 keep their total: 4 + 1."""
    documents = [
        *kind_clusters(),
        schedule_policy(
            "split-policy",
            {
                "namespaceSelector": in_namespace("default"),
                "clusterSelector": by_name("kind-workload-1", "kind-workload-2"),
                "spreadConstraints": {
                    "spreadMode": "Divide",
                    "percentageSplit": {"kind-workload-1": 70, "kind-workload-2": 30},
                },
                "resourceSelectors": {"labelSelectors": [{"matchLabels": {"app": "web"}}]},
            },
        ),
        workload("web", {"app": "web"}, replicas=5),
        workload("api", {"app": "web"}, replicas=10),
    ]

    def check(render: Render) -> None:
        assert render.replicas_of("web") == {"kind-workload-1": 4, "kind-workload-2": 1}
        assert render.replicas_of("api") == {"kind-workload-1": 7, "kind-workload-2": 3}
        assert render.group_holding("web")["name"] != render.group_holding("api")["name"]

    return Tutorial(documents, check)


def v13_ordered_selector_capitalised() -> Tutorial:
    """Nova v1.3 docs spell fill-and-spill's field ``OrderedClusterSelector``; it means the same."""
    documents = [
        *kind_clusters("8", "1"),
        schedule_policy(
            "spill-policy",
            {
                "namespaceSelector": in_namespace("default"),
                "OrderedClusterSelector": by_name("kind-workload-2", "kind-workload-1"),
                "resourceSelectors": {"labelSelectors": [{"matchLabels": {"app": "nginx"}}]},
            },
        ),
        workload("nginx", {"app": "nginx"}, replicas=4, cpu="500m"),
    ]

    def check(render: Render) -> None:
        assert render.clusters_of("nginx") == ["kind-workload-1"]

    return Tutorial(documents, check)


def argo_rollouts() -> Tutorial:
    """Argo Rollouts canary: Rollouts grouped by ``role`` and divided over both clusters, replicas split as a
    Deployment's would be (a Rollout has spec.replicas and spec.template); the base template stays out."""
    documents = [
        *kind_clusters(),
        schedule_policy(
            "rollouts-demo-policy",
            {
                "namespaceSelector": in_namespace("default"),
                "clusterSelector": by_name("kind-workload-1", "kind-workload-2"),
                "spreadConstraints": {"topologyKey": "kubernetes.io/metadata.name", "spreadMode": "Divide"},
                "resourceSelectors": {
                    "labelSelectors": [
                        {
                            "matchExpressions": [
                                {"key": "app", "operator": "In", "values": ["rollouts-demo"]},
                                {"key": "role", "operator": "Exists"},
                                {"key": "base-template", "operator": "DoesNotExist"},
                            ]
                        }
                    ]
                },
                "groupBy": {"labelKey": "role"},
            },
        ),
        workload(
            "rollouts-demo-prod",
            {"app": "rollouts-demo", "role": "prod"},
            replicas=6,
            cpu="300m",
            kind="Rollout",
            api_version="argoproj.io/v1alpha1",
        ),
        workload("rollouts-demo-base", {"app": "rollouts-demo", "base-template": "yes"}, replicas=1),
    ]

    def check(render: Render) -> None:
        assert render.replicas_of("rollouts-demo-prod") == {"kind-workload-1": 3, "kind-workload-2": 3}
        assert all(
            item["name"] != "rollouts-demo-base" for g in render.placement["groups"] for item in g["objects"]
        )
        rollout = render.manifest("kind-workload-1", "default/rollout-rollouts-demo-prod.yaml")
        assert rollout["spec"]["replicas"] == 3

    return Tutorial(
        documents,
        check,
    )


def helm_node_selector() -> Tutorial:
    """Most Helm charts (and the tutorials' charts such as cert-manager) set ``nodeSelector:
    kubernetes.io/os: linux``. Nova's Clusters report no node labels, so Nova places them; so must we, saying
    it did not check."""
    documents = [
        *kind_clusters(),
        schedule_policy(
            "cert-manager-policy",
            {
                "namespaceSelector": in_namespace("cert-manager"),
                "clusterSelector": by_name("kind-workload-1"),
                "resourceSelectors": {
                    "labelSelectors": [{"matchLabels": {"app.kubernetes.io/instance": "cert-manager"}}]
                },
            },
        ),
        workload(
            "cert-manager",
            {"app.kubernetes.io/instance": "cert-manager"},
            pod_spec={"nodeSelector": {"kubernetes.io/os": "linux"}},
        ),
    ]

    def check(render: Render) -> None:
        assert render.clusters_of("cert-manager") == ["kind-workload-1"]
        reason = render.group_holding("cert-manager")["reason"]
        assert "node labels unknown for kind-workload-1: nodeSelector not checked" in reason

    return Tutorial(
        documents,
        check,
        namespace="cert-manager",
    )


def policy_updated() -> Tutorial:
    """Policy-based scheduling, second step: the policy is edited to name kind-workload-2, and the guestbook
    moves there from kind-workload-1 (the previous render), whole."""
    first = policy_based()
    edited = [
        schedule_policy(
            "app-guestbook",
            {
                **document["spec"],
                "clusterSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kind-workload-2"}},
            },
        )
        if document["kind"] == "SchedulePolicy"
        else document
        for document in first.documents
    ]

    def check(render: Render) -> None:
        for name in ("redis-leader", "redis-follower", "frontend"):
            assert render.clusters_of(name) == ["kind-workload-2"]
        assert not list((render.root / "clusters/kind-workload-1").glob("guestbook/*"))

    return Tutorial(edited, check, namespace="guestbook", before=first.documents)


def namespace_policy() -> Tutorial:
    """A policy per customer namespace: ``labelSelectors: [{matchExpressions: []}]`` selects everything in
    namespace-customer3, which goes to kind-workload-3; other namespaces' objects are not its business."""
    documents = [
        *kind_clusters(),
        nova_cluster("kind-workload-3"),
        schedule_policy(
            "trial-policy-customer1",
            {
                "namespaceSelector": {
                    "matchExpressions": [
                        {
                            "key": "kubernetes.io/metadata.name",
                            "operator": "In",
                            "values": ["namespace-customer3"],
                        }
                    ]
                },
                "clusterSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kind-workload-3"}},
                "resourceSelectors": {"labelSelectors": [{"matchExpressions": []}]},
            },
        ),
        workload("nginx", {"team": "c3"}, namespace="namespace-customer3"),
        plain("ConfigMap", "settings", {}, namespace="namespace-customer3"),
        workload("other", {"team": "c1"}, namespace="namespace-customer1"),
    ]

    def check(render: Render) -> None:
        assert render.clusters_of("nginx") == ["kind-workload-3"]
        assert render.clusters_of("settings") == ["kind-workload-3"]
        assert [item["name"] for item in render.placement["unscheduled"]] == ["other"]

    return Tutorial(documents, check)


def percona_disaster_recovery() -> Tutorial:
    """Percona disaster recovery: the operator (``psql-cluster: all``) is duplicated to both clusters; each
    database cluster goes to its own workload cluster by its own policy."""
    all_clusters = by_name("kind-workload-1", "kind-workload-2")
    in_operator_ns = in_namespace("psql-operator")

    def pinned(name: str, cluster: str) -> Doc:
        return schedule_policy(
            name,
            {
                "namespaceSelector": in_operator_ns,
                "clusterSelector": {"matchLabels": {"kubernetes.io/metadata.name": cluster}},
                "resourceSelectors": {
                    "labelSelectors": [{"matchLabels": {"psql-cluster": name.removeprefix("psql-")}}]
                },
            },
        )

    database = {"apiVersion": "pgv2.percona.com/v2", "kind": "PerconaPGCluster"}
    documents = [
        *kind_clusters(),
        schedule_policy(
            "psql-all-clusters",
            {
                "namespaceSelector": in_operator_ns,
                "groupBy": {"labelKey": "psql-cluster"},
                "clusterSelector": all_clusters,
                "spreadConstraints": {
                    "spreadMode": "Duplicate",
                    "topologyKey": "kubernetes.io/metadata.name",
                },
                "resourceSelectors": {"labelSelectors": [{"matchLabels": {"psql-cluster": "all"}}]},
            },
        ),
        pinned("psql-cluster-1", "kind-workload-1"),
        pinned("psql-cluster-2", "kind-workload-2"),
        workload("percona-postgresql-operator", {"psql-cluster": "all"}),
        {**database, "metadata": {"name": "cluster1", "labels": {"psql-cluster": "cluster-1"}}, "spec": {}},
        {**database, "metadata": {"name": "cluster2", "labels": {"psql-cluster": "cluster-2"}}, "spec": {}},
    ]

    def check(render: Render) -> None:
        assert render.clusters_of("percona-postgresql-operator") == ["kind-workload-1", "kind-workload-2"]
        assert render.clusters_of("cluster1") == ["kind-workload-1"]
        assert render.clusters_of("cluster2") == ["kind-workload-2"]
        assert (
            render.manifest("kind-workload-2", "psql-operator/perconapgcluster-cluster2.yaml")["metadata"][
                "namespace"
            ]
            == "psql-operator"
        )

    return Tutorial(documents, check, namespace="psql-operator")


def kyverno_policies() -> Tutorial:
    """Kyverno setup: the ClusterPolicy is duplicated to both clusters, and kind-workload-1's copy is
    overridden to ``validationFailureAction: enforce``; policies match Namespaces by their labels."""
    part_of = "app.kubernetes.io/part-of"
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "clusterpolicies.kyverno.io", "labels": {part_of: "kyverno"}},
        "spec": {
            "group": "kyverno.io",
            "scope": "Cluster",
            "names": {"plural": "clusterpolicies", "singular": "clusterpolicy", "kind": "ClusterPolicy"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object"}},
                }
            ],
        },
    }
    cluster_policy = plain(
        "ClusterPolicy", "require-labels", {part_of: "kyverno-policy"}, api_version="kyverno.io/v1"
    )
    cluster_policy["spec"] = {"validationFailureAction": "audit", "rules": []}
    override = {
        "topologyValue": "kind-workload-1",
        "resources": [
            {
                "kind": "ClusterPolicy",
                "apiVersion": "kyverno.io/v1",
                "name": "require-labels",
                "override": [
                    {"fieldPath": "spec.validationFailureAction", "value": {"staticValue": "enforce"}}
                ],
            }
        ],
    }

    def duplicate(name: str, value: str, **spread: Any) -> Doc:
        return schedule_policy(
            name,
            {
                "namespaceSelector": {"matchLabels": {part_of: value}},
                "groupBy": {"labelKey": part_of},
                "clusterSelector": by_name("kind-workload-1", "kind-workload-2"),
                "spreadConstraints": {
                    "spreadMode": "Duplicate",
                    "topologyKey": "kubernetes.io/metadata.name",
                    **spread,
                },
                "resourceSelectors": {"labelSelectors": [{"matchLabels": {part_of: value}}]},
            },
        )

    documents = [
        *kind_clusters(),
        duplicate("kyverno-all-clusters", "kyverno"),
        duplicate("kyverno-policies-all-clusters", "kyverno-policy", overrides=[override]),
        plain("Namespace", "kyverno", {part_of: "kyverno"}),
        crd,
        workload("kyverno-admission-controller", {part_of: "kyverno"}, namespace="kyverno"),
        cluster_policy,
    ]

    def check(render: Render) -> None:
        both = ["kind-workload-1", "kind-workload-2"]
        assert render.clusters_of("kyverno-admission-controller") == both
        assert render.clusters_of("require-labels") == both
        actions = {
            cluster: render.manifest(cluster, "_cluster/clusterpolicy-require-labels.yaml")["spec"][
                "validationFailureAction"
            ]
            for cluster in both
        }
        assert actions == {"kind-workload-1": "enforce", "kind-workload-2": "audit"}

    return Tutorial(documents, check)


def dra_gpu() -> Tutorial:
    """DRA GPU examples: a Pod whose GPU comes from a ResourceClaimTemplate. Its device demand cannot be known
    from the manifests, so ``explain`` must say "demand unknown" rather than "has enough resources"."""
    labels = {"app": "dra-test"}
    claim_template = plain("ResourceClaimTemplate", "single-gpu", labels, api_version="resource.k8s.io/v1")
    claim_template["spec"] = {
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}
    }
    pod = plain("Pod", "pod", labels)
    pod["spec"] = {
        "containers": [
            {"name": "ctr0", "image": "ubuntu:22.04", "resources": {"claims": [{"name": "claim-gpu"}]}}
        ],
        "resourceClaims": [{"name": "claim-gpu", "resourceClaimTemplateName": "single-gpu"}],
    }
    documents = [
        *kind_clusters(),
        schedule_policy(
            "dra-policy",
            {
                "namespaceSelector": in_namespace("dra-gpu-test"),
                "groupBy": {"labelKey": "app"},
                "clusterSelector": by_name("kind-workload-1"),
                "resourceSelectors": {"labelSelectors": [{"matchLabels": labels}]},
            },
        ),
        claim_template,
        pod,
    ]

    def check(render: Render) -> None:
        assert render.clusters_of("pod") == ["kind-workload-1"]
        assert render.clusters_of("single-gpu") == ["kind-workload-1"]
        explained = CliRunner().invoke(
            cli, ["explain", str(render.root.parent / "src"), "pod/dra-gpu-test/pod", "-n", "dra-gpu-test"]
        )
        assert explained.exit_code == 0, explained.output
        assert "demand unknown" in explained.output

    return Tutorial(
        documents,
        check,
        namespace="dra-gpu-test",
    )


def v14_configuration_example() -> Tutorial:
    """The v1.4 Configuration page's annotated policy: namespaceSelector with matchLabels and NotIn,
    clusterSelector by region label and NotIn, ``Exists`` with ``values: []``, Divide 20/80 over wlc-1 and
    wlc-2, and Namespace overrides. Its clusterSelector excludes wlc-2, so wlc-2's share goes to the other
    domains (with a warning), and a candidate the split does not list gets ``replicas: 0``. Cluster-scoped
    objects are matched whatever the namespace selector says."""
    east = {"nova.elotl.co/cluster.region": "us-east-1"}
    clusters = [nova_cluster(name) for name in ("wlc-1", "wlc-2", "wlc-3", "wlc-5")]
    for cluster in clusters:
        if cluster["metadata"]["name"] != "wlc-3":
            cluster["metadata"]["labels"].update(east)
    network = "metadata.labels['topology.istio.io/network']"
    overrides = [
        {
            "topologyValue": cluster,
            "resources": [
                {
                    "kind": "Namespace",
                    "apiVersion": "v1",
                    "name": "nginx-spread-3",
                    "override": [{"fieldPath": network, "value": {"staticValue": value}}],
                }
            ],
        }
        for cluster, value in (("wlc-1", "network-1"), ("wlc-2", "network-2"))
    ]
    not_in = {"key": "kubernetes.io/metadata.name", "operator": "NotIn"}
    labels = {"microServicesDemo": "yes", "app.kubernetes.io": "demo", "color": "blue"}
    documents = [
        *clusters,
        schedule_policy(
            "demo-policy",
            {
                "namespaceSelector": {
                    "matchLabels": {"kubernetes.io/metadata.name": "microsvc-demo"},
                    "matchExpressions": [{**not_in, "values": ["namespace-2", "namespace-3", "namespace-4"]}],
                },
                "clusterSelector": {
                    "matchLabels": east,
                    "matchExpressions": [{**not_in, "values": ["wlc-2", "wlc-3", "wlc-4"]}],
                },
                "groupBy": {"labelKey": "color"},
                "spreadConstraints": {
                    "spreadMode": "Divide",
                    "topologyKey": "kubernetes.io/metadata.name",
                    "percentageSplit": [
                        {"topologyValue": "wlc-1", "percentage": 20},
                        {"topologyValue": "wlc-2", "percentage": 80},
                    ],
                    "overrides": overrides,
                },
                "resourceSelectors": {
                    "labelSelectors": [
                        {
                            "matchLabels": {"microServicesDemo": "yes"},
                            "matchExpressions": [
                                {"key": "app.kubernetes.io", "operator": "Exists", "values": []}
                            ],
                        }
                    ]
                },
            },
        ),
        plain("Namespace", "nginx-spread-3", {**labels, "topology.istio.io/network": "placeholder"}),
        workload("frontend", labels, replicas=10, namespace="microsvc-demo"),
        workload("elsewhere", labels, namespace="namespace-2"),
        plain("ClusterRole", "reader", labels, api_version="rbac.authorization.k8s.io/v1"),
    ]

    def check(render: Render) -> None:
        assert render.replicas_of("frontend") == {"wlc-1": 10, "wlc-5": 0}
        assert render.clusters_of("reader") == ["wlc-1", "wlc-5"]
        assert any("wlc-2" in warning for warning in render.placement["warnings"])
        assert [item["name"] for item in render.placement["unscheduled"]] == ["elsewhere"]
        spread_ns = render.manifest("wlc-1", "_cluster/namespace-nginx-spread-3.yaml")
        assert spread_ns["metadata"]["labels"]["topology.istio.io/network"] == "network-1"
        assert render.group_holding("frontend")["name"] == "demo-policy-4f068569"

    return Tutorial(documents, check)


def v13_fill_and_spill_by_provider() -> Tutorial:
    """Fill-and-spill by cluster group (v1.3 docs): ``OrderedClusterSelector`` on
    ``nova.elotl.co/cluster.provider`` prefers GKE clusters, then EKS; a group that fits no GKE cluster
    spills to EKS."""

    def provider_cluster(name: str, provider: str, cpu: str) -> Doc:
        document = nova_cluster(name, cpu)
        document["metadata"]["labels"]["nova.elotl.co/cluster.provider"] = provider
        document["spec"]["provider"] = provider
        return document

    documents: list[Doc] = [
        provider_cluster("eks-cluster-us-east-1", "aws", "16"),
        provider_cluster("gke-cluster-a", "gce", "2"),
        provider_cluster("gke-cluster-b", "gce", "2"),
        schedule_policy(
            "prefer-gke",
            {
                "namespaceSelector": in_namespace("default"),
                "groupBy": {"labelKey": "team"},
                "OrderedClusterSelector": {
                    "matchExpressions": [
                        {"key": "nova.elotl.co/cluster.provider", "operator": "In", "values": ["gce", "aws"]}
                    ]
                },
                "resourceSelectors": {"labelSelectors": [{"matchLabels": {"tier": "batch"}}]},
            },
        ),
    ]
    for team in ("a", "b", "c"):
        documents.append(workload(f"job-{team}", {"team": team, "tier": "batch"}, replicas=3, cpu="500m"))

    def check(render: Render) -> None:
        # A render has no arrival order: new groups are placed in group-name order, and Nova's names hash
        # the label value (team=c is prefer-gke-050c5d7c, b …7d, a …7e), so team a is the one that spills.
        assert render.clusters_of("job-c") == ["gke-cluster-a"]
        assert render.clusters_of("job-b") == ["gke-cluster-b"]
        assert render.clusters_of("job-a") == ["eks-cluster-us-east-1"]

    return Tutorial(documents, check)


def external_orchestrator() -> Tutorial:
    """Integration with an external orchestrator: the placement is recorded on the object as the label
    ``nova.elotl.co/target-cluster``, the copy carries ``nova.elotl.co/schedule: "true"`` for the agent to
    watch, and the schedule status is ``delegated``."""
    documents = [
        *kind_clusters("1", "8"),
        schedule_policy(
            "batch-policy",
            {
                "namespaceSelector": in_namespace("default"),
                "resourceSelectors": {"labelSelectors": [{"matchLabels": {"app": "trainer"}}]},
            },
        ),
        workload("trainer", {"app": "trainer"}, replicas=4, cpu="500m"),
    ]

    def check(render: Render) -> None:
        group = render.group_holding("trainer")
        assert group["status"] == "delegated"
        assert group["clusters"] == ["kind-workload-2"]
        labels = render.manifest("kind-workload-2", "default/deployment-trainer.yaml")["metadata"]["labels"]
        assert labels["nova.elotl.co/target-cluster"] == "kind-workload-2"
        assert labels["nova.elotl.co/schedule"] == "true"

    return Tutorial(documents, check, options=("--external-orchestrator",))


def smart_scheduling_growth() -> Tutorial:
    """Smart (group) scheduling, second half: blue went to kind-workload-1 and green to kind-workload-2; then
    a hog pod takes most of kind-workload-2 and green's frontend is scaled to 5. Green no longer fits where it
    is and moves, whole, to kind-workload-1; blue stays."""

    def app(color: str, suffix: str, frontend_replicas: int) -> list[Doc]:
        labels = {"color": color, "microServicesDemo": "yes"}
        return [
            workload(f"frontend{suffix}", labels, replicas=frontend_replicas, cpu="300m"),
            workload(f"cartservice{suffix}", labels, cpu="200m"),
            workload(f"redis-cart{suffix}", labels, cpu="100m"),
            service(f"frontend{suffix}", labels),
        ]

    policy = schedule_policy(
        "demo-policy",
        {
            "namespaceSelector": in_namespace("microsvc-demo"),
            "groupBy": {"labelKey": "color"},
            "resourceSelectors": {"labelSelectors": [{"matchLabels": {"microServicesDemo": "yes"}}]},
        },
    )
    before = [*kind_clusters("4", "4"), policy, *app("blue", "", 1), *app("green", "-2", 1)]
    hogged = nova_cluster("kind-workload-2", "4")
    hogged["status"]["availableResources"] = {"kind-workload-2-control-plane": {"cpu": "1", "memory": "32Gi"}}
    after = [
        nova_cluster("kind-workload-1", "4"),
        hogged,
        policy,
        *app("blue", "", 1),
        *app("green", "-2", 5),
    ]

    def check(render: Render) -> None:
        assert render.group("demo-policy-4f068569")["clusters"] == ["kind-workload-1"]
        green = render.group("demo-policy-f73297b2")
        assert green["clusters"] == ["kind-workload-1"]
        assert {item["name"] for item in green["objects"]} == {"frontend-2", "cartservice-2", "redis-cart-2"}
        assert (
            render.manifest("kind-workload-1", "microsvc-demo/deployment-frontend-2.yaml")["spec"]["replicas"]
            == 5
        )

    return Tutorial(after, check, namespace="microsvc-demo", before=before)


def ferretdb_disaster_recovery() -> Tutorial:
    """FerretDB on Percona, disaster recovery: FerretDB is duplicated to both clusters, each copy pointed at
    its own cluster's database by an override of ``spec.template.spec.containers[0].env[0].value`` (an
    override naming the namespace); the databases go one per cluster."""
    uri = "spec.template.spec.containers[0].env[0].value"
    overrides = [
        {
            "topologyValue": cluster,
            "resources": [
                {
                    "kind": "Deployment",
                    "apiVersion": "apps/v1",
                    "name": "ferretdb",
                    "namespace": "default",
                    "override": [
                        {
                            "fieldPath": uri,
                            "value": {"staticValue": f"postgres://{db}-ha.psql-operator.svc:5432/zoo"},
                        }
                    ],
                }
            ],
        }
        for cluster, db in (("kind-workload-1", "cluster1"), ("kind-workload-2", "cluster2"))
    ]
    ferretdb = workload("ferretdb", {"app": "ferretdb"}, replicas=2, namespace="default")
    ferretdb["spec"]["template"]["spec"]["containers"][0]["env"] = [
        {"name": "FERRETDB_POSTGRESQL_URL", "value": "unset"}
    ]

    def database_policy(number: int) -> Doc:
        return schedule_policy(
            f"psql-cluster-{number}-ferretdb",
            {
                "namespaceSelector": in_namespace("default"),
                "clusterSelector": {
                    "matchLabels": {"kubernetes.io/metadata.name": f"kind-workload-{number}"}
                },
                "resourceSelectors": {
                    "labelSelectors": [{"matchLabels": {"psql-cluster": f"cluster-{number}"}}]
                },
            },
        )

    documents = [
        *kind_clusters(),
        schedule_policy(
            "spread-ferretdb",
            {
                "namespaceSelector": {
                    "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "Exists"}]
                },
                "resourceSelectors": {"labelSelectors": [{"matchLabels": {"app": "ferretdb"}}]},
                "groupBy": {"labelKey": "app"},
                "clusterSelector": by_name("kind-workload-1", "kind-workload-2"),
                "spreadConstraints": {
                    "spreadMode": "Duplicate",
                    "topologyKey": "kubernetes.io/metadata.name",
                    "overrides": overrides,
                },
            },
        ),
        database_policy(1),
        database_policy(2),
        ferretdb,
        service("ferretdb", {"app": "ferretdb"}, namespace="default"),
        workload("haproxy-1", {"psql-cluster": "cluster-1"}, namespace="default"),
        workload("haproxy-2", {"psql-cluster": "cluster-2"}, namespace="default"),
    ]

    def check(render: Render) -> None:
        assert render.replicas_of("ferretdb") == {"kind-workload-1": 2, "kind-workload-2": 2}
        for number in (1, 2):
            copy = render.manifest(f"kind-workload-{number}", "default/deployment-ferretdb.yaml")
            env = copy["spec"]["template"]["spec"]["containers"][0]["env"][0]
            assert env == {
                "name": "FERRETDB_POSTGRESQL_URL",
                "value": f"postgres://cluster{number}-ha.psql-operator.svc:5432/zoo",
            }
            assert render.clusters_of(f"haproxy-{number}") == [f"kind-workload-{number}"]
        assert render.clusters_of("ferretdb") == ["kind-workload-1", "kind-workload-2"]

    return Tutorial(documents, check)


def spread_rebalance() -> Tutorial:
    """Spread tutorial, last step: the equal-split policy is replaced by the 20/80 one and the running 5 + 5
    re-balance to 2 + 8 (Nova "will always re-balance the split"); stickiness does not hold a spread back."""
    tutorial = spread_percentage()

    def check(render: Render) -> None:
        assert render.replicas_of("nginx2") == {"kind-workload-1": 2, "kind-workload-2": 8}
        assert render.manifest("kind-workload-1", "default/deployment-nginx2.yaml")["spec"]["replicas"] == 2

    return Tutorial(tutorial.documents, check, before=spread_divide_equal().documents)


def standby_spread_wakes_both() -> Tutorial:
    """Just-in-time standby, delete/recreate mode: both clusters are in standby and report ``Ready=False``;
    a spread busybox (2 replicas) still goes to both, one replica each (placing there wakes them)."""
    labels = {"app": "busybox", "group-policy": "nginx-spread"}
    documents = [
        nova_cluster("kind-workload-1", standby=True, ready="False"),
        nova_cluster("kind-workload-2", standby=True, ready="False"),
        spread_divide_equal().documents[2],  # the spread tutorial's policy
        workload("busybox", labels, replicas=2, namespace="default"),
    ]

    def check(render: Render) -> None:
        assert render.replicas_of("busybox") == {"kind-workload-1": 1, "kind-workload-2": 1}

    return Tutorial(documents, check)


def standby_create_cluster() -> Tutorial:
    """Just-in-time clusters, create/clone: a policy names kind-workload-3, which does not exist; Nova
    clones a cluster for it. A renderer cannot create clusters: the pod is unscheduled, with its reason,
    until the cluster exists (docs/migrating-from-nova.md)."""
    documents = [
        *kind_clusters(),
        namespace_policy().documents[3],  # trial-policy-customer1: namespace-customer3 → kind-workload-3
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "namespace-customer3"}},
        plain("Pod", "pod-customer3", {}, namespace="namespace-customer3"),
    ]
    documents[-1]["spec"] = {
        "containers": [{"name": "busybox", "image": "busybox", "command": ["sleep", "3600"]}]
    }

    def check(render: Render) -> None:
        unscheduled = {item["name"]: item for item in render.placement["unscheduled"]}
        # The Namespace is cluster-scoped, and the policy's empty selector matches it too.
        assert sorted(unscheduled) == ["namespace-customer3", "pod-customer3"]
        assert unscheduled["pod-customer3"]["policy"] == "trial-policy-customer1"
        assert not list(render.root.glob("clusters/*/namespace-customer3/*"))

    return Tutorial(documents, check)


TUTORIALS: dict[str, Callable[[], Tutorial]] = {
    "policy-based": policy_based,
    "annotation-based": annotation_based,
    "group-scheduling": group_scheduling,
    "capacity-based": capacity_based,
    "capacity-based-reason": capacity_based_reason,
    "spread-divide-equal": spread_divide_equal,
    "spread-percentage": spread_percentage,
    "spread-rebalance": spread_rebalance,
    "spread-duplicate-overrides": spread_duplicate_overrides,
    "fill-and-spill": fill_and_spill,
    "standby-cluster": standby_cluster,
    "standby-spread-wakes-both": standby_spread_wakes_both,
    "standby-create-cluster": standby_create_cluster,
    "custom-resources": custom_resources,
    "v1.5-map-split": v15_map_split,
    "v1.3-OrderedClusterSelector": v13_ordered_selector_capitalised,
    "argo-rollouts": argo_rollouts,
    "helm-node-selector": helm_node_selector,
    "policy-updated": policy_updated,
    "namespace-policy": namespace_policy,
    "percona-disaster-recovery": percona_disaster_recovery,
    "kyverno-policies": kyverno_policies,
    "dra-gpu": dra_gpu,
    "v1.4-configuration-example": v14_configuration_example,
    "v1.3-fill-and-spill-by-provider": v13_fill_and_spill_by_provider,
    "external-orchestrator": external_orchestrator,
    "smart-scheduling-growth": smart_scheduling_growth,
    "ferretdb-disaster-recovery": ferretdb_disaster_recovery,
}


def cases() -> list[Any]:
    params = []
    for name, build in TUTORIALS.items():
        tutorial = build()
        marks = [pytest.mark.xfail(strict=True, reason=tutorial.xfail)] if tutorial.xfail else []
        params.append(pytest.param(tutorial, id=name, marks=marks))
    return params


def render_into(tmp_path: Path, name: str, documents: list[Doc], tutorial: Tutorial, *extra: str) -> Path:
    source = tmp_path / name
    source.mkdir()
    (source / "tutorial.yaml").write_text(yaml.safe_dump_all(documents, sort_keys=False))
    output = tmp_path / f"{name}-out"
    args = ["render", str(source), "-o", str(output), *extra]
    if tutorial.namespace:
        args += ["-n", tutorial.namespace]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return output


@pytest.mark.parametrize("tutorial", cases())
def test_nova_tutorial_renders_as_the_tutorial_says(tutorial: Tutorial, tmp_path: Path) -> None:
    previous: tuple[str, ...] = ()
    if tutorial.before is not None:
        previous = ("--previous", str(render_into(tmp_path, "before", tutorial.before, tutorial)))
    output = render_into(tmp_path, "src", tutorial.documents, tutorial, *previous, *tutorial.options)
    tutorial.check(Render(output, placements.read(output)))


@pytest.mark.parametrize(
    ("replicas", "split", "floored", "ours"),
    [
        (5, [70, 30], [3, 1], [4, 1]),
        (3, [70, 30], [2, 0], [2, 1]),
        (1, [70, 30], [0, 0], [1, 0]),
        (7, [50, 50], [3, 3], [4, 3]),
        (10, [33, 33, 34], [3, 3, 3], [3, 3, 4]),
        (10, [20, 80], [2, 8], [2, 8]),
    ],
)
def test_divide_keeps_the_total_where_old_nova_floored(
    replicas: int, split: list[int], floored: list[int], ours: list[int]
) -> None:
    """The table of docs/migrating-from-nova.md: old Nova's floor rounding next to our quota method."""
    assert [replicas * weight // 100 for weight in split] == floored
    assert divide(replicas, split) == ours
    assert sum(ours) == replicas
