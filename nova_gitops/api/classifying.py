"""What one document of a source is, read alone: a SchedulePolicy, a Cluster, one of our own documents (a
PodControllerShape, a RolloutStrategy), a workload checked as kube-apiserver would check it, or ignored
(``classify_document``). It depends on nothing else of the source but the CRD scopes and the default
namespace, so a cache can keep it (``ClassifiedMemo``) and ``inputs.build_source_set`` validate only the
files that changed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol

from nova_gitops.api import (
    clusters,
    kinds,
    labels,
    names,
    podshapes,
    policies,
    rollouts,
    secrets,
    selectors,
)
from nova_gitops.api.clusters import Cluster
from nova_gitops.api.objects import (
    Document,
    Manifest,
    ObjectKey,
    split_api_version,
)
from nova_gitops.api.placementannotations import check_placement_annotations
from nova_gitops.api.policies import SchedulePolicy
from nova_gitops.api.problems import (
    Problem,
    Severity,
    excerpt,
    name_subject,
)

Classification = (
    SchedulePolicy | Cluster | podshapes.PodControllerShape | rollouts.RolloutStrategy | Manifest | None
)


class Role(Enum):
    """What a document is to a source set."""

    POLICY = "SchedulePolicy"
    CLUSTER = "Cluster"
    SHAPE = "PodControllerShape"
    STRATEGY = "RolloutStrategy"
    WORKLOAD = "workload"
    IGNORED = "ignored"  # a ScheduleGroup (warned about), or a document without apiVersion and kind


@dataclass(frozen=True, slots=True)
class Classified:
    """What ``build_source_set`` makes of one document read alone: its role, the object it validates to
    (None when invalid or ignored), the identity it claims for the duplicate check, and its own problems
    (not yet pointed at their fields' lines).

    It depends on the document, the default namespace (``namespace``, as given to ``build_source_set``) and,
    for a workload, the scope a CRD of the source gives its kind (``crd_scope``: ``crds.get((group, kind))``
    when it was read) — nothing else of the source. So a cache that keeps it with the document's bytes can
    hand it back (``ClassifiedMemo``) and ``build_source_set`` takes it as long as those two still hold,
    which is what lets a load validate only the files that changed."""

    role: Role
    value: Classification
    claim: tuple[str, object] | None
    """(what, key) a second definition of which is a duplicate; an object's key is its ``ObjectKey``'s
    fields as a plain tuple (``ObjectKeyFields``), which is hashed and compared at C speed."""
    problems: tuple[Problem, ...]
    namespace: str | None = None
    crd_scope: bool | None = None
    kind_key: kinds.GroupKind | None = None  # a workload's (group, kind), whose CRD scope ``crd_scope`` is


class ClassifiedMemo(Protocol):
    """Classifications kept from earlier loads, by document (``sources.parsecache`` keeps them on disk)."""

    def get(self, document: Document) -> Classified | None: ...

    def put(self, document: Document, classified: Classified) -> None: ...


def classify_document(
    document: Document, crds: Mapping[kinds.GroupKind, bool], namespace: str | None = None
) -> Classified:
    """What ``document`` is, read alone (``Classified``); ``crds`` are the source's CRD scopes and
    ``namespace`` is ``build_source_set``'s."""
    defaults = _Defaults(namespace or "default", namespace is not None)
    problems: list[Problem] = []
    body = document.body if isinstance(document.body, dict) else {}
    api_version, kind = body.get("apiVersion"), body.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        problems.append(Problem(document.location, "apiVersion and kind are required and must be text"))
        return Classified(Role.IGNORED, None, None, tuple(problems), namespace)
    group = split_api_version(api_version)[0]
    if group == POLICY_GROUP and kind == "SchedulePolicy":
        policy = policies.parse_policy(document, problems)
        return Classified(Role.POLICY, policy, _claim("SchedulePolicy", body), tuple(problems), namespace)
    if group == CLUSTER_GROUP and kind == "Cluster":
        cluster = clusters.parse_cluster(document, problems)
        return Classified(Role.CLUSTER, cluster, _claim("Cluster", body), tuple(problems), namespace)
    if podshapes.is_shape_document(group, kind):
        shape = podshapes.parse_shape(document, problems)
        return Classified(Role.SHAPE, shape, None, tuple(problems), namespace)
    if rollouts.is_strategy_document(group, kind):
        strategy = rollouts.parse_strategy(document, problems)
        return Classified(Role.STRATEGY, strategy, None, tuple(problems), namespace)
    if group == POLICY_GROUP and kind == "ScheduleGroup":
        message = "ScheduleGroup objects are made by the scheduler, not read from the source; ignored"
        problems.append(Problem(document.location, message, severity=Severity.WARNING))
        return Classified(Role.IGNORED, None, None, tuple(problems), namespace)
    if group in kinds.NOVA_CONTROL_PLANE_GROUPS:  # RecoveryPlan, ReceivedAlert: Nova's, not a workload's
        problems.append(Problem(document.location, _novas_own(group, kind), severity=Severity.WARNING))
        name_subject(problems, 0, kind, _raw_name(body))
        return Classified(Role.IGNORED, None, None, tuple(problems), namespace)
    key = _raw_key(body, group, kind, crds, defaults)
    manifest = _parse_workload(document, api_version, kind, crds, problems, defaults)
    if (raw_name := _raw_name(body)) is not None:  # without a name, the problem is its name
        name_subject(problems, 0, kind, raw_name)
    claim = None if key is None else (OBJECT_CLAIM, key)
    crd_scope = crds.get((group, kind))
    return Classified(Role.WORKLOAD, manifest, claim, tuple(problems), namespace, crd_scope, (group, kind))


OBJECT_CLAIM = "object"  # what a workload claims (``Classified.claim``)


def _novas_own(group: str, kind: str) -> str:
    """The warning at an object of Nova's own API groups that we do not read (issue 22, item 4)."""
    return (
        f"{kind}.{group} is Nova's own kind: left to Nova's control plane; a renderer does not act on it "
        f"(nor sends it to a workload cluster)"
    )


def _claim(what: str, body: Mapping[str, Any]) -> tuple[str, object] | None:
    name = _raw_name(body)
    return None if name is None else (what, name)


@dataclass(frozen=True, slots=True)
class _Defaults:
    namespace: str  # of namespaced objects that name none
    given: bool  # whether -n gave it


POLICY_GROUP = split_api_version(labels.POLICY_API_VERSION)[0]
CLUSTER_GROUP = split_api_version(labels.CLUSTER_API_VERSION)[0]


def _raw_name(body: Mapping[str, Any]) -> str | None:
    metadata = body.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return name if isinstance(name, str) and name else None


ObjectKeyFields = tuple[str, str, str, str]
"""An ``ObjectKey``'s group, kind, namespace and name: what an object claims (``Classified.claim``)."""


def key_fields(key: ObjectKey) -> ObjectKeyFields:
    return (key.group, key.kind, key.namespace, key.name)


def _raw_key(
    body: Mapping[str, Any], group: str, kind: str, crds: Mapping[kinds.GroupKind, bool], defaults: _Defaults
) -> ObjectKeyFields | None:
    """The key an object claims, read before validation so that duplicates are reported even when invalid."""
    name = _raw_name(body)
    metadata = body.get("metadata")
    namespace = metadata.get("namespace") if isinstance(metadata, dict) else None
    if name is None:
        return None
    namespace = namespace if isinstance(namespace, str) else ""
    if kinds.is_namespaced(group, kind, bool(namespace), crds, namespace_given=defaults.given):
        return (group, kind, namespace or defaults.namespace, name)
    return (group, kind, "", name)


def _parse_workload(
    document: Document,
    api_version: str,
    kind: str,
    crds: Mapping[kinds.GroupKind, bool],
    problems: list[Problem],
    defaults: _Defaults,
) -> Manifest | None:
    """A workload object, checked as kube-apiserver would check what makes it a file and a placement."""
    check = names.Fields(document.location, problems)
    group, version = split_api_version(api_version)
    if not version or "/" in group or " " in api_version:
        check.error(
            "apiVersion", f"{excerpt(api_version)} is not group/version (apps/v1) or a core version (v1)"
        )
    body = document.body
    metadata = check.mapping(body.get("metadata"), "metadata", required=True) or {}
    check.unknown(metadata, "metadata", names.OBJECT_META_FIELDS)
    name = _object_name(metadata, group, kind, check)
    raw_namespace = metadata.get("namespace")
    namespace = check.text(raw_namespace, "metadata.namespace") or ""
    if namespace and not selectors.is_dns1123_label(namespace):
        check.error(
            "metadata.namespace", f"{excerpt(namespace)} is not a valid namespace: {names.DNS1123_LABEL_RULE}"
        )
    scope = kinds.scope_of(group, kind, bool(namespace), crds, namespace_given=defaults.given)
    namespaced = scope.namespaced
    if namespace and not namespaced:
        check.warning("metadata.namespace", f"{kind} is cluster-scoped; the namespace is ignored")
    check.labels(metadata.get("labels"), "metadata.labels")
    annotations = check.annotations(metadata.get("annotations"), "metadata.annotations")
    check_placement_annotations(annotations, check)
    if group == "" and kind == "Secret":
        secrets.check_secret_data(body, check)
    if not check.ok or name is None:
        return None
    resolved = (namespace or defaults.namespace) if namespaced else ""
    note = kinds.assumption(scope, group, kind)
    return Manifest(body, document.location, api_version, kind, name, resolved, namespaced, note)


_RBAC_GROUP = "rbac.authorization.k8s.io"


def _object_name(metadata: Mapping[str, Any], group: str, kind: str, check: names.Fields) -> str | None:
    """metadata.name, valid for its kind: a DNS-1123 label for a Namespace, a DNS-1035 label for a Service,
    a path segment for RBAC objects (``system:aggregate-to-view``), a DNS-1123 subdomain for the rest."""
    if metadata.get("name") is None and metadata.get("generateName") is not None:
        check.error(
            "metadata.name", "required: generateName is not supported, a GitOps object needs a stable name"
        )
        return None
    name = check.text(metadata.get("name"), "metadata.name", required=True)
    if name is None:
        return None
    if group == "" and kind == "Namespace":
        valid, rule = selectors.is_dns1123_label(name), names.DNS1123_LABEL_RULE
    elif group == "" and kind == "Service":
        valid, rule = names.is_dns1035_label(name), names.DNS1035_LABEL_RULE
    elif group == _RBAC_GROUP:
        reason = names.path_segment_problem(name) if name else "must not be empty"
        valid, rule = reason is None, reason or ""
    else:
        valid, rule = selectors.is_dns1123_subdomain(name), names.DNS1123_SUBDOMAIN_RULE
    if not valid:
        check.error("metadata.name", f"{excerpt(name)} is not a valid {kind} name: {rule}")
        return None
    if group == "" and kind == "Namespace" and name in names.SYSTEM_NAMESPACES:
        check.error(
            "metadata.name",
            f"namespace {name!r} belongs to the cluster: nova-gitops never applies or deletes it, so the "
            "source must not define it (remove this Namespace; a policy's namespaceSelector sees it with "
            f"only the label {labels.METADATA_NAME}={name})",
        )
        return None
    return name
