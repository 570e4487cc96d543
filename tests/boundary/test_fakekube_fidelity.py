"""Where the fake used to be more lenient than kube-apiserver, through the real client (fake or real cluster).

Behaviours covered:
- immutable fields of built-in kinds are 422 Invalid in the real wording (values as compact JSON): a Job's
  completions and template, a Deployment's selector, an allocated Service clusterIP, an immutable
  ConfigMap's or Secret's data (and `immutable` itself), a PersistentVolumeClaim's spec (then a diff), a
  StatefulSet's fixed spec fields;
- a Job gets the generated selector and job-name/controller-uid template labels, and its defaults; an
  apply of the same body keeps them, an update without them is refused;
- a Secret's `stringData` folds into `data` (base64) and is not stored;
- a Lease's acquireTime/renewTime must be MicroTime (RFC 3339 with microseconds): anything else is 400;
- a deleted namespace stays Terminating for a while (deletionTimestamp, phase), creates in it are 403
  Forbidden in NamespaceLifecycle's words, and it goes with its content a bit later;
- a new namespace holds the ConfigMap kube-root-ca.crt (kube-controller-manager's root CA publisher): a
  namespace is never empty of ConfigMaps.
"""

from __future__ import annotations

import base64
import secrets
import time
from typing import Any

import pytest
from kubernetes import client

from tests.fakekube.clienting import apply, deployment, request, status_of
from tests.fakekube.fixtures import KubeTarget
from tests.realkube.kubelet import wait_for

MERGE = "application/merge-patch+json"


def _error(call: Any, *args: Any, **kwargs: Any) -> client.ApiException:
    with pytest.raises(client.ApiException) as caught:
        call(*args, **kwargs)
    return caught.value


def _job(name: str, completions: int) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "completions": completions,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "pi", "image": "registry.example/pi:1"}],
                }
            },
        },
    }


def _causes(error: client.ApiException) -> dict[str, str]:
    status = status_of(error)
    assert (error.status, status["reason"]) == (422, "Invalid"), status
    return {cause["field"]: cause["message"] for cause in status["details"]["causes"]}


def test_a_jobs_completions_and_template_are_immutable(kube: KubeTarget) -> None:
    path = f"/apis/batch/v1/namespaces/{kube.namespace}/jobs"
    request(kube.api_client, "POST", path, _job("pi", 2))
    error = _error(request, kube.api_client, "PATCH", f"{path}/pi", {"spec": {"completions": 3}}, MERGE)
    assert status_of(error)["message"] == (
        'Job.batch "pi" is invalid: spec.completions: Invalid value: 3: field is immutable'
    )
    image = {
        "spec": {"template": {"spec": {"containers": [{"name": "pi", "image": "registry.example/pi:2"}]}}}
    }
    error = _error(request, kube.api_client, "PATCH", f"{path}/pi", image, MERGE)
    assert _causes(error)["spec.template"].endswith(": field is immutable")
    assert status_of(error)["message"].startswith('Job.batch "pi" is invalid: spec.template: Invalid value: ')
    # the parallelism of a Job may change
    patched = request(kube.api_client, "PATCH", f"{path}/pi", {"spec": {"parallelism": 2}}, MERGE)
    assert patched["spec"]["parallelism"] == 2


def test_a_job_gets_a_generated_selector_and_defaults_that_apply_keeps(kube: KubeTarget) -> None:
    path = f"/apis/batch/v1/namespaces/{kube.namespace}/jobs/pi"
    created = apply(kube.api_client, path, _job("pi", 2), "agent")
    uid, spec = created["metadata"]["uid"], created["spec"]
    assert spec["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert spec["template"]["metadata"]["labels"] == {
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": "pi",
        "controller-uid": uid,
        "job-name": "pi",
    }
    assert (spec["parallelism"], spec["backoffLimit"], spec["completionMode"], spec["suspend"]) == (
        1,
        6,
        "NonIndexed",
        False,
    )
    # no immutable-field error: nobody owns the generated selector and labels, so they stay
    again = apply(kube.api_client, path, _job("pi", 2), "agent")
    assert again["spec"]["selector"] == spec["selector"]
    assert again["spec"]["template"]["metadata"]["labels"] == spec["template"]["metadata"]["labels"]
    replaced = {**_job("pi", 2), "metadata": {"name": "pi"}}
    error = _error(request, kube.api_client, "PUT", path, replaced)
    assert "spec.selector" in _causes(error)


def test_a_deployments_selector_is_immutable_and_shown_as_compact_json(kube: KubeTarget) -> None:
    path = f"/apis/apps/v1/namespaces/{kube.namespace}/deployments"
    request(kube.api_client, "POST", path, deployment("web"))
    other = {"matchLabels": {"app": "other"}}
    change = {"spec": {"selector": other, "template": {"metadata": {"labels": {"app": "other"}}}}}
    error = _error(request, kube.api_client, "PATCH", f"{path}/web", change, MERGE)
    assert status_of(error)["message"] == (
        'Deployment.apps "web" is invalid: spec.selector: Invalid value: {"matchLabels":{"app":"other"}}: '
        "field is immutable"
    )


def test_an_allocated_cluster_ip_cannot_change(kube: KubeTarget) -> None:
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web"},
        "spec": {"ports": [{"port": 80}], "selector": {"app": "web"}},
    }
    created = request(kube.api_client, "POST", f"/api/v1/namespaces/{kube.namespace}/services", service)
    allocated = created["spec"]["clusterIP"]
    assert allocated and created["spec"]["clusterIPs"] == [allocated]
    path = f"/api/v1/namespaces/{kube.namespace}/services/web"
    prefix, _, last = allocated.rpartition(".")  # another address of the cluster's service range
    other = f"{prefix}.{200 if last != '200' else 201}"
    error = _error(request, kube.api_client, "PATCH", path, {"spec": {"clusterIP": other}}, MERGE)
    assert _causes(error) == {"spec.clusterIPs[0]": f'Invalid value: ["{other}"]: may not change once set'}
    # an update that leaves clusterIP out keeps the allocated one
    version = request(kube.api_client, "GET", path)["metadata"]["resourceVersion"]
    replaced = request(
        kube.api_client,
        "PUT",
        path,
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "resourceVersion": version},
            "spec": {"ports": [{"port": 81}], "selector": {"app": "web"}},
        },
    )
    assert replaced["spec"]["clusterIP"] == allocated


@pytest.mark.parametrize("kind", ["ConfigMap", "Secret"])
def test_immutable_config_maps_and_secrets_keep_their_data(kube: KubeTarget, kind: str) -> None:
    plural = kind.lower() + "s"
    path = f"/api/v1/namespaces/{kube.namespace}/{plural}"
    data = {"a": "1"} if kind == "ConfigMap" else {"a": "MQ=="}
    body = {"apiVersion": "v1", "kind": kind, "metadata": {"name": "frozen"}, "data": data, "immutable": True}
    request(kube.api_client, "POST", path, body)
    changed = {"data": {"a": "2" if kind == "ConfigMap" else "Mg=="}}
    error = _error(request, kube.api_client, "PATCH", f"{path}/frozen", changed, MERGE)
    assert status_of(error)["message"] == (
        f'{kind} "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set'
    )
    error = _error(request, kube.api_client, "PATCH", f"{path}/frozen", {"immutable": False}, MERGE)
    assert _causes(error) == {"immutable": "Forbidden: field is immutable when `immutable` is set"}
    labelled = request(
        kube.api_client, "PATCH", f"{path}/frozen", {"metadata": {"labels": {"a": "b"}}}, MERGE
    )
    assert labelled["metadata"]["labels"] == {"a": "b"}


def test_a_claims_spec_is_immutable(kube: KubeTarget) -> None:
    path = f"/api/v1/namespaces/{kube.namespace}/persistentvolumeclaims"
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
            "storageClassName": "nova-test-none",
        },
    }
    request(kube.api_client, "POST", path, claim)
    grown = {"spec": {"resources": {"requests": {"storage": "2Gi"}}}}
    error = _error(request, kube.api_client, "PATCH", f"{path}/data", grown, MERGE)
    causes = _causes(error)
    assert list(causes) == ["spec"]
    assert causes["spec"].startswith(  # then a diff of the spec, whose format differs by version
        "Forbidden: spec is immutable after creation except resources.requests and "
        "volumeAttributesClassName for bound claims\n"
    )


def test_a_statefulsets_service_name_is_fixed(kube: KubeTarget) -> None:
    path = f"/apis/apps/v1/namespaces/{kube.namespace}/statefulsets"
    labels = {"app": "db"}
    body = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "serviceName": "db",
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "db", "image": "registry.example/db:1"}]},
            },
        },
    }
    request(kube.api_client, "POST", path, body)
    error = _error(request, kube.api_client, "PATCH", f"{path}/db", {"spec": {"serviceName": "other"}}, MERGE)
    assert list(_causes(error)) == ["spec"]
    assert "updates to statefulset spec for fields other than 'replicas'" in _causes(error)["spec"]
    scaled = request(kube.api_client, "PATCH", f"{path}/db", {"spec": {"replicas": 3}}, MERGE)
    assert scaled["spec"]["replicas"] == 3


def test_secret_string_data_folds_into_data(kube: KubeTarget) -> None:
    core = client.CoreV1Api(kube.api_client)
    body = {"metadata": {"name": "creds"}, "data": {"a": "MQ==", "b": "Mg=="}, "stringData": {"b": "two"}}
    created = core.create_namespaced_secret(kube.namespace, body)
    assert created.data == {"a": "MQ==", "b": base64.b64encode(b"two").decode()}
    assert created.string_data is None and created.type == "Opaque"
    path = f"/api/v1/namespaces/{kube.namespace}/secrets/creds"
    patched = request(kube.api_client, "PATCH", path, {"stringData": {"c": "three"}}, MERGE)
    assert patched["data"]["c"] == base64.b64encode(b"three").decode() and "stringData" not in patched


def test_lease_times_must_be_micro_time(kube: KubeTarget) -> None:
    path = f"/apis/coordination.k8s.io/v1/namespaces/{kube.namespace}/leases"
    lease: dict[str, Any] = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "leader"},
        "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15, "acquireTime": "t"},
    }
    error = _error(request, kube.api_client, "POST", path, lease)
    assert (error.status, status_of(error)["reason"]) == (400, "BadRequest")
    assert status_of(error)["message"].startswith(
        'Lease in version "v1" cannot be handled as a Lease: parsing time "t" as '
        '"2006-01-02T15:04:05.000000Z07:00": cannot parse'
    )
    lease["spec"]["acquireTime"] = "2026-01-01T12:00:00Z"  # RFC 3339 without microseconds: still refused
    assert _error(request, kube.api_client, "POST", path, lease).status == 400
    lease["spec"]["acquireTime"] = lease["spec"]["renewTime"] = "2026-01-01T12:00:00.000000Z"
    created = request(kube.api_client, "POST", path, lease)
    assert created["spec"]["acquireTime"] == "2026-01-01T12:00:00.000000Z"


def test_a_deleted_namespace_terminates_before_it_goes(kube: KubeTarget) -> None:
    core = client.CoreV1Api(kube.api_client)
    doomed = f"{kube.namespace}-doomed-{secrets.token_hex(2)}"
    core.create_namespace({"metadata": {"name": doomed}})
    core.create_namespaced_config_map(doomed, {"metadata": {"name": "inside"}, "data": {"a": "1"}})
    answered = request(kube.api_client, "DELETE", f"/api/v1/namespaces/{doomed}")
    assert answered["status"]["phase"] == "Terminating" and answered["metadata"]["deletionTimestamp"]
    error = _error(core.create_namespaced_config_map, doomed, {"metadata": {"name": "late"}})
    status = status_of(error)
    assert (error.status, status["reason"]) == (403, "Forbidden")
    assert status["message"] == (
        f'configmaps "late" is forbidden: unable to create new content in namespace {doomed} '
        "because it is being terminated"
    )
    assert status["details"]["causes"][0]["reason"] == "NamespaceTerminating"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            core.read_namespace(doomed)
        except client.ApiException as gone:
            assert gone.status == 404
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"namespace {doomed} still there after 60 s")
    assert _error(core.read_namespaced_config_map, "inside", doomed).status == 404


def test_a_new_namespace_holds_the_root_ca_configmap(kube: KubeTarget) -> None:
    core = client.CoreV1Api(kube.api_client)
    name = f"{kube.namespace}-ca"
    core.create_namespace({"metadata": {"name": name}})
    try:

        def published() -> bool:
            names = [c.metadata.name for c in core.list_namespaced_config_map(name).items]
            return names == ["kube-root-ca.crt"]

        wait_for(published, f"kube-root-ca.crt in namespace {name}", timeout=30)
        found = core.read_namespaced_config_map("kube-root-ca.crt", name)
        assert "ca.crt" in found.data
        assert found.metadata.annotations["kubernetes.io/description"].startswith("Contains a CA bundle")
    finally:
        core.delete_namespace(name)
