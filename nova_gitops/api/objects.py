"""Kubernetes objects as the source holds them: a raw body plus where it came from and who it is."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from nova_gitops.api.problems import Problem, Severity, SourceLocation

Body = dict[str, Any]
"""A raw Kubernetes object as YAML loads it. Treated as immutable once loaded: copy-on-write only."""


@dataclass(frozen=True, slots=True)
class Document:
    """One YAML document of a source file, before it is classified. ``body`` is whatever the YAML held."""

    body: Any
    location: SourceLocation


@dataclass(frozen=True, slots=True, order=True)
class ObjectKey:
    """Identity of an object: API group ("" for core), kind, namespace ("" when cluster-scoped), name."""

    group: str
    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        kind = f"{self.kind}.{self.group}" if self.group else self.kind
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{kind}/{where}{self.name}"


def split_api_version(api_version: str) -> tuple[str, str]:
    """``"apps/v1"`` → ``("apps", "v1")``; ``"v1"`` → ``("", "v1")``."""
    group, _, version = api_version.rpartition("/")
    return group, version


@dataclass(frozen=True, slots=True)
class Manifest:
    """A validated workload object of the source.

    ``namespace`` is resolved: "" for cluster-scoped kinds, the source's default namespace (``-n``, else
    ``"default"``) for a namespaced object that names none (as kubectl does).
    ``body`` is the object as loaded and is never mutated.
    """

    body: Body
    location: SourceLocation
    api_version: str
    kind: str
    name: str
    namespace: str
    namespaced: bool
    scope_note: str | None = None  # what was assumed about a kind no CRD of the source describes (explain)

    @property
    def group(self) -> str:
        return split_api_version(self.api_version)[0]

    @property
    def version(self) -> str:
        return split_api_version(self.api_version)[1]

    @property
    def key(self) -> ObjectKey:
        return ObjectKey(self.group, self.kind, self.namespace, self.name)

    @property
    def metadata(self) -> Mapping[str, Any]:
        metadata = self.body.get("metadata")
        return metadata if isinstance(metadata, dict) else {}

    @property
    def labels(self) -> Mapping[str, str]:
        labels = self.metadata.get("labels")
        return labels if isinstance(labels, dict) else {}

    @property
    def annotations(self) -> Mapping[str, str]:
        annotations = self.metadata.get("annotations")
        return annotations if isinstance(annotations, dict) else {}


SERVER_METADATA_FIELDS: Final = frozenset(
    {"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink"}
)
"""Metadata the API server writes on every change: never what a user or git set."""
CLUSTER_RELATION_FIELDS: Final = ("finalizers", "ownerReferences")
"""Metadata that ties an object to one cluster: an owner reference names its owner by uid, and on any other
cluster (or once that owner is gone) the garbage collector deletes the object; a finalizer holds its every
deletion until some controller of that cluster removes it. Never rendered, and nova-agent never applies them
(issue 21): they come into sources with manifests copied from ``kubectl get -o yaml``."""
_STRIPPED_METADATA: Final = SERVER_METADATA_FIELDS | frozenset(CLUSTER_RELATION_FIELDS)
LAST_APPLIED_ANNOTATION: Final = "kubectl.kubernetes.io/last-applied-configuration"
CONTROLLER_ANNOTATIONS: Final = frozenset(
    {
        "deployment.kubernetes.io/revision",  # the Deployment controller: its newest ReplicaSet's number
        "deprecated.daemonset.template.generation",  # the API server, at each DaemonSet template change
        "control-plane.alpha.kubernetes.io/leader",  # leader election on a ConfigMap, renewed every few s
        "autoscaling.alpha.kubernetes.io/conditions",  # an HPA's status, when read as autoscaling/v1
        "autoscaling.alpha.kubernetes.io/current-metrics",
        "pv.kubernetes.io/bind-completed",  # the volume binder, on a claim it bound
        "pv.kubernetes.io/bound-by-controller",
        "volume.beta.kubernetes.io/storage-provisioner",
        "volume.kubernetes.io/storage-provisioner",
        "volume.kubernetes.io/selected-node",  # the scheduler, on a claim waiting for its first consumer
        "endpoints.kubernetes.io/last-change-trigger-time",
    }
)
"""Annotations that a cluster's controllers (or the API server) write on a user's object, never its author:
on another cluster they are that cluster's controllers' to write (an agent applying the control plane's
``deployment.kubernetes.io/revision`` would fight the workload cluster's Deployment controller for it), and
they change with no change of the author's (a control-plane source's revision must not move)."""
_STRIPPED_ANNOTATIONS: Final = CONTROLLER_ANNOTATIONS | {LAST_APPLIED_ANNOTATION}


def strip_server_fields(body: Body) -> Body:
    """``body`` without what the API server and the cluster's controllers write (``status``,
    :data:`SERVER_METADATA_FIELDS`, the last-applied and :data:`CONTROLLER_ANNOTATIONS`), nor
    :data:`CLUSTER_RELATION_FIELDS`; ``body`` itself when there is nothing to strip."""
    out = body
    if "status" in out:
        out = {key: value for key, value in out.items() if key != "status"}
    metadata = out.get("metadata")
    if not isinstance(metadata, dict):
        return out
    new_metadata = metadata
    if not _STRIPPED_METADATA.isdisjoint(metadata):
        new_metadata = {k: v for k, v in metadata.items() if k not in _STRIPPED_METADATA}
    annotations = new_metadata.get("annotations")
    if isinstance(annotations, dict) and not _STRIPPED_ANNOTATIONS.isdisjoint(annotations):
        kept = {k: v for k, v in annotations.items() if k not in _STRIPPED_ANNOTATIONS}
        new_metadata = {k: v for k, v in new_metadata.items() if k != "annotations" or kept}
        if kept:
            new_metadata["annotations"] = kept
    if new_metadata is metadata:
        return out
    if out is body:
        out = dict(body)
    out["metadata"] = new_metadata
    return out


RELATIONS_NAMED: Final = 5
"""How many objects the warning on :data:`CLUSTER_RELATION_FIELDS` names (then a count)."""


def cluster_relation_warnings(workloads: Sequence[Manifest]) -> list[Problem]:
    """ONE warning for the whole source when objects set :data:`CLUSTER_RELATION_FIELDS` (which
    :func:`strip_server_fields` drops): how many, the first few in source order, at the first one's field.
    None otherwise. One, not one per object: a directory copied from ``kubectl get -o yaml`` has them on
    hundreds of objects, and the user needs to hear it once."""
    count, named, fields = 0, list[str](), set[str]()
    first: tuple[Manifest, str] | None = None
    for manifest in workloads:
        metadata = manifest.body.get("metadata")
        if not isinstance(metadata, dict) or not (
            metadata.get("ownerReferences") or metadata.get("finalizers")
        ):
            continue
        found = [f"metadata.{name}" for name in ("ownerReferences", "finalizers") if metadata.get(name)]
        fields.update(found)
        count += 1
        if first is None:
            first = (manifest, found[0])
        if len(named) < RELATIONS_NAMED:
            named.append(str(manifest.key))
    if first is None:
        return []
    more = f" and {count - RELATIONS_NAMED} more" if count > RELATIONS_NAMED else ""
    message = (
        f"{count} object{'s' if count > 1 else ''} set {' or '.join(sorted(fields, reverse=True))} "
        f"({', '.join(named)}{more}): not rendered. "
        "An owner reference names its owner by uid in one cluster, and the garbage collector deletes the "
        "object where that owner is absent; a finalizer holds its deletion until a controller removes it. "
        "nova-agent never applies either (docs/sources.md)"
    )
    return [Problem(first[0].location, message, first[1], Severity.WARNING)]
