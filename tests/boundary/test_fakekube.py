"""The fake API server through the real kubernetes client: discovery, CRUD, errors, selectors, status.

Behaviours covered:
- discovery: /version, /api, /apis, group and resource lists (with subresources); DynamicClient works on it;
- create sets uid, creationTimestamp, resourceVersion (one increasing counter) and generation;
  generateName; 409 AlreadyExists; 404 for a missing namespace; 422 with causes for a bad name;
- get/list with label selectors (=, !=, in, notin, exists, !key) and field selectors; 400 for bad ones;
  limit/continue paging;
- replace: 409 Conflict on a stale resourceVersion, unconditional without one; generation bumps on spec
  changes only; a no-op write keeps the resourceVersion;
- status subresource: main writes ignore status, /status writes change only status;
- delete: 200, 404 after; finalizers hold the object; namespace deletion deletes its objects;
- dryRun=All persists nothing; every error is a Status body with reason and code;
- hooks: add_node, create_pod, set_pod_phase, fail_next, requests, objects; fixtures' kubeconfig works.
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client, config, dynamic

from tests.fakekube.clienting import configmap, deployment, request, status_of
from tests.fakekube.fixtures import KubeTarget, client_for
from tests.fakekube.server import FakeKubeServer
from tests.realkube.kubelet import wait_for
from tests.realkube.kubelets import Kubelet


def _error(call: Any, *args: Any, **kwargs: Any) -> client.ApiException:
    with pytest.raises(client.ApiException) as caught:
        call(*args, **kwargs)
    return caught.value


def test_discovery_lists_groups_versions_and_resources_with_subresources(kube: KubeTarget) -> None:
    api_client = kube.api_client
    assert client.VersionApi(api_client).get_code().major == "1"
    assert "v1" in client.CoreApi(api_client).get_api_versions().versions
    groups = {group.name for group in client.ApisApi(api_client).get_api_versions().groups}
    assert {
        "apps",
        "batch",
        "rbac.authorization.k8s.io",
        "apiextensions.k8s.io",
        "networking.k8s.io",
    } <= groups
    resources = {r.name: r for r in client.AppsV1Api(api_client).get_api_resources().resources}
    assert resources["deployments"].kind == "Deployment"
    assert resources["deployments"].namespaced is True
    assert "deploy" in resources["deployments"].short_names
    assert "deployments/status" in resources
    assert {"create", "get", "list", "watch", "patch", "delete"} <= set(resources["deployments"].verbs)


def test_dynamic_client_discovers_and_serves_objects(kube: KubeTarget, tmp_path: Any) -> None:
    dyn = dynamic.DynamicClient(kube.api_client, cache_file=str(tmp_path / "discovery.json"))
    configmaps = dyn.resources.get(api_version="v1", kind="ConfigMap")
    configmaps.create(body=configmap("dyn", {"a": "1"}), namespace=kube.namespace)
    assert configmaps.get(name="dyn", namespace=kube.namespace).data.a == "1"
    deployments = dyn.resources.get(api_version="apps/v1", kind="Deployment")
    assert deployments.namespaced
    nodes = dyn.resources.get(api_version="v1", kind="Node")
    assert not nodes.namespaced


def test_create_sets_server_fields_and_an_increasing_resource_version(kube: KubeTarget) -> None:
    core = client.CoreV1Api(kube.api_client)
    first = core.create_namespaced_config_map(kube.namespace, configmap("one", {"a": "1"}))
    second = core.create_namespaced_config_map(kube.namespace, configmap("two", {"a": "1"}))
    assert first.metadata.uid and first.metadata.creation_timestamp
    assert int(second.metadata.resource_version) > int(first.metadata.resource_version)
    created = client.AppsV1Api(kube.api_client).create_namespaced_deployment(
        kube.namespace, deployment("web")
    )
    assert created.metadata.generation == 1
    generated = core.create_namespaced_config_map(
        kube.namespace, {"metadata": {"generateName": "gen-"}, "data": {"a": "1"}}
    )
    assert generated.metadata.name.startswith("gen-") and len(generated.metadata.name) == 9


def test_create_errors_are_status_bodies(kube: KubeTarget) -> None:
    core = client.CoreV1Api(kube.api_client)
    core.create_namespaced_config_map(kube.namespace, configmap("taken", {"a": "1"}))
    exists = _error(core.create_namespaced_config_map, kube.namespace, configmap("taken", {"a": "1"}))
    assert (exists.status, status_of(exists)["reason"]) == (409, "AlreadyExists")
    assert status_of(exists)["details"] == {"name": "taken", "kind": "configmaps"}

    missing_namespace = _error(core.create_namespaced_config_map, "no-such-namespace", configmap("x", {}))
    assert missing_namespace.status == 404
    assert status_of(missing_namespace)["message"] == 'namespaces "no-such-namespace" not found'

    bad_name = _error(core.create_namespaced_config_map, kube.namespace, configmap("Bad_Name", {}))
    body = status_of(bad_name)
    assert (bad_name.status, body["reason"], body["kind"], body["status"]) == (
        422,
        "Invalid",
        "Status",
        "Failure",
    )
    assert body["details"]["causes"][0]["field"] == "metadata.name"
    assert "RFC 1123" in body["message"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (  # kube-apiserver v1.36's fields: the pod spec is a struct, so its containers are what is missing
            {"metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"a": "b"}}}},
            "spec.template.spec.containers",
        ),
        (
            {"metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"a": "b"}}}},
            "spec.template.metadata.labels",
        ),
        (
            {
                "metadata": {"name": "d"},
                "spec": {
                    "selector": {"matchLabels": {"app": "x"}},
                    "template": {
                        "metadata": {"labels": {"app": "y"}},
                        "spec": {"containers": [{"name": "c"}]},
                    },
                },
            },
            "spec.template.spec.containers[0].image",
        ),
    ],
)
def test_invalid_workloads_are_refused_with_every_problem(
    kube: KubeTarget, body: dict[str, Any], field: str
) -> None:
    path = f"/apis/apps/v1/namespaces/{kube.namespace}/deployments"
    error = _error(
        request, kube.api_client, "POST", path, {"apiVersion": "apps/v1", "kind": "Deployment", **body}
    )
    assert error.status == 422
    assert field in {cause["field"] for cause in status_of(error)["details"]["causes"]}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("tier=web", {"a"}),
        ("tier==web", {"a"}),
        ("tier!=web", {"b", "c"}),
        ("tier in (web,db)", {"a", "b"}),
        ("tier notin (web)", {"b", "c"}),
        ("tier", {"a", "b"}),
        ("!tier", {"c"}),
        ("tier,env=prod", {"a"}),
        ("", {"a", "b", "c"}),
    ],
)
def test_list_filters_by_label_selector(kube: KubeTarget, selector: str, expected: set[str]) -> None:
    core = client.CoreV1Api(kube.api_client)
    core.create_namespaced_config_map(kube.namespace, configmap("a", {}, {"tier": "web", "env": "prod"}))
    core.create_namespaced_config_map(kube.namespace, configmap("b", {}, {"tier": "db"}))
    core.create_namespaced_config_map(kube.namespace, configmap("c", {}, {"env": "prod"}))
    listed = core.list_namespaced_config_map(kube.namespace, label_selector=selector)
    assert {item.metadata.name for item in listed.items} - {"kube-root-ca.crt"} == expected


def test_bad_selectors_are_400(kube: KubeTarget) -> None:
    core = client.CoreV1Api(kube.api_client)
    assert _error(core.list_namespaced_config_map, kube.namespace, label_selector="a in (b").status == 400
    assert _error(core.list_namespaced_config_map, kube.namespace, field_selector="spec.nope=1").status == 400


def test_field_selectors_on_pods_and_names(kube: KubeTarget, kubelet: Kubelet) -> None:
    node = kubelet.add_node("node-a")
    kubelet.occupy("node-a", kube.namespace, {"cpu": "10m", "memory": "16Mi"}, name="running")
    core = client.CoreV1Api(kube.api_client)
    nowhere = {
        "containers": [{"name": "app", "image": "registry.example/app:1"}],
        "nodeSelector": {"no": "node"},
    }
    core.create_namespaced_pod(kube.namespace, {"metadata": {"name": "waiting"}, "spec": nowhere})
    kubelet.until(
        lambda: core.read_namespaced_pod("running", kube.namespace).status.phase == "Running", "running runs"
    )
    by_phase = core.list_namespaced_pod(kube.namespace, field_selector="status.phase=Pending")
    assert [pod.metadata.name for pod in by_phase.items] == ["waiting"]
    by_node = core.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={node}")
    assert [pod.metadata.name for pod in by_node.items] == ["running"]
    by_name = core.list_namespaced_pod(kube.namespace, field_selector="metadata.name!=running")
    assert [pod.metadata.name for pod in by_name.items] == ["waiting"]


def test_list_pages_with_limit_and_continue(kube: KubeTarget) -> None:
    core = client.CoreV1Api(kube.api_client)
    for index in range(5):
        core.create_namespaced_config_map(kube.namespace, configmap(f"page-{index}", {}, {"paged": "yes"}))
    names, token = [], None
    while True:
        page = core.list_namespaced_config_map(
            kube.namespace, label_selector="paged", limit=2, _continue=token
        )
        names += [item.metadata.name for item in page.items]
        token = page.metadata._continue
        if not token:
            break
    assert names == [f"page-{index}" for index in range(5)]


def test_replace_conflicts_on_a_stale_resource_version(kube: KubeTarget) -> None:
    core = client.CoreV1Api(kube.api_client)
    created = core.create_namespaced_config_map(kube.namespace, configmap("cm", {"a": "1"}))
    core.replace_namespaced_config_map("cm", kube.namespace, {**configmap("cm", {"a": "2"})})
    stale = configmap("cm", {"a": "3"})
    stale["metadata"]["resourceVersion"] = created.metadata.resource_version
    error = _error(core.replace_namespaced_config_map, "cm", kube.namespace, stale)
    assert (error.status, status_of(error)["reason"]) == (409, "Conflict")
    assert "the object has been modified" in status_of(error)["message"]
    assert core.read_namespaced_config_map("cm", kube.namespace).data == {"a": "2"}


def test_generation_follows_spec_changes_only_and_no_op_writes_keep_the_version(kube: KubeTarget) -> None:
    apps = client.AppsV1Api(kube.api_client)
    apps.create_namespaced_deployment(kube.namespace, deployment("web"))
    labelled = apps.patch_namespaced_deployment("web", kube.namespace, {"metadata": {"labels": {"x": "y"}}})
    assert labelled.metadata.generation == 1
    scaled = apps.patch_namespaced_deployment("web", kube.namespace, {"spec": {"replicas": 3}})
    assert scaled.metadata.generation == 2
    again = apps.patch_namespaced_deployment("web", kube.namespace, {"spec": {"replicas": 3}})
    assert again.metadata.generation == 2
    # a no-op write is not stored: the version stays (on an object no controller writes meanwhile, as the
    # Deployment controller writes the Deployment's status on a real cluster)
    core = client.CoreV1Api(kube.api_client)
    core.create_namespaced_config_map(kube.namespace, configmap("settings", {"a": "1"}))
    changed = core.patch_namespaced_config_map("settings", kube.namespace, {"data": {"a": "2"}})
    same = core.patch_namespaced_config_map("settings", kube.namespace, {"data": {"a": "2"}})
    assert same.metadata.resource_version == changed.metadata.resource_version


def test_server_defaults_are_visible_to_clients(kube: KubeTarget) -> None:
    created = client.AppsV1Api(kube.api_client).create_namespaced_deployment(
        kube.namespace, {k: v for k, v in deployment("web").items()} | {"spec": {**deployment("web")["spec"]}}
    )
    body = deployment("plain")
    del body["spec"]["replicas"]
    plain = client.AppsV1Api(kube.api_client).create_namespaced_deployment(kube.namespace, body)
    assert plain.spec.replicas == 1
    assert created.spec.strategy.type == "RollingUpdate"
    assert created.spec.template.spec.containers[0].image_pull_policy == "IfNotPresent"
    namespace = client.CoreV1Api(kube.api_client).read_namespace(kube.namespace)
    assert namespace.metadata.labels["kubernetes.io/metadata.name"] == kube.namespace


def test_status_subresource_separates_spec_and_status_writes(kube: KubeTarget) -> None:
    apps = client.AppsV1Api(kube.api_client)
    apps.create_namespaced_deployment(kube.namespace, deployment("web"))
    with_status = apps.patch_namespaced_deployment("web", kube.namespace, {"status": {"replicas": 7}})
    assert with_status.status is None or with_status.status.replicas != 7
    patched = apps.patch_namespaced_deployment_status(
        "web", kube.namespace, {"spec": {"replicas": 9}, "status": {"replicas": 7, "observedGeneration": 1}}
    )
    assert patched.status.replicas == 7
    assert patched.spec.replicas == 1
    assert apps.read_namespaced_deployment_status("web", kube.namespace).status.observed_generation == 1


def test_delete_answers_200_then_404_and_namespace_deletion_takes_its_objects(kube: KubeTarget) -> None:
    core = client.CoreV1Api(kube.api_client)
    core.create_namespaced_config_map(kube.namespace, configmap("gone", {}))
    core.delete_namespaced_config_map("gone", kube.namespace, propagation_policy="Background")
    assert _error(core.read_namespaced_config_map, "gone", kube.namespace).status == 404
    assert _error(core.delete_namespaced_config_map, "gone", kube.namespace).status == 404


def test_namespace_deletion_deletes_its_objects(kube: KubeTarget) -> None:
    core = client.CoreV1Api(kube.api_client)
    doomed = f"{kube.namespace}-doomed"
    core.create_namespace({"metadata": {"name": doomed}})
    core.create_namespaced_config_map(doomed, configmap("inside", {}))
    core.delete_namespace(doomed)
    assert core.read_namespace(doomed).status.phase == "Terminating"  # finalized a moment later

    def gone() -> bool:
        try:
            core.read_namespace(doomed)
        except client.ApiException as error:
            return error.status == 404
        return False

    wait_for(gone, f"namespace {doomed} finalized")
    assert core.list_namespaced_config_map(doomed).items == []


def test_finalizers_hold_a_deleted_object_until_removed(kube: KubeTarget) -> None:
    core = client.CoreV1Api(kube.api_client)
    held = configmap("held", {})
    held["metadata"]["finalizers"] = ["example.com/hold"]
    core.create_namespaced_config_map(kube.namespace, held)
    core.delete_namespaced_config_map("held", kube.namespace)
    marked = core.read_namespaced_config_map("held", kube.namespace)
    assert marked.metadata.deletion_timestamp is not None
    core.patch_namespaced_config_map("held", kube.namespace, {"metadata": {"finalizers": None}})
    assert _error(core.read_namespaced_config_map, "held", kube.namespace).status == 404


def test_dry_run_persists_nothing(kube: KubeTarget) -> None:
    core = client.CoreV1Api(kube.api_client)
    core.create_namespaced_config_map(kube.namespace, configmap("dry", {"a": "1"}), dry_run="All")
    assert _error(core.read_namespaced_config_map, "dry", kube.namespace).status == 404
    core.create_namespaced_config_map(kube.namespace, configmap("dry", {"a": "1"}))
    core.patch_namespaced_config_map("dry", kube.namespace, {"data": {"a": "2"}}, dry_run="All")
    assert core.read_namespaced_config_map("dry", kube.namespace).data == {"a": "1"}


@pytest.mark.fake_only("tests the fake's own hooks (add_node, create_pod, set_pod_phase)")
def test_hooks_add_nodes_pods_and_phases(kube: KubeTarget) -> None:
    fake = kube.fake
    assert fake is not None
    fake.add_node(
        "gpu-1",
        allocatable={"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "2"},
        labels={"pool": "gpu"},
        taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}],
    )
    node = client.CoreV1Api(kube.api_client).read_node("gpu-1")
    assert node.status.allocatable["nvidia.com/gpu"] == "2"
    assert node.metadata.labels["pool"] == "gpu"
    assert node.spec.taints[0].effect == "NoSchedule"
    fake.create_pod(kube.namespace, "web-1", requests={"cpu": "500m"}, node_name="gpu-1", phase="Running")
    fake.set_pod_phase(kube.namespace, "web-1", "Failed", reason="Evicted")
    pod = client.CoreV1Api(kube.api_client).read_namespaced_pod("web-1", kube.namespace)
    assert (pod.status.phase, pod.status.reason) == ("Failed", "Evicted")
    assert [obj["metadata"]["name"] for obj in fake.objects("pods")] == ["web-1"]


@pytest.mark.fake_only("injects a 503 and reads the fake's request log")
def test_injected_failures_and_recorded_requests(kube: KubeTarget) -> None:
    fake = kube.fake
    assert fake is not None
    core = client.CoreV1Api(kube.api_client)
    fake.fail_next("POST", r"/configmaps$", 503, "etcd is down")
    error = _error(core.create_namespaced_config_map, kube.namespace, configmap("x", {}))
    assert (error.status, status_of(error)["message"]) == (503, "etcd is down")
    core.create_namespaced_config_map(kube.namespace, configmap("x", {}))
    core.read_namespaced_config_map("x", kube.namespace)
    assert [(r.method, r.path) for r in fake.requests] == [
        ("POST", f"/api/v1/namespaces/{kube.namespace}/configmaps"),
        ("POST", f"/api/v1/namespaces/{kube.namespace}/configmaps"),
        ("GET", f"/api/v1/namespaces/{kube.namespace}/configmaps/x"),
    ]
    assert len(fake.write_requests()) == 2


def test_unknown_paths_and_wrong_methods(kube: KubeTarget) -> None:
    for method, path, expected in [
        ("GET", "/apis/nothing.example.com/v1/widgets", 404),
        ("GET", "/api/v1/namespaces/x/nosuchthings", 404),
        ("PUT", f"/api/v1/namespaces/{kube.namespace}/configmaps", 405),
    ]:
        assert _error(request, kube.api_client, method, path, {}).status == expected, path


def test_kubeconfig_from_the_fixture_reaches_the_same_cluster(kube: KubeTarget) -> None:
    api_client = config.new_client_from_config(config_file=str(kube.kubeconfig_path), context=kube.context)
    try:
        namespace = client.CoreV1Api(api_client).read_namespace(kube.namespace)
        assert namespace.metadata.name == kube.namespace
    finally:
        api_client.close()


def test_servers_are_independent(fake_kube: FakeKubeServer) -> None:
    other = FakeKubeServer()
    try:
        assert other.port != fake_kube.port
        client.CoreV1Api(client_for(fake_kube)).create_namespaced_config_map("default", configmap("mine", {}))
        names = [(c["metadata"]["namespace"], c["metadata"]["name"]) for c in other.objects("configmaps")]
        assert ("default", "mine") not in names and ("default", "kube-root-ca.crt") in names
    finally:
        other.stop()
