"""Health per kind: Deployment (available, progressing, deadline exceeded, stale generation), StatefulSet,
DaemonSet, ReplicaSet, Job (complete, failed, running), Pod (running, pending unschedulable, crash loop; a
container or init container waiting in ImagePullBackOff, CreateContainerConfigError or ErrImagePull, named,
with the kubelet's message cut at 1,024 characters), PVC,
the generic Ready condition of custom resources, and no verdict for kinds without health (ConfigMap)."""

from __future__ import annotations

from typing import Any

import pytest

from nova_agent.health import Health, health_of


def obj(api_version: str, kind: str, spec: dict[str, Any] | None = None, **status: Any) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": "x", "namespace": "ns", "generation": 2},
        "spec": spec or {},
        "status": {"observedGeneration": 2, **status},
    }


def cond(type_: str, status: str, reason: str = "", message: str = "") -> dict[str, str]:
    return {"type": type_, "status": status, "reason": reason, "message": message}


CASES = [
    (
        obj("apps/v1", "Deployment", {"replicas": 2}, replicas=2, updatedReplicas=2, availableReplicas=2),
        Health(True, "Available", "MinimumReplicasAvailable"),
    ),
    (
        obj("apps/v1", "Deployment", {"replicas": 3}, updatedReplicas=3, availableReplicas=1),
        Health(False, "Available", "MinimumReplicasUnavailable", "1/3 available"),
    ),
    (  # mid-rollout as kube-apiserver v1.36 reports it: the new pod counted as updated while Pending, the
        # old one still available (a real cluster showed the agent calling this healthy)
        obj("apps/v1", "Deployment", {"replicas": 1}, replicas=2, updatedReplicas=1, availableReplicas=1),
        Health(False, "Progressing", "RolloutInProgress", "1 old replicas are pending termination"),
    ),
    (  # the old pods gone, the new ones not all available yet (maxUnavailable lets them go first)
        obj("apps/v1", "Deployment", {"replicas": 1}, replicas=2, updatedReplicas=2, availableReplicas=1),
        Health(False, "Progressing", "RolloutInProgress", "1 of 2 updated replicas are available"),
    ),
    (
        obj(
            "apps/v1",
            "Deployment",
            {"replicas": 1},
            conditions=[cond("Progressing", "False", "ProgressDeadlineExceeded", "took too long")],
        ),
        Health(False, "Progressing", "ProgressDeadlineExceeded", "took too long"),
    ),
    (
        {**obj("apps/v1", "Deployment", {"replicas": 1}), "status": {"observedGeneration": 1}},
        Health(
            False, "Progressing", "ObservedGenerationBehind", "the controller has not seen the latest spec"
        ),
    ),
    (
        obj(
            "apps/v1",
            "StatefulSet",
            {"replicas": 2},
            readyReplicas=2,
            currentRevision="a",
            updateRevision="a",
        ),
        Health(True, "Ready", "AllReplicasReady"),
    ),
    (
        obj("apps/v1", "StatefulSet", {"replicas": 2}, readyReplicas=1),
        Health(False, "Ready", "ReplicasNotReady", "1/2 ready"),
    ),
    (
        obj("apps/v1", "DaemonSet", desiredNumberScheduled=3, updatedNumberScheduled=3, numberReady=3),
        Health(True, "Ready", "AllPodsReady"),
    ),
    (
        obj("apps/v1", "DaemonSet", desiredNumberScheduled=3, updatedNumberScheduled=3, numberReady=2),
        Health(False, "Ready", "PodsNotReady", "2/3 ready"),
    ),
    (
        obj("apps/v1", "ReplicaSet", {"replicas": 1}, readyReplicas=1),
        Health(True, "Ready", "AllReplicasReady"),
    ),
    (
        obj("batch/v1", "Job", conditions=[cond("Complete", "True", "Completed")]),
        Health(True, "Complete", "Completed"),
    ),
    (
        obj("batch/v1", "Job", conditions=[cond("Failed", "True", "BackoffLimitExceeded", "gave up")]),
        Health(False, "Failed", "BackoffLimitExceeded", "gave up"),
    ),
    (obj("batch/v1", "Job", active=1), Health(True, "Running", "JobActive", "1 active")),
    (
        obj("v1", "Pod", phase="Running", conditions=[cond("Ready", "True")]),
        Health(True, "Ready", "PodRunning"),
    ),
    (
        obj(
            "v1",
            "Pod",
            phase="Pending",
            conditions=[cond("PodScheduled", "False", "Unschedulable", "0/3 nodes")],
        ),
        Health(False, "PodScheduled", "Unschedulable", "0/3 nodes"),
    ),
    (
        obj(
            "v1",
            "Pod",
            phase="Running",
            containerStatuses=[
                {"name": "app", "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "m"}}}
            ],
        ),
        Health(False, "ContainersReady", "CrashLoopBackOff", "container app: m"),
    ),
    (
        obj(
            "v1",
            "Pod",
            phase="Pending",
            conditions=[cond("Initialized", "False", "ContainersNotInitialized")],
            initContainerStatuses=[
                {"name": "migrate", "state": {"waiting": {"reason": "ImagePullBackOff", "message": "pull"}}}
            ],
            containerStatuses=[{"name": "app", "state": {"waiting": {"reason": "PodInitializing"}}}],
        ),
        Health(False, "ContainersReady", "ImagePullBackOff", "init container migrate: pull"),
    ),
    (
        obj(
            "v1",
            "Pod",
            phase="Pending",
            containerStatuses=[
                {"name": "app", "state": {"waiting": {"reason": "ContainerCreating"}}},
                {"name": "side", "state": {"waiting": {"reason": "CreateContainerConfigError"}}},
            ],
        ),
        Health(False, "ContainersReady", "CreateContainerConfigError", "container side"),
    ),
    (
        obj(
            "v1",
            "Pod",
            phase="Pending",
            containerStatuses=[
                {"name": "app", "state": {"waiting": {"reason": "ErrImagePull", "message": "x" * 5000}}}
            ],
        ),
        Health(False, "ContainersReady", "ErrImagePull", "container app: " + "x" * 1024 + "…"),
    ),
    (obj("v1", "PersistentVolumeClaim", phase="Bound"), Health(True, "Bound", "Bound")),
    (
        obj("v1", "PersistentVolumeClaim", phase="Pending"),
        Health(False, "Bound", "Pending", "the claim is not bound to a volume"),
    ),
    (
        obj("example.com/v1", "Database", conditions=[cond("Ready", "False", "Provisioning", "creating")]),
        Health(False, "Ready", "Provisioning", "creating"),
    ),
]


@pytest.mark.parametrize(
    ("body", "expected"), CASES, ids=[f"{b['kind']}-{i}" for i, (b, _) in enumerate(CASES)]
)
def test_health_names_condition_and_reason(body: dict[str, Any], expected: Health) -> None:
    assert health_of(body) == expected


def test_objects_without_health_have_no_verdict() -> None:
    assert health_of({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}) is None
