"""Kind scope and pod controllers (``api.kinds``).

Behaviours covered:
- built-in kinds have their Kubernetes scope, whatever the object says about its namespace;
- a CRD in the source decides the scope of its kind; a malformed CRD is a Problem and is skipped;
- an unknown kind is cluster-scoped exactly when it has no metadata.namespace (docs/design.md §3 "Scope");
- the pod-controller table: where each controller's pod template and replica count live, with defaults.
"""

from __future__ import annotations

from typing import Any

import pytest

from nova_gitops.api import kinds
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import SourceLocation


@pytest.mark.parametrize(
    ("group", "kind", "namespaced"),
    [
        ("", "Pod", True),
        ("", "Service", True),
        ("", "Namespace", False),
        ("", "PersistentVolume", False),
        ("apps", "Deployment", True),
        ("batch", "CronJob", True),
        ("networking.k8s.io", "Ingress", True),
        ("networking.k8s.io", "IngressClass", False),
        ("rbac.authorization.k8s.io", "Role", True),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding", False),
        ("policy", "PodDisruptionBudget", True),
        ("autoscaling", "HorizontalPodAutoscaler", True),
        ("storage.k8s.io", "StorageClass", False),
        ("apiextensions.k8s.io", "CustomResourceDefinition", False),
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration", False),
        ("scheduling.k8s.io", "PriorityClass", False),
        ("coordination.k8s.io", "Lease", True),
        ("discovery.k8s.io", "EndpointSlice", True),
        ("certificates.k8s.io", "CertificateSigningRequest", False),
        ("node.k8s.io", "RuntimeClass", False),
        ("flowcontrol.apiserver.k8s.io", "FlowSchema", False),
    ],
)
@pytest.mark.parametrize("has_namespace", [True, False])
def test_builtin_kinds_have_their_kubernetes_scope(
    group: str, kind: str, namespaced: bool, has_namespace: bool
) -> None:
    assert kinds.is_namespaced(group, kind, has_namespace, {}) is namespaced


@pytest.mark.parametrize("has_namespace", [True, False])
def test_unknown_kinds_are_namespaced_unless_their_group_is_cluster_scoped(has_namespace: bool) -> None:
    # issue 10: most custom resources are namespaced; a CR without its CRD is taken as one
    assert kinds.is_namespaced("example.com", "Widget", has_namespace, {}) is True
    assert kinds.is_namespaced("constraints.gatekeeper.sh", "K8sRequired", has_namespace, {}) is has_namespace


def crd(group: Any, kind: Any, scope: Any, line: int = 1) -> Document:
    body = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {"group": group, "names": {"kind": kind, "plural": "widgets"}, "scope": scope},
    }
    return Document(body, SourceLocation("crds.yaml", line))


def test_crds_in_the_source_decide_their_kinds_scope() -> None:
    documents = [
        crd("example.com", "Widget", "Namespaced"),
        crd("example.com", "Gadget", "Cluster"),
        Document({"apiVersion": "v1", "kind": "ConfigMap"}, SourceLocation("a.yaml", 1)),
    ]
    scopes = kinds.crd_scopes(documents)
    assert scopes == {("example.com", "Widget"): True, ("example.com", "Gadget"): False}
    assert kinds.is_namespaced("example.com", "Widget", False, scopes) is True
    assert kinds.is_namespaced("example.com", "Gadget", True, scopes) is False


def test_malformed_crds_are_problems_and_skipped() -> None:
    problems: list[Any] = []
    scopes = kinds.crd_scopes([crd("", None, "namespaced", line=4)], problems)
    assert scopes == {}
    assert [str(p) for p in problems] == [
        "crds.yaml:4: spec.group: is required (a string such as example.com)",
        "crds.yaml:4: spec.names.kind: is required (a string such as Widget)",
        "crds.yaml:4: spec.scope: must be Namespaced or Cluster, not 'namespaced'",
    ]


DEPLOYMENT = {"spec": {"replicas": 3, "template": {"spec": {"containers": []}}}}


@pytest.mark.parametrize(
    ("group", "kind", "body", "replicas", "has_template"),
    [
        ("apps", "Deployment", DEPLOYMENT, 3, True),
        ("apps", "Deployment", {"spec": {"template": {"spec": {}}}}, 1, True),
        ("apps", "StatefulSet", {"spec": {"replicas": 0, "template": {"spec": {}}}}, 0, True),
        ("apps", "ReplicaSet", {"spec": {"replicas": "3", "template": {"spec": {}}}}, None, True),
        ("", "ReplicationController", {"spec": {"replicas": 2, "template": {"spec": {}}}}, 2, True),
        ("apps", "DaemonSet", {"spec": {"template": {"spec": {}}}}, None, True),
        ("batch", "Job", {"spec": {"parallelism": 4, "completions": 8, "template": {"spec": {}}}}, 4, True),
        ("batch", "Job", {"spec": {"template": {"spec": {}}}}, 1, True),
        (
            "batch",
            "CronJob",
            {"spec": {"jobTemplate": {"spec": {"parallelism": 5, "template": {"spec": {}}}}}},
            5,
            True,
        ),
        ("", "Pod", {"spec": {"containers": []}}, 1, True),
        ("apps", "Deployment", {"spec": {"replicas": 2}}, 2, False),
    ],
)
def test_pod_controllers_say_where_pods_are(
    group: str, kind: str, body: dict[str, Any], replicas: int | None, has_template: bool
) -> None:
    controller = kinds.POD_CONTROLLERS[(group, kind)]
    assert kinds.replica_count(controller, body) == replicas
    template: Any = body
    for key in controller.template:
        template = template.get(key) if isinstance(template, dict) else None
    assert (isinstance(template, dict) and "spec" in template) is has_template


def test_job_completions_are_recorded_beside_parallelism() -> None:
    assert kinds.POD_CONTROLLERS[("batch", "Job")].completions == ("spec", "completions")
    assert kinds.POD_CONTROLLERS[("batch", "CronJob")].completions == (
        "spec",
        "jobTemplate",
        "spec",
        "completions",
    )
    assert kinds.POD_CONTROLLERS[("apps", "Deployment")].completions is None


def test_kinds_that_create_no_pods_are_not_controllers() -> None:
    assert ("", "ConfigMap") not in kinds.POD_CONTROLLERS
    assert ("", "Service") not in kinds.POD_CONTROLLERS
