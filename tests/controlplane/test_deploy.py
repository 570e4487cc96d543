"""deploy/: the controller's kustomize base and the overlays build with `kubectl kustomize` and are sound.

Behaviours covered (skipped when kubectl is not installed):
- deploy/crds, deploy/controller/base and every overlay (install, webhook, controlplane) build;
- the base runs `nova-gitops controller` with leader election, two replicas, probes on /healthz, the metrics
  port behind a Service, a non-root read-only container, and no webhook (it would need a Secret);
- wherever the controller listens for webhooks, the Secret nova-gitops-webhook is required (the pod waits
  for it rather than crash-looping) and the Service has the webhook port;
- with a webhook, readiness is /readyz (leadership), so the Service sends webhooks to the leader only, and
  the strategy is Recreate (a rolling update could never see a new follower turn ready);
- least privilege: the base grants only its Lease (no cluster-wide rights); only the controlplane overlay
  adds a ClusterRole, which can read and patch but never create, update or delete workloads, names every
  kind (no wildcard) and grants no subresource but the three */status the write-back patches;
- the install overlay holds the CRDs and the controller; the controlplane overlay sets --source controlplane;
- the controlplane overlay's objects are accepted by the API server (fake or real): a server-side dry run of
  each, in its namespace (the one object really written, and deleted afterwards when the test made it), so
  nothing starts and nothing is left on a real cluster.
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client

from tests import deploying
from tests.fakekube.clienting import apply
from tests.fakekube.fixtures import KubeTarget

pytestmark = deploying.needs_kubectl
build = deploying.build


def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def test_crds_build() -> None:
    names = {o["metadata"]["name"] for o in build("crds")}
    assert names == {
        "schedulepolicies.policy.elotl.co",
        "schedulegroups.policy.elotl.co",
        "clusters.cluster.elotl.co",
    }


def test_base_runs_the_controller_with_leader_election() -> None:
    objects = build("controller/base")
    assert {o["kind"] for o in objects} == {
        "Namespace",
        "ServiceAccount",
        "ConfigMap",
        "Role",
        "RoleBinding",
        "Deployment",
        "Service",
    }
    assert all(o["metadata"].get("namespace") == "nova-gitops" for o in objects if o["kind"] != "Namespace")
    assert all(o["metadata"]["labels"]["app.kubernetes.io/part-of"] == "nova-gitops" for o in objects)
    (deployment,) = by_kind(objects, "Deployment")
    spec = deployment["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    assert deployment["spec"]["replicas"] == 2
    assert container["args"][0] == "controller" and "--leader-elect" in container["args"]
    assert "--leader-election-namespace=$(POD_NAMESPACE)" in container["args"]
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert (
        container["securityContext"]["readOnlyRootFilesystem"] is True
        and spec["securityContext"]["runAsNonRoot"]
    )
    assert spec["serviceAccountName"] == "nova-gitops-controller"
    (service,) = by_kind(objects, "Service")
    assert {p["name"]: p["port"] for p in service["spec"]["ports"]} == {"metrics": 8080}
    assert not any(arg.startswith("--webhook") for arg in container["args"])
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]


OVERLAYS = ("controller/base", "overlays/install", "overlays/webhook", "overlays/controlplane")


@pytest.mark.parametrize("directory", OVERLAYS)
def test_a_webhook_listener_always_has_its_secret(directory: str) -> None:
    objects = build(directory)
    (deployment,) = by_kind(objects, "Deployment")
    spec = deployment["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    if not any(arg.startswith("--webhook-listen") for arg in container["args"]):
        assert directory != "overlays/webhook"
        return
    required = [
        volume["name"]
        for volume in spec.get("volumes", [])
        if volume.get("secret", {}).get("secretName") == "nova-gitops-webhook"
        and not volume["secret"].get("optional", False)
    ]
    mounted = {mount["name"] for mount in container.get("volumeMounts", [])}
    assert required and set(required) <= mounted
    keys = {
        entry["valueFrom"]["secretKeyRef"]["key"]
        for entry in container["env"]
        if entry.get("valueFrom", {}).get("secretKeyRef", {}).get("name") == "nova-gitops-webhook"
    }
    assert keys == {"github", "gitlab", "generic"}
    (service,) = by_kind(objects, "Service")
    assert {p["name"]: p["port"] for p in service["spec"]["ports"]} == {"webhook": 9000, "metrics": 8080}
    assert "--leader-elect" in container["args"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}


def test_base_rights_are_only_its_lease() -> None:
    objects = build("controller/base")
    assert not by_kind(objects, "ClusterRole") and not by_kind(objects, "ClusterRoleBinding")
    (role,) = by_kind(objects, "Role")
    assert {(g, r) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]} == {
        ("coordination.k8s.io", "leases")
    }
    named = [rule for rule in role["rules"] if "update" in rule["verbs"]]
    assert named and all(rule.get("resourceNames") == ["nova-gitops-controller"] for rule in named)


def test_overlays_install_crds_and_controller() -> None:
    install = build("overlays/install")
    assert len(by_kind(install, "CustomResourceDefinition")) == 3 and by_kind(install, "Deployment")
    controlplane = build("overlays/controlplane")
    (config,) = by_kind(controlplane, "ConfigMap")
    assert config["data"]["source"] == "controlplane"
    (cluster_role,) = by_kind(controlplane, "ClusterRole")
    rules = cluster_role["rules"]
    assert not any("*" in rule["apiGroups"] or "*" in rule["resources"] for rule in rules)
    subresources = {
        (group, r) for rule in rules for group in rule["apiGroups"] for r in rule["resources"] if "/" in r
    }
    assert subresources == {
        ("apps", "deployments/status"),
        ("apps", "statefulsets/status"),
        ("apps", "replicasets/status"),
    }
    granted = {
        (group, resource): set(rule["verbs"])
        for rule in rules
        for group in rule["apiGroups"]
        for resource in rule["resources"]
    }
    for workload in [("apps", "deployments"), ("", "configmaps"), ("", "secrets"), ("batch", "jobs")]:
        assert granted[workload] == {"get", "list", "watch", "patch"}
    writes = {"create", "update", "delete"}
    assert {key for key, verbs in granted.items() if verbs & writes} == {
        ("policy.elotl.co", "schedulegroups"),
        ("", "events"),
    }
    (binding,) = by_kind(controlplane, "ClusterRoleBinding")
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "nova-gitops-controller", "namespace": "nova-gitops"}
    ]


def test_install_overlay_is_accepted_by_the_api_server(kube: KubeTarget) -> None:
    paths = {
        "CustomResourceDefinition": "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}",
        "Namespace": "/api/v1/namespaces/{name}",
        "ServiceAccount": "/api/v1/namespaces/{namespace}/serviceaccounts/{name}",
        "ConfigMap": "/api/v1/namespaces/{namespace}/configmaps/{name}",
        "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles/{name}",
        "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings/{name}",
        "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}",
        "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/{name}",
        "Deployment": "/apis/apps/v1/namespaces/{namespace}/deployments/{name}",
        "Service": "/api/v1/namespaces/{namespace}/services/{name}",
    }
    order = list(paths)
    objects = sorted(build("overlays/controlplane"), key=lambda o: order.index(o["kind"]))
    core = client.CoreV1Api(kube.api_client)
    [namespace] = [body["metadata"]["name"] for body in objects if body["kind"] == "Namespace"]
    made = namespace not in {item.metadata.name for item in core.list_namespace().items}
    try:
        for body in objects:
            metadata = body["metadata"]
            path = paths[body["kind"]].format(name=metadata["name"], namespace=metadata.get("namespace", ""))
            dry_run = body["kind"] != "Namespace"  # what is in it needs it to exist
            applied = apply(kube.api_client, path, body, "kubectl", dry_run=dry_run)
            assert applied["metadata"]["name"] == metadata["name"]
    finally:
        if made and kube.fake is None:
            core.delete_namespace(namespace)
