"""The order objects are applied in, as a table (after lightkube's ``sort_objects``).

Things others depend on go first: CRDs before the custom resources they define, Namespaces before what lives
in them, RBAC and ServiceAccounts before the Pods that use them, Secrets and ConfigMaps before the workloads
that mount them, Services before workloads (so the service environment variables exist), and admission
webhooks last, because a webhook applied early can reject everything after it while its own Service has no
endpoints yet. Deletes run the same table backwards. Kinds not in the table (custom resources, Ingresses,
...) rank with the workloads.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from nova_agent.resources import ObjectRef

KIND_RANKS: Final[dict[str, int]] = {
    "CustomResourceDefinition": 0,
    "Namespace": 10,
    "ResourceQuota": 20,
    "LimitRange": 20,
    "PriorityClass": 20,
    "StorageClass": 20,
    "RuntimeClass": 20,
    "ClusterRole": 30,
    "ClusterRoleBinding": 31,
    "ServiceAccount": 40,
    "Role": 41,
    "RoleBinding": 42,
    "Secret": 50,
    "ConfigMap": 50,
    "PersistentVolume": 60,
    "PersistentVolumeClaim": 61,
    "Service": 70,
    "ValidatingWebhookConfiguration": 100,
    "MutatingWebhookConfiguration": 100,
    "ValidatingAdmissionPolicy": 100,
    "ValidatingAdmissionPolicyBinding": 101,
    "APIService": 100,
}
"""Lower applies earlier. Workloads and anything unlisted get :data:`WORKLOAD_RANK`."""

WORKLOAD_RANK: Final = 80


def rank_of(kind: str) -> int:
    return KIND_RANKS.get(kind, WORKLOAD_RANK)


def apply_sort_key(ref: ObjectRef) -> tuple[int, str, str, str, str]:
    """Rank, then kind, namespace and name, so the order is total and the same on every run."""
    return (rank_of(ref.kind), ref.kind, ref.namespace, ref.name, ref.api_version)


def apply_order(refs: Iterable[ObjectRef]) -> list[ObjectRef]:
    return sorted(refs, key=apply_sort_key)


def delete_order(refs: Iterable[ObjectRef]) -> list[ObjectRef]:
    """The apply order reversed: webhooks go first, CRDs and Namespaces last."""
    return sorted(refs, key=apply_sort_key, reverse=True)
