"""What a kubelet writes into the status of a pod bound to its node: pure functions over plain dicts.

Shared by the stand-in kubelet for real API servers (``tests.realkube.kubelet``) and the fake API server's
simulated cluster (``tests.fakekube.simulation``), so a test asks for a pod state the same way on both and
gets the same status: the fields kubectl, the workload controllers and our agent read, in kubelet v1.36's
shapes and words.

A test asks per container, by its image or by the pod's annotation ``stand-in.nova.test/state``:

============================  ================================================================================
image contains / state        what the kubelet reports
============================  ================================================================================
(nothing; ``running``)        Running, started and Ready
``unready``                   Running and started, never Ready (a failing readiness probe)
``containercreating``         Pending, waiting ``ContainerCreating``
``imagepullbackoff``          Pending, waiting ``ImagePullBackOff``
``errimagepull``              Pending, waiting ``ErrImagePull``
``invalidimagename``          Pending, waiting ``InvalidImageName``
``createcontainerconfigerror``  Pending, waiting ``CreateContainerConfigError``
``crashloop``                 Running, waiting ``CrashLoopBackOff``, last terminated with exit code 1, its
                              ``restartCount`` growing with kubelet's back-off (10 s doubling to 300 s)
``exit-<n>``                  the container exits with code n: terminated (``Completed`` for 0, ``Error``
                              otherwise) when the pod's restartPolicy does not restart it (Never; OnFailure
                              and 0) — all terminated makes the pod Succeeded, or Failed if one failed —
                              otherwise restarted: ``CrashLoopBackOff`` as a real kubelet does
============================  ================================================================================

The annotation's value is one state for every app container (``crashloop``) or per container
(``app=crashloop,migrate=exit-1``); it wins over the image. Init containers complete at once unless one is
asked to fail (by its image or by name in the annotation): then it waits (or crash-loops, or fails the pod
under ``restartPolicy: Never``) and every container after it waits in ``PodInitializing``; sidecars
(``restartPolicy: Always``) run. Time comes from the caller (``now``), and a condition keeps its
``lastTransitionTime`` while its status does not change, so computing a pod's status again at the same time
gives the same dict: the fake's simulation reaches a fixed point and the kubelet writes only what changed.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

Body = dict[str, Any]

STATE_ANNOTATION: Final = "stand-in.nova.test/state"

RUNNING: Final = "running"
UNREADY: Final = "unready"
CONTAINER_CREATING: Final = "containercreating"
IMAGE_PULL_BACK_OFF: Final = "imagepullbackoff"
ERR_IMAGE_PULL: Final = "errimagepull"
INVALID_IMAGE_NAME: Final = "invalidimagename"
CREATE_CONTAINER_CONFIG_ERROR: Final = "createcontainerconfigerror"
CRASH_LOOP: Final = "crashloop"
EXIT: Final = "exit"

WAITING_REASONS: Final = {
    CONTAINER_CREATING: "ContainerCreating",
    IMAGE_PULL_BACK_OFF: "ImagePullBackOff",
    ERR_IMAGE_PULL: "ErrImagePull",
    INVALID_IMAGE_NAME: "InvalidImageName",
    CREATE_CONTAINER_CONFIG_ERROR: "CreateContainerConfigError",
}
"""States where the container never started: the pod stays Pending."""

_IMAGE_MARKERS: Final = (
    CREATE_CONTAINER_CONFIG_ERROR,
    IMAGE_PULL_BACK_OFF,
    ERR_IMAGE_PULL,
    INVALID_IMAGE_NAME,
    CONTAINER_CREATING,
    CRASH_LOOP,
    UNREADY,
)
_EXIT = re.compile(r"exit-(\d{1,3})")
BACK_OFF_INITIAL: Final = 10
BACK_OFF_MAX: Final = 300
CONDITION_TYPES: Final = (
    "PodReadyToStartContainers",
    "Initialized",
    "Ready",
    "ContainersReady",
    "PodScheduled",
)


@dataclass(frozen=True, slots=True)
class Wanted:
    """The state a test asks of one container; ``exit_code`` for ``exit`` and ``crashloop``."""

    state: str = RUNNING
    exit_code: int = 0


def parse_state(text: str) -> Wanted | None:
    """A state named in an annotation or found in an image name; None when the text names none."""
    lowered = text.strip().lower()
    exited = _EXIT.search(lowered)
    for marker in _IMAGE_MARKERS:
        if marker in lowered:
            return Wanted(marker, 1 if marker == CRASH_LOOP else 0)
    if exited is not None:
        return Wanted(EXIT, int(exited.group(1)))
    if lowered == RUNNING:
        return Wanted()
    return None


def _annotated(pod: Mapping[str, Any]) -> tuple[Wanted | None, dict[str, Wanted]]:
    """The annotation's state for every app container, and its states by container name."""
    annotation = str(((pod.get("metadata") or {}).get("annotations") or {}).get(STATE_ANNOTATION, ""))
    every: Wanted | None = None
    by_name: dict[str, Wanted] = {}
    for part in filter(None, (item.strip() for item in annotation.split(","))):
        name, equals, state = part.partition("=")
        parsed = parse_state(state if equals else name)
        if parsed is None:
            continue
        if equals:
            by_name[name.strip()] = parsed
        else:
            every = parsed
    return every, by_name


def wanted_states(pod: Mapping[str, Any], init: bool = False) -> dict[str, Wanted]:
    """Container name → the state asked of it (the annotation first, then the image; running otherwise).
    With ``init``, of the init containers, which an annotation names only one by one."""
    every, by_name = _annotated(pod)
    if init:
        every = None
    wanted = {}
    for container in (pod.get("spec") or {}).get("initContainers" if init else "containers") or []:
        name = str(container.get("name", ""))
        from_image = parse_state(str(container.get("image", "")))
        wanted[name] = by_name.get(name) or every or from_image or Wanted()
    return wanted


def restarts(elapsed: float) -> tuple[int, int]:
    """A crash-looping container's (restartCount, current back-off seconds) ``elapsed`` seconds after the
    pod started: it crashes at once, then is restarted after 10 s, 20 s, 40 s, ... up to 300 s each."""
    count, back_off, waited = 1, BACK_OFF_INITIAL, 0
    while waited + back_off <= elapsed:
        waited += back_off
        count += 1
        back_off = min(back_off * 2, BACK_OFF_MAX)
    return count, back_off


def stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_stamp(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def pod_ip(namespace: str, name: str) -> str:
    number = int(hashlib.sha256(f"{namespace}/{name}".encode()).hexdigest()[:4], 16)
    return f"10.244.{number // 256}.{number % 256 or 1}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _image_id(image: str) -> str:
    repository = image.split("@", 1)[0]
    last = repository.rsplit("/", 1)[-1]
    if ":" in last:
        repository = repository[: len(repository) - len(last)] + last.split(":", 1)[0]
    return f"{repository}@sha256:{_digest(image)}"


def _config_error(container: Mapping[str, Any]) -> str:
    """What kubelet says when a container's configuration refers to something missing: the first
    ConfigMap or Secret its environment names (``<container>-config`` when it names none)."""
    sources = [
        *((env.get("valueFrom") or {}) for env in container.get("env") or []),
        *(container.get("envFrom") or []),
    ]
    for source in sources:
        for key, kind in (
            ("configMapKeyRef", "configmap"),
            ("configMapRef", "configmap"),
            ("secretKeyRef", "secret"),
            ("secretRef", "secret"),
        ):
            name = (source.get(key) or {}).get("name")
            if name:
                return f'{kind} "{name}" not found'
    return f'configmap "{container.get("name", "")}-config" not found'


def _waiting_message(state: str, container: Mapping[str, Any]) -> str:
    image = str(container.get("image", ""))
    if state == IMAGE_PULL_BACK_OFF:
        return f'Back-off pulling image "{image}"'
    if state == ERR_IMAGE_PULL:
        return (
            f'failed to pull and unpack image "{image}": failed to resolve reference "{image}": '
            f"{image}: not found"
        )
    if state == INVALID_IMAGE_NAME:
        return (
            f'Failed to apply default image tag "{image}": couldn\'t parse image reference "{image}": '
            "invalid reference format"
        )
    if state == CREATE_CONTAINER_CONFIG_ERROR:
        return _config_error(container)
    return ""


@dataclass(frozen=True, slots=True)
class _Timing:
    started: str
    now: str
    elapsed: float


def _terminated(exit_code: int, started: str, container_id: str) -> Body:
    return {
        "containerID": container_id,
        "exitCode": exit_code,
        "finishedAt": started,
        "reason": "Completed" if exit_code == 0 else "Error",
        "startedAt": started,
    }


def container_status(
    pod: Mapping[str, Any], container: Mapping[str, Any], wanted: Wanted, timing: _Timing
) -> Body:
    """One entry of ``containerStatuses`` for a container in the state the test asks for."""
    name, image = str(container.get("name", "")), str(container.get("image", ""))
    metadata = pod.get("metadata") or {}
    uid = str(metadata.get("uid", ""))
    restart_policy = (pod.get("spec") or {}).get("restartPolicy", "Always")
    status: Body = {"image": image, "imageID": _image_id(image), "name": name}
    state = wanted.state
    if state in WAITING_REASONS:
        if state in (IMAGE_PULL_BACK_OFF, ERR_IMAGE_PULL, INVALID_IMAGE_NAME, CONTAINER_CREATING):
            status["imageID"] = ""
        message = _waiting_message(state, container)
        waiting: Body = {"reason": WAITING_REASONS[state], **({"message": message} if message else {})}
        return {**status, "ready": False, "restartCount": 0, "started": False, "state": {"waiting": waiting}}
    exits = state == EXIT
    restarted = state == CRASH_LOOP or (
        exits and (restart_policy == "Always" or (restart_policy == "OnFailure" and wanted.exit_code != 0))
    )
    if restarted:
        count, back_off = restarts(timing.elapsed)
        container_id = f"containerd://{_digest(f'{uid}/{name}/{count - 1}')}"
        pod_name = f"{metadata.get('name', '')}_{metadata.get('namespace', '')}({uid})"
        waiting = {
            "message": f"back-off {back_off}s restarting failed container={name} pod={pod_name}",
            "reason": "CrashLoopBackOff",
        }
        return {
            **status,
            "containerID": container_id,
            "lastState": {"terminated": _terminated(wanted.exit_code, timing.started, container_id)},
            "ready": False,
            "restartCount": count,
            "started": False,
            "state": {"waiting": waiting},
        }
    container_id = f"containerd://{_digest(f'{uid}/{name}/0')}"
    if exits:
        terminated = _terminated(wanted.exit_code, timing.started, container_id)
        return {
            **status,
            "containerID": container_id,
            "ready": False,
            "restartCount": 0,
            "started": False,
            "state": {"terminated": terminated},
        }
    return {
        **status,
        "containerID": container_id,
        "ready": state != UNREADY,
        "restartCount": 0,
        "started": True,
        "state": {"running": {"startedAt": timing.started}},
    }


def _initializing(container: Mapping[str, Any]) -> Body:
    """A container that waits for an init container before it."""
    return {
        "image": container.get("image", ""),
        "imageID": "",
        "name": container.get("name", ""),
        "ready": False,
        "restartCount": 0,
        "started": False,
        "state": {"waiting": {"reason": "PodInitializing"}},
    }


def _completed(pod: Mapping[str, Any], container: Mapping[str, Any], timing: _Timing) -> Body:
    """An init container that ran to completion (exit 0), whatever the pod's restartPolicy."""
    name, image = str(container.get("name", "")), str(container.get("image", ""))
    uid = str((pod.get("metadata") or {}).get("uid", ""))
    container_id = f"containerd://{_digest(f'{uid}/{name}/0')}"
    return {
        "containerID": container_id,
        "image": image,
        "imageID": _image_id(image),
        "name": name,
        "ready": True,
        "restartCount": 0,
        "started": False,
        "state": {"terminated": _terminated(0, timing.started, container_id)},
    }


def init_statuses(pod: Mapping[str, Any], timing: _Timing) -> tuple[list[Body], list[str]]:
    """``initContainerStatuses``, and the names of the init containers not (yet) completed. Init containers
    run in order and complete at once, unless one is asked to fail (any state but running, unready and
    ``exit-0``): it waits (or crash-loops, or with restartPolicy Never ends terminated) and those after it
    wait in ``PodInitializing``. A sidecar (restartPolicy Always) runs and is ready."""
    wanted = wanted_states(pod, init=True)
    statuses: list[Body] = []
    incomplete: list[str] = []
    for container in (pod.get("spec") or {}).get("initContainers") or []:
        name = str(container.get("name", ""))
        asked = wanted.get(name, Wanted())
        if incomplete:
            statuses.append(_initializing(container))
            incomplete.append(name)
        elif container.get("restartPolicy") == "Always":
            statuses.append(container_status(pod, container, Wanted(), timing))
        elif asked.state in (RUNNING, UNREADY) or (asked.state == EXIT and asked.exit_code == 0):
            statuses.append(_completed(pod, container, timing))
        else:
            statuses.append(container_status(pod, container, asked, timing))
            incomplete.append(name)
    return statuses, incomplete


def phase_of(statuses: Sequence[Mapping[str, Any]]) -> str:
    """Pending while a container never started (it waits and has no ``lastState``); Succeeded or Failed
    once every container terminated for good; Running otherwise (crash-looping containers included, as on
    a real node: kubelet's getPhase)."""
    states = [status.get("state") or {} for status in statuses]
    if any("waiting" in status.get("state", {}) and not status.get("lastState") for status in statuses):
        return "Pending"
    if states and all("terminated" in state for state in states):
        failed = any(state["terminated"].get("exitCode") != 0 for state in states)
        return "Failed" if failed else "Succeeded"
    return "Running"


def _condition(
    condition_type: str,
    status: bool,
    previous: Sequence[Mapping[str, Any]],
    now: str,
    reason: str = "",
    message: str = "",
) -> Body:
    text = "True" if status else "False"
    old = next((c for c in previous if c.get("type") == condition_type), None)
    kept = old is not None and old.get("status") == text and old.get("lastTransitionTime")
    made: Body = {"type": condition_type, "status": text, "lastTransitionTime": kept or now}
    if reason:
        made["reason"] = reason
    if message:
        made["message"] = message
    return made


def pod_status(pod: Mapping[str, Any], node_ip: str, now: datetime) -> Body:
    """The status a kubelet on the pod's node reports at ``now`` (the pod's ``startTime`` is kept)."""
    previous: Mapping[str, Any] = pod.get("status") or {}
    spec, metadata = pod.get("spec") or {}, pod.get("metadata") or {}
    now_text = stamp(now)
    started = str(previous.get("startTime") or now_text)
    started_at = parse_stamp(started) or now
    timing = _Timing(started, now_text, max(0.0, (now - started_at).total_seconds()))
    inits, incomplete = init_statuses(pod, timing)
    wanted = wanted_states(pod)
    containers = spec.get("containers") or []
    if incomplete:
        statuses = [_initializing(container) for container in containers]
        failed_for_good = any(  # restartPolicy Never: the failed init container is not run again
            init["name"] in incomplete and "terminated" in init["state"] for init in inits
        )
        phase = "Failed" if failed_for_good else "Pending"
    else:
        statuses = [
            container_status(pod, container, wanted.get(str(container.get("name", "")), Wanted()), timing)
            for container in containers
        ]
        phase = phase_of(statuses)
    unready = [str(s["name"]) for s in statuses if not s["ready"]]
    before = previous.get("conditions") or []
    terminal = phase in ("Succeeded", "Failed")
    if terminal:
        reason = "PodCompleted" if phase == "Succeeded" else "PodFailed"
        ready = _condition("Ready", False, before, now_text, reason)
        containers_ready = _condition("ContainersReady", False, before, now_text, reason)
    elif unready:
        message = f"containers with unready status: [{' '.join(unready)}]"
        ready = _condition("Ready", False, before, now_text, "ContainersNotReady", message)
        containers_ready = _condition(
            "ContainersReady", False, before, now_text, "ContainersNotReady", message
        )
    else:
        ready = _condition("Ready", True, before, now_text)
        containers_ready = _condition("ContainersReady", True, before, now_text)
    if incomplete:
        message = f"containers with incomplete status: [{' '.join(incomplete)}]"
        initialized = _condition("Initialized", False, before, now_text, "ContainersNotInitialized", message)
    else:
        initialized = _condition("Initialized", True, before, now_text, "PodCompleted" if terminal else "")
    conditions = [
        _condition("PodReadyToStartContainers", not terminal, before, now_text),
        initialized,
        ready,
        containers_ready,
        _condition("PodScheduled", True, before, now_text),
    ]
    ip = pod_ip(str(metadata.get("namespace", "")), str(metadata.get("name", "")))
    status: Body = {
        "phase": phase,
        "conditions": conditions,
        "hostIP": node_ip,
        "hostIPs": [{"ip": node_ip}],
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "startTime": started,
    }
    if inits:
        status["initContainerStatuses"] = inits
    status["containerStatuses"] = statuses
    return status


def differs(current: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """Whether writing ``wanted`` would change ``current`` (fields the kubelet does not set are ignored)."""
    return any(current.get(key) != value for key, value in wanted.items())
