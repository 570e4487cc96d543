"""One round of the simulated cluster's control plane: garbage collector, workload controllers, scheduler
and kubelet, over a consistent snapshot of the store.

A round runs with the store's lock held, so API clients see either none or all of its writes and nothing
changes under it; every write goes through `Operations` (defaulting, validation, resourceVersions, watch
events, managedFields) as the real controllers' writes go through kube-apiserver. A round writes only what
differs from what is stored, so repeating rounds reaches a fixed point: that is how `SimulatedCluster.step`
knows the cluster has settled. Rollouts are simplified where our tests do not care: a Deployment's new
ReplicaSet takes every replica at once (old ones scale to zero), and a StatefulSet replaces outdated pods
one at a time while all are Ready.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from tests.fakekube import simulation_kubelet as kubelet
from tests.fakekube import simulation_scheduling as scheduling
from tests.fakekube import simulation_statuses as statuses
from tests.fakekube import simulation_workloads as workloads
from tests.fakekube.operations import Operations
from tests.fakekube.preparing import Target
from tests.fakekube.resources import ResourceTable, ResourceType
from tests.fakekube.statuses import ApiError
from tests.fakekube.store import ObjectStore

Body = dict[str, Any]

DEPLOYMENTS = ("apps", "deployments")
REPLICASETS = ("apps", "replicasets")
STATEFULSETS = ("apps", "statefulsets")
DAEMONSETS = ("apps", "daemonsets")
JOBS = ("batch", "jobs")
PODS = ("", "pods")
NODES = ("", "nodes")
OWNER_KINDS = (DEPLOYMENTS, REPLICASETS, STATEFULSETS, DAEMONSETS, JOBS)

DAEMONSET_TOLERATIONS = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
)


def _uid(body: Mapping[str, Any]) -> str:
    return str(body["metadata"].get("uid", ""))


def _key(body: Mapping[str, Any]) -> tuple[str, str]:
    return (str(body["metadata"].get("namespace", "")), str(body["metadata"]["name"]))


def _revision(statefulset: Mapping[str, Any]) -> str:
    """The StatefulSet's update revision: its name and a hash of its pod template."""
    template = statefulset["spec"].get("template") or {}
    return f"{statefulset['metadata']['name']}-{workloads.template_hash(template)}"


class ControllerRound:
    """Reads the store once, then reconciles; `writes` counts what it changed and `errors` what failed."""

    def __init__(
        self,
        store: ObjectStore,
        table: ResourceTable,
        operations: Operations,
        now: datetime,
        job_duration: timedelta | None,
        run_pods: bool = True,
    ) -> None:
        self.store, self.table, self.operations = store, table, operations
        self.now = now
        self.stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
        self.job_duration = job_duration
        self.run_pods = run_pods
        self.writes = 0
        self.errors: list[str] = []

    # ----- reads and writes

    def objects(self, store_key: tuple[str, str]) -> list[Body]:
        return self.store.list_objects(store_key)

    def _type(self, store_key: tuple[str, str]) -> ResourceType:
        resource_type = self.table.find_any_version(*store_key)
        assert resource_type is not None, store_key
        return resource_type

    def _write(self, action: Callable[[], object], what: str) -> None:
        try:
            action()
            self.writes += 1
        except ApiError as error:  # e.g. the namespace is gone: the next round sees the new state
            self.errors.append(f"{what}: {error.message}")

    def create(self, store_key: tuple[str, str], body: Body, manager: str) -> None:
        target = Target(self._type(store_key), body["metadata"].get("namespace", ""), query={})
        self._write(
            lambda: self.operations.create(target, body, manager), f"create {body['metadata']['name']}"
        )

    def update(self, store_key: tuple[str, str], body: Body, manager: str, subresource: str = "") -> None:
        namespace, name = _key(body)
        target = Target(self._type(store_key), namespace, name, subresource, {})
        self._write(lambda: self.operations.update(target, body, manager), f"update {name}")

    def set_status(
        self, store_key: tuple[str, str], body: Mapping[str, Any], status: Body, manager: str
    ) -> None:
        if body.get("status") != status:
            self.update(store_key, {**body, "status": status}, manager, "status")

    def delete(self, store_key: tuple[str, str], body: Mapping[str, Any]) -> None:
        namespace, name = _key(body)
        target = Target(self._type(store_key), namespace, name, "", {})
        self._write(lambda: self.operations.delete(target, None), f"delete {name}")

    def _pods_by_owner(self) -> dict[str, list[Body]]:
        owned: dict[str, list[Body]] = {}
        for pod in self.objects(PODS):
            uid = workloads.controller_uid(pod)
            if uid is not None:
                owned.setdefault(uid, []).append(pod)
        return owned

    def _unique_name(self, prefix: str, seed: str, taken: Iterable[str]) -> str:
        names = set(taken)
        for attempt in range(1000):
            # seeded by the store's version too: a replacement never reuses the name of the pod it replaces
            name = f"{prefix}-{workloads.short_suffix(f'{seed}/{self.store.current_rv}/{attempt}')}"
            if name not in names:
                return name
        raise AssertionError("no free generated name")  # pragma: no cover

    # ----- the round

    def run(self) -> None:
        self.collect_garbage()
        self.deployments()
        self.replicasets()
        self.statefulsets()
        self.daemonsets()
        self.jobs()
        self.schedule_and_run()
        self.write_statuses()

    def collect_garbage(self) -> None:
        """Objects whose controller is gone are deleted (background cascading deletion)."""
        owners = {_uid(body) for store_key in OWNER_KINDS for body in self.objects(store_key)}
        for store_key in (REPLICASETS, PODS):
            for body in self.objects(store_key):
                uid = workloads.controller_uid(body)
                if uid is not None and uid not in owners:
                    self.delete(store_key, body)

    def deployments(self) -> None:
        replicasets: dict[str, list[Body]] = {}
        for replicaset in self.objects(REPLICASETS):
            replicasets.setdefault(workloads.controller_uid(replicaset) or "", []).append(replicaset)
        for deployment in self.objects(DEPLOYMENTS):
            wanted = int(deployment["spec"].get("replicas", 1))
            owned = replicasets.get(_uid(deployment), [])
            newest = max((workloads.revision_of(rs) for rs in owned), default=0)
            new = workloads.replicaset_for(deployment, wanted, newest + 1)
            current = next((rs for rs in owned if rs["metadata"]["name"] == new["metadata"]["name"]), None)
            if current is None:
                self.create(REPLICASETS, new, "kube-controller-manager")
            elif (
                workloads.revision_of(current) < newest
            ):  # a rollback: the old ReplicaSet is the newest again
                rs_annotations = {
                    **(current["metadata"].get("annotations") or {}),
                    workloads.REVISION: str(newest + 1),
                }
                current = {**current, "metadata": {**current["metadata"], "annotations": rs_annotations}}
                self.update(REPLICASETS, current, "kube-controller-manager")
            revision = str(workloads.revision_of(current) if current is not None else newest + 1)
            annotations = deployment["metadata"].get("annotations") or {}
            if annotations.get(workloads.REVISION) != revision:  # as the real controller annotates it
                metadata = {
                    **deployment["metadata"],
                    "annotations": {**annotations, workloads.REVISION: revision},
                }
                self.update(DEPLOYMENTS, {**deployment, "metadata": metadata}, "kube-controller-manager")
            for replicaset in owned:
                replicas = wanted if replicaset["metadata"]["name"] == new["metadata"]["name"] else 0
                if replicaset["spec"].get("replicas") != replicas:
                    spec = {**replicaset["spec"], "replicas": replicas}
                    self.update(REPLICASETS, {**replicaset, "spec": spec}, "kube-controller-manager")

    def replicasets(self) -> None:
        owned = self._pods_by_owner()
        taken = {pod["metadata"]["name"] for pod in self.objects(PODS)}
        for replicaset in self.objects(REPLICASETS):
            pods = [pod for pod in owned.get(_uid(replicaset), []) if not workloads.is_finished(pod)]
            wanted = int(replicaset["spec"].get("replicas", 1))
            for _ in range(wanted - len(pods)):
                name = self._unique_name(replicaset["metadata"]["name"], _uid(replicaset), taken)
                taken.add(name)
                self.create(PODS, workloads.from_template(replicaset, name, {}), "kube-controller-manager")
            # scale down: unscheduled pods first, then not ready ones, then the newest names
            doomed = sorted(
                pods,
                key=lambda pod: (
                    bool((pod.get("spec") or {}).get("nodeName")),
                    workloads.is_ready(pod),
                    [-ord(c) for c in pod["metadata"]["name"]],
                ),
            )
            for pod in doomed[: max(0, len(pods) - wanted)]:
                self.delete(PODS, pod)

    def statefulsets(self) -> None:
        owned = self._pods_by_owner()
        for statefulset in self.objects(STATEFULSETS):
            name, spec = statefulset["metadata"]["name"], statefulset["spec"]
            revision = _revision(statefulset)
            wanted = int(spec.get("replicas", 1))
            pods = {pod["metadata"]["name"]: pod for pod in owned.get(_uid(statefulset), [])}
            ordered = spec.get("podManagementPolicy", "OrderedReady") == "OrderedReady"
            for index in range(wanted):
                pod_name = f"{name}-{index}"
                if pod_name in pods:
                    if ordered and not workloads.is_ready(pods[pod_name]):
                        break
                    continue
                labels = {
                    workloads.CONTROLLER_REVISION_HASH: revision,
                    workloads.STATEFULSET_POD_NAME: pod_name,
                    "apps.kubernetes.io/pod-index": str(index),
                }
                pod = workloads.from_template(statefulset, pod_name, labels)
                pod["spec"].update(hostname=pod_name, subdomain=spec.get("serviceName", name))
                self.create(PODS, pod, "kube-controller-manager")
                if ordered:
                    break
            for pod_name, pod in sorted(pods.items(), reverse=True):
                if int(pod_name.rpartition("-")[2] or 0) >= wanted:
                    self.delete(PODS, pod)
            current = [
                pod for pod_name, pod in pods.items() if int(pod_name.rpartition("-")[2] or 0) < wanted
            ]
            outdated = [
                p
                for p in current
                if p["metadata"]["labels"].get(workloads.CONTROLLER_REVISION_HASH) != revision
            ]
            if outdated and all(workloads.is_ready(pod) for pod in current):
                self.delete(PODS, max(outdated, key=lambda pod: pod["metadata"]["name"]))

    def daemonsets(self) -> None:
        owned = self._pods_by_owner()
        nodes = scheduling.node_states(self.objects(NODES), [])
        for daemonset in self.objects(DAEMONSETS):
            template_spec = (daemonset["spec"].get("template") or {}).get("spec") or {}
            tolerations = [*(template_spec.get("tolerations") or []), *DAEMONSET_TOLERATIONS]
            probe = {**template_spec, "tolerations": tolerations}
            eligible = {
                node.name
                for node in nodes
                if scheduling.matches_node(probe, node.labels, node.name)
                and scheduling.untolerated_taint(probe, node) is None
            }
            pods = owned.get(_uid(daemonset), [])
            by_node = {self._daemon_node(pod): pod for pod in pods}
            for pod in pods:
                if self._daemon_node(pod) not in eligible:
                    self.delete(PODS, pod)
            taken = {pod["metadata"]["name"] for pod in self.objects(PODS)}
            for node_name in sorted(eligible - set(by_node)):
                name = self._unique_name(
                    daemonset["metadata"]["name"], f"{_uid(daemonset)}/{node_name}", taken
                )
                taken.add(name)
                pod = workloads.from_template(daemonset, name, {})
                term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
                pod["spec"]["affinity"] = {
                    **(pod["spec"].get("affinity") or {}),
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
                    },
                }
                pod["spec"]["tolerations"] = tolerations
                self.create(PODS, pod, "kube-controller-manager")

    @staticmethod
    def _daemon_node(pod: Mapping[str, Any]) -> str:
        terms = (
            (((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {})
            .get("requiredDuringSchedulingIgnoredDuringExecution", {})
            .get("nodeSelectorTerms", [])
        )
        for term in terms:
            for field in term.get("matchFields") or []:
                if field.get("key") == "metadata.name" and field.get("values"):
                    return str(field["values"][0])
        return str((pod.get("spec") or {}).get("nodeName", ""))

    def jobs(self) -> None:
        owned = self._pods_by_owner()
        taken = {pod["metadata"]["name"] for pod in self.objects(PODS)}
        for job in self.objects(JOBS):
            spec = job["spec"]
            pods = owned.get(_uid(job), [])
            if self.job_duration is not None:
                for pod in pods:
                    started = (pod.get("status") or {}).get("startTime")
                    if (
                        workloads.is_ready(pod)
                        and started
                        and started <= self._stamp_before(self.job_duration)
                    ):
                        self.set_status(PODS, pod, workloads.succeeded_status(pod, self.stamp), "kubelet")
            if spec.get("suspend"):
                continue
            if statuses.job_failed(job, pods):  # backoffLimit exceeded: no more pods, the active ones go
                for pod in pods:
                    if not workloads.is_finished(pod):
                        self.delete(PODS, pod)
                continue
            succeeded = sum(1 for pod in pods if (pod.get("status") or {}).get("phase") == "Succeeded")
            active = sum(1 for pod in pods if not workloads.is_finished(pod))
            parallelism = int(spec.get("parallelism", 1))
            completions = spec.get("completions", 1)
            if isinstance(completions, int):
                wanted = min(parallelism, completions - succeeded)
            else:
                wanted = parallelism if succeeded == 0 else 0
            labels = {
                workloads.JOB_NAME: job["metadata"]["name"],
                "batch.kubernetes.io/job-name": job["metadata"]["name"],
                workloads.JOB_CONTROLLER_UID: _uid(job),
                "batch.kubernetes.io/controller-uid": _uid(job),
            }
            for _ in range(max(0, wanted - active)):
                name = self._unique_name(job["metadata"]["name"], f"{_uid(job)}/{succeeded}", taken)
                taken.add(name)
                self.create(PODS, workloads.from_template(job, name, labels), "kube-controller-manager")

    def _stamp_before(self, delta: timedelta) -> str:
        return (self.now - delta).strftime("%Y-%m-%dT%H:%M:%SZ")

    def schedule_and_run(self) -> None:
        """kube-scheduler binds what fits and marks the rest Unschedulable; kubelet starts bound pods (or
        leaves them waiting, by image name: `simulation_kubelet`)."""
        pods = self.objects(PODS)
        live = [pod for pod in pods if not workloads.is_finished(pod)]
        bound = [pod for pod in live if (pod.get("spec") or {}).get("nodeName")]
        nodes = scheduling.node_states(self.objects(NODES), bound)
        waiting = sorted(
            (pod for pod in live if not (pod.get("spec") or {}).get("nodeName")),
            key=lambda pod: (pod["metadata"].get("creationTimestamp", ""), _key(pod)),
        )
        for pod in waiting:
            decision = scheduling.schedule(pod, nodes)
            if decision.node is None:
                status = workloads.unschedulable_status(pod, decision.message, self.stamp)
                self.set_status(PODS, pod, status, "kube-scheduler")
            else:
                self.update(
                    PODS, {**pod, "spec": {**pod["spec"], "nodeName": decision.node}}, "kube-scheduler"
                )
        for pod in bound if self.run_pods else ():
            if (pod.get("status") or {}).get("phase") == "Pending" or not workloads.is_ready(pod):
                node_ip = workloads.pod_ip(f"node/{pod['spec']['nodeName']}")
                self.set_status(PODS, pod, kubelet.pod_status(pod, node_ip, self.stamp), "kubelet")

    def write_statuses(self) -> None:
        owned = self._pods_by_owner()
        for replicaset in self.objects(REPLICASETS):
            status = statuses.replicaset_status(replicaset, owned.get(_uid(replicaset), []))
            self.set_status(REPLICASETS, replicaset, status, "kube-controller-manager")
        replicasets: dict[str, list[Body]] = {}
        for replicaset in self.objects(REPLICASETS):
            replicasets.setdefault(workloads.controller_uid(replicaset) or "", []).append(replicaset)
        for deployment in self.objects(DEPLOYMENTS):
            owned_sets = replicasets.get(_uid(deployment), [])
            new_name = workloads.replicaset_for(deployment, 0)["metadata"]["name"]
            new = next((rs for rs in owned_sets if rs["metadata"]["name"] == new_name), None)
            if new is None:
                continue
            status = statuses.deployment_status(deployment, new, owned_sets, owned, self.now, self.stamp)
            self.set_status(DEPLOYMENTS, deployment, status, "kube-controller-manager")
        for statefulset in self.objects(STATEFULSETS):
            revision = _revision(statefulset)
            status = statuses.statefulset_status(statefulset, owned.get(_uid(statefulset), []), revision)
            self.set_status(STATEFULSETS, statefulset, status, "kube-controller-manager")
        for daemonset in self.objects(DAEMONSETS):
            pods = owned.get(_uid(daemonset), [])
            status = statuses.daemonset_status(daemonset, len(pods), pods)
            self.set_status(DAEMONSETS, daemonset, status, "kube-controller-manager")
        for job in self.objects(JOBS):
            status = statuses.job_status(job, owned.get(_uid(job), []), self.stamp)
            self.set_status(JOBS, job, status, "kube-controller-manager")
