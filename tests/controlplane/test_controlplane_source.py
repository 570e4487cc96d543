"""The control-plane source: SchedulePolicies, Clusters and workloads listed from a Kubernetes API.

Behaviours covered:
- which kinds are listed (a deny list of cluster machinery; SchedulePolicy and Cluster kept, ScheduleGroup
  not) and which objects (no controller-owned objects, system namespaces, auto-created objects, bootstrap
  RBAC, objects being deleted);
- what is kept of an object: server fields, workload status and the write-back's target-cluster label go; a
  Cluster keeps its status; a Service's allocated clusterIP and a Job's generated selector go;
- the content digest ignores Cluster heartbeats (watches) and also workload reports (revisions);
- over the API (fake or real): a snapshot holds the policy, the Cluster with its status and the workloads,
  one resourceVersion per kind; it validates and plans like a git source (the Deployment is placed);
  its revision is stable across status writes, the Deployment controller's annotation
  (``deployment.kubernetes.io/revision``, written by the fake's simulated controller too) and write-back
  labels, and changes with a spec change; the annotation is not kept;
- changes(): a watch sees a workload change and a new object and yields; close() ends it.
- a kind the ClusterRole does not grant (403) is skipped and not asked again (fake only: injected 403).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from nova_gitops.api import inputs, labels
from nova_gitops.scheduling import planning
from nova_gitops.scheduling.plans import PreviousPlacement
from nova_gitops.sources import controlplane
from nova_gitops.sources.controlplane import ControlPlaneSource
from nova_gitops.sources.kubeapi import KubeApi, ResourceKind
from tests import builders
from tests.fakekube.fixtures import KubeTarget
from tests.realkube.kubelets import Kubelet

ALL = frozenset({"list", "watch", "get", "create"})
DEPLOYMENTS = ResourceKind("apps", "v1", "deployments", "Deployment", True, ALL)
CONFIGMAPS = ResourceKind("", "v1", "configmaps", "ConfigMap", True, ALL)
CLUSTERS = ResourceKind("cluster.elotl.co", "v1alpha1", "clusters", "Cluster", False, ALL)
POLICIES = ResourceKind("policy.elotl.co", "v1alpha1", "schedulepolicies", "SchedulePolicy", False, ALL)


@pytest.mark.parametrize(
    ("group", "plural", "verbs", "expected"),
    [
        ("apps", "deployments", ALL, True),
        ("", "configmaps", ALL, True),
        ("policy.elotl.co", "schedulepolicies", ALL, True),
        ("cluster.elotl.co", "clusters", ALL, True),
        ("policy.elotl.co", "schedulegroups", ALL, False),
        ("", "events", ALL, False),
        ("events.k8s.io", "events", ALL, False),
        ("coordination.k8s.io", "leases", ALL, False),
        ("", "endpoints", ALL, False),
        ("", "nodes", ALL, False),
        ("apiextensions.k8s.io", "customresourcedefinitions", ALL, False),
        ("widgets.example", "widgets", frozenset({"get", "list"}), False),  # not watchable
    ],
)
def test_listed_kinds(group: str, plural: str, verbs: frozenset[str], expected: bool) -> None:
    kind = ResourceKind(group, "v1", plural, plural.title(), True, verbs)
    assert controlplane.is_source_kind(kind) is expected


def _object(name: str, namespace: str = "shop", **metadata: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace, **metadata}}


@pytest.mark.parametrize(
    ("kind", "body", "expected"),
    [
        (DEPLOYMENTS, _object("web"), True),
        (DEPLOYMENTS, _object("web", "kube-system"), False),
        (DEPLOYMENTS, _object("web", deletionTimestamp="2026-01-01T00:00:00Z"), False),
        (
            DEPLOYMENTS,
            _object("web", ownerReferences=[{"kind": "X", "name": "x", "controller": True}]),
            False,
        ),
        (DEPLOYMENTS, _object("web", ownerReferences=[{"kind": "X", "name": "x"}]), True),
        (CONFIGMAPS, _object("kube-root-ca.crt"), False),
        (ResourceKind("", "v1", "serviceaccounts", "ServiceAccount", True), _object("default"), False),
        (
            ResourceKind("", "v1", "secrets", "Secret", True),
            {**_object("t"), "type": "kubernetes.io/service-account-token"},
            False,
        ),
        (ResourceKind("", "v1", "namespaces", "Namespace", False), _object("kube-public", ""), False),
        (ResourceKind("", "v1", "namespaces", "Namespace", False), _object("shop", ""), True),
        (
            ResourceKind("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False),
            _object("system:controller:x", ""),
            False,
        ),
        (
            ResourceKind("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False),
            _object("view", "", labels={"kubernetes.io/bootstrapping": "rbac-defaults"}),
            False,
        ),
    ],
)
def test_user_objects(kind: ResourceKind, body: dict[str, Any], expected: bool) -> None:
    assert controlplane.is_user_object(kind, body, controlplane.SYSTEM_NAMESPACES) is expected


def test_kept_content() -> None:
    deployment = builders.deployment("web")
    deployment["metadata"].update(
        uid="u", resourceVersion="5", managedFields=[{}], labels={"app": "demo", labels.TARGET_CLUSTER: "c1"}
    )
    deployment["status"] = {"readyReplicas": 1}
    kept = controlplane.source_body(deployment)
    assert kept["metadata"] == {"name": "web", "namespace": "demo", "labels": {"app": "demo"}}
    assert "status" not in kept and deployment["status"] == {"readyReplicas": 1}  # input untouched
    cluster = builders.cluster("c1")
    assert controlplane.source_body(cluster)["status"] == cluster["status"]
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s"},
        "spec": {"clusterIP": "10.0.0.7", "clusterIPs": ["10.0.0.7"], "ports": [{"port": 80}]},
    }
    assert controlplane.source_body(service)["spec"] == {"ports": [{"port": 80}]}
    headless = {**service, "spec": {"clusterIP": "None"}}
    assert controlplane.source_body(headless)["spec"] == {"clusterIP": "None"}
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {
            "selector": {"matchLabels": {"controller-uid": "x"}},
            "template": {"metadata": {"labels": {"controller-uid": "x", "job-name": "j", "app": "a"}}},
        },
    }
    assert controlplane.source_body(job)["spec"] == {
        "template": {"metadata": {"labels": {"job-name": "j", "app": "a"}}}
    }


def test_digest_ignores_cluster_heartbeats() -> None:
    cluster = builders.cluster("c1")
    beat = {**cluster, "status": {**cluster["status"], "heartbeat": "t1", "lastUpdateTime": "t1"}}
    later = {**cluster, "status": {**cluster["status"], "heartbeat": "t2", "lastUpdateTime": "t2"}}
    smaller = builders.cluster("c1", cpu="1")
    assert controlplane.content_digest(beat) == controlplane.content_digest(later)
    assert controlplane.content_digest(beat) != controlplane.content_digest(smaller)
    reporting = {**beat, "status": {**beat["status"], "workloads": [{"name": "web", "healthy": False}]}}
    assert controlplane.content_digest(reporting) != controlplane.content_digest(beat)  # the watch sees it
    revision = controlplane.REPORT_STATUS
    assert controlplane.content_digest(reporting, ignored=revision) == controlplane.content_digest(
        beat, ignored=revision
    )


# ----- over the API


def _populate(kube: KubeTarget) -> tuple[KubeApi, str, str]:
    api = KubeApi(kube.api_client)
    cluster_name, policy_name = f"wlc-{kube.namespace}", f"demo-{kube.namespace}"
    cluster = builders.cluster(cluster_name)
    created = api.create(CLUSTERS, "", {k: v for k, v in cluster.items() if k != "status"}, "test")
    api.replace(CLUSTERS, {**created, "status": cluster["status"]}, "test", subresource="status")
    api.create(
        POLICIES,
        "",
        builders.policy(
            policy_name, namespaceSelector={"matchLabels": {labels.METADATA_NAME: kube.namespace}}
        ),
        "test",
    )
    api.create(DEPLOYMENTS, kube.namespace, builders.deployment("web", namespace=kube.namespace), "test")
    api.create(CONFIGMAPS, kube.namespace, builders.config_map("settings", namespace=kube.namespace), "test")
    return api, cluster_name, policy_name


def _ours(source: ControlPlaneSource, kube: KubeTarget) -> dict[str, dict[str, Any]]:
    snapshot = source.snapshot()
    return {
        document.location.file: document.body
        for document in snapshot.documents
        if kube.namespace in document.location.file
    }


def test_snapshot_lists_inputs_and_workloads_and_plans_like_a_git_source(nova_crds: KubeTarget) -> None:
    kube = nova_crds
    api, cluster_name, policy_name = _populate(kube)
    if kube.fake is not None:  # a ReplicaSet's pod: owned by a controller, so not a source object
        kube.fake.create_pod(
            kube.namespace,
            "web-1",
            owner={
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": "web-x",
                "uid": "1",
                "controller": True,
            },
        )
    source = ControlPlaneSource(api, "controlplane:test")
    snapshot = source.snapshot()
    files = {d.location.file for d in snapshot.documents if kube.namespace in d.location.file}
    assert files == {
        f"clusters.cluster.elotl.co/{cluster_name}",
        f"schedulepolicies.policy.elotl.co/{policy_name}",
        f"deployments.apps/{kube.namespace}/web",
        f"configmaps/{kube.namespace}/settings",
        f"namespaces/{kube.namespace}",
    }
    assert snapshot.resource_versions["deployments.apps"] and snapshot.source.repo == "controlplane:test"
    ours = [d for d in snapshot.documents if kube.namespace in d.location.file]
    cluster_body = next(d.body for d in ours if d.body["kind"] == "Cluster")
    assert cluster_body["status"]["capacityResources"] == {
        f"{cluster_name}-n1": {"cpu": "4", "memory": "16Gi"}
    }
    source_set = inputs.build_source_set(ours)
    plan = planning.plan(source_set, previous=PreviousPlacement.empty())
    placed = {item.manifest.name: group.clusters for group in plan.groups for item in group.objects}
    assert placed["web"] == (cluster_name,) and placed["settings"] == (cluster_name,)


@pytest.mark.fake_only("injects a 403 on the list of ConfigMaps and counts the requests")
def test_a_kind_not_granted_is_skipped_and_not_asked_again(nova_crds: KubeTarget) -> None:
    kube = nova_crds
    assert kube.fake is not None
    api, _cluster_name, _policy_name = _populate(kube)
    source = ControlPlaneSource(api, "controlplane:test")
    kube.fake.fail_next("GET", r"/configmaps$", status=403, times=1)
    first = source.snapshot()
    assert CONFIGMAPS.plural in {kind.plural for kind in source.forbidden}
    assert not any(d.location.file.startswith("configmaps/") for d in first.documents)
    asked = len(kube.fake.requests)
    second = source.snapshot()
    later = kube.fake.requests[asked:]
    assert not any(request.path.endswith("/configmaps") for request in later)
    assert second.documents == first.documents


def _deployment_revision(api: KubeApi, namespace: str) -> str:
    """The Deployment controller's ``deployment.kubernetes.io/revision`` on web ("" before it ran)."""
    live = api.get(DEPLOYMENTS, namespace, "web") or {}
    return str(
        (live.get("metadata", {}).get("annotations") or {}).get("deployment.kubernetes.io/revision", "")
    )


def test_revision_ignores_status_controllers_and_write_back_but_not_spec(
    nova_crds: KubeTarget, kubelet: Kubelet
) -> None:
    kube = nova_crds
    api, cluster_name, _ = _populate(kube)
    source = ControlPlaneSource(api, "controlplane:test", kinds=[DEPLOYMENTS, CONFIGMAPS, CLUSTERS, POLICIES])
    first = source.snapshot().source.revision
    # the Deployment controller annotates the revision and writes status (on a real cluster maybe before
    # `first`: then the annotation was already ignored there)
    kubelet.until(lambda: _deployment_revision(api, kube.namespace) == "1", "the controller's revision 1")
    assert source.snapshot().source.revision == first
    api.merge_patch(
        DEPLOYMENTS,
        kube.namespace,
        "web",
        {"metadata": {"labels": {labels.TARGET_CLUSTER: "c9"}}},
        "nova-gitops",
    )
    status = {"replicas": 2, "readyReplicas": 2, "availableReplicas": 2, "updatedReplicas": 2}
    current = api.get(DEPLOYMENTS, kube.namespace, "web")
    assert current is not None
    api.replace(DEPLOYMENTS, {**current, "status": status}, "nova-gitops", subresource="status")
    cluster = api.get(CLUSTERS, "", cluster_name)
    assert cluster is not None
    cluster["status"]["heartbeat"] = "2026-01-01T00:05:00Z"
    cluster["status"]["workloads"] = [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "namespace": kube.namespace,
            "name": "web",
            "healthy": True,
        }
    ]
    api.replace(CLUSTERS, cluster, "nova-agent", subresource="status")
    assert source.snapshot().source.revision == first
    template = {"spec": {"containers": [{"name": "main", "image": "registry.example/web:2"}]}}
    api.merge_patch(DEPLOYMENTS, kube.namespace, "web", {"spec": {"template": template}}, "kubectl")
    second = source.snapshot().source.revision
    assert second != first
    kubelet.until(lambda: _deployment_revision(api, kube.namespace) == "2", "the controller's revision 2")
    assert source.snapshot().source.revision == second
    [web] = [body for body in _ours(source, kube).values() if body["kind"] == "Deployment"]
    assert "deployment.kubernetes.io/revision" not in (web["metadata"].get("annotations") or {})


def test_changes_yield_when_a_watch_sees_a_change(nova_crds: KubeTarget) -> None:
    kube = nova_crds
    api, _, _ = _populate(kube)
    source = ControlPlaneSource(
        api, "controlplane:test", kinds=[DEPLOYMENTS, CONFIGMAPS], watch_timeout=5, retry_delay=0.1
    )
    yields = 0
    yielded = threading.Condition()

    def consume() -> None:
        nonlocal yields
        for _ in source.changes():
            with yielded:
                yields += 1
                yielded.notify_all()

    def seen_after(change: Callable[[int], object], what: str) -> None:
        """Make ``change(attempt)`` once a second until a yield follows it. Nothing says when a watch has
        listed and started, and a change before that is part of its initial list, not a change."""
        with yielded:
            before = yields
        deadline, attempt = time.monotonic() + 20, 0
        while time.monotonic() < deadline:
            attempt += 1
            change(attempt)
            with yielded:
                if yielded.wait_for(lambda: yields > before, timeout=1.0):
                    return
        raise AssertionError(f"{what} was not seen after {attempt} changes in 20 s")

    thread = threading.Thread(target=consume, daemon=True)
    thread.start()
    seen_after(
        lambda attempt: api.merge_patch(
            DEPLOYMENTS, kube.namespace, "web", {"spec": {"replicas": 3 + attempt}}, "kubectl"
        ),
        "a spec change",
    )
    seen_after(
        lambda attempt: api.create(
            CONFIGMAPS,
            kube.namespace,
            builders.config_map(f"more-{attempt}", namespace=kube.namespace),
            "kubectl",
        ),
        "a new object",
    )
    source.close()
    thread.join(10)
    assert not thread.is_alive()
