"""What the simulated cluster's kubelet writes for a bound pod: Running and Ready, or stuck, by image name.

A test asks for a pod that never gets going the way it would on a real node, by the image of one of its
containers (or init containers): an image whose name contains (case-insensitively) ``crashloop``,
``imagepullbackoff``, ``errimagepull``, ``createcontainerconfigerror`` or ``invalidimagename`` leaves that
container *waiting* with that reason (``CrashLoopBackOff``, ...) and the message a real kubelet writes. These
are the conventions of the stand-in kubelet for real API servers (``tests/realkube/kubelet.py``), so a test
that names such an image runs the same on the fake and on a real cluster.

The status has the shape a real kubelet gives it: a crash-looping container's pod is ``Running`` (its
container ran, and exited 1: ``lastState.terminated``) and not Ready; a pod with a container whose image
cannot be pulled, or that cannot be created, is ``Pending``; a failing init container leaves the pod
``Pending`` and not ``Initialized``, its app containers waiting in ``PodInitializing``. The restart count
does not grow (a real one does): each round writes the same status, so the simulation reaches its fixed
point.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from tests.fakekube import simulation_workloads as workloads

Body = dict[str, Any]

WAITING_BY_IMAGE: Final = (
    ("crashloop", "CrashLoopBackOff"),
    ("imagepullbackoff", "ImagePullBackOff"),
    ("errimagepull", "ErrImagePull"),
    ("createcontainerconfigerror", "CreateContainerConfigError"),
    ("invalidimagename", "InvalidImageName"),
)
"""(what the image name contains, the waiting reason its container is left in)."""


def waiting_reason(image: str) -> str | None:
    """The waiting reason an image name asks for (None: the container runs)."""
    lowered = image.lower()
    return next((reason for word, reason in WAITING_BY_IMAGE if word in lowered), None)


def _message(reason: str, container: Mapping[str, Any], pod: Mapping[str, Any]) -> str:
    """The kubelet's message for the reason (v1.36 wording)."""
    image, name = str(container.get("image", "")), str(container.get("name", ""))
    metadata = pod["metadata"]
    if reason == "CrashLoopBackOff":
        where = f"{metadata['name']}_{metadata.get('namespace', '')}({metadata.get('uid', '')})"
        return f"back-off 10s restarting failed container={name} pod={where}"
    if reason == "ImagePullBackOff":
        return f'Back-off pulling image "{image}"'
    if reason == "ErrImagePull":
        return (
            f'failed to pull and unpack image "{image}": failed to resolve reference "{image}": '
            f"{image}: not found"
        )
    if reason == "CreateContainerConfigError":
        return f'configmap "{name}-config" not found'
    return (
        f'Failed to apply default image tag "{image}": couldn\'t parse image reference "{image}": '
        "invalid reference format"
    )


def _waiting(container: Mapping[str, Any], pod: Mapping[str, Any], reason: str, started: str) -> Body:
    status: Body = {
        "name": container.get("name", ""),
        "image": container.get("image", ""),
        "imageID": "",
        "ready": False,
        "started": False,
        "restartCount": 1 if reason == "CrashLoopBackOff" else 0,
        "state": {"waiting": {"reason": reason, "message": _message(reason, container, pod)}},
    }
    if reason == "CrashLoopBackOff":
        status["lastState"] = {
            "terminated": {"exitCode": 1, "reason": "Error", "startedAt": started, "finishedAt": started}
        }
    return status


def _initializing(container: Mapping[str, Any]) -> Body:
    return {
        "name": container.get("name", ""),
        "image": container.get("image", ""),
        "imageID": "",
        "ready": False,
        "started": False,
        "restartCount": 0,
        "state": {"waiting": {"reason": "PodInitializing"}},
    }


def _completed_init(container: Mapping[str, Any], started: str) -> Body:
    return {
        "name": container.get("name", ""),
        "image": container.get("image", ""),
        "imageID": "",
        "ready": True,
        "started": False,
        "restartCount": 0,
        "state": {
            "terminated": {"exitCode": 0, "reason": "Completed", "startedAt": started, "finishedAt": started}
        },
    }


def stuck(pod: Mapping[str, Any]) -> bool:
    """Whether an image of the pod asks for a waiting container."""
    spec = pod.get("spec") or {}
    return any(
        waiting_reason(str(container.get("image", ""))) is not None
        for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    )


def pod_status(pod: Mapping[str, Any], node_ip: str, now: str) -> Body:
    """The status the kubelet writes for a bound pod: ``running_status`` unless an image asks otherwise."""
    if not stuck(pod):
        return workloads.running_status(pod, node_ip, now)
    spec = pod.get("spec") or {}
    previous = (pod.get("status") or {}).get("conditions") or []
    started = (pod.get("status") or {}).get("startTime", now)
    init_statuses: list[Body] = []
    failing_init = ""
    for container in spec.get("initContainers") or []:
        reason = waiting_reason(str(container.get("image", "")))
        if failing_init:
            init_statuses.append(_initializing(container))
        elif reason is not None:
            failing_init = str(container.get("name", ""))
            init_statuses.append(_waiting(container, pod, reason, started))
        else:
            init_statuses.append(_completed_init(container, started))
    statuses: list[Body] = []
    for container in spec.get("containers") or []:
        reason = waiting_reason(str(container.get("image", "")))
        if failing_init:
            statuses.append(_initializing(container))
        elif reason is not None:
            statuses.append(_waiting(container, pod, reason, started))
        else:
            running = workloads.running_status({**pod, "spec": {"containers": [container]}}, node_ip, now)
            statuses.append(running["containerStatuses"][0])
    unready = [str(status["name"]) for status in statuses if not status["ready"]]
    not_ready = f"containers with unready status: [{' '.join(unready)}]"
    conditions = [
        workloads.condition("PodReadyToStartContainers", "True", "", "", now, previous),
        (
            workloads.condition(
                "Initialized",
                "False",
                "ContainersNotInitialized",
                f"containers with incomplete status: [{failing_init}]",
                now,
                previous,
            )
            if failing_init
            else workloads.condition("Initialized", "True", "", "", now, previous)
        ),
        workloads.condition("Ready", "False", "ContainersNotReady", not_ready, now, previous),
        workloads.condition("ContainersReady", "False", "ContainersNotReady", not_ready, now, previous),
        workloads.condition("PodScheduled", "True", "", "", now, previous),
    ]
    # kubelet's getPhase: a container waiting that never ran (no lastState) keeps the pod Pending
    never_ran = failing_init or any(
        "waiting" in status["state"] and "lastState" not in status for status in statuses
    )
    status: Body = {
        "phase": "Pending" if never_ran else "Running",
        "conditions": conditions,
        "hostIP": node_ip,
        "hostIPs": [{"ip": node_ip}],
        "podIP": workloads.pod_ip(f"{pod['metadata'].get('namespace')}/{pod['metadata']['name']}"),
        "startTime": started,
    }
    if init_statuses:
        status["initContainerStatuses"] = init_statuses
    status["containerStatuses"] = statuses
    status["qosClass"] = workloads.running_status(pod, node_ip, now)["qosClass"]
    return status
