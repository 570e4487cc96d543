"""Small builders for test sources: clusters, policies and workloads as the YAML users write.

Tests go through the same path as users — YAML text → ``api.loading`` → ``api.inputs.build_source_set`` →
``scheduling.planning.plan`` — so they keep holding when internals change.
"""

from __future__ import annotations

from typing import Any

import yaml

from nova_gitops.api import inputs, loading
from nova_gitops.api.inputs import SourceSet
from nova_gitops.scheduling import planning
from nova_gitops.scheduling.planparts import GroupPlan
from nova_gitops.scheduling.plans import Plan, PlanSettings, PreviousPlacement


def cluster(
    name: str,
    *,
    nodes: dict[str, dict[str, Any]] | None = None,
    cpu: str = "4",
    memory: str = "16Gi",
    labels: dict[str, str] | None = None,
    ready: str | None = "True",
    standby: bool = False,
    autoscaled: bool = False,
    provider: str = "aws",
    region: str = "us-east-1",
    node_labels: dict[str, dict[str, str]] | None = None,
    node_taints: dict[str, list[dict[str, str]]] | None = None,
) -> dict[str, Any]:
    """A Cluster; by default one node ``<name>-n1`` with ``cpu``/``memory`` free."""
    nodes = nodes if nodes is not None else {f"{name}-n1": {"cpu": cpu, "memory": memory}}
    conditions = []
    if ready is not None:
        conditions.append({"type": "Ready", "status": ready})
    if standby:
        conditions.append({"type": "Standby", "status": "True"})
    status: dict[str, Any] = {
        "conditions": conditions,
        "capacityResources": nodes,
        "availableResources": nodes,
        "autoscaled": autoscaled,
    }
    if node_labels:
        status["nodeLabels"] = node_labels
    if node_taints:
        status["nodeTaints"] = node_taints
    return {
        "apiVersion": "cluster.elotl.co/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"name": name, "provider": provider, "region": region},
        "status": status,
    }


def policy(name: str, **spec: Any) -> dict[str, Any]:
    """A SchedulePolicy; ``spec`` keys are the camelCase fields (matchLabels etc. as plain dicts)."""
    spec.setdefault("resourceSelectors", {"labelSelectors": [{"matchLabels": {"app": "demo"}}]})
    return {
        "apiVersion": "policy.elotl.co/v1alpha1",
        "kind": "SchedulePolicy",
        "metadata": {"name": name},
        "spec": spec,
    }


def deployment(
    name: str,
    *,
    namespace: str = "demo",
    replicas: int = 1,
    cpu: str = "100m",
    memory: str = "64Mi",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    extra_resources: dict[str, Any] | None = None,
    pod_spec: dict[str, Any] | None = None,
) -> dict[str, Any]:
    requests: dict[str, Any] = {"cpu": cpu, "memory": memory}
    resources: dict[str, Any] = {"requests": requests}
    if extra_resources:
        resources["limits"] = extra_resources
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels or {"app": "demo"}}
    if annotations:
        metadata["annotations"] = annotations
    spec = {
        "containers": [{"name": "main", "image": "nginx:1.27", "resources": resources}],
        **(pod_spec or {}),
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata,
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
        },
    }


def config_map(name: str, *, namespace: str = "demo", labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {"app": "demo"}},
        "data": {"key": "value"},
    }


def namespace(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if labels:
        metadata["labels"] = labels
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata}


def source_set(*documents: dict[str, Any], file_name: str = "source.yaml") -> SourceSet:
    text = yaml.dump_all(documents, Dumper=yaml.CSafeDumper, sort_keys=False)
    loaded, problems = loading.load_documents(file_name, text)
    assert not problems, problems
    return inputs.build_source_set(loaded, texts={file_name: text})


def plan(
    *documents: dict[str, Any],
    previous: dict[str, tuple[str, ...]] | None = None,
    settings: PlanSettings | None = None,
    **options: Any,
) -> Plan:
    return planning.plan(
        source_set(*documents), previous=PreviousPlacement(previous or {}), settings=settings, **options
    )


def group_of(result: Plan, object_name: str) -> GroupPlan:
    """The group holding the object named ``object_name`` (any kind)."""
    for group in result.groups:
        if any(item.manifest.name == object_name for item in group.objects):
            return group
    raise AssertionError(f"{object_name} is in no group: {[g.name for g in result.groups]}")


def placed_on(result: Plan, object_name: str) -> dict[str, int | None]:
    """cluster → replicas (None: unchanged) of the object named ``object_name``."""
    group = group_of(result, object_name)
    item = next(item for item in group.objects if item.manifest.name == object_name)
    return {copy.cluster: copy.replicas for copy in item.copies}
