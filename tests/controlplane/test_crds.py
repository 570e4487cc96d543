"""The CRDs of deploy/crds accept every example in the repository, unchanged, and reject malformed ones.

Behaviours covered:
- the three CRDs install and become Established (the fake API server, or NOVA_TEST_KUBECONFIG);
- every SchedulePolicy and Cluster of examples/repo-layout/source, the test builders' policies and clusters
  (every field they can write), the agent's status report (nova_agent.reports) written through the Cluster
  status subresource, and ScheduleGroups as the controller writes them (rendering.views.schedule_group) are
  created and read back *unchanged* — nothing pruned, nothing retyped — and also server-side applied;
- wrong types, enum values and missing required fields are refused with 422 Invalid.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from nova_agent import reports
from nova_agent.capacity import NodeCapacity
from nova_agent.health import Health
from nova_agent.reports import ClusterIdentity, Observation, WorkloadHealth
from nova_agent.rescheduling import request_for
from nova_agent.resources import ObjectRef
from nova_gitops.rendering import views
from tests import builders
from tests.controlplane.conftest import crd_documents
from tests.fakekube.clienting import apply
from tests.fakekube.fixtures import KubeTarget

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "repo-layout" / "source"
PLURALS = {
    "SchedulePolicy": ("policy.elotl.co", "schedulepolicies"),
    "ScheduleGroup": ("policy.elotl.co", "schedulegroups"),
    "Cluster": ("cluster.elotl.co", "clusters"),
}


def example_documents() -> list[dict[str, Any]]:
    found = []
    for path in sorted(EXAMPLES.rglob("*.yaml")):
        for document in yaml.load_all(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader):
            if isinstance(document, dict) and document.get("kind") in ("SchedulePolicy", "Cluster"):
                found.append(document)
    return found


def builder_documents() -> list[dict[str, Any]]:
    selector = {
        "matchLabels": {"env": "prod"},
        "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["a", "b"]},
            {"key": "gpu", "operator": "DoesNotExist"},
        ],
    }
    override = [
        {"fieldPath": "spec.replicas", "value": {"staticValue": 3}},
        {"fieldPath": "metadata.labels['x']", "value": {"staticValue": "y"}},
        {"fieldPath": "spec.paused", "value": {"staticValue": True}},
        {"fieldPath": "data", "value": {"staticValue": {"a": "1", "b": ["c"]}}},
    ]
    return [
        builders.policy("p-plain"),
        builders.policy(
            "p-full",
            priority=5,
            namespaceSelector=selector,
            clusterSelector=selector,
            orderedClusterSelector={
                "matchExpressions": [
                    {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["c1"]}
                ]
            },
            groupBy={"labelKey": "color"},
            spreadConstraints={
                "spreadMode": "Divide",
                "topologyKey": "nova.elotl.co/cluster.region",
                "percentageSplit": [
                    {"topologyValue": "r1", "percentage": 70},
                    {"topologyValue": "r2", "percentage": 30},
                ],
                "overrides": [
                    {
                        "topologyValue": "r1",
                        "resources": [
                            {
                                "kind": "Deployment",
                                "apiVersion": "apps/v1",
                                "name": "web",
                                "namespace": "demo",
                                "override": override,
                            },
                        ],
                    }
                ],
            },
            resourceSelectors={
                "labelSelectors": [{"matchLabels": {"app": "demo"}}, selector],
                "kinds": [{"group": "apps", "version": "v1", "kind": "Deployment"}, {"kind": "ConfigMap"}],
            },
        ),
        builders.policy("p-legacy-ordered", OrderedClusterSelector={"matchLabels": {"tier": "1"}}),
        builders.cluster("c-plain"),
        builders.cluster(
            "c-full",
            nodes={"n1": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "2"}, "n2": {"cpu": "500m"}},
            labels={"env": "prod", "nova.elotl.co/cluster.region": "r1"},
            standby=True,
            autoscaled=True,
            node_labels={"n1": {"accelerator": "nvidia"}},
            node_taints={"n1": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]},
        ),
        builders.cluster("c-unknown", ready=None),
    ]


def agent_report() -> dict[str, Any]:
    web = ObjectRef("apps/v1", "Deployment", "shop", "web")
    observation = Observation(
        identity=ClusterIdentity(
            "wlc-agent", provider="aws", kubernetes_version="v1.30.2", labels={"env": "prod"}
        ),
        nodes=[
            NodeCapacity(
                "n1",
                {"cpu": 4000, "memory": 8 * 1024**3 * 1000, "pods": 110_000},
                {"cpu": 3500, "memory": 4 * 1024**3 * 1000, "pods": 100_000},
                {"topology.kubernetes.io/zone": "eu-west-1a"},
                ({"key": "gpu", "value": "", "effect": "NoSchedule"},),
                True,
            )
        ],
        autoscaled=False,
        workloads=[
            WorkloadHealth(
                web, Health(False, "Available", "MinimumReplicasUnavailable", "0/2 available"), "abc123"
            )
        ],
        reschedule_requests=[
            request_for(
                web,
                "g-1",
                "deployment shop/web does not have minimum replicas available",
                "2025-12-31T23:55:00Z",
            )
        ],
        synced_revision="abc123",
        last_error="",
    )
    return reports.build_status_document(observation, datetime(2026, 1, 1, tzinfo=UTC))


def schedule_groups() -> list[dict[str, Any]]:
    plan = builders.plan(
        builders.cluster("c1"),
        builders.policy("demo-policy", groupBy={"labelKey": "color"}),
        builders.deployment("blue", labels={"app": "demo", "color": "blue"}),
        builders.deployment("huge", cpu="64", labels={"app": "demo", "color": "green"}),
        builders.deployment("pinned", labels={"other": "x"}, annotations={"nova.elotl.co/cluster": "c1"}),
    )
    groups = [views.schedule_group(group) for group in plan.groups]
    assert {group["scheduled"] for group in groups} == {True, False}
    assert any(group["policy"]["name"] is None for group in groups)
    return groups


def _renamed(document: dict[str, Any], suffix: str) -> dict[str, Any]:
    renamed = copy.deepcopy(document)
    renamed["metadata"]["name"] = f"{renamed['metadata']['name']}-{suffix}"[:63].rstrip("-")
    return renamed


def _user_fields(document: dict[str, Any]) -> dict[str, Any]:
    metadata = document.get("metadata") or {}
    kept = {"name": metadata.get("name"), "labels": metadata.get("labels") or {}}
    return {**{k: v for k, v in document.items() if k != "metadata"}, "metadata": kept}


@pytest.fixture
def custom(nova_crds: KubeTarget) -> tuple[client.CustomObjectsApi, KubeTarget]:
    return client.CustomObjectsApi(nova_crds.api_client), nova_crds


def _round_trip(api: client.CustomObjectsApi, kube: KubeTarget, document: dict[str, Any]) -> None:
    group, plural = PLURALS[document["kind"]]
    body = _renamed(document, kube.namespace)
    name = body["metadata"]["name"]
    status = body.get("status")
    created = api.create_cluster_custom_object(group, "v1alpha1", plural, body)
    if document["kind"] == "Cluster" and status is not None:  # status subresource: create ignores it
        assert "status" not in created
        created = api.replace_cluster_custom_object_status(
            group, "v1alpha1", plural, name, {**created, "status": status}
        )
    stored = api.get_cluster_custom_object(group, "v1alpha1", plural, name)
    assert _user_fields(stored) == _user_fields(body), f"{document['kind']}/{name} was changed by the schema"
    path = f"/apis/{group}/v1alpha1/{plural}/{name}"
    applied = apply(
        kube.api_client, path, {k: v for k, v in body.items() if k != "status"}, "nova-gitops-tests"
    )
    assert _user_fields(applied) == _user_fields(stored)


def test_crds_are_structural_and_served(nova_crds: KubeTarget) -> None:
    names = {crd["metadata"]["name"] for crd in crd_documents()}
    assert names == {
        "schedulepolicies.policy.elotl.co",
        "schedulegroups.policy.elotl.co",
        "clusters.cluster.elotl.co",
    }
    resources = client.CustomObjectsApi(nova_crds.api_client)
    for group, plural in PLURALS.values():
        assert resources.list_cluster_custom_object(group, "v1alpha1", plural)["items"] is not None


@pytest.mark.parametrize(
    "document",
    example_documents(),
    ids=lambda d: f"{d['kind']}/{d['metadata']['name']}",
)
def test_repository_examples_are_accepted_unchanged(
    custom: tuple[client.CustomObjectsApi, KubeTarget], document: dict[str, Any]
) -> None:
    _round_trip(*custom, document)


@pytest.mark.parametrize(
    "document", builder_documents(), ids=lambda d: f"{d['kind']}/{d['metadata']['name']}"
)
def test_builder_objects_are_accepted_unchanged(
    custom: tuple[client.CustomObjectsApi, KubeTarget], document: dict[str, Any]
) -> None:
    _round_trip(*custom, document)


def test_agent_status_report_is_accepted_unchanged(
    custom: tuple[client.CustomObjectsApi, KubeTarget],
) -> None:
    _round_trip(*custom, agent_report())


@pytest.mark.parametrize("document", schedule_groups(), ids=lambda d: d["metadata"]["name"])
def test_schedule_groups_as_written_back_are_accepted_unchanged(
    custom: tuple[client.CustomObjectsApi, KubeTarget], document: dict[str, Any]
) -> None:
    _round_trip(*custom, document)


@pytest.mark.parametrize(
    ("document", "field"),
    [
        (builders.policy("bad-mode", spreadConstraints={"spreadMode": "Divid"}), "spreadMode"),
        (
            builders.policy(
                "bad-operator", clusterSelector={"matchExpressions": [{"key": "a", "operator": "Is"}]}
            ),
            "operator",
        ),
        (
            builders.policy("bad-split", spreadConstraints={"percentageSplit": [{"topologyValue": "r1"}]}),
            "percentage",
        ),
        (builders.policy("bad-priority", priority="high"), "priority"),
        ({**builders.cluster("bad-version"), "spec": {"kubernetesversion": 1.32}}, "kubernetesversion"),
    ],
    ids=lambda value: value if isinstance(value, str) else value["metadata"]["name"],
)
def test_malformed_objects_are_refused(
    custom: tuple[client.CustomObjectsApi, KubeTarget], document: dict[str, Any], field: str
) -> None:
    api, kube = custom
    group, plural = PLURALS[document["kind"]]
    with pytest.raises(client.ApiException) as raised:
        api.create_cluster_custom_object(group, "v1alpha1", plural, _renamed(document, kube.namespace))
    assert raised.value.status == 422
    assert field in (raised.value.body or "")
