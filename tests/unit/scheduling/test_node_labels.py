"""Clusters that report no node labels (docs/design.md §3 "Capacity and fit"): Nova's Cluster CR carries none,
so a
cluster whose report has no ``status.nodeLabels`` has *unknown* node labels. Its nodes are assumed to satisfy
nodeSelector and required node affinity, and the group's reason says so; a cluster that reports labels (the
agent does) is checked exactly, the well-known labels the agent reports included."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import cluster, deployment, group_of, placed_on, plan, policy

LINUX = {"nodeSelector": {"kubernetes.io/os": "linux"}}
NOT_CHECKED = "node labels unknown for {}: nodeSelector not checked;"


def nova_cluster(name: str, cpu: str = "4") -> dict[str, Any]:
    """A Cluster as Nova exports it: capacity as cluster totals, no nodeLabels."""
    found = cluster(name)
    found["status"] = {
        "conditions": [{"type": "Ready", "status": "True"}],
        "capacityResources": {"cpu": cpu, "memory": "16Gi"},
        "availableResources": {"cpu": cpu, "memory": "16Gi"},
    }
    return found


def test_a_helm_charts_os_selector_schedules_on_a_nova_cluster() -> None:
    result = plan(nova_cluster("wlc-1"), policy("p"), deployment("web", pod_spec=LINUX))
    assert placed_on(result, "web") == {"wlc-1": None}
    assert NOT_CHECKED.format("wlc-1") in group_of(result, "web").reason
    assert not result.unscheduled


def test_no_note_when_the_group_has_no_node_constraint() -> None:
    result = plan(nova_cluster("wlc-1"), policy("p"), deployment("web"))
    assert "node labels unknown" not in group_of(result, "web").reason


AFFINITY = {
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}
                        ]
                    }
                ]
            }
        }
    }
}


@pytest.mark.parametrize(
    ("node_labels", "pod_spec", "fits"),
    [
        # unknown labels: assumed to satisfy nodeSelector and required affinity
        (None, LINUX, True),
        (None, AFFINITY, True),
        (None, {"nodeSelector": {"gpu": "a100"}}, True),
        # reported labels: the well-known ones the agent reports are checked exactly
        ({"kubernetes.io/os": "linux"}, LINUX, True),
        ({"kubernetes.io/os": "windows"}, LINUX, False),
        ({"kubernetes.io/arch": "amd64"}, AFFINITY, False),
        ({"kubernetes.io/arch": "arm64"}, AFFINITY, True),
        (
            {"node.kubernetes.io/instance-type": "m5.large"},
            {"nodeSelector": {"node.kubernetes.io/instance-type": "m5.xlarge"}},
            False,
        ),
        (
            {"topology.kubernetes.io/zone": "us-east-1a"},
            {"nodeSelector": {"topology.kubernetes.io/zone": "us-east-1a"}},
            True,
        ),
        (
            {"topology.kubernetes.io/zone": "us-east-1a"},
            {"nodeSelector": {"topology.kubernetes.io/zone": "us-east-1b"}},
            False,
        ),
        # a reported node without the key does not satisfy it
        ({"kubernetes.io/hostname": "n1"}, LINUX, False),
    ],
)
def test_node_constraints_by_what_the_cluster_reports(
    node_labels: dict[str, str] | None, pod_spec: dict[str, Any], fits: bool
) -> None:
    reported = None if node_labels is None else {"c1-n1": node_labels}
    result = plan(cluster("c1", node_labels=reported), policy("p"), deployment("web", pod_spec=pod_spec))
    assert (placed_on(result, "web") == {"c1": None}) is fits
    reason = group_of(result, "web").reason
    assert (NOT_CHECKED.format("c1") in reason) is (node_labels is None)


def test_taints_are_still_checked_where_labels_are_unknown() -> None:
    taints = {"c1-n1": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}
    result = plan(cluster("c1", node_taints=taints), policy("p"), deployment("web", pod_spec=LINUX))
    assert result.unscheduled


def test_a_cluster_that_reports_labels_is_preferred_to_none_only_by_free_capacity() -> None:
    """Unknown labels are not a penalty: the usual choice (most free capacity, then name) holds."""
    result = plan(
        nova_cluster("a-nova", cpu="8"),
        cluster("b-agent", cpu="4", node_labels={"b-agent-n1": {"kubernetes.io/os": "linux"}}),
        policy("p"),
        deployment("web", pod_spec=LINUX),
    )
    assert placed_on(result, "web") == {"a-nova": None}


def test_a_spread_group_says_which_clusters_were_not_checked() -> None:
    result = plan(
        nova_cluster("wlc-1"),
        cluster("wlc-2", node_labels={"wlc-2-n1": {"kubernetes.io/os": "linux"}}),
        policy(
            "p", spreadConstraints={"spreadMode": "Duplicate", "topologyKey": "kubernetes.io/metadata.name"}
        ),
        deployment("web", pod_spec=LINUX),
    )
    reason = group_of(result, "web").reason
    assert NOT_CHECKED.format("wlc-1") in reason
    assert "wlc-2:" not in reason.split("node labels unknown")[-1]
