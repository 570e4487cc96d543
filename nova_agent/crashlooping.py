"""Failing fast on crash loops: a workload whose *current* pods wait in a reason that waiting does not cure
is Degraded at once (issue 23, item 5).

A workload's own status does not say it. A Deployment whose new pods crash-loop is "progressing" —
``RolloutInProgress`` while its old pods still serve, ``MinimumReplicasUnavailable`` otherwise — until
``progressDeadlineSeconds`` (Kubernetes' default: 600 s) turns it into ``ProgressDeadlineExceeded``; a
StatefulSet or a DaemonSet never says more than "not ready"; a Job stays active. So a canary running a
revision that can never start held its wave for ten minutes. The kubelet says it at once, in the pods'
container statuses (:data:`health.FAILED_WAITING_REASONS`): ``CrashLoopBackOff``, ``ImagePullBackOff``,
``ErrImagePull``, ``CreateContainerConfigError``, ``InvalidImageName`` — of an init container too, which
keeps the pod from ever starting.

Which pods are *current* — the revision being rolled out, not one being replaced:

- Deployment: the pods of its newest ReplicaSet, the one whose pod template is the Deployment's (less the
  ``pod-template-hash`` label), as the Deployment controller finds it. Pods of older ReplicaSets do not
  count, whether they serve or fail; a new ReplicaSet's pods that crash-loop make the Deployment Degraded
  even while it is still Available from its old pods (``maxUnavailable``): the rollout of this revision is
  failing, and waiting for the deadline only delays the verdict;
- StatefulSet: its pods labelled ``controller-revision-hash`` = ``status.updateRevision``, once its
  controller has observed the current spec;
- DaemonSet: its pods labelled ``pod-template-generation`` = its ``deprecated.daemonset.template.generation``
  annotation (both set by Kubernetes); when it has no such annotation, every pod it owns, once its
  controller has observed the current spec;
- ReplicaSet and Job: every pod they own (a Job's template cannot change); a bare Pod is judged by its own
  rule (:func:`health.pod_health`).

Pods being deleted, and pods that finished (Succeeded, Failed), do not count.

Cost: no read of its own. The pods and ReplicaSets are the cluster-wide lists every pass already makes for
capacity (:mod:`nova_agent.observing`); :func:`index` goes once over the pods and keeps only those with a
stuck container (a healthy cluster: none), so judging a workload is a dictionary lookup by its uid.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from nova_agent import health
from nova_agent.health import Health, StuckContainer
from nova_agent.resources import Body, annotations_of, labels_of

POD_TEMPLATE_HASH: Final = "pod-template-hash"
CONTROLLER_REVISION_HASH: Final = "controller-revision-hash"
DAEMONSET_TEMPLATE_GENERATION: Final = "deprecated.daemonset.template.generation"
POD_TEMPLATE_GENERATION: Final = "pod-template-generation"
NOT_APPLIED: Final = "NotAppliedAtRevision"
"""The verdict a stuck pod never overrides: the live object is not the synced revision's, so neither are its
pods (:func:`health.health_at_revision`)."""


@dataclass(frozen=True, slots=True)
class StuckPod:
    name: str
    labels: Mapping[str, str]
    container: StuckContainer


@dataclass(slots=True)
class StuckPods:
    """The pods with a stuck container, by the uid of their controller; and the ReplicaSets that own some,
    by the uid of *their* controller (a Deployment)."""

    by_owner: dict[str, list[StuckPod]] = field(default_factory=dict)
    replicasets_by_owner: dict[str, list[Body]] = field(default_factory=dict)


def _metadata(body: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = body.get("metadata")
    return metadata if isinstance(metadata, Mapping) else {}


def controller_uid(body: Mapping[str, Any]) -> str | None:
    references = _metadata(body).get("ownerReferences")
    for reference in references if isinstance(references, list) else ():
        if isinstance(reference, Mapping) and reference.get("controller") is True:
            uid = reference.get("uid")
            return uid if isinstance(uid, str) and uid else None
    return None


def _uid(body: Mapping[str, Any]) -> str:
    uid = _metadata(body).get("uid")
    return uid if isinstance(uid, str) else ""


def _live(pod: Mapping[str, Any]) -> bool:
    status = pod.get("status")
    phase = status.get("phase") if isinstance(status, Mapping) else None
    return not _metadata(pod).get("deletionTimestamp") and phase not in ("Succeeded", "Failed")


def index(pods: Iterable[Mapping[str, Any]], replicasets: Iterable[Body]) -> StuckPods:
    """The stuck pods among ``pods`` (and the ReplicaSets owning some, among ``replicasets``)."""
    stuck = StuckPods()
    for pod in pods:
        container = health.stuck_container(pod)  # None for nearly every pod: asked first
        owner = controller_uid(pod) if container is not None else None
        if container is not None and owner is not None and _live(pod):
            name = str(_metadata(pod).get("name", ""))
            stuck.by_owner.setdefault(owner, []).append(StuckPod(name, labels_of(pod), container))
    if stuck.by_owner:
        for replicaset in replicasets:
            deployment = controller_uid(replicaset)
            if deployment is not None and _uid(replicaset) in stuck.by_owner:
                stuck.replicasets_by_owner.setdefault(deployment, []).append(replicaset)
    return stuck


def _template(body: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = body.get("spec")
    template = spec.get("template") if isinstance(spec, Mapping) else None
    return template if isinstance(template, Mapping) else {}


def _without_hash(template: Mapping[str, Any]) -> dict[str, Any]:
    """A pod template less the ``pod-template-hash`` label the Deployment controller adds to its
    ReplicaSets' (an empty map counts as none, as in the controller's comparison)."""
    metadata = dict(template.get("metadata") or {})
    labels = {key: value for key, value in (metadata.get("labels") or {}).items() if key != POD_TEMPLATE_HASH}
    metadata.pop("labels", None)
    if labels:
        metadata["labels"] = labels
    made = {key: value for key, value in template.items() if key != "metadata"}
    if metadata:
        made["metadata"] = metadata
    return made


def _observed(body: Mapping[str, Any]) -> bool:
    """Whether the workload's controller has observed its current spec (its status describes it)."""
    generation = _metadata(body).get("generation")
    status = body.get("status")
    observed = status.get("observedGeneration") if isinstance(status, Mapping) else None
    return isinstance(observed, int) and (not isinstance(generation, int) or observed >= generation)


def current_stuck(body: Mapping[str, Any], stuck: StuckPods) -> list[StuckPod]:
    """The stuck pods of the workload's current revision (see the module docstring), by name."""
    if not stuck.by_owner:
        return []
    uid, kind = _uid(body), body.get("kind")
    found: list[StuckPod] = []
    if kind == "Deployment":
        wanted = _without_hash(_template(body))
        for replicaset in stuck.replicasets_by_owner.get(uid, ()):
            if _without_hash(_template(replicaset)) == wanted:
                found += stuck.by_owner.get(_uid(replicaset), ())
    elif kind == "StatefulSet":
        status = body.get("status")
        revision = status.get("updateRevision") if isinstance(status, Mapping) else None
        if revision and _observed(body):
            found = [
                p for p in stuck.by_owner.get(uid, ()) if p.labels.get(CONTROLLER_REVISION_HASH) == revision
            ]
    elif kind == "DaemonSet":
        generation = annotations_of(body).get(DAEMONSET_TEMPLATE_GENERATION)
        if generation is not None:
            found = [
                p for p in stuck.by_owner.get(uid, ()) if p.labels.get(POD_TEMPLATE_GENERATION) == generation
            ]
        elif _observed(body):
            found = list(stuck.by_owner.get(uid, ()))
    elif kind in ("ReplicaSet", "Job"):
        found = list(stuck.by_owner.get(uid, ()))
    return sorted(found, key=lambda pod: pod.name)


def failing_health(body: Mapping[str, Any], stuck: StuckPods) -> Health | None:
    """Degraded, naming the first stuck pod (by name), its container, the reason and the kubelet's message;
    None when no current pod is stuck."""
    found = current_stuck(body, stuck)
    if not found:
        return None
    first = found[0]
    more = f" (and {len(found) - 1} more pod{'s' if len(found) > 2 else ''})" if len(found) > 1 else ""
    described = first.container.describe(first.name + more)
    return Health(False, "ContainersReady", first.container.reason, described)


def judged(verdict: Health | None, body: Mapping[str, Any], stuck: StuckPods) -> Health | None:
    """``verdict`` (the workload's health for the synced revision), or Degraded when a current pod is stuck:
    a stuck pod says more than the workload's status, healthy or not (a Deployment still Available from its
    old pods), except that the object does not reflect the synced revision at all."""
    if verdict is None or verdict.reason == NOT_APPLIED:
        return verdict
    return failing_health(body, stuck) or verdict
