"""Control-plane write-back: what Nova writes, written to a control plane (fake API server or a real one).

Behaviours covered:
- each scheduled object gets the `nova.elotl.co/target-cluster` label (field manager nova-gitops); an object
  spread over two clusters gets no label (a label cannot hold a list) but the `target-clusters` annotation;
- a ScheduleGroup per group with policy, objectRefs, scheduled, the groupBy label, matching-policy and
  target-cluster labels; a group no longer planned is deleted and its objects lose the label;
- events in Nova's wording (SchedulePolicyMatched, AddedToScheduleGroup on the workload with its uid;
  ScheduleGroupSyncedToWorkloadCluster with the plan's reason on the group; ReschedulingTriggered from an
  agent's request), sent again only when what they say changes; a restarted controller repeating an event
  raises its count as kube does;
- a Deployment spread 5/5 shows 10/10 ready when both agents report it healthy, 8 when one says 3/5 (fake
  only: a real control plane's deployment controller owns the status);
- an unchanged plan makes no write at all (fake only: counts requests).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import pytest

from nova_gitops.api import clusters as api_clusters
from nova_gitops.api import inputs, labels
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import SourceLocation
from nova_gitops.api.statusreports import RescheduleRequest
from nova_gitops.controller import writeback
from nova_gitops.controller.ports import ClusterReport
from nova_gitops.controller.writeback import WriteBack
from nova_gitops.rollouts.decisions import Decision, Move, WaveStatus
from nova_gitops.rollouts.events import rollout_events
from nova_gitops.rollouts.records import Record
from nova_gitops.scheduling import planning
from nova_gitops.scheduling.plans import Plan
from nova_gitops.sources.controlplane import ControlPlaneSource
from nova_gitops.sources.kubeapi import KubeApi, ResourceKind
from tests import builders
from tests.fakekube.fixtures import KubeTarget

ALL = frozenset({"list", "watch"})
DEPLOYMENTS = ResourceKind("apps", "v1", "deployments", "Deployment", True, ALL)
CONFIGMAPS = ResourceKind("", "v1", "configmaps", "ConfigMap", True, ALL)
NAMESPACES = ResourceKind("", "v1", "namespaces", "Namespace", False, ALL)
CLUSTERS = ResourceKind("cluster.elotl.co", "v1alpha1", "clusters", "Cluster", False, ALL)
POLICIES = ResourceKind("policy.elotl.co", "v1alpha1", "schedulepolicies", "SchedulePolicy", False, ALL)
EVENTS = ResourceKind("", "v1", "events", "Event", True, ALL)
WALL = datetime(2026, 1, 1, tzinfo=UTC)


class ControlPlane:
    """A populated control plane: two clusters, a group policy (color) and a spread policy."""

    def __init__(self, kube: KubeTarget) -> None:
        self.kube, self.ns = kube, kube.namespace
        self.api = KubeApi(kube.api_client)
        self.c1, self.c2 = f"wlc-1-{self.ns}", f"wlc-2-{self.ns}"
        self.group_policy, self.spread_policy = f"demo-policy-{self.ns}", f"spread-{self.ns}"
        for name in (self.c1, self.c2):
            cluster = builders.cluster(name, cpu="8", labels={"fleet": self.ns})
            created = self.api.create(CLUSTERS, "", {k: v for k, v in cluster.items() if k != "status"}, "t")
            self.api.replace(CLUSTERS, {**created, "status": cluster["status"]}, "t", subresource="status")
        namespace_selector = {"matchLabels": {labels.METADATA_NAME: self.ns}}
        cluster_selector = {"matchLabels": {"fleet": self.ns}}
        self.create_policy(self.group_policy, namespace_selector, cluster_selector, group=True)
        self.api.create(
            POLICIES,
            "",
            builders.policy(
                self.spread_policy,
                namespaceSelector=namespace_selector,
                clusterSelector=cluster_selector,
                spreadConstraints={"spreadMode": "Divide", "topologyKey": labels.METADATA_NAME},
                resourceSelectors={"labelSelectors": [{"matchLabels": {"spread": "yes"}}]},
            ),
            "t",
        )
        blue = {"app": "demo", "color": "blue"}
        self.api.create(
            DEPLOYMENTS,
            self.ns,
            builders.deployment("blue-nginx-deployment", namespace=self.ns, replicas=2, labels=blue),
            "t",
        )
        self.api.create(
            CONFIGMAPS, self.ns, builders.config_map("blue-config", namespace=self.ns, labels=blue), "t"
        )
        self.api.create(
            DEPLOYMENTS,
            self.ns,
            builders.deployment("web", namespace=self.ns, replicas=10, labels={"spread": "yes"}),
            "t",
        )
        self.source = ControlPlaneSource(
            self.api, "controlplane:test", kinds=[DEPLOYMENTS, CONFIGMAPS, NAMESPACES, CLUSTERS, POLICIES]
        )

    def create_policy(self, name: str, namespace_selector: Any, cluster_selector: Any, group: bool) -> None:
        spec: dict[str, Any] = {"namespaceSelector": namespace_selector, "clusterSelector": cluster_selector}
        if group:
            spec["groupBy"] = {"labelKey": "color"}
        self.api.create(POLICIES, "", builders.policy(name, **spec), "t")

    def plan(self) -> Plan:
        documents = [d for d in self.source.snapshot().documents if self.ns in d.location.file]
        return planning.plan(inputs.build_source_set(documents))

    def live(self, kind: ResourceKind, name: str, namespace: str | None = None) -> dict[str, Any]:
        found = self.api.get(kind, self.ns if namespace is None else namespace, name)
        assert found is not None, name
        return found

    def events_of(self, name: str, namespace: str | None = None) -> dict[str, dict[str, Any]]:
        """Events about `name` in its namespace (the test's; "default" for cluster-scoped ScheduleGroups),
        by reason. Listed in that namespace only: a real cluster holds other components' events, some
        without a reason or an involved object's name."""
        where = self.ns if namespace is None else namespace
        items = self.api.request("GET", EVENTS.path(where)).get("items") or []
        return {e.get("reason", ""): e for e in items if (e.get("involvedObject") or {}).get("name") == name}


def report(
    cluster: str, workloads: list[dict[str, Any]], requests: tuple[RescheduleRequest, ...] = ()
) -> ClusterReport:
    body = builders.cluster(cluster)
    problems: list[Any] = []
    document = Document(body, SourceLocation(f"status/{cluster}.yaml", 1))
    parsed = api_clusters.parse_cluster(document, problems)
    assert parsed is not None, problems
    return ClusterReport(parsed, document, "", "", tuple(workloads), requests)


def health(name: str, namespace: str, healthy: bool, message: str = "") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "namespace": namespace,
        "name": name,
        "healthy": healthy,
        "condition": "Available",
        "reason": "",
        "message": message,
    }


@pytest.fixture
def plane(nova_crds: KubeTarget) -> ControlPlane:
    return ControlPlane(nova_crds)


def test_labels_groups_and_events_in_novas_words(plane: ControlPlane) -> None:
    plan = plane.plan()
    WriteBack(plane.api, wall_clock=lambda: WALL).planned(plan, {})
    blue = next(g for g in plan.groups if g.group_by == ("color", "blue"))
    (target,) = blue.clusters
    deployment = plane.live(DEPLOYMENTS, "blue-nginx-deployment")
    assert deployment["metadata"]["labels"][labels.TARGET_CLUSTER] == target
    assert plane.live(CONFIGMAPS, "blue-config")["metadata"]["labels"][labels.TARGET_CLUSTER] == target
    web = plane.live(DEPLOYMENTS, "web")
    assert labels.TARGET_CLUSTER not in web["metadata"]["labels"]
    assert web["metadata"]["annotations"][writeback.TARGET_CLUSTERS] == ",".join(sorted([plane.c1, plane.c2]))
    group = plane.live(writeback.SCHEDULE_GROUPS, blue.name, "")
    assert group["policy"] == {"name": plane.group_policy} and group["scheduled"] is True
    assert group["metadata"]["labels"] == {
        "color": "blue",
        labels.MATCHING_POLICY: plane.group_policy,
        labels.TARGET_CLUSTER: target,
        writeback.MANAGED_BY: "nova-gitops",
    }
    assert {(r["kind"], r["name"]) for r in group["objectRefs"]} == {
        ("Deployment", "blue-nginx-deployment"),
        ("ConfigMap", "blue-config"),
    }
    events = plane.events_of("blue-nginx-deployment")
    assert events["SchedulePolicyMatched"]["message"] == (
        f"schedule policy {plane.group_policy} was used to determine target cluster, for scheduling obj, "
        "blue-nginx-deployment"
    )
    assert events["AddedToScheduleGroup"]["message"] == (
        f"added to ScheduleGroup {blue.name} which contains objects with groupBy.labelKey color=blue"
    )
    assert events["AddedToScheduleGroup"]["involvedObject"]["uid"] == deployment["metadata"]["uid"]
    assert events["AddedToScheduleGroup"]["source"] == {"component": "nova-gitops"}
    synced = plane.events_of(blue.name, "default")["ScheduleGroupSyncedToWorkloadCluster"]
    assert synced["message"] == blue.reason and synced["type"] == "Normal" and synced["count"] == 1
    assert synced["involvedObject"]["uid"] == group["metadata"]["uid"]
    assert synced["metadata"]["namespace"] == "default"


def test_stale_groups_are_deleted_and_unplaced_objects_unlabelled(plane: ControlPlane) -> None:
    back = WriteBack(plane.api, wall_clock=lambda: WALL)
    plan = plane.plan()
    back.planned(plan, {})
    blue = next(g for g in plan.groups if g.group_by == ("color", "blue"))
    plane.api.delete(POLICIES, "", plane.group_policy)
    after = plane.plan()
    assert all(g.name != blue.name for g in after.groups)
    back.planned(after, {})
    assert plane.api.get(writeback.SCHEDULE_GROUPS, "", blue.name) is None
    labels_now = plane.live(DEPLOYMENTS, "blue-nginx-deployment")["metadata"].get("labels") or {}
    assert labels.TARGET_CLUSTER not in labels_now
    assert not back.failures


def test_events_repeat_only_on_change_and_count_like_kube(plane: ControlPlane) -> None:
    plan = plane.plan()
    blue = next(g for g in plan.groups if g.group_by == ("color", "blue"))
    first = WriteBack(plane.api, wall_clock=lambda: WALL)
    first.planned(plan, {})
    first.planned(plan, {})
    assert plane.events_of(blue.name, "default")["ScheduleGroupSyncedToWorkloadCluster"]["count"] == 1
    WriteBack(plane.api, wall_clock=lambda: WALL).planned(plan, {})  # a restarted controller says it again
    assert plane.events_of(blue.name, "default")["ScheduleGroupSyncedToWorkloadCluster"]["count"] == 2
    (target,) = blue.clusters
    request = RescheduleRequest(
        "apps/v1",
        "Deployment",
        plane.ns,
        "blue-nginx-deployment",
        blue.name,
        f"deployment {plane.ns}/blue-nginx-deployment does not have minimum replicas available",
        "2026-01-01T00:00:00Z",
        cluster=target,
    )
    first.planned(plan, {target: report(target, [], (request,))})
    triggered = plane.events_of(blue.name, "default")["ReschedulingTriggered"]
    assert triggered["type"] == "Warning" and triggered["message"] == request.reason


def test_rollout_steps_are_told_as_events_on_the_cluster_and_the_strategy(plane: ControlPlane) -> None:
    target = "a1b2c3d" + "0" * 33
    step = Decision(
        (Move(plane.c1, target, "release"),),
        Record(target=target),
        (WaveStatus("canary", "passed", "passed"), WaveStatus("others", "pending", "waits for canary")),
        {},
    )
    strategy = f"fleet-{plane.ns}"
    back = WriteBack(plane.api, wall_clock=lambda: WALL)
    back.rolled_out(rollout_events(step, strategy, moved=True, recorded=True))
    back.rolled_out(rollout_events(step, strategy, moved=True, recorded=True))  # the next step, same news
    released = plane.events_of(plane.c1, "default")["Released"]
    assert released["message"] == f"revision a1b2c3d released to {plane.c1}" and released["count"] == 1
    assert released["involvedObject"]["kind"] == "Cluster" and released["type"] == "Normal"
    passed = plane.events_of(strategy, "default")["WavePassed"]
    assert passed["involvedObject"]["apiVersion"] == "gitops.nova.elotl.co/v1alpha1"
    assert passed["message"] == "rollout of a1b2c3d: wave canary passed"
    assert not back.failures


@pytest.mark.fake_only(
    "needs a control plane without a Deployment controller (Nova's): a real controller-manager overwrites "
    "the summed status"
)
def test_spread_deployment_status_is_summed_over_clusters(plane: ControlPlane) -> None:
    plan = plane.plan()
    back = WriteBack(plane.api, wall_clock=lambda: WALL)
    both_healthy = {c: report(c, [health("web", plane.ns, True)]) for c in (plane.c1, plane.c2)}
    back.planned(plan, both_healthy)
    status = plane.live(DEPLOYMENTS, "web")["status"]
    assert (status["replicas"], status["readyReplicas"], status["availableReplicas"]) == (10, 10, 10)
    assert status["conditions"][0]["type"] == "Available" and status["conditions"][0]["status"] == "True"
    one_short = {
        **both_healthy,
        plane.c2: report(plane.c2, [health("web", plane.ns, False, "3/5 available")]),
    }
    back.planned(plan, one_short)
    status = plane.live(DEPLOYMENTS, "web")["status"]
    assert (status["readyReplicas"], status["availableReplicas"]) == (8, 8)
    assert status["conditions"][0]["status"] == "False"


@pytest.mark.fake_only("counts the requests of a write-back (the fake's request log)")
def test_an_unchanged_plan_writes_nothing(plane: ControlPlane) -> None:
    assert plane.kube.fake is not None
    plan = plane.plan()
    reports: Mapping[str, ClusterReport] = {
        c: report(c, [health("web", plane.ns, True)]) for c in (plane.c1, plane.c2)
    }
    back = WriteBack(plane.api, wall_clock=lambda: WALL)
    back.planned(plan, reports)
    plane.kube.fake.requests.clear()
    back.planned(plan, reports)
    assert plane.kube.fake.write_requests() == []
    assert len(plane.kube.fake.requests) == 1  # the list of ScheduleGroups, to find stale ones
