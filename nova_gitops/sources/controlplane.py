"""A Nova control plane as the source: SchedulePolicies, Clusters and workloads listed from a Kubernetes API.

In Nova, users ``kubectl apply`` policies and workloads to the control plane's API server and Nova places
them; here the same objects are listed into a snapshot of ``Document``s that goes through exactly the
validation, planning and rendering of a git source.

Which kinds: every served resource that can be listed and watched, minus cluster machinery (a deny list of
groups and resources: events, leases, endpoints, nodes, ScheduleGroups — which we write —, CRDs, API
registration...). Within those, objects a user did not write are skipped: anything owned by a controller
(ReplicaSets of Deployments, their Pods), objects in ``kube-system``/``kube-public``/``kube-node-lease``,
the objects every cluster creates by itself (``kube-root-ca.crt``, the ``default`` ServiceAccount and
service-account token Secrets, ``default/kubernetes`` Service, bootstrap RBAC, ``system-*`` PriorityClasses),
and objects being deleted.

What is kept of an object is what its author wrote: server fields are stripped (with the annotations a
cluster's controllers write, such as ``deployment.kubernetes.io/revision``:
``objects.CONTROLLER_ANNOTATIONS``), and so is what the API server fills in that would break elsewhere (a
Service's ``clusterIP`` from the control plane's range, a Job's generated selector and ``controller-uid``
labels). Workloads lose their ``status`` and the write-back's ``nova.elotl.co/target-cluster`` label, so
what the controller writes back never looks like a source change; Clusters keep their ``status`` (it is the
inventory agents report). docs/controlplane.md lists what a revision ignores, and why.

One snapshot is one consistent list per kind (one resourceVersion each, across pages). Its revision is a
digest of the kept content, not a resourceVersion: the same objects give the same revision (and no new
commit), however many unrelated writes (leases, events, heartbeats) moved the server's counter; what agents
report about workloads in a Cluster's status (health, reschedule requests) is left out of it too. The
watches do see those reports, so the write-back and rescheduling react at once.
"""

from __future__ import annotations

import hashlib
import json
import queue
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nova_gitops import errors
from nova_gitops.api import labels, objects
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import SourceLocation
from nova_gitops.clients.kuberest import KubeApiError
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.sources.kubeapi import Body, KubeApi, ResourceKind

DENIED_GROUPS = frozenset(
    {
        "events.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "apiregistration.k8s.io",
        "apiextensions.k8s.io",
        "authentication.k8s.io",
        "authorization.k8s.io",
        "certificates.k8s.io",
        "flowcontrol.apiserver.k8s.io",
        "internal.apiserver.k8s.io",
        "metrics.k8s.io",
        "resource.k8s.io",
        "storagemigration.k8s.io",
    }
)
DENIED_RESOURCES = frozenset(
    {
        ("", "events"),
        ("", "endpoints"),
        ("", "nodes"),
        ("", "componentstatuses"),
        ("", "bindings"),
        ("", "podtemplates"),
        ("", "persistentvolumes"),
        ("apps", "controllerrevisions"),
        ("storage.k8s.io", "volumeattachments"),
        ("storage.k8s.io", "csinodes"),
        ("storage.k8s.io", "csistoragecapacities"),
    }
)
NOVA_INPUTS = frozenset({("policy.elotl.co", "schedulepolicies"), ("cluster.elotl.co", "clusters")})
SYSTEM_NAMESPACES = frozenset({"kube-system", "kube-public", "kube-node-lease"})
AUTO_CREATED = frozenset(
    {
        ("", "configmaps", "kube-root-ca.crt"),
        ("", "serviceaccounts", "default"),
        ("", "services", "kubernetes"),
    }
)
VOLATILE_CLUSTER_STATUS = ("heartbeat", "lastUpdateTime")
REPORT_STATUS = (*VOLATILE_CLUSTER_STATUS, "workloads", "rescheduleRequests", "syncedRevision", "lastError")
"""What agents report besides capacity. It reaches the controller as reports (health, reschedule requests),
not as source content: a pod becoming ready must not make a new source revision (and a commit)."""
WRITE_BACK_ANNOTATIONS = ("nova.elotl.co/target-clusters",)


def is_source_kind(kind: ResourceKind) -> bool:
    """Whether objects of this served resource can be source objects."""
    if (kind.group, kind.plural) in NOVA_INPUTS:
        return True
    if kind.group in DENIED_GROUPS or kind.group.endswith(".elotl.co"):
        return False
    return (kind.group, kind.plural) not in DENIED_RESOURCES and {"list", "watch"} <= kind.verbs


def is_user_object(kind: ResourceKind, body: Mapping[str, Any], excluded_namespaces: frozenset[str]) -> bool:
    """Whether a listed object is one a user wrote (not one the cluster or a controller made)."""
    metadata = body.get("metadata") or {}
    name, namespace = str(metadata.get("name", "")), str(metadata.get("namespace") or "")
    if namespace in excluded_namespaces or "deletionTimestamp" in metadata:
        return False
    if kind.kind == "Namespace" and (name in excluded_namespaces or name == "default"):
        return False
    if any(owner.get("controller") for owner in metadata.get("ownerReferences") or []):
        return False
    if (kind.group, kind.plural, name) in AUTO_CREATED:
        return False
    if kind.kind == "Secret" and body.get("type") == "kubernetes.io/service-account-token":
        return False
    if (metadata.get("labels") or {}).get("kubernetes.io/bootstrapping") == "rbac-defaults":
        return False
    if kind.group == "rbac.authorization.k8s.io" and name.startswith("system:"):
        return False
    return not (kind.kind == "PriorityClass" and name.startswith("system-"))


def _without(mapping: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    return {key: value for key, value in mapping.items() if key not in keys}


def source_body(body: Body) -> Body:
    """The object as its author wrote it (see the module docstring); ``body`` is not modified."""
    kept = objects.strip_server_fields(body)
    metadata = dict(kept.get("metadata") or {})
    for field in ("ownerReferences", "finalizers", "deletionGracePeriodSeconds"):
        metadata.pop(field, None)
    api_version = str(body.get("apiVersion", ""))
    is_cluster = body.get("kind") == "Cluster" and api_version.startswith("cluster.elotl.co/")
    if not is_cluster:
        if labels.TARGET_CLUSTER in (metadata.get("labels") or {}):
            metadata["labels"] = _without(metadata["labels"], labels.TARGET_CLUSTER)
        if any(key in (metadata.get("annotations") or {}) for key in WRITE_BACK_ANNOTATIONS):
            metadata["annotations"] = _without(metadata["annotations"], *WRITE_BACK_ANNOTATIONS)
        for field in ("labels", "annotations"):
            if field in metadata and not metadata[field]:
                del metadata[field]
    result = {**kept, "metadata": metadata}
    if is_cluster and "status" in body:
        result["status"] = body["status"]
    spec = result.get("spec")
    service = body.get("kind") == "Service" and api_version == "v1" and isinstance(spec, dict)
    if service and isinstance(spec, dict) and spec.get("clusterIP") not in (None, "None"):
        result["spec"] = _without(spec, "clusterIP", "clusterIPs")
    if body.get("kind") == "Job" and isinstance(spec, dict) and not spec.get("manualSelector"):
        result["spec"] = _job_without_generated_selector(spec)
    return result


def _job_without_generated_selector(spec: Mapping[str, Any]) -> dict[str, Any]:
    generated = ("controller-uid", "batch.kubernetes.io/controller-uid")  # unique to this API server
    new_spec = _without(spec, "selector")
    template = new_spec.get("template")
    if isinstance(template, dict) and isinstance(template.get("metadata"), dict):
        template_labels = _without(template["metadata"].get("labels") or {}, *generated)
        template_metadata = {**template["metadata"], "labels": template_labels}
        if not template_labels:
            del template_metadata["labels"]
        new_spec["template"] = {**template, "metadata": template_metadata}
    return new_spec


def content_digest(body: Mapping[str, Any], *, ignored: tuple[str, ...] = VOLATILE_CLUSTER_STATUS) -> str:
    """A digest of the kept body without the ``ignored`` Cluster status fields (by default the heartbeats,
    which change every agent pass; :data:`REPORT_STATUS` for a snapshot's revision)."""
    relevant: Mapping[str, Any] = body
    status = body.get("status")
    if isinstance(status, dict) and any(field in status for field in ignored):
        relevant = {**body, "status": _without(status, *ignored)}
    text = json.dumps(relevant, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def location_of(kind: ResourceKind, body: Mapping[str, Any]) -> SourceLocation:
    """``deployments.apps/shop/web``: what problems name instead of a file (there is no file)."""
    metadata = body.get("metadata") or {}
    resource = f"{kind.plural}.{kind.group}" if kind.group else kind.plural
    namespace = metadata.get("namespace")
    return SourceLocation(f"{resource}/{namespace + '/' if namespace else ''}{metadata.get('name', '')}", 1)


@dataclass(frozen=True, slots=True)
class ControlPlaneSnapshot:
    """The control plane at one moment: a ``SourceSnapshot`` with ``root=None`` (``texts`` is empty: the
    objects have no files), plus the resourceVersion of each kind's list."""

    documents: tuple[Document, ...]
    texts: Mapping[str, str]
    source: SourceInfo
    resource_versions: Mapping[str, str]


class ControlPlaneSource:
    """Lists and watches a control plane through one :class:`KubeApi` (built from --kubeconfig/--context).

    ``name`` is what placement.yaml and commit trailers show as the source repo, e.g.
    ``controlplane:nova-cp``. ``kinds`` fixes the listed kinds (default: discovered, see the module
    docstring). ``watch_timeout`` bounds each watch request; ``close()`` ends ``changes()`` within it.
    """

    def __init__(
        self,
        api: KubeApi,
        name: str,
        *,
        kinds: Sequence[ResourceKind] | None = None,
        excluded_namespaces: frozenset[str] = SYSTEM_NAMESPACES,
        watch_timeout: int = 60,
        retry_delay: float = 2.0,
    ) -> None:
        self.api, self.name = api, name
        self._fixed_kinds = list(kinds) if kinds is not None else None
        self._kinds: list[ResourceKind] | None = None
        self._forbidden: set[ResourceKind] = set()  # 403: not granted; skipped until restart
        self.excluded_namespaces = excluded_namespaces
        self.watch_timeout, self.retry_delay = watch_timeout, retry_delay
        self._stop = threading.Event()

    def kinds(self) -> list[ResourceKind]:
        if self._fixed_kinds is not None:
            return self._fixed_kinds
        if self._kinds is None:
            self._kinds = [kind for kind in self.api.discover() if is_source_kind(kind)]
        return [kind for kind in self._kinds if kind not in self._forbidden]

    @property
    def forbidden(self) -> frozenset[ResourceKind]:
        """Discovered kinds the controller may not list (the ClusterRole does not grant them): skipped, and
        not asked again until the controller restarts, so a narrow ClusterRole costs no stream of 403s."""
        return frozenset(self._forbidden)

    def forget_kinds(self) -> None:
        """Rediscover at the next snapshot (a CRD was added or removed)."""
        self._kinds = None

    def _kept(self, kind: ResourceKind, items: list[Body]) -> list[Body]:
        return [source_body(item) for item in items if is_user_object(kind, item, self.excluded_namespaces)]

    def snapshot(self) -> ControlPlaneSnapshot:
        """List every kind once; raises ClusterError (KubeApiError, KubeUnavailable) when the API fails."""
        documents: list[Document] = []
        versions: dict[str, str] = {}
        digests: list[str] = []
        for kind in self.kinds():
            try:
                items, version = self.api.list(kind)
            except KubeApiError as error:
                if error.status == 403:  # not granted: skip it from now on
                    self._forbidden.add(kind)
                    continue
                if error.status in (404, 405):  # gone since discovery
                    self.forget_kinds()
                    continue
                raise
            versions[f"{kind.plural}.{kind.group}" if kind.group else kind.plural] = version
            for body in self._kept(kind, items):
                documents.append(Document(body, location_of(kind, body)))
        documents.sort(key=lambda document: document.location)
        digests = [f"{d.location.file}={content_digest(d.body, ignored=REPORT_STATUS)}" for d in documents]
        revision = hashlib.sha256("\n".join(digests).encode()).hexdigest()[:40]
        return ControlPlaneSnapshot(tuple(documents), {}, SourceInfo(self.name, revision), versions)

    # watching --------------------------------------------------------------------------------------------

    def close(self) -> None:
        self._stop.set()

    def changes(self) -> Iterator[None]:
        """Yield once per burst of relevant changes seen by the watches (one thread per kind), until
        ``close()``. Changes that leave an object's kept content as it was (status, heartbeats, our own
        write-back) are not changes."""
        notices: queue.Queue[str] = queue.Queue()
        watched: set[ResourceKind] = set()
        while not self._stop.is_set():
            try:
                kinds = self.kinds()
            except errors.ClusterError:  # the API is unreachable: discovery is retried on the next turn
                kinds = []
            for kind in kinds:
                if kind not in watched:
                    watched.add(kind)
                    threading.Thread(
                        target=self._watch_kind,
                        args=(kind, notices),
                        name=f"watch-{kind.plural}",
                        daemon=True,
                    ).start()
            try:
                notices.get(timeout=0.2)
            except queue.Empty:
                continue
            while not notices.empty():
                notices.get_nowait()
            yield None

    def _watch_kind(self, kind: ResourceKind, notices: queue.Queue[str]) -> None:
        digests: dict[tuple[str, str], str] | None = None
        while not self._stop.is_set():
            try:
                items, version = self.api.list(kind)
                current = {_key(item): content_digest(source_body(item)) for item in self._kept(kind, items)}
                if digests is not None and current != digests:
                    notices.put(kind.plural)
                digests = current
                version = self._follow(kind, version, digests, notices)
            except KubeApiError as error:
                if error.status == 403:  # not granted: stop watching this kind
                    self._forbidden.add(kind)
                    return
                if self._stop.wait(self.retry_delay):
                    return
            except (errors.ClusterError, OSError, ValueError):  # expired version, cut stream, server down
                if self._stop.wait(self.retry_delay):
                    return

    def _follow(
        self, kind: ResourceKind, version: str, digests: dict[tuple[str, str], str], notices: queue.Queue[str]
    ) -> str:
        """Stream watch events into ``digests`` until the stop flag or an ERROR event (then relist)."""
        while not self._stop.is_set():
            for event in self.api.watch(kind, version, self.watch_timeout):
                body = event.get("object") or {}
                if event.get("type") == "ERROR":
                    raise KubeApiError(
                        int(body.get("code") or 410), str(body.get("reason", "")), "watch error"
                    )
                version = str((body.get("metadata") or {}).get("resourceVersion") or version)
                if event.get("type") == "BOOKMARK":
                    continue
                key = _key(body)
                kept = event.get("type") != "DELETED" and is_user_object(kind, body, self.excluded_namespaces)
                digest = content_digest(source_body(body)) if kept else None
                if digests.get(key) != digest:
                    if digest is None:
                        digests.pop(key, None)
                    else:
                        digests[key] = digest
                    notices.put(kind.plural)
                if self._stop.is_set():
                    break
        return version


def _key(body: Mapping[str, Any]) -> tuple[str, str]:
    metadata = body.get("metadata") or {}
    return str(metadata.get("namespace") or ""), str(metadata.get("name") or "")
