"""Kinds of Nova's own API groups are Nova's control plane's, never workloads (issue 22, item 4).

Behaviours covered (the pgvector disaster-recovery example's RecoveryPlan and ReceivedAlert): each is a
warning at its line naming it and saying it is left to Nova's control plane, and neither is a workload, so
no policy can send it to a cluster; a ScheduleGroup keeps its own warning; SchedulePolicies and Clusters are
read as ever, and a kind of some other group (ours, or a custom resource's) is a workload as before.
"""

from __future__ import annotations

from nova_gitops.api.problems import Severity
from tests.builders import cluster, policy, source_set

RECOVERY_PLAN = {
    "apiVersion": "recovery.elotl.co/v1alpha1",
    "kind": "RecoveryPlan",
    "metadata": {"name": "psql-primary-failover-plan"},
    "spec": {"alertLabels": {"app": "example-app"}, "steps": [{"type": "readField"}]},
}
RECEIVED_ALERT = {
    "apiVersion": "recovery.elotl.co/v1alpha1",
    "kind": "ReceivedAlert",
    "metadata": {"name": "testalert", "labels": {"app": "demo"}},
    "spec": {"labels": {"alertname": "testalert"}},
    "status": {"processed": False},
}
OTHER_GROUP = {"apiVersion": "recovery.example.com/v1", "kind": "RecoveryPlan", "metadata": {"name": "mine"}}


def test_novas_own_kinds_are_warnings_never_workloads() -> None:
    source = source_set(cluster("c1"), policy("p"), RECOVERY_PLAN, RECEIVED_ALERT, OTHER_GROUP)
    assert [str(manifest.key) for manifest in source.workloads] == [
        "RecoveryPlan.recovery.example.com/default/mine"
    ]
    assert [p.name for p in source.policies] == ["p"] and [c.name for c in source.clusters] == ["c1"]
    said = {problem.subject: problem for problem in source.warnings if "Nova's own kind" in problem.message}
    assert set(said) == {"RecoveryPlan psql-primary-failover-plan", "ReceivedAlert testalert"}
    plan = said["RecoveryPlan psql-primary-failover-plan"]
    assert plan.severity is Severity.WARNING and plan.location.line == 31  # its document's first line
    assert plan.message == (
        "RecoveryPlan.recovery.elotl.co is Nova's own kind: left to Nova's control plane; a renderer does "
        "not act on it (nor sends it to a workload cluster)"
    )


def test_a_schedule_group_keeps_its_own_warning() -> None:
    group = {"apiVersion": "policy.elotl.co/v1alpha1", "kind": "ScheduleGroup", "metadata": {"name": "g"}}
    source = source_set(cluster("c1"), group)
    assert [problem.message for problem in source.warnings] == [
        "ScheduleGroup objects are made by the scheduler, not read from the source; ignored"
    ]
