"""Which stuck pods make a workload Degraded at once (nova_agent.crashlooping), on plain objects.

Behaviours covered:
- a Deployment: the pods of its newest ReplicaSet (the one whose template is the Deployment's, less
  ``pod-template-hash``) count; an old ReplicaSet's stuck pods do not; a new ReplicaSet's stuck pod makes
  it Degraded even when its status is healthy (old pods serving), naming the first pod by name, how many
  more, the container, the reason and the message;
- a StatefulSet: pods of ``updateRevision`` count, the current revision's do not, nor any while its status
  is stale;
- a DaemonSet: pods of its template generation count (both labels set by Kubernetes); without the
  annotation every pod it owns, once its status is current;
- ReplicaSets and Jobs: every pod they own; pods being deleted or finished, and pods nothing controls, do
  not count;
- a verdict saying the object is not at the synced revision is kept; no stuck pod keeps any verdict;
- a cluster without stuck pods costs no look at its ReplicaSets.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from nova_agent.crashlooping import current_stuck, index, judged
from nova_agent.health import Health

TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "app", "image": "a:2"}]}}
HEALTHY = Health(True, "Available", "MinimumReplicasAvailable")


def owner(kind: str, uid: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": kind, "name": uid, "uid": uid, "controller": True}


def pod(
    name: str, owner_uid: str | None, reason: str = "CrashLoopBackOff", **metadata: Any
) -> dict[str, Any]:
    waiting = {"reason": reason, "message": f"back-off 10s restarting failed container=app pod={name}"}
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "shop", **metadata},
        "status": {"phase": "Running", "containerStatuses": [{"name": "app", "state": {"waiting": waiting}}]},
    }
    if owner_uid is not None:
        body["metadata"]["ownerReferences"] = [owner("ReplicaSet", owner_uid)]
    return body


def workload(kind: str, uid: str, generation: int = 2, **more: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1" if kind == "Job" else "apps/v1",
        "kind": kind,
        "metadata": {"name": "web", "namespace": "shop", "uid": uid, "generation": generation},
        "spec": {"template": TEMPLATE},
        "status": {"observedGeneration": 2},
        **more,
    }


def replicaset(uid: str, image: str, template_hash: str) -> dict[str, Any]:
    template = {
        "metadata": {"labels": {"app": "web", "pod-template-hash": template_hash}},
        "spec": {"containers": [{"name": "app", "image": image}]},
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"web-{template_hash}",
            "uid": uid,
            "ownerReferences": [owner("Deployment", "d")],
        },
        "spec": {"template": template},
    }


def names(body: dict[str, Any], pods: list[dict[str, Any]], sets: list[dict[str, Any]]) -> list[str]:
    return [found.name for found in current_stuck(body, index(pods, sets))]


def test_only_the_newest_replicaset_of_a_deployment_counts() -> None:
    sets = [replicaset("rs-new", "a:2", "new"), replicaset("rs-old", "a:1", "old")]
    deployment = workload("Deployment", "d")
    assert names(deployment, [pod("web-old-1", "rs-old")], sets) == []
    assert names(deployment, [pod("web-new-2", "rs-new"), pod("web-new-1", "rs-new")], sets) == [
        "web-new-1",
        "web-new-2",
    ]


def test_a_new_replicasets_stuck_pod_degrades_a_deployment_still_available() -> None:
    sets = [replicaset("rs-new", "a:2", "new"), replicaset("rs-old", "a:1", "old")]
    stuck = index([pod("web-new-b", "rs-new"), pod("web-new-a", "rs-new"), pod("web-old", "rs-old")], sets)
    verdict = judged(HEALTHY, workload("Deployment", "d"), stuck)
    assert verdict == Health(
        False,
        "ContainersReady",
        "CrashLoopBackOff",
        "container app of pod web-new-a (and 1 more pod): "
        "back-off 10s restarting failed container=app pod=web-new-a",
    )


def test_a_deployment_whose_template_has_no_replicaset_yet_has_no_current_pods() -> None:
    sets = [replicaset("rs-old", "a:1", "old")]
    assert names(workload("Deployment", "d"), [pod("web-old", "rs-old")], sets) == []


def test_a_statefulset_counts_its_update_revision() -> None:
    status = {"observedGeneration": 2, "updateRevision": "web-2", "currentRevision": "web-1"}
    statefulset = workload("StatefulSet", "s", status=status)
    pods = [
        pod("web-0", "s", labels={"controller-revision-hash": "web-1"}),
        pod("web-1", "s", labels={"controller-revision-hash": "web-2"}),
    ]
    assert names(statefulset, pods, []) == ["web-1"]
    stale = workload("StatefulSet", "s", generation=3, status=status)
    assert names(stale, pods, []) == []


def test_a_daemonset_counts_its_template_generation() -> None:
    pods = [
        pod("agent-a", "ds", labels={"pod-template-generation": "1"}),
        pod("agent-b", "ds", labels={"pod-template-generation": "2"}),
    ]
    annotated = workload("DaemonSet", "ds")
    annotated["metadata"]["annotations"] = {"deprecated.daemonset.template.generation": "2"}
    assert names(annotated, pods, []) == ["agent-b"]
    assert names(workload("DaemonSet", "ds"), pods, []) == ["agent-a", "agent-b"]
    assert names(workload("DaemonSet", "ds", generation=3), pods, []) == []


def test_replicasets_and_jobs_count_every_live_pod_they_own() -> None:
    finished = pod("job-c", "j")
    finished["status"]["phase"] = "Failed"
    pods = [
        pod("job-a", "j", "ImagePullBackOff"),
        pod("job-b", "j", deletionTimestamp="2026-01-01T00:00:00Z"),
        finished,
        pod("bare", None),
    ]
    job = workload("Job", "j")
    assert names(job, pods, []) == ["job-a"]
    assert judged(Health(True, "Running", "JobActive"), job, index(pods, [])) == Health(
        False,
        "ContainersReady",
        "ImagePullBackOff",
        "container app of pod job-a: back-off 10s restarting failed container=app pod=job-a",
    )
    assert names(workload("ReplicaSet", "j"), pods, []) == ["job-a"]


def test_a_verdict_not_at_the_synced_revision_or_without_stuck_pods_is_kept() -> None:
    not_applied = Health(False, "Synced", "NotAppliedAtRevision", "revision 1 was not applied to it")
    stuck = index([pod("job-a", "j")], [])
    assert judged(not_applied, workload("Job", "j"), stuck) == not_applied
    assert judged(HEALTHY, workload("Job", "other"), stuck) == HEALTHY
    assert judged(None, workload("Job", "j"), stuck) is None


def test_a_cluster_without_stuck_pods_costs_no_look_at_replicasets() -> None:
    running = {**pod("web-1", "rs-new"), "status": {"phase": "Running"}}
    looked: list[str] = []

    def replicasets() -> Iterator[dict[str, Any]]:
        looked.append("replicasets")
        yield replicaset("rs-new", "a:2", "new")

    stuck = index([running], replicasets())
    assert looked == [] and stuck.by_owner == {}
    assert judged(HEALTHY, workload("Deployment", "d"), stuck) == HEALTHY
