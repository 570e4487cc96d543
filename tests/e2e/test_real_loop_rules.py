"""The pure parts of the demo on real clusters: when a cluster has settled (``settling``), and what the real
loop pushes and asks for (``realloop``: pullable images, another tenant's room, the demo's flags).

Behaviours covered:
- a workload settles when complete, or when a pod of it is stuck (unschedulable, or waiting in a reason
  waiting does not cure); it moves while its controller has not observed its spec, while a pod is on its way
  (not yet scheduled, bound but not running, being deleted), while an old pod is left; a Namespace being
  deleted moves;
- images of ``registry.example`` become the pullable image, nothing else changes;
- another tenant asks for the node's allocatable less what pods outside the story request;
- the demo's flags and ``NOVA_DEMO_*`` name two clusters or none.
"""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from examples.demo import settings
from tests.e2e import realloop, settling
from tests.e2e.democlusters import demo_clusters_from

SELECTOR = {"matchLabels": {"app": "web"}}


def deployment(generation: int = 1, observed: int = 1, **counts: int) -> dict[str, Any]:
    status = {"observedGeneration": observed, **counts}
    return {
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "generation": generation},
        "spec": {"replicas": 2, "selector": SELECTOR},
        "status": status,
    }


COMPLETE = {"replicas": 2, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2}


def pod(name: str, phase: str = "Running", ready: bool = True, **extra: Any) -> dict[str, Any]:
    conditions = [{"type": "Ready", "status": "True" if ready else "False"}]
    body: dict[str, Any] = {
        "metadata": {"name": name, "namespace": "shop", "labels": {"app": "web"}},
        "status": {"phase": phase, "conditions": conditions},
    }
    for key, value in extra.items():
        if key == "deleting":
            body["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        else:
            body["status"][key] = value
    return body


UNSCHEDULABLE = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/2 ..."}]
CRASHING = [{"name": "web", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]


@pytest.mark.parametrize(
    ("workload", "pods", "moving"),
    [
        (deployment(**COMPLETE), [pod("a"), pod("b")], ""),
        (deployment(generation=2, observed=1, **COMPLETE), [pod("a"), pod("b")], "has not observed"),
        (deployment(**COMPLETE), [pod("a"), pod("b"), pod("old", deleting=True)], "pod old is on its way"),
        (deployment(**COMPLETE), [pod("a"), pod("b"), pod("old")], "not every replica"),
        (deployment(replicas=2), [pod("a"), pod("b", "Pending", False)], "pod b is on its way"),
        (
            deployment(replicas=3, updatedReplicas=1, readyReplicas=2, availableReplicas=2),
            [pod("a"), pod("b"), pod("new", "Pending", False, conditions=UNSCHEDULABLE)],
            "",
        ),
        (
            deployment(replicas=3, updatedReplicas=1, readyReplicas=2, availableReplicas=2),
            [pod("a"), pod("b"), pod("new", "Running", False, containerStatuses=CRASHING)],
            "",
        ),
        (deployment(replicas=1, updatedReplicas=1), [pod("a")], "not every replica"),
    ],
)
def test_a_workload_settles_when_complete_or_stuck(
    workload: dict[str, Any], pods: list[dict[str, Any]], moving: str
) -> None:
    found = settling.workload_moving(workload, pods)
    assert (moving in found) if moving else found == ""


def test_a_daemonset_counts_its_nodes_and_a_deleted_namespace_moves() -> None:
    daemonset = {
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "shop", "generation": 1},
        "spec": {"selector": SELECTOR},
        "status": {
            "observedGeneration": 1,
            "desiredNumberScheduled": 2,
            "updatedNumberScheduled": 2,
            "numberReady": 2,
            "numberAvailable": 2,
        },
    }
    assert settling.moving([daemonset], [pod("a"), pod("b")]) == []
    assert settling.moving([daemonset], [pod("a")]) == [
        "DaemonSet shop/agent: not every replica is updated and ready yet"
    ]
    deleted = {"metadata": {"name": "shop", "deletionTimestamp": "2026-01-01T00:00:00Z"}}
    assert settling.moving([], [], [deleted, {"metadata": {"name": "web"}}]) == [
        "namespace shop is being deleted"
    ]


def test_images_of_the_examples_become_a_pullable_one() -> None:
    files = {
        "a.yaml": "spec:\n  containers:\n  - image: registry.example/shop-web:1.0\n    name: web\n",
        "b.yaml": "image: docker.io/library/nginx:1\n",
        "gone.yaml": None,
    }
    assert realloop.rewrite_images(files, realloop.PULLABLE_IMAGE) == {
        "a.yaml": f"spec:\n  containers:\n  - image: {realloop.PULLABLE_IMAGE}\n    name: web\n",
        "b.yaml": "image: docker.io/library/nginx:1\n",
        "gone.yaml": None,
    }


def test_another_tenant_asks_for_the_room_pods_outside_the_story_leave() -> None:
    node = {"status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    system = {"spec": {"containers": [{"resources": {"requests": {"cpu": "100m", "memory": "70Mi"}}}]}}
    finished = {**system, "status": {"phase": "Succeeded"}}
    assert realloop.room(node, [system, finished]) == {"cpu": "3900m", "memory": str((8192 - 70) * 2**20)}


def parse(*flags: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    settings.add_arguments(parser)
    return parser.parse_args(list(flags))


def test_the_demo_runs_on_two_named_clusters_or_none() -> None:
    simulated = settings.from_arguments(parse(), {})
    assert not simulated.real and simulated.pending_timeout == 30 and simulated.progress_deadline == 20
    real = settings.from_arguments(
        parse("--kubeconfig-1", "/a", "--context-2", "c"), {"NOVA_DEMO_KUBECONFIG_2": "/b"}
    )
    assert real.kubeconfigs == {"wlc-1": realloop.Kubeconfig("/a"), "wlc-2": realloop.Kubeconfig("/b", "c")}
    assert real.pending_timeout == 5 and real.progress_deadline == 10 and real.stand_in is None
    with pytest.raises(SystemExit, match="two clusters"):
        settings.from_arguments(parse("--kubeconfig-1", "/a"), {})


def test_the_demo_tests_take_two_real_clusters_from_the_environment() -> None:
    assert not demo_clusters_from({"NOVA_TEST_KUBECONFIG": "/a"}).real
    realk8s = demo_clusters_from(
        {"NOVA_TEST_KUBECONFIG": "/a", "REALK8S_KUBECONFIG_1": "/a", "REALK8S_KUBECONFIG_2": "/b"}
    )
    assert realk8s.arguments == ("--kubeconfig-1", "/a", "--kubeconfig-2", "/b")
    ours = demo_clusters_from(
        {"NOVA_TEST_KUBECONFIG": "/a", "NOVA_TEST_KUBECONFIG_2": "/c", "NOVA_TEST_CONTEXT_2": "x"}
    )
    assert ours.arguments == ("--kubeconfig-1", "/a", "--kubeconfig-2", "/c", "--context-2", "x")
