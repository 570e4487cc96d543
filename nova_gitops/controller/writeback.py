"""Control-plane mode: after each plan, write back to the Nova control plane what Nova itself writes.

Users of Nova look at the control plane, not at git: ``kubectl get deploy`` shows the fleet-wide READY count,
``kubectl describe`` shows why an object went where, ``kubectl get schedulegroups`` shows the groups. So, with
field manager ``nova-gitops``:

- the label ``nova.elotl.co/target-cluster`` on each scheduled object (merge patch; removed when the object
  is no longer placed). A label value cannot hold a list, so an object spread over several clusters gets no
  label and the annotation ``nova.elotl.co/target-clusters: c1,c2`` instead;
- a ScheduleGroup per group (server-side apply, labelled ``app.kubernetes.io/managed-by: nova-gitops``);
  groups no longer planned are deleted;
- Events in Nova's wording: SchedulePolicyMatched and AddedToScheduleGroup on each workload,
  ScheduleGroupSyncedToWorkloadCluster (the plan's reason) or FailedScheduling on the group,
  ReschedulingTriggered on the group for each agent's reschedule request. An event is sent when what it
  says changes, not every reconcile; a repeat of an existing event raises its ``count`` as kube does;
- a rollout's releases and rollbacks as Events on the Cluster moved, its waves' outcomes (passed, paused,
  rolled back, aborted) and completion on the RolloutStrategy (``rollouts.events``);
- the status of Deployments, StatefulSets and ReplicaSets summed over the clusters their copies run on, from
  the agents' reports, through the status subresource, so a Deployment spread 5/5 shows 10/10 ready.

Every write is remembered and only changes are sent, so a quiet reconcile makes one request (the list of
ScheduleGroups). A write that fails is logged and retried at the next reconcile; it never fails the
reconcile, whose commit is already made.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from nova_gitops import errors
from nova_gitops.api import labels
from nova_gitops.api.objects import ObjectKey
from nova_gitops.api.times import rfc3339
from nova_gitops.clients.kuberest import KubeApiError
from nova_gitops.controller.ports import ClusterReport
from nova_gitops.rendering import views
from nova_gitops.rollouts.events import RolloutEvent
from nova_gitops.scheduling.planparts import GroupPlan, ObjectPlan
from nova_gitops.scheduling.plans import Plan
from nova_gitops.sources.kubeapi import Body, KubeApi, ResourceKind

FIELD_MANAGER = "nova-gitops"
COMPONENT = "nova-gitops"
TARGET_CLUSTERS = labels.TARGET_CLUSTERS
MANAGED_BY = "app.kubernetes.io/managed-by"
SCHEDULE_GROUPS = ResourceKind("policy.elotl.co", "v1alpha1", "schedulegroups", "ScheduleGroup", False)
EVENTS = ResourceKind("", "v1", "events", "Event", True)
EVENT_NAMESPACE_OF_CLUSTER_SCOPED = "default"  # where kube puts events about cluster-scoped objects
REPLICATED_KINDS = frozenset({("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "ReplicaSet")})
COUNT_MESSAGE = re.compile(r"^([0-9]{1,9})/([0-9]{1,9}) (available|ready|updated)$")
MAX_REPLICAS = 2**31 - 1  # replica counts are int32 in Kubernetes
log = logging.getLogger(__name__)


def target_label(clusters: tuple[str, ...]) -> tuple[str | None, str | None]:
    """(label value, annotation value) for an object or group placed on ``clusters``."""
    if len(clusters) == 1:
        return clusters[0], None
    return None, (",".join(clusters) if clusters else None)


def schedule_group_body(group: GroupPlan) -> Body:
    """``views.schedule_group`` made valid for the API: no list in a label, no null policy name."""
    body = views.schedule_group(group)
    group_labels = {k: v for k, v in body["metadata"]["labels"].items() if k != labels.TARGET_CLUSTER}
    label, annotation = target_label(group.clusters)
    if label is not None:
        group_labels[labels.TARGET_CLUSTER] = label
    group_labels[MANAGED_BY] = FIELD_MANAGER
    body["metadata"]["labels"] = group_labels
    if annotation is not None:
        body["metadata"]["annotations"] = {TARGET_CLUSTERS: annotation}
    if group.policy is None:
        del body["policy"]
    return body


def policy_matched_message(policy: str, name: str) -> str:
    return f"schedule policy {policy} was used to determine target cluster, for scheduling obj, {name}"


def added_to_group_message(group: GroupPlan) -> str:
    if group.group_by is None:
        return f"added to ScheduleGroup {group.name}"
    key, value = group.group_by
    return f"added to ScheduleGroup {group.name} which contains objects with groupBy.labelKey {key}={value}"


def count_of(value: object) -> int:
    """A replica count read from agent-written (untrusted) data: an int in 0‥2³¹−1, anything else 0. A list,
    a string, NaN or a 5,000-digit number in a report must not fail the write-back (or the reconcile)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return 0
    return min(max(value, 0), MAX_REPLICAS)


def _copy_counts(entry: Mapping[str, Any] | None, desired: int) -> dict[str, int]:
    """One cluster's replica counts for one object, from its health entry (exact counts when the agent
    reports them, else inferred: healthy means all ``desired`` are up, "N/M ready" says N). The entry is
    the agent's, so every value is checked for its type (``count_of``)."""
    counts = {"replicas": desired, "readyReplicas": 0, "availableReplicas": 0, "updatedReplicas": 0}
    if entry is None:
        return counts
    if any(field in entry for field in ("readyReplicas", "availableReplicas")):
        for field in counts:
            counts[field] = count_of(entry.get(field)) if field != "replicas" else desired
        return counts
    if entry.get("healthy") is True:
        return {field: desired for field in counts}
    message = entry.get("message")
    match = COUNT_MESSAGE.match(message) if isinstance(message, str) else None
    if match is not None:
        seen = int(match.group(1))
        if match.group(3) == "updated":
            counts["updatedReplicas"] = seen
        else:
            counts["readyReplicas"] = counts["availableReplicas"] = seen
            counts["updatedReplicas"] = desired
    return counts


def summed_status(
    object_plan: ObjectPlan, reports: Mapping[str, ClusterReport], generation: int | None
) -> dict[str, Any]:
    """The fleet-wide status of a replicated workload: the sum of its copies on the clusters it is on."""
    manifest = object_plan.manifest
    spec = manifest.body.get("spec")
    source_replicas = count_of(spec.get("replicas", 1)) if isinstance(spec, Mapping) else 1
    total = {"replicas": 0, "readyReplicas": 0, "availableReplicas": 0, "updatedReplicas": 0}
    for copy in object_plan.copies:
        desired = source_replicas if copy.replicas is None else copy.replicas
        report = reports.get(copy.cluster)
        entry = None
        if report is not None:
            entry = next(
                (
                    e
                    for e in report.workloads
                    if isinstance(e, Mapping)
                    and e.get("kind") == manifest.kind
                    and e.get("name") == manifest.name
                    and (e.get("namespace") or "") == manifest.namespace
                ),
                None,
            )
        for field, value in _copy_counts(entry, desired).items():
            total[field] += value
    available = total["availableReplicas"] >= source_replicas
    status: dict[str, Any] = {**total}
    if generation is not None:
        status["observedGeneration"] = generation
    if manifest.kind == "Deployment":
        status["conditions"] = [
            {
                "type": "Available",
                "status": "True" if available else "False",
                "reason": "MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable",
                "message": f"{total['availableReplicas']}/{source_replicas} available in workload clusters",
            }
        ]
    return status


class WriteBack:
    """``PlanObserver`` for control-plane mode. ``api`` reaches the control plane; ``wall_clock`` stamps
    events; ``instance`` names this controller replica in events (``reportingInstance``)."""

    def __init__(
        self,
        api: KubeApi,
        *,
        instance: str = COMPONENT,
        wall_clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.api = api
        self.instance = instance
        self.wall_clock = wall_clock or (lambda: datetime.now(UTC))
        self._kinds: dict[tuple[str, str], ResourceKind] | None = None
        self._labels: dict[ObjectKey, tuple[str | None, str | None]] = {}
        self._uids: dict[ObjectKey, str] = {}
        self._groups: dict[str, str] = {}  # group name → digest of the applied body
        self._group_uids: dict[str, str] = {}
        self._statuses: dict[ObjectKey, str] = {}
        self._generations: dict[ObjectKey, int] = {}
        self._said: dict[tuple[Any, ...], str] = {}  # (object, reason) → message last sent
        self.failures: list[str] = []  # of the last call, for logs and tests

    # PlanObserver -----------------------------------------------------------------------------------------

    def planned(self, plan: Plan, reports: Mapping[str, ClusterReport]) -> None:
        self.failures = []
        try:
            self._write_groups(plan.groups)
            for group in plan.groups:
                self._write_group_events(group)
                for object_plan in group.objects:
                    self._write_object(group, object_plan, reports)
            for entry in plan.unscheduled:
                self._label(entry.key, entry.api_version, (None, None))
            self._write_reschedule_events(plan, reports)
        except errors.ClusterError as error:  # unreachable, or discovery refused: retried next reconcile
            self._fail(str(error))
        except Exception as error:  # agents' data or the API's answers we did not foresee: the commit is
            # made, so this must not fail the reconcile (it would exit 3 with --once); retried next time
            log.exception("control-plane write-back failed")
            self._fail(f"unexpected {type(error).__name__}: {error}")
        for failure in self.failures:
            log.warning("control-plane write-back: %s", failure)

    # RolloutObserver --------------------------------------------------------------------------------------

    def rolled_out(self, events: Sequence[RolloutEvent]) -> None:
        """Tell a rollout step's releases, rollbacks and wave outcomes (``rollouts.events``) as Events on the
        Clusters and the RolloutStrategy; a failed write is logged, and the next step's are still sent."""
        self.failures = []
        try:
            for event in events:
                ref = {"apiVersion": event.api_version, "kind": event.kind, "name": event.name}
                self._event(ref, None, event.type, event.reason, event.message, event.occasion)
        except errors.ClusterError as error:  # unreachable: the moves are made; told no more this step
            self._fail(str(error))
        for failure in self.failures:
            log.warning("control-plane rollout events: %s", failure)

    # pieces -----------------------------------------------------------------------------------------------

    def _fail(self, message: str) -> None:
        self.failures.append(message)

    def _kind(self, api_version: str, kind: str) -> ResourceKind | None:
        group = api_version.rpartition("/")[0]
        if self._kinds is None or (group, kind) not in self._kinds:
            self._kinds = {(k.group, k.kind): k for k in self.api.discover()}
        return self._kinds.get((group, kind))

    def _write_groups(self, groups: Iterable[GroupPlan]) -> None:
        wanted = {group.name: group for group in groups}
        for group in wanted.values():
            body = schedule_group_body(group)
            digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
            if self._groups.get(group.name) == digest:
                continue
            try:
                applied = self.api.apply(SCHEDULE_GROUPS, body, FIELD_MANAGER)
            except KubeApiError as error:
                self._fail(f"ScheduleGroup {group.name}: {error}")
                continue
            self._groups[group.name] = digest
            self._group_uids[group.name] = str(applied["metadata"].get("uid", ""))
        try:
            existing, _ = self.api.list(SCHEDULE_GROUPS, f"{MANAGED_BY}={FIELD_MANAGER}")
        except KubeApiError as error:
            self._fail(f"listing ScheduleGroups: {error}")
            return
        for item in existing:
            name = item["metadata"]["name"]
            if name not in wanted:
                try:
                    self.api.delete(SCHEDULE_GROUPS, "", name)
                except KubeApiError as error:
                    self._fail(f"deleting ScheduleGroup {name}: {error}")
                    continue
                self._groups.pop(name, None)
                self._group_uids.pop(name, None)

    def _write_group_events(self, group: GroupPlan) -> None:
        ref = {"apiVersion": labels.POLICY_API_VERSION, "kind": "ScheduleGroup", "name": group.name}
        if group.status == "unschedulable":
            self._event(ref, self._group_uids.get(group.name), "Warning", "FailedScheduling", group.reason)
        else:
            reason = "ScheduleGroupSyncedToWorkloadCluster"
            self._event(ref, self._group_uids.get(group.name), "Normal", reason, group.reason)

    def _write_object(
        self, group: GroupPlan, object_plan: ObjectPlan, reports: Mapping[str, ClusterReport]
    ) -> None:
        manifest = object_plan.manifest
        clusters = (
            tuple(copy.cluster for copy in object_plan.copies) if group.status != "unschedulable" else ()
        )
        live = self._label(manifest.key, manifest.api_version, target_label(clusters))
        ref = {"apiVersion": manifest.api_version, "kind": manifest.kind, "name": manifest.name}
        if manifest.namespace:
            ref["namespace"] = manifest.namespace
        uid = self._uids.get(manifest.key)
        if group.policy is not None:
            message = policy_matched_message(group.policy, manifest.name)
            self._event(ref, uid, "Normal", "SchedulePolicyMatched", message)
        self._event(ref, uid, "Normal", "AddedToScheduleGroup", added_to_group_message(group))
        if (manifest.group, manifest.kind) in REPLICATED_KINDS and clusters:
            if live is not None and isinstance(live.get("metadata", {}).get("generation"), int):
                self._generations[manifest.key] = live["metadata"]["generation"]
            generation = self._generations.get(manifest.key)
            self._write_status(object_plan, summed_status(object_plan, reports, generation))

    def _label(self, key: ObjectKey, api_version: str, wanted: tuple[str | None, str | None]) -> Body | None:
        """Set (or remove) the target-cluster label and annotation when they changed; the live object when
        it was patched."""
        if self._labels.get(key) == wanted:
            return None
        kind = self._kind(api_version, key.kind)
        if kind is None:
            self._fail(f"{key}: the control plane does not serve {api_version} {key.kind}")
            return None
        label, annotation = wanted
        patch = {
            "metadata": {
                "labels": {labels.TARGET_CLUSTER: label},
                "annotations": {TARGET_CLUSTERS: annotation},
            }
        }
        try:
            live = self.api.merge_patch(kind, key.namespace, key.name, patch, FIELD_MANAGER)
        except KubeApiError as error:
            if error.status != 404:  # deleted since the snapshot: nothing to label
                self._fail(f"{key}: {error}")
            return None
        self._labels[key] = wanted
        self._uids[key] = str(live.get("metadata", {}).get("uid", ""))
        return live

    def _write_status(self, object_plan: ObjectPlan, status: dict[str, Any]) -> None:
        key = object_plan.manifest.key
        digest = json.dumps({k: v for k, v in status.items() if k != "observedGeneration"}, sort_keys=True)
        if self._statuses.get(key) == digest:
            return
        kind = self._kind(object_plan.manifest.api_version, key.kind)
        if kind is None:
            return
        try:
            self.api.merge_patch(kind, key.namespace, key.name, {"status": status}, FIELD_MANAGER, "status")
        except KubeApiError as error:
            if error.status != 404:
                self._fail(f"{key} status: {error}")
            return
        self._statuses[key] = digest

    def _write_reschedule_events(self, plan: Plan, reports: Mapping[str, ClusterReport]) -> None:
        planned = {group.name for group in plan.groups}
        for report in reports.values():
            for request in report.reschedule_requests:
                if request.group not in planned:
                    continue
                ref = {
                    "apiVersion": labels.POLICY_API_VERSION,
                    "kind": "ScheduleGroup",
                    "name": request.group,
                }
                uid = self._group_uids.get(request.group)
                self._event(
                    ref, uid, "Warning", "ReschedulingTriggered", request.reason, (report.name, request.since)
                )

    # events -----------------------------------------------------------------------------------------------

    def _event(
        self,
        ref: Mapping[str, str],
        uid: str | None,
        kind: str,
        reason: str,
        message: str,
        occasion: Any = None,
    ) -> None:
        """Send an Event unless this object was last told exactly this (for this ``occasion``)."""
        said_key = (ref["kind"], ref.get("namespace", ""), ref["name"], reason, occasion)
        if self._said.get(said_key) == message:
            return
        namespace = ref.get("namespace") or EVENT_NAMESPACE_OF_CLUSTER_SCOPED
        identity = f"{ref['kind']}/{namespace}/{ref['name']}/{reason}/{message}"
        name = f"{ref['name']}.{hashlib.sha256(identity.encode()).hexdigest()[:16]}"
        now = rfc3339(self.wall_clock())
        involved = {**ref, **({"uid": uid} if uid else {})}
        body = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": involved,
            "reason": reason,
            "message": message[:1024],
            "type": kind,
            "source": {"component": COMPONENT},
            "reportingComponent": COMPONENT,
            "reportingInstance": self.instance,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }
        try:
            try:
                self.api.create(EVENTS, namespace, body, FIELD_MANAGER)
            except KubeApiError as error:
                if error.status != 409:
                    raise
                existing = self.api.get(EVENTS, namespace, name) or {}
                count = int(existing.get("count") or 1) + 1
                self.api.merge_patch(
                    EVENTS, namespace, name, {"count": count, "lastTimestamp": now}, FIELD_MANAGER
                )
        except KubeApiError as error:
            self._fail(f"event {reason} for {ref['kind']} {ref['name']}: {error}")
            return
        self._said[said_key] = message
