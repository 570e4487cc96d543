"""Views of a plan as Kubernetes-shaped objects and table rows: what ``get`` prints and what the controller
writes back to a Nova control plane (ScheduleGroups, as Nova shapes them)."""

from __future__ import annotations

from typing import Any

from nova_gitops.api import labels, quantities
from nova_gitops.api.clusters import Cluster
from nova_gitops.scheduling.planparts import GroupPlan
from nova_gitops.scheduling.plans import Plan


def schedule_group(group: GroupPlan) -> dict[str, Any]:
    """A ``ScheduleGroup`` object (policy.elotl.co/v1alpha1) for one group of the plan."""
    group_labels: dict[str, str] = {}
    if group.group_by is not None:
        group_labels[group.group_by[0]] = group.group_by[1]
    if group.policy is not None:
        group_labels[labels.MATCHING_POLICY] = group.policy
    metadata: dict[str, Any] = {"name": group.name, "labels": group_labels}
    if len(group.clusters) == 1:
        group_labels[labels.TARGET_CLUSTER] = group.clusters[0]
    elif group.clusters:  # a label value cannot hold a list
        metadata["annotations"] = {labels.TARGET_CLUSTERS: ",".join(group.clusters)}
    return {
        "apiVersion": labels.POLICY_API_VERSION,
        "kind": "ScheduleGroup",
        "metadata": metadata,
        "policy": {"name": group.policy},
        "objectRefs": [
            {
                "apiVersion": plan.manifest.api_version,
                "kind": plan.manifest.kind,
                "namespace": plan.manifest.namespace,
                "name": plan.manifest.name,
            }
            for plan in group.objects
        ],
        "scheduled": group.status != "unschedulable",
        "status": {
            "mode": group.mode,
            "phase": group.status,
            "clusters": list(group.clusters),
            "reason": group.reason,
        },
    }


def schedule_group_row(group: GroupPlan) -> list[str]:
    return [
        group.name,
        ",".join(group.clusters) or "<none>",
        group.policy or "<annotation>",
        group.mode,
        group.status,
        str(len(group.objects)),
    ]


SCHEDULE_GROUP_HEADERS = ["NAME", "NOVA WORKLOAD CLUSTER", "NOVA POLICY NAME", "MODE", "STATUS", "OBJECTS"]


def placement_items(plan: Plan) -> list[dict[str, Any]]:
    """One item per source object: where its copies went and with how many replicas."""
    items = []
    for group in plan.groups:
        for object_plan in group.objects:
            manifest = object_plan.manifest
            items.append(
                {
                    **_identity(manifest.api_version, manifest.kind, manifest.namespace, manifest.name),
                    "group": group.name,
                    "policy": group.policy,
                    "status": group.status,
                    "clusters": [copy.cluster for copy in object_plan.copies],
                    "replicas": {
                        copy.cluster: copy.replicas
                        for copy in object_plan.copies
                        if copy.replicas is not None
                    },
                }
            )
    placed = {(item["kind"], item.get("namespace", ""), item["name"]) for item in items}
    for entry in plan.unscheduled:
        if (entry.key.kind, entry.key.namespace, entry.key.name) in placed:
            continue
        items.append(
            {
                **_identity(entry.api_version, entry.key.kind, entry.key.namespace, entry.key.name),
                "group": None,
                "policy": entry.policy,
                "status": "unschedulable",
                "clusters": [],
                "replicas": {},
                "reason": entry.reason,
            }
        )
    return sorted(items, key=lambda item: (item["kind"], item.get("namespace", ""), item["name"]))


def _identity(api_version: str, kind: str, namespace: str, name: str) -> dict[str, Any]:
    """apiVersion, kind, namespace and name; a cluster-scoped object has no namespace key, as in
    placement.yaml, so ``-o yaml`` does not print ``namespace: ''``."""
    identity: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    if namespace:
        identity["namespace"] = namespace
    identity["name"] = name
    return identity


PLACEMENT_HEADERS = ["KIND", "NAMESPACE", "NAME", "GROUP", "CLUSTERS", "STATUS"]


def placement_row(item: dict[str, Any]) -> list[str]:
    replicas = item["replicas"]
    clusters = ",".join(
        f"{cluster}={replicas[cluster]}" if cluster in replicas else cluster for cluster in item["clusters"]
    )
    return [
        item["kind"],
        item.get("namespace", ""),
        item["name"],
        item["group"] or "<none>",
        clusters or "<none>",
        item["status"],
    ]


# Nova's own columns first, in ``kubectl get clusters`` order, then what nova-gitops adds.
CLUSTER_HEADERS = [
    "NAME",
    "K8S-VERSION",
    "K8S-CLUSTER",
    "REGION",
    "ZONE",
    "READY",
    "IDLE",
    "STANDBY",
    "PROVIDER",
    "AUTOSCALED",
    "CORDONED",
    "NODES",
    "CPU FREE/ALLOC",
    "MEMORY FREE/ALLOC",
    "GPU FREE/ALLOC",
]


def _free_of(cluster: Cluster, resource: str) -> str:
    allocatable = sum(node.allocatable.get(resource, 0) for node in cluster.nodes)
    available = sum(node.available.get(resource, 0) for node in cluster.nodes)
    if not allocatable:
        return "-"
    free, total = (quantities.format_quantity(resource, amount) for amount in (available, allocatable))
    return f"{free}/{total}"


def cluster_item(cluster: Cluster) -> dict[str, Any]:
    return {
        "name": cluster.name,
        "labels": dict(cluster.labels),
        "ready": cluster.ready,
        "idle": cluster.idle,
        "standby": cluster.standby,
        "autoscaled": cluster.autoscaled,
        "cordoned": cluster.cordoned,
        "nodes": [
            {
                "name": node.name,
                "allocatable": {
                    res: quantities.format_quantity(res, v) for res, v in node.allocatable.items()
                },
                "available": {res: quantities.format_quantity(res, v) for res, v in node.available.items()},
                "labels": dict(node.labels),
                "taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in node.taints],
            }
            for node in cluster.nodes
        ],
    }


def cluster_row(cluster: Cluster) -> list[str]:
    ready = {True: "True", False: "False", None: "Unknown"}[cluster.ready]
    idle = {True: "True", False: "False", None: "-"}[cluster.idle]
    gpu = next(
        (
            res
            for res in ("nvidia.com/gpu", "amd.com/gpu")
            if any(res in n.allocatable for n in cluster.nodes)
        ),
        "nvidia.com/gpu",
    )
    return [
        cluster.name,
        cluster.labels.get(labels.CLUSTER_VERSION, ""),
        cluster.kubernetes_cluster or cluster.name,  # K8S-CLUSTER: Nova's spec.kubernetescluster
        cluster.labels.get(labels.CLUSTER_REGION, ""),
        cluster.labels.get(labels.CLUSTER_ZONE, ""),
        ready,
        idle,  # Nova's Idle condition; "-" when the cluster reports none
        str(cluster.standby),
        cluster.labels.get(labels.CLUSTER_PROVIDER, ""),
        str(cluster.autoscaled),
        str(cluster.cordoned),  # label nova.elotl.co/cordoned (nova-gitops cordon)
        str(len(cluster.nodes)),
        _free_of(cluster, "cpu"),
        _free_of(cluster, "memory"),
        _free_of(cluster, gpu),
    ]
