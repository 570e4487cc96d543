"""Status report: a Cluster document in the shape the scheduler's parser accepts (labels, spec, conditions,
per-node capacity/available as quantity strings, nodeLabels, nodeTaints, autoscaled, lastUpdateTime) plus
syncedRevision, workloads, rescheduleRequests, lastError, heartbeat; region/zone from unanimous node labels;
commit only on change or when the heartbeat is due; lastUpdateTime and the Ready transition time stay put when
nothing changed; YAML round trip."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from nova_agent import reportfiles, reports
from nova_agent.capacity import NodeCapacity
from nova_agent.health import Health
from nova_agent.reports import ClusterIdentity, Observation, WorkloadHealth
from nova_agent.rescheduling import request_for
from nova_agent.resources import ObjectRef

T0 = datetime(2026, 1, 1, tzinfo=UTC)
NODE = NodeCapacity(
    "n1",
    {"cpu": 4000, "memory": 8 * 1024**3 * 1000},
    {"cpu": 3500, "memory": 8 * 1024**3 * 1000},
    {"topology.kubernetes.io/region": "eu-west-1", "topology.kubernetes.io/zone": "eu-west-1a"},
    ({"key": "gpu", "value": "", "effect": "NoSchedule"},),
    True,
)
WEB = ObjectRef("apps/v1", "Deployment", "shop", "web")


def observation(**changes: object) -> Observation:
    base = Observation(
        identity=ClusterIdentity(
            "wlc-1", provider="aws", kubernetes_version="v1.30.2", labels={"env": "prod"}
        ),
        nodes=[NODE],
        autoscaled=False,
        workloads=[
            WorkloadHealth(WEB, Health(False, "Available", "MinimumReplicasUnavailable", "0/2 available"))
        ],
        reschedule_requests=[
            request_for(
                WEB,
                "g-1",
                "deployment shop/web does not have minimum replicas available",
                "2025-12-31T23:55:00Z",
            )
        ],
        synced_revision="abc123",
        last_error="",
    )
    return Observation(**{**{f: getattr(base, f) for f in base.__slots__}, **changes})


def test_document_shape() -> None:
    document = reports.build_status_document(observation(), T0)
    assert document["apiVersion"] == "cluster.elotl.co/v1alpha1" and document["kind"] == "Cluster"
    assert document["metadata"] == {
        "name": "wlc-1",
        "labels": {
            "kubernetes.io/metadata.name": "wlc-1",
            "nova.elotl.co/cluster.provider": "aws",
            "nova.elotl.co/cluster.region": "eu-west-1",
            "nova.elotl.co/cluster.zone": "eu-west-1a",
            "nova.elotl.co/cluster.version": "v1.30.2",
            "env": "prod",
        },
    }
    assert document["spec"] == {
        "name": "wlc-1",
        "provider": "aws",
        "region": "eu-west-1",
        "zone": "eu-west-1a",
        "kubernetesversion": "v1.30.2",
    }
    status = document["status"]
    assert status["conditions"][0]["type"] == "Ready" and status["conditions"][0]["status"] == "True"
    assert status["capacityResources"] == {"n1": {"cpu": "4", "memory": "8Gi"}}
    assert status["availableResources"] == {"n1": {"cpu": "3500m", "memory": "8Gi"}}
    assert status["nodeTaints"] == {"n1": [{"key": "gpu", "value": "", "effect": "NoSchedule"}]}
    assert status["autoscaled"] is False and status["syncedRevision"] == "abc123"
    assert (
        status["workloads"][0]["healthy"] is False
        and status["workloads"][0]["reason"] == "MinimumReplicasUnavailable"
    )
    assert status["rescheduleRequests"][0]["group"] == "g-1"
    assert status["heartbeat"] == status["lastUpdateTime"] == "2026-01-01T00:00:00Z"
    assert reportfiles.load_status(reportfiles.dump_status(document)) == document


def test_commit_only_on_change_or_heartbeat() -> None:
    hour = timedelta(hours=1)
    first = reports.build_status_document(observation(), T0)
    same = reports.build_status_document(observation(), T0 + timedelta(minutes=1), first)
    assert same["status"]["lastUpdateTime"] == first["status"]["lastUpdateTime"]
    assert same["status"]["conditions"] == first["status"]["conditions"]
    assert not reportfiles.should_commit(first, same, T0 + timedelta(minutes=1), hour)
    later = reports.build_status_document(observation(), T0 + hour, first)
    assert reportfiles.should_commit(first, later, T0 + hour, hour)
    changed = reports.build_status_document(observation(last_error="boom"), T0 + timedelta(minutes=1), first)
    assert reportfiles.should_commit(first, changed, T0 + timedelta(minutes=1), hour)
    assert changed["status"]["lastUpdateTime"] == "2026-01-01T00:01:00Z"
    assert reportfiles.should_commit(None, first, T0, hour)


def test_no_nodes_is_not_ready() -> None:
    status = reports.build_status_document(observation(nodes=[]), T0)["status"]
    assert (
        status["conditions"][0]["status"] == "False" and status["conditions"][0]["reason"] == "NoReadyNodes"
    )


def test_the_schedulers_cluster_parser_accepts_the_report_without_problems() -> None:
    from nova_gitops.api.clusters import parse_cluster
    from nova_gitops.api.objects import Document
    from nova_gitops.api.problems import Problem, SourceLocation

    data = reportfiles.dump_status(reports.build_status_document(observation(last_error="x"), T0))
    problems: list[Problem] = []
    cluster = parse_cluster(
        Document(reportfiles.load_status(data), SourceLocation("status/wlc-1.yaml", 1)), problems
    )
    assert problems == []
    assert cluster is not None and cluster.name == "wlc-1" and cluster.ready is True
    [node] = cluster.nodes
    assert node.available["cpu"] == 3500 and node.taints[0].key == "gpu"
    assert cluster.labels["nova.elotl.co/cluster.region"] == "eu-west-1"
