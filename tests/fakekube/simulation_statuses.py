"""Workload statuses as the real controllers write them, computed from the pods that exist.

One function per kind. The fields are the ones `kubectl get`, health checks and our agent read; the
Deployment's conditions use kube-controller-manager's reasons and messages (`MinimumReplicasAvailable`,
`NewReplicaSetAvailable`, `ProgressDeadlineExceeded`, ...) so that reports read like a real cluster's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from tests.fakekube.simulation_workloads import Body, condition, is_finished, is_ready

REACHED = "Reached expected number of succeeded pods"
BACKOFF_LIMIT = "Job has reached the specified backoff limit"


def _generation(body: Mapping[str, Any]) -> dict[str, int]:
    generation = body.get("metadata", {}).get("generation")
    return {"observedGeneration": generation} if isinstance(generation, int) else {}


def _live(pods: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [pod for pod in pods if not is_finished(pod)]


def replicaset_status(replicaset: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> Body:
    live = _live(pods)
    ready = sum(1 for pod in live if is_ready(pod))
    return {
        "replicas": len(live),
        "fullyLabeledReplicas": len(live),
        "readyReplicas": ready,
        "availableReplicas": ready,
        **_generation(replicaset),
    }


def max_unavailable(deployment: Mapping[str, Any]) -> int:
    """strategy.rollingUpdate.maxUnavailable as a number of pods (percentages round down); 0 for Recreate."""
    spec = deployment.get("spec") or {}
    replicas = int(spec.get("replicas", 1))
    strategy = spec.get("strategy") or {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return 0
    value = (strategy.get("rollingUpdate") or {}).get("maxUnavailable", "25%")
    if isinstance(value, str) and value.endswith("%"):
        return replicas * int(value[:-1]) // 100
    return int(value)


def deployment_status(
    deployment: Mapping[str, Any],
    new_replicaset: Mapping[str, Any],
    replicasets: Sequence[Mapping[str, Any]],
    pods_by_replicaset: Mapping[str, Sequence[Mapping[str, Any]]],
    now: datetime,
    stamp: str,
) -> Body:
    """The Deployment's counts and its Available and Progressing conditions.

    Progressing turns False with ProgressDeadlineExceeded when the rollout has made no progress for
    spec.progressDeadlineSeconds (by the caller's clock), as the deployment controller does.
    """
    spec = deployment.get("spec") or {}
    wanted = int(spec.get("replicas", 1))
    name = new_replicaset["metadata"]["name"]
    uid = new_replicaset["metadata"].get("uid", "")
    all_pods = [pod for rs in replicasets for pod in _live(pods_by_replicaset.get(rs["metadata"]["uid"], []))]
    updated = _live(pods_by_replicaset.get(uid, []))
    available = sum(1 for pod in all_pods if is_ready(pod))
    previous = (deployment.get("status") or {}).get("conditions") or []
    if available >= wanted - max_unavailable(deployment):
        available_condition = condition(
            "Available",
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.",
            stamp,
            previous,
            with_update_time=True,
        )
    else:
        available_condition = condition(
            "Available",
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
            stamp,
            previous,
            with_update_time=True,
        )
    complete = len(updated) == wanted == len(all_pods) and available == wanted
    if complete:
        progressing = condition(
            "Progressing",
            "True",
            "NewReplicaSetAvailable",
            f'ReplicaSet "{name}" has successfully progressed.',
            stamp,
            previous,
            with_update_time=True,
        )
    else:
        progressing = condition(
            "Progressing",
            "True",
            "ReplicaSetUpdated",
            f'ReplicaSet "{name}" is progressing.',
            stamp,
            previous,
            with_update_time=True,
        )
        old = next((c for c in previous if c.get("type") == "Progressing"), None)
        deadline = int(spec.get("progressDeadlineSeconds", 600))
        since = _parse(old.get("lastUpdateTime")) if old is not None else None
        if old is not None and old.get("reason") == "ProgressDeadlineExceeded":
            progressing = dict(old)
        elif old is not None and since is not None and (now - since).total_seconds() > deadline:
            progressing = condition(
                "Progressing",
                "False",
                "ProgressDeadlineExceeded",
                f'ReplicaSet "{name}" has timed out progressing.',
                stamp,
                previous,
                with_update_time=True,
            )
    status: Body = {
        **_generation(deployment),
        "replicas": len(all_pods),
        "updatedReplicas": len(updated),
        "readyReplicas": available,
        "availableReplicas": available,
    }
    if wanted - available > 0:
        status["unavailableReplicas"] = wanted - available
    status["conditions"] = [available_condition, progressing]
    return {key: value for key, value in status.items() if value != 0 or key == "observedGeneration"}


def _parse(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def statefulset_status(
    statefulset: Mapping[str, Any], pods: Sequence[Mapping[str, Any]], update_revision: str
) -> Body:
    live = _live(pods)
    ready = sum(1 for pod in live if is_ready(pod))
    updated = sum(
        1 for pod in live if pod["metadata"]["labels"].get("controller-revision-hash") == update_revision
    )
    wanted = int((statefulset.get("spec") or {}).get("replicas", 1))
    current_revision = (
        update_revision
        if updated == len(live) == wanted
        else ((statefulset.get("status") or {}).get("currentRevision") or update_revision)
    )
    return {
        **_generation(statefulset),
        "replicas": len(live),
        "readyReplicas": ready,
        "availableReplicas": ready,
        "currentReplicas": updated if current_revision == update_revision else len(live) - updated,
        "updatedReplicas": updated,
        "currentRevision": current_revision,
        "updateRevision": update_revision,
        "collisionCount": 0,
    }


def daemonset_status(daemonset: Mapping[str, Any], desired: int, pods: Sequence[Mapping[str, Any]]) -> Body:
    live = _live(pods)
    scheduled = [pod for pod in live if (pod.get("spec") or {}).get("nodeName")]
    ready = sum(1 for pod in live if is_ready(pod))
    status: Body = {
        **_generation(daemonset),
        "currentNumberScheduled": len(scheduled),
        "desiredNumberScheduled": desired,
        "numberMisscheduled": 0,
        "numberReady": ready,
        "numberAvailable": ready,
        "updatedNumberScheduled": len(scheduled),
    }
    if desired - ready > 0:
        status["numberUnavailable"] = desired - ready
    return status


def job_failed(job: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> bool:
    """More pods failed than ``spec.backoffLimit`` (default 6) allows: the Job has failed."""
    failed = sum(1 for pod in pods if (pod.get("status") or {}).get("phase") == "Failed")
    return failed > int((job.get("spec") or {}).get("backoffLimit", 6))


def job_status(job: Mapping[str, Any], pods: Sequence[Mapping[str, Any]], stamp: str) -> Body:
    previous_status = job.get("status") or {}
    completions = (job.get("spec") or {}).get("completions", 1)
    active = [pod for pod in pods if not is_finished(pod)]
    succeeded = sum(1 for pod in pods if (pod.get("status") or {}).get("phase") == "Succeeded")
    status: Body = {"startTime": previous_status.get("startTime", stamp)}
    if active:
        status["active"] = len(active)
    status["ready"] = sum(1 for pod in active if is_ready(pod))
    if succeeded:
        status["succeeded"] = succeeded
    failed = sum(1 for pod in pods if (pod.get("status") or {}).get("phase") == "Failed")
    if failed:
        status["failed"] = failed
    status["terminating"] = 0
    if job_failed(job, pods):
        previous = previous_status.get("conditions") or []
        status["conditions"] = [
            condition(kind, "True", "BackoffLimitExceeded", BACKOFF_LIMIT, stamp, previous)
            for kind in ("FailureTarget", "Failed")
        ]
        return status
    if isinstance(completions, int) and succeeded >= completions:
        previous = previous_status.get("conditions") or []
        status["completionTime"] = previous_status.get("completionTime", stamp)
        status["conditions"] = [
            condition(kind, "True", "CompletionsReached", REACHED, stamp, previous)
            for kind in ("SuccessCriteriaMet", "Complete")
        ]
    return status
