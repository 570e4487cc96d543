"""Fixtures for control-plane tests: the CRDs of deploy/crds installed on the `kube` target.

Against the fake API server each test gets a fresh server; against a real cluster (NOVA_TEST_KUBECONFIG)
the CRDs are applied server-side (idempotent, so a cluster that already has them keeps them) and
cluster-scoped objects are named after the test's namespace so that parallel runs do not collide.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fakekube.clienting import apply
from tests.fakekube.fixtures import KubeTarget

CRD_DIRECTORY = Path(__file__).resolve().parents[2] / "deploy" / "crds"


def crd_documents() -> list[dict[str, Any]]:
    documents = []
    for path in sorted(CRD_DIRECTORY.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        documents.append(yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader))
    return documents


def _established(kube: KubeTarget, name: str) -> bool:
    from kubernetes import client

    crd = client.ApiextensionsV1Api(kube.api_client).read_custom_resource_definition(name)
    conditions = {c.type: c.status for c in (crd.status.conditions if crd.status else None) or []}
    return conditions.get("Established") == "True"


def install_crds(kube: KubeTarget) -> None:
    for crd in crd_documents():
        name = crd["metadata"]["name"]
        apply(
            kube.api_client,
            f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}",
            crd,
            "nova-gitops-tests",
            force=True,
        )
        deadline = time.monotonic() + 30
        while not _established(kube, name):
            assert time.monotonic() < deadline, f"CRD {name} never became Established"
            time.sleep(0.05)


NOVA_RESOURCES = (
    ("policy.elotl.co", "schedulepolicies"),
    ("policy.elotl.co", "schedulegroups"),
    ("cluster.elotl.co", "clusters"),
)


@pytest.fixture
def nova_crds(kube: KubeTarget) -> Iterator[KubeTarget]:
    """`kube` with the SchedulePolicy, ScheduleGroup and Cluster CRDs installed. On a real cluster the
    cluster-scoped Nova objects a test made (named ``*-<test namespace>``) are deleted afterwards."""
    from kubernetes import client

    install_crds(kube)
    yield kube
    if kube.fake is None:
        api = client.CustomObjectsApi(kube.api_client)
        for group, plural in NOVA_RESOURCES:
            for item in api.list_cluster_custom_object(group, "v1alpha1", plural)["items"]:
                if item["metadata"]["name"].endswith(kube.namespace):
                    api.delete_cluster_custom_object(group, "v1alpha1", plural, item["metadata"]["name"])
