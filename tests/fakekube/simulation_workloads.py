"""What the simulated cluster's controllers and kubelet write: pods from templates, and statuses.

Pure functions, one per thing a real controller computes, so each rule is readable and testable on its own:
the pods a workload creates (labels, ownerReferences, names), a pod's status once it is bound and "running"
(kwok-style: every container starts and is Ready at once) or while no node fits, and the status of each
workload kind with the fields and conditions that kubectl, health checks and our agent read (Deployment
`Available`/`Progressing` with the real reasons and messages, `observedGeneration` so a status is never
mistaken for an older spec's). Timestamps come from the caller's clock; a condition keeps its
`lastTransitionTime` while its status does not change, so repeated reconciles reach a fixed point.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

Body = dict[str, Any]

POD_TEMPLATE_HASH = "pod-template-hash"
CONTROLLER_REVISION_HASH = "controller-revision-hash"
STATEFULSET_POD_NAME = "statefulset.kubernetes.io/pod-name"
JOB_NAME = "job-name"
JOB_CONTROLLER_UID = "controller-uid"


def template_hash(template: Mapping[str, Any]) -> str:
    """A stable short hash of a pod template (the real one is an FNV hash; any stable one will do here)."""
    encoded = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(encoded).hexdigest()[:10]


def short_suffix(seed: str) -> str:
    """Five characters from the alphabet kube uses for generated names, derived from seed (deterministic)."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    number = int(hashlib.sha256(seed.encode()).hexdigest(), 16)
    return "".join(alphabet[(number // len(alphabet) ** i) % len(alphabet)] for i in range(5))


def owner_reference(owner: Mapping[str, Any]) -> Body:
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def controller_uid(body: Mapping[str, Any]) -> str | None:
    for reference in body.get("metadata", {}).get("ownerReferences") or []:
        if reference.get("controller"):
            return str(reference.get("uid"))
    return None


def from_template(owner: Mapping[str, Any], name: str, extra_labels: Mapping[str, str]) -> Body:
    """A pod (or, for a Deployment, a ReplicaSet's pod) as its controller creates it from the template."""
    template = owner["spec"].get("template") or {}
    metadata = template.get("metadata") or {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": owner["metadata"]["namespace"],
            "labels": {**(metadata.get("labels") or {}), **extra_labels},
            **({"annotations": dict(metadata["annotations"])} if metadata.get("annotations") else {}),
            "ownerReferences": [owner_reference(owner)],
        },
        "spec": copy.deepcopy(template.get("spec") or {}),
    }


REVISION = "deployment.kubernetes.io/revision"


def revision_of(body: Mapping[str, Any]) -> int:
    """The ``deployment.kubernetes.io/revision`` annotation as a number (0 when absent)."""
    text = str((body.get("metadata", {}).get("annotations") or {}).get(REVISION, "0"))
    return int(text) if text.isdigit() else 0


def replicaset_for(deployment: Mapping[str, Any], replicas: int, revision: int = 1) -> Body:
    spec = deployment["spec"]
    hashed = template_hash(spec.get("template") or {})
    template = copy.deepcopy(spec.get("template") or {})
    template.setdefault("metadata", {}).setdefault("labels", {})[POD_TEMPLATE_HASH] = hashed
    selector = copy.deepcopy(spec.get("selector") or {})
    selector.setdefault("matchLabels", {})[POD_TEMPLATE_HASH] = hashed
    labels = {**(template["metadata"]["labels"])}
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"{deployment['metadata']['name']}-{hashed}",
            "namespace": deployment["metadata"]["namespace"],
            "labels": labels,
            "annotations": {REVISION: str(revision)},
            "ownerReferences": [owner_reference(deployment)],
        },
        "spec": {"replicas": replicas, "selector": selector, "template": template},
    }


# ----- conditions and pods


def condition(
    condition_type: str,
    status: str,
    reason: str,
    message: str,
    now: str,
    previous: Sequence[Mapping[str, Any]] = (),
    with_update_time: bool = False,
) -> Body:
    """A condition that keeps its transition (and update) time while nothing about it changes."""
    old = next((c for c in previous if c.get("type") == condition_type), None)
    same_status = old is not None and old.get("status") == status
    same_all = (
        same_status and old is not None and (old.get("reason"), old.get("message")) == (reason, message)
    )
    made: Body = {"type": condition_type, "status": status}
    if with_update_time:
        made["lastUpdateTime"] = old.get("lastUpdateTime", now) if same_all and old is not None else now
    made["lastTransitionTime"] = (
        old.get("lastTransitionTime", now) if same_status and old is not None else now
    )
    made["reason"] = reason
    if message:
        made["message"] = message
    return made


def _qos_class(pod: Mapping[str, Any]) -> str:
    containers = (pod.get("spec") or {}).get("containers") or []
    resources = [container.get("resources") or {} for container in containers]
    if not any(r.get("requests") or r.get("limits") for r in resources):
        return "BestEffort"
    guaranteed = all(
        r.get("limits") and all(r.get("limits", {}).get(k) == v for k, v in (r.get("requests") or {}).items())
        for r in resources
    )
    return "Guaranteed" if guaranteed else "Burstable"


def pod_ip(seed: str) -> str:
    number = int(hashlib.sha256(seed.encode()).hexdigest()[:4], 16)
    return f"10.244.{number // 256}.{number % 256 or 1}"


def running_status(pod: Mapping[str, Any], node_ip: str, now: str) -> Body:
    """kwok's kubelet: the pod starts at once and every container is ready."""
    previous = (pod.get("status") or {}).get("conditions") or []
    containers = (pod.get("spec") or {}).get("containers") or []
    started = (pod.get("status") or {}).get("startTime", now)
    return {
        "phase": "Running",
        "conditions": [
            condition(kind, "True", "", "", now, previous)
            for kind in (
                "PodReadyToStartContainers",
                "Initialized",
                "Ready",
                "ContainersReady",
                "PodScheduled",
            )
        ],
        "hostIP": node_ip,
        "hostIPs": [{"ip": node_ip}],
        "podIP": pod_ip(f"{pod['metadata'].get('namespace')}/{pod['metadata']['name']}"),
        "startTime": started,
        "containerStatuses": [
            {
                "name": container.get("name", ""),
                "image": container.get("image", ""),
                "imageID": "",
                "ready": True,
                "started": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": started}},
            }
            for container in containers
        ],
        "qosClass": _qos_class(pod),
    }


def succeeded_status(pod: Mapping[str, Any], now: str) -> Body:
    previous = (pod.get("status") or {}).get("conditions") or []
    status = dict(pod.get("status") or {})
    status["phase"] = "Succeeded"
    status["conditions"] = [
        condition("Ready", "False", "PodCompleted", "", now, previous),
        condition("ContainersReady", "False", "PodCompleted", "", now, previous),
        condition("PodScheduled", "True", "", "", now, previous),
    ]
    status["containerStatuses"] = [
        {
            **container,
            "ready": False,
            "started": False,
            "state": {"terminated": {"exitCode": 0, "reason": "Completed", "finishedAt": now}},
        }
        for container in status.get("containerStatuses") or []
    ]
    return status


def unschedulable_status(pod: Mapping[str, Any], message: str, now: str) -> Body:
    """kube-scheduler's verdict on a pod no node fits: Pending, PodScheduled=False, reason Unschedulable."""
    previous = (pod.get("status") or {}).get("conditions") or []
    return {
        "phase": "Pending",
        "conditions": [condition("PodScheduled", "False", "Unschedulable", message, now, previous)],
        "qosClass": _qos_class(pod),
    }


def is_ready(pod: Mapping[str, Any]) -> bool:
    status = pod.get("status") or {}
    return status.get("phase") == "Running" and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or []
    )


def is_finished(pod: Mapping[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
