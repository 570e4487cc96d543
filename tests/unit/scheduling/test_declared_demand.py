"""Demand of pod controllers whose pods live elsewhere than spec.template: declared with JSONPath.

Behaviours covered:
- built-in shapes: RayCluster (head group: one pod; each workerGroupSpecs[*]: replicas × template, absent
  replicas → 1) and PyTorchJob (each pytorchReplicaSpecs.*: replicas × template);
- a source's PodControllerShape (LeaderWorkerSet-like) gives the declared pods; a declared kind is not
  divided (``replicas=`` does not apply);
- a bad count at a declared path is a DemandError naming the path.
"""

from __future__ import annotations

from typing import Any

import pytest

from nova_gitops.api import podshapes
from nova_gitops.scheduling import demand


def template(cpu: str) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}


RAY = {
    "apiVersion": "ray.io/v1",
    "kind": "RayCluster",
    "metadata": {"name": "ray"},
    "spec": {
        "headGroupSpec": {"rayStartParams": {}, "template": template("2")},
        "workerGroupSpecs": [
            {"groupName": "small", "replicas": 3, "template": template("1")},
            {"groupName": "gpu", "replicas": 2, "template": template("4")},
            {"groupName": "default", "template": template("500m")},
        ],
    },
}

PYTORCH = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "PyTorchJob",
    "metadata": {"name": "train"},
    "spec": {
        "pytorchReplicaSpecs": {
            "Master": {"replicas": 1, "template": template("1")},
            "Worker": {"replicas": 4, "template": template("2")},
        }
    },
}

LWS_SHAPE = podshapes.PodControllerShape(
    "leaderworkerset.x-k8s.io",
    "LeaderWorkerSet",
    (
        podshapes.PodSet(
            "leaders", replicas="spec.replicas", template="spec.leaderWorkerTemplate.leaderTemplate"
        ),
        podshapes.PodSet(
            "workers", replicas="spec.replicas", template="$.spec.leaderWorkerTemplate.workerTemplate"
        ),
    ),
)

LWS = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": {"name": "vllm"},
    "spec": {
        "replicas": 2,
        "leaderWorkerTemplate": {"size": 2, "leaderTemplate": template("1"), "workerTemplate": template("3")},
    },
}


def counted(pods: tuple[demand.PodDemand, ...]) -> list[tuple[int, int]]:
    return [(pod.shape.requests["cpu"], pod.count) for pod in pods]


@pytest.mark.parametrize(
    ("body", "shapes", "expected"),
    [
        (RAY, podshapes.BUILTIN_SHAPES, [(2000, 1), (1000, 3), (4000, 2), (500, 1)]),
        (PYTORCH, podshapes.BUILTIN_SHAPES, [(1000, 1), (2000, 4)]),
        (LWS, {("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): LWS_SHAPE}, [(1000, 2), (3000, 2)]),
        (LWS, podshapes.BUILTIN_SHAPES, []),  # undeclared: no pods known
        (RAY, {}, []),
    ],
)
def test_declared_pod_sets_give_their_pods(
    body: dict[str, Any], shapes: Any, expected: list[tuple[int, int]]
) -> None:
    assert counted(demand.pod_demands(body, shapes=shapes)) == expected


def test_a_declared_kind_is_not_divided() -> None:
    assert counted(demand.pod_demands(PYTORCH, replicas=1)) == [(1000, 1), (2000, 4)]


def test_a_bad_count_at_a_declared_path_names_it() -> None:
    body = {
        **RAY,
        "spec": {**RAY["spec"], "workerGroupSpecs": [{"replicas": "many", "template": template("1")}]},
    }
    with pytest.raises(demand.DemandError, match=r"spec\.workerGroupSpecs\.\[0\]\.replicas"):
        demand.pod_demands(body)


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (RAY, None),  # built-in shape
        (LWS, "declare where its pods live"),  # pod templates, no shape
        ({"apiVersion": "v1", "kind": "PodTemplate", "template": template("1")}, None),  # makes no pods
        ({"apiVersion": "v1", "kind": "ConfigMap", "data": {}}, None),
        (
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "spec": {**template("1")["spec"], "resourceClaims": [{"name": "g"}]},
            },
            "resourceClaims (DRA)",
        ),
    ],
)
def test_when_demand_is_unknown(body: dict[str, Any], why: str | None) -> None:
    reason = demand.unknown_reason(body)
    assert reason is None if why is None else why in (reason or "")
