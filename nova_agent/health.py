"""Health of live objects, per kind, as pure functions of the object's ``status``.

Each rule names the condition and reason a person would look at in ``kubectl describe`` so that the status
report answers "what is wrong with it" and not only "is it fine". A controller that has not yet observed the
latest spec (``observedGeneration < generation``) is never healthy: its status describes an older spec.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from nova_agent.resources import Body

HEALTH_KINDS: Final = (
    ("apps", "Deployment"),
    ("apps", "StatefulSet"),
    ("apps", "DaemonSet"),
    ("apps", "ReplicaSet"),
    ("batch", "Job"),
    ("", "Pod"),
    ("", "PersistentVolumeClaim"),
)
"""(group, kind) with a rule of their own; any other object is judged by its ``Ready`` condition if it has
one, and otherwise not reported."""


@dataclass(frozen=True, slots=True)
class Health:
    healthy: bool
    condition: str
    reason: str
    message: str = ""


def _status(body: Mapping[str, Any]) -> Mapping[str, Any]:
    status = body.get("status")
    return status if isinstance(status, Mapping) else {}


def _spec(body: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = body.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def find_condition(body: Mapping[str, Any], condition_type: str) -> Mapping[str, Any] | None:
    conditions = _status(body).get("conditions")
    if isinstance(conditions, list):
        for condition in conditions:
            if isinstance(condition, Mapping) and condition.get("type") == condition_type:
                return condition
    return None


def _from_condition(condition: Mapping[str, Any], healthy: bool) -> Health:
    return Health(
        healthy,
        str(condition.get("type", "")),
        str(condition.get("reason", "")),
        str(condition.get("message", "")),
    )


def _stale(body: Mapping[str, Any]) -> Health | None:
    generation = _int(body.get("metadata", {}).get("generation"), 0)
    observed = _int(_status(body).get("observedGeneration"), generation)
    if generation and observed < generation:
        return Health(
            False, "Progressing", "ObservedGenerationBehind", "the controller has not seen the latest spec"
        )
    return None


def deployment_health(body: Mapping[str, Any]) -> Health:
    stale = _stale(body)
    if stale is not None:
        return stale
    status, wanted = _status(body), _int(_spec(body).get("replicas"), 1)
    progressing = find_condition(body, "Progressing")
    if progressing is not None and progressing.get("reason") == "ProgressDeadlineExceeded":
        return _from_condition(progressing, False)
    available = find_condition(body, "Available")
    if available is not None and available.get("status") == "False":
        return _from_condition(available, False)
    if _int(status.get("updatedReplicas")) < wanted:
        return Health(
            False, "Progressing", "RolloutInProgress", f"{status.get('updatedReplicas', 0)}/{wanted} updated"
        )
    if _int(status.get("availableReplicas")) < wanted:
        message = f"{status.get('availableReplicas', 0)}/{wanted} available"
        return Health(False, "Available", "MinimumReplicasUnavailable", message)
    # mid-rollout, the new pods are counted as updated before they run, and the old ones still serve
    # (``kubectl rollout status`` waits on the same two): not healthy until the old are gone and the new up
    old = _int(status.get("replicas")) - _int(status.get("updatedReplicas"))
    if old > 0:
        return Health(
            False, "Progressing", "RolloutInProgress", f"{old} old replicas are pending termination"
        )
    updated = _int(status.get("updatedReplicas"))
    if _int(status.get("availableReplicas")) < updated:
        message = f"{status.get('availableReplicas', 0)} of {updated} updated replicas are available"
        return Health(False, "Progressing", "RolloutInProgress", message)
    return Health(True, "Available", "MinimumReplicasAvailable")


def statefulset_health(body: Mapping[str, Any]) -> Health:
    stale = _stale(body)
    if stale is not None:
        return stale
    status, wanted = _status(body), _int(_spec(body).get("replicas"), 1)
    if _int(status.get("readyReplicas")) < wanted:
        return Health(False, "Ready", "ReplicasNotReady", f"{status.get('readyReplicas', 0)}/{wanted} ready")
    update, current = status.get("updateRevision"), status.get("currentRevision")
    if update and current and update != current:
        return Health(False, "Progressing", "RolloutInProgress", f"revision {current} → {update}")
    return Health(True, "Ready", "AllReplicasReady")


def daemonset_health(body: Mapping[str, Any]) -> Health:
    stale = _stale(body)
    if stale is not None:
        return stale
    status = _status(body)
    desired = _int(status.get("desiredNumberScheduled"))
    if _int(status.get("updatedNumberScheduled"), desired) < desired:
        message = f"{status.get('updatedNumberScheduled', 0)}/{desired} updated"
        return Health(False, "Progressing", "RolloutInProgress", message)
    if _int(status.get("numberReady")) < desired:
        return Health(False, "Ready", "PodsNotReady", f"{status.get('numberReady', 0)}/{desired} ready")
    return Health(True, "Ready", "AllPodsReady")


def replicaset_health(body: Mapping[str, Any]) -> Health:
    failure = find_condition(body, "ReplicaFailure")
    if failure is not None and failure.get("status") == "True":
        return _from_condition(failure, False)
    wanted = _int(_spec(body).get("replicas"), 1)
    ready = _int(_status(body).get("readyReplicas"))
    if ready < wanted:
        return Health(False, "Ready", "ReplicasNotReady", f"{ready}/{wanted} ready")
    return Health(True, "Ready", "AllReplicasReady")


def job_health(body: Mapping[str, Any]) -> Health:
    for condition_type, healthy in (("Failed", False), ("Complete", True)):
        condition = find_condition(body, condition_type)
        if condition is not None and condition.get("status") == "True":
            return _from_condition(condition, healthy)
    suspended = find_condition(body, "Suspended")
    if suspended is not None and suspended.get("status") == "True":
        return _from_condition(suspended, True)
    return Health(True, "Running", "JobActive", f"{_status(body).get('active', 0)} active")


FAILED_WAITING_REASONS: Final = frozenset(
    {"CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "CreateContainerConfigError", "InvalidImageName"}
)
"""Why a container waits when waiting will not cure it: it crashed again and again (a single crash of a pod
that ran for a while restarts at once: the kubelet backs off only after repeated ones), its image cannot be
pulled or named, or what its configuration refers to is missing. A rollout gate fails on these at once
(``nova_gitops.rollouts.health.DEGRADED_REASONS``)."""

MAX_WAITING_MESSAGE_CHARS: Final = 1024
"""The kubelet's message is cut here: a pod's status is anyone's to write who may write it, and the report
carries it."""


@dataclass(frozen=True, slots=True)
class StuckContainer:
    """A container (or init container) of a pod, waiting in one of :data:`FAILED_WAITING_REASONS`."""

    name: str
    init: bool
    reason: str
    message: str

    def describe(self, pod: str = "") -> str:
        """``container app of pod web-7d9-x2x4k: back-off 10s ...`` (the message last: the part a reader may
        cut)."""
        what = f"{'init container' if self.init else 'container'} {self.name}"
        where = f" of pod {pod}" if pod else ""
        return f"{what}{where}: {self.message}" if self.message else f"{what}{where}"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def stuck_container(pod: Mapping[str, Any]) -> StuckContainer | None:
    """The first container of ``pod`` waiting in a reason that waiting does not cure: init containers first
    (the pod's app containers wait behind them in ``PodInitializing``), then the others, in status order."""
    status = _status(pod)
    for key, init in (("initContainerStatuses", True), ("containerStatuses", False)):
        statuses = status.get(key)
        for container in statuses if isinstance(statuses, list) else ():
            state = container.get("state") if isinstance(container, Mapping) else None
            waiting = state.get("waiting") if isinstance(state, Mapping) else None
            if isinstance(waiting, Mapping) and waiting.get("reason") in FAILED_WAITING_REASONS:
                message = waiting.get("message")
                return StuckContainer(
                    str(container.get("name", "")),
                    init,
                    str(waiting["reason"]),
                    _cut(message, MAX_WAITING_MESSAGE_CHARS) if isinstance(message, str) else "",
                )
    return None


def pod_health(body: Mapping[str, Any]) -> Health:
    status = _status(body)
    phase = str(status.get("phase", "Pending"))
    stuck = stuck_container(body)
    if stuck is not None:
        return Health(False, "ContainersReady", stuck.reason, stuck.describe())
    if phase == "Succeeded":
        return Health(True, "Succeeded", "PodCompleted")
    if phase == "Failed":
        return Health(False, "Failed", str(status.get("reason", "PodFailed")), str(status.get("message", "")))
    if phase == "Pending":
        scheduled = find_condition(body, "PodScheduled")
        if scheduled is not None and scheduled.get("status") == "False":
            return _from_condition(scheduled, False)
        return Health(False, "Pending", str(status.get("reason", "Pending")), str(status.get("message", "")))
    ready = find_condition(body, "Ready")
    if ready is not None and ready.get("status") != "True":
        return _from_condition(ready, False)
    return Health(True, "Ready", "PodRunning")


def pvc_health(body: Mapping[str, Any]) -> Health:
    phase = str(_status(body).get("phase", "Pending"))
    if phase == "Bound":
        return Health(True, "Bound", "Bound")
    return Health(False, "Bound", phase, "the claim is not bound to a volume")


def generic_health(body: Mapping[str, Any]) -> Health | None:
    """The ``Ready`` condition of anything else (custom resources mostly); None when there is none."""
    ready = find_condition(body, "Ready")
    if ready is None:
        return None
    return _from_condition(ready, ready.get("status") == "True")


RULES: Final[dict[tuple[str, str], Callable[[Mapping[str, Any]], Health]]] = {
    ("apps", "Deployment"): deployment_health,
    ("apps", "StatefulSet"): statefulset_health,
    ("apps", "DaemonSet"): daemonset_health,
    ("apps", "ReplicaSet"): replicaset_health,
    ("batch", "Job"): job_health,
    ("", "Pod"): pod_health,
    ("", "PersistentVolumeClaim"): pvc_health,
}


def health_of(body: Body) -> Health | None:
    """The health of a live object, or None when it is not something that has health (a ConfigMap)."""
    api_version = str(body.get("apiVersion", ""))
    rule = RULES.get((api_version.rpartition("/")[0], str(body.get("kind", ""))))
    return rule(body) if rule is not None else generic_health(body)


OBSERVED_GENERATION_KINDS: Final = frozenset(
    {("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "DaemonSet"), ("apps", "ReplicaSet")}
)
"""Kinds whose controller always writes ``status.observedGeneration``: none means "not observed yet"."""


def observed_generation(body: Mapping[str, Any]) -> int | None:
    """``status.observedGeneration``; None when the object does not report one (Jobs, Pods, most CRs)."""
    observed = _status(body).get("observedGeneration")
    if isinstance(observed, int) and not isinstance(observed, bool):
        return observed
    api_version = str(body.get("apiVersion", ""))
    return (
        0
        if (api_version.rpartition("/")[0], str(body.get("kind", ""))) in OBSERVED_GENERATION_KINDS
        else None
    )


def health_at_revision(
    body: Body, revision: str, applied_generation: int, synced_revision: str
) -> Health | None:
    """The health of a live object *for the revision the cluster is synced to*.

    Healthy only when the object reflects ``synced_revision`` (its manifest there was applied to it, or is the
    one applied earlier), its controller has observed the generation that apply produced
    (``observedGeneration`` ≥ it, and ≥ the live generation) and its kind's rule says healthy: a status that
    describes an older spec never stands for the new revision. None for kinds without health."""
    verdict = health_of(body)
    if verdict is None:
        return None
    if synced_revision and revision != synced_revision:
        reflects = f"revision {revision[:12]}" if revision else "an unknown revision"
        return Health(
            False,
            "Synced",
            "NotAppliedAtRevision",
            f"revision {synced_revision[:12]} was not applied to it (see lastError); it reflects {reflects}",
        )
    observed = observed_generation(body)
    if applied_generation and observed is not None and observed < applied_generation:
        shown = f"revision {revision[:12]}'s" if revision else "the applied"
        return Health(
            False,
            "Progressing",
            "ObservedGenerationStale",
            f"the controller has not observed {shown} spec yet "
            f"(generation {applied_generation}, observed {observed})",
        )
    return verdict
