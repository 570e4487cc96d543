"""What nova-gitops knows about kinds without asking an API server: their scope, and where pods hide.

An offline render has no discovery API, yet it must know whether ``Role`` lives in a namespace (its file
goes under ``clusters/<c>/<namespace>/``) or ``ClusterRole`` does not (``clusters/<c>/_cluster/``).
docs/design.md §3 "Scope": built-in kinds come from the table below, custom kinds from the
CustomResourceDefinitions in the source. A kind known to neither (a custom resource whose CRD is installed
some other way) is namespaced when it names a ``metadata.namespace``, when ``-n`` was given (``kubectl apply
-n`` would put it there), or when its API group is not one known to serve only cluster-scoped kinds (issue
10): most custom resources are namespaced, and an object wrongly taken for cluster-scoped would land in
``_cluster/`` and match no policy's ``namespaceSelector``. Which of these decided is kept (``Scope.reason``)
so ``explain`` can say what was assumed.

The pod-controller table tells the scheduler where each controller keeps its pod template and its replica
count, so demand and Divide spreading are computed from data rather than from a chain of ``if kind ==``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from nova_gitops.api.objects import Document, split_api_version
from nova_gitops.api.problems import Problem, described

GroupKind = tuple[str, str]
"""(API group, "" for core; kind)."""

_NAMESPACED_KINDS: Mapping[str, str] = {
    "": "Binding ConfigMap Endpoints Event LimitRange PersistentVolumeClaim Pod PodTemplate"
    " ReplicationController ResourceQuota Secret Service ServiceAccount",
    "apps": "ControllerRevision DaemonSet Deployment ReplicaSet StatefulSet",
    "autoscaling": "HorizontalPodAutoscaler",
    "batch": "CronJob Job",
    "coordination.k8s.io": "Lease LeaseCandidate",
    "discovery.k8s.io": "EndpointSlice",
    "events.k8s.io": "Event",
    "extensions": "DaemonSet Deployment Ingress NetworkPolicy ReplicaSet",
    "networking.k8s.io": "Ingress NetworkPolicy",
    "policy": "PodDisruptionBudget",
    "rbac.authorization.k8s.io": "Role RoleBinding",
    "resource.k8s.io": "ResourceClaim ResourceClaimTemplate",
    "storage.k8s.io": "CSIStorageCapacity",
    "authorization.k8s.io": "LocalSubjectAccessReview",
    "metrics.k8s.io": "PodMetrics",
}

_CLUSTER_KINDS: Mapping[str, str] = {
    "": "ComponentStatus Namespace Node PersistentVolume",
    "admissionregistration.k8s.io": "MutatingAdmissionPolicy MutatingAdmissionPolicyBinding"
    " MutatingWebhookConfiguration ValidatingAdmissionPolicy ValidatingAdmissionPolicyBinding"
    " ValidatingWebhookConfiguration",
    "apiextensions.k8s.io": "CustomResourceDefinition",
    "apiregistration.k8s.io": "APIService",
    "authentication.k8s.io": "SelfSubjectReview TokenReview",
    "authorization.k8s.io": "SelfSubjectAccessReview SelfSubjectRulesReview SubjectAccessReview",
    "certificates.k8s.io": "CertificateSigningRequest ClusterTrustBundle",
    "extensions": "PodSecurityPolicy",
    "flowcontrol.apiserver.k8s.io": "FlowSchema PriorityLevelConfiguration",
    "internal.apiserver.k8s.io": "StorageVersion",
    "metrics.k8s.io": "NodeMetrics",
    "networking.k8s.io": "IPAddress IngressClass ServiceCIDR",
    "node.k8s.io": "RuntimeClass",
    "policy": "PodSecurityPolicy",
    "rbac.authorization.k8s.io": "ClusterRole ClusterRoleBinding",
    "resource.k8s.io": "DeviceClass ResourceSlice",
    "scheduling.k8s.io": "PriorityClass",
    "storage.k8s.io": "CSIDriver CSINode StorageClass VolumeAttachment VolumeAttributesClass",
    "storagemigration.k8s.io": "StorageVersionMigration",
    "policy.elotl.co": "SchedulePolicy ScheduleGroup",
    "cluster.elotl.co": "Cluster",
}

BUILTIN_SCOPES: Mapping[GroupKind, bool] = {
    **{(group, kind): True for group, kinds in _NAMESPACED_KINDS.items() for kind in kinds.split()},
    **{(group, kind): False for group, kinds in _CLUSTER_KINDS.items() for kind in kinds.split()},
}
"""(group, kind) → namespaced, for the kinds every Kubernetes API server (and Nova) serves."""


_THIRD_PARTY_CLUSTER_KINDS: Mapping[str, str] = {
    "cert-manager.io": "ClusterIssuer",
    "external-secrets.io": "ClusterSecretStore ClusterExternalSecret",
    "kyverno.io": "ClusterPolicy ClusterCleanupPolicy",
    "gateway.networking.k8s.io": "GatewayClass",
    "snapshot.storage.k8s.io": "VolumeSnapshotClass VolumeSnapshotContent",
    "karpenter.sh": "NodePool NodeClaim Provisioner",
    "karpenter.k8s.aws": "EC2NodeClass AWSNodeTemplate",
    "templates.gatekeeper.sh": "ConstraintTemplate",
}
"""Well-known custom kinds that are cluster-scoped, for sources that ship their objects without the CRD."""

KNOWN_CLUSTER_SCOPES: Mapping[GroupKind, bool] = {
    **BUILTIN_SCOPES,
    **{(group, kind): False for group, kinds in _THIRD_PARTY_CLUSTER_KINDS.items() for kind in kinds.split()},
}

NOVA_CONTROL_PLANE_GROUPS: frozenset[str] = frozenset(
    {"policy.elotl.co", "cluster.elotl.co", "recovery.elotl.co"}
)
"""Elotl Nova's own API groups, served by Nova's control plane alone (try-nova: ``scripts/crds`` and the
disaster-recovery examples' ``RecoveryPlan`` and ``ReceivedAlert``). Besides the SchedulePolicies and Clusters
a source is read for, their objects are Nova's to act on: a source holding one gets a warning, and the object
is never a workload (issue 22, item 4). Our own group, ``gitops.nova.elotl.co``, is not one of them."""

CLUSTER_SCOPED_GROUPS: frozenset[str] = frozenset(
    {group for group in _CLUSTER_KINDS if group not in _NAMESPACED_KINDS}
    | {"karpenter.sh", "karpenter.k8s.aws", "templates.gatekeeper.sh", "constraints.gatekeeper.sh"}
)
"""API groups that serve only cluster-scoped kinds: an unknown kind of one of them is taken as
cluster-scoped too (Gatekeeper's constraints, a new admission kind)."""


@dataclass(frozen=True, slots=True)
class Scope:
    """A kind's scope, and what decided it: ``"crd"`` (a CRD of the source), ``"builtin"`` (the tables
    above), ``"namespace"`` (the object names one), ``"-n"`` (the namespace given on the command line),
    ``"group"`` (its group serves only cluster-scoped kinds) or ``"assumed"`` (unknown: namespaced)."""

    namespaced: bool
    reason: str

    @property
    def assumed(self) -> bool:
        return self.reason not in ("crd", "builtin")


def scope_of(
    group: str,
    kind: str,
    has_namespace: bool,
    crds: Mapping[GroupKind, bool],
    *,
    namespace_given: bool = False,
) -> Scope:
    """The scope of a kind: a CRD of the source, else the known tables, else (a custom resource installed
    some other way) namespaced when the object names a namespace or ``-n`` gave one, cluster-scoped when
    its group serves only cluster-scoped kinds, and namespaced otherwise."""
    key = (group, kind)
    known = crds.get(key)
    if known is not None:
        return Scope(known, "crd")
    known = KNOWN_CLUSTER_SCOPES.get(key)
    if known is not None:
        return Scope(known, "builtin")
    if has_namespace:
        return Scope(True, "namespace")
    if namespace_given:
        return Scope(True, "-n")
    if group in CLUSTER_SCOPED_GROUPS:
        return Scope(False, "group")
    return Scope(True, "assumed")


def is_namespaced(
    group: str,
    kind: str,
    has_namespace: bool,
    crds: Mapping[GroupKind, bool],
    *,
    namespace_given: bool = False,
) -> bool:
    """Whether a kind is namespaced (``scope_of`` tells why)."""
    return scope_of(group, kind, has_namespace, crds, namespace_given=namespace_given).namespaced


def assumption(scope: Scope, group: str, kind: str) -> str | None:
    """What ``explain`` says about a scope that was assumed rather than known (None when it was known)."""
    if not scope.assumed:
        return None
    shown = f"{kind}.{group}" if group else kind
    why = {
        "namespace": "it names a metadata.namespace",
        "-n": "--namespace was given, as kubectl apply -n would place it",
        "group": f"its group {group} serves only cluster-scoped kinds",
        "assumed": "most custom resources are; add the CRD to the source to be sure",
    }[scope.reason]
    where = "namespaced" if scope.namespaced else "cluster-scoped"
    return f"{shown} has no CustomResourceDefinition in the source: {where} assumed, because {why}"


def crd_scopes(documents: Iterable[Document], problems: list[Problem] | None = None) -> dict[GroupKind, bool]:
    """(group, kind) → namespaced for every CustomResourceDefinition among ``documents``.

    A CRD lacking ``spec.group``, ``spec.names.kind`` or a ``spec.scope`` of Namespaced/Cluster is skipped,
    with a Problem appended when ``problems`` is given.
    """
    scopes: dict[GroupKind, bool] = {}
    for document in documents:
        body = document.body
        if not _is_crd(body):
            continue
        spec = body.get("spec")
        spec = spec if isinstance(spec, dict) else {}
        crd_names = spec.get("names")
        group = spec.get("group")
        kind = crd_names.get("kind") if isinstance(crd_names, dict) else None
        scope = spec.get("scope")
        defects: list[tuple[str, str]] = []
        if not isinstance(group, str) or not group:
            defects.append(("spec.group", "is required (a string such as example.com)"))
        if not isinstance(kind, str) or not kind:
            defects.append(("spec.names.kind", "is required (a string such as Widget)"))
        if scope not in ("Namespaced", "Cluster"):
            defects.append(("spec.scope", f"must be Namespaced or Cluster, not {_shown(scope)}"))
        if defects:
            if problems is not None:
                problems.extend(Problem(document.location, message, field) for field, message in defects)
            continue
        assert isinstance(group, str) and isinstance(kind, str)
        scopes[(group, kind)] = scope == "Namespaced"
    return scopes


def _is_crd(body: Any) -> bool:
    if not isinstance(body, dict) or body.get("kind") != "CustomResourceDefinition":
        return False
    api_version = body.get("apiVersion")
    return isinstance(api_version, str) and split_api_version(api_version)[0] == "apiextensions.k8s.io"


def _shown(value: object) -> str:
    return described(value)


# --- pod controllers ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PodController:
    """Where a pod controller keeps its pods' template and how many pods it runs.

    ``template`` is the key path of the pod template (``()`` for a Pod: the object is its own template; the
    template's ``spec`` holds the containers). ``replicas`` is the key path of the count that Divide splits
    and demand multiplies by (None: no count, as for a DaemonSet, which runs one pod per node), absent
    meaning ``default_replicas``. ``completions`` is a Job's second count, split alongside when set.
    """

    template: tuple[str, ...]
    replicas: tuple[str, ...] | None
    default_replicas: int = 1
    completions: tuple[str, ...] | None = None


_REPLICATED = PodController(template=("spec", "template"), replicas=("spec", "replicas"))
_DAEMON = PodController(template=("spec", "template"), replicas=None)

POD_CONTROLLERS: Mapping[GroupKind, PodController] = {
    ("", "Pod"): PodController(template=(), replicas=None),
    ("", "ReplicationController"): _REPLICATED,
    ("apps", "Deployment"): _REPLICATED,
    ("apps", "ReplicaSet"): _REPLICATED,
    ("apps", "StatefulSet"): _REPLICATED,
    ("apps", "DaemonSet"): _DAEMON,
    ("extensions", "Deployment"): _REPLICATED,
    ("extensions", "ReplicaSet"): _REPLICATED,
    ("extensions", "DaemonSet"): _DAEMON,
    ("batch", "Job"): PodController(
        template=("spec", "template"), replicas=("spec", "parallelism"), completions=("spec", "completions")
    ),
    ("batch", "CronJob"): PodController(
        template=("spec", "jobTemplate", "spec", "template"),
        replicas=("spec", "jobTemplate", "spec", "parallelism"),
        completions=("spec", "jobTemplate", "spec", "completions"),
    ),
}
"""(group, kind) → where its pods are described. Other kinds create no pods of their own, unless they are
shaped like a replicated controller (``controller_shaped``)."""

REPLICATED = _REPLICATED
"""How a kind shaped like a Deployment keeps its pods: Argo ``Rollout``, OpenKruise ``CloneSet``, ..."""


def controller_shaped(body: Mapping[str, Any]) -> bool:
    """Whether ``body`` is shaped like a Deployment: ``spec.replicas`` set and a pod template at
    ``spec.template`` (a mapping whose ``spec.containers`` is a list). A custom kind so shaped (Argo
    ``Rollout``, OpenKruise ``CloneSet``) counts for demand and is divided like a Deployment; one without
    ``spec.replicas`` is not taken for a controller (many custom kinds carry a ``template``)."""
    spec = body.get("spec")
    if not isinstance(spec, dict) or "replicas" not in spec:
        return False
    template = spec.get("template")
    pod_spec = template.get("spec") if isinstance(template, dict) else None
    return isinstance(pod_spec, dict) and isinstance(pod_spec.get("containers"), list)


def pod_controller(group: str, kind: str, body: Mapping[str, Any]) -> PodController | None:
    """Where ``body`` keeps its pods: the table above for the built-in kinds, ``REPLICATED`` for another
    kind shaped like a Deployment (``controller_shaped``), None for everything else."""
    known = POD_CONTROLLERS.get((group, kind))
    if known is not None:
        return known
    if (group, kind) in BUILTIN_SCOPES or not controller_shaped(body):
        return None
    return _REPLICATED


def replica_count(controller: PodController, body: Mapping[str, Any]) -> int | None:
    """How many pods ``body`` runs (its replicas or parallelism, the default when absent); None for a
    controller without a count (DaemonSet) or a count that is not a non-negative integer."""
    if controller.replicas is None:
        return None if controller.template else 1
    node: Any = body
    for key in controller.replicas:
        node = node.get(key) if isinstance(node, dict) else None
    if node is None:
        return controller.default_replicas
    if isinstance(node, bool) or not isinstance(node, int) or node < 0:
        return None
    return node
