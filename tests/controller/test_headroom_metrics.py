"""Failover headroom in operation (docs/headroom.md, docs/metrics.md): the controller computes it after each
reconcile whose placement or capacity changed, in a thread, and exports ``nova_headroom_stranded_groups``
and ``nova_headroom_computed_timestamp_seconds``. Tests wait on the computation's end
(``HeadroomWatch.wait``), never on time.

Behaviours covered:
- with a real nova-agent reporting ``wlc-1`` from a cluster (the fake API server, or a real kube-apiserver
  with ``NOVA_TEST_KUBECONFIG``) and ``wlc-2`` reported by hand: after a reconcile each cluster has a series
  (0: web, on wlc-2, fits wlc-1), stamped with the wall clock; when a pod nova-gitops does not manage fills
  wlc-1 up, the next reconcile (which commits nothing: only capacity changed) makes losing wlc-2 strand web;
  when wlc-1's report leaves the status branch, its series goes;
- ``--no-headroom`` computes nothing and exports no series;
- ``--headroom-in-placement``: PLACEMENT.md has the section, and the metric is the render's result, not
  computed again in the thread;
- ``--headroom-domain`` names the series ``LABEL=VALUE``; a domain no cluster has is logged once, naming the
  flag, and exports nothing; with ``--headroom-in-placement`` it fails the reconcile, which publishes nothing;
- a reconcile does not wait for a computation; a newer plan handed over while one runs supersedes it: its
  result is dropped and the newest plan's is exported;
- a placement and capacity equal to the last one's is not computed again, and no thread stays idle; a
  policy that allows one more cluster moves nothing and is computed again (it rescues a group);
- a computation plans no loss while a reconcile runs, and one superseded meanwhile stops at its next loss
  (it plans none of the rest).
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from nova_agent.clocks import FakeClock
from nova_agent.kubeclient import ApiClientKube
from nova_agent.running import Agent
from nova_agent.settings import AgentSettings
from nova_gitops.controller import headroomwatching
from nova_gitops.controller.headroomwatching import HeadroomWatch, Job
from nova_gitops.controller.serving import Metrics
from nova_gitops.errors import UserError
from nova_gitops.scheduling import failover, headroom
from nova_gitops.scheduling.headroom import Headroom
from nova_gitops.workflows.publishing import Outcome
from tests.builders import cluster, source_set
from tests.builders import deployment as web_deployment
from tests.builders import plan as plan_of
from tests.builders import policy as policy_of
from tests.controller.helpers import Fleet, cluster_report, deployment, git, policy
from tests.fakekube.fixtures import KubeTarget, fake_kube, kube, kubelet  # noqa: F401
from tests.realkube.kubelets import Kubelet

WAIT = 60.0  # seconds at most for a computation to end (a signal, not a sleep)
NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
STRANDED = "nova_headroom_stranded_groups"
COMPUTED = "nova_headroom_computed_timestamp_seconds"


def stranded(metrics: Metrics) -> dict[str, float]:
    """Loss → groups stranded, as scraped."""
    return {
        sample.labels["lost"]: sample.value
        for family in metrics.registry.collect()
        if family.name == STRANDED
        for sample in family.samples
    }


def web_fleet(tmp_path: Path) -> Fleet:
    fleet = Fleet(tmp_path)
    fleet.write_source("policy.yaml", policy())
    fleet.write_source("web.yaml", deployment(replicas=1, cpu="2"))
    return fleet


def test_the_metric_appears_after_a_reconcile_and_follows_a_cluster_that_fills_up(
    tmp_path: Path,
    kube: KubeTarget,  # noqa: F811
    kubelet: Kubelet,  # noqa: F811
) -> None:
    fleet = web_fleet(tmp_path)
    fleet.report(cluster_report("wlc-2", cpu="8"))
    controller = fleet.controller(wall_clock=lambda: NOW)
    assert controller.headroom is not None
    controller.reconcile_once()  # web goes to wlc-2, the only cluster
    node = kubelet.add_node("n1", allocatable={"cpu": "4", "memory": "16Gi", "pods": "110"})
    settings = AgentSettings(
        cluster="wlc-1", repo=fleet.url, cache_dir=tmp_path / "agent-cache", namespace=kube.namespace
    )
    agent = Agent(settings, ApiClientKube(kube.api_client), FakeClock())
    assert agent.pass_once().report_pushed
    controller.reconcile_once()
    assert controller.headroom.wait(WAIT)
    assert stranded(controller.metrics) == {"wlc-1": 0.0, "wlc-2": 0.0}  # web fits wlc-1 should wlc-2 go
    assert controller.metrics.value(COMPUTED) == NOW.timestamp()
    computed = controller.headroom.computed

    kubelet.occupy("n1", kube.namespace, {"cpu": "3"}, name="tenant")  # not ours: wlc-1 has 1 cpu left
    assert agent.pass_once().report_pushed
    outcome = controller.reconcile_once()
    assert outcome.outcome is Outcome.UNCHANGED  # capacity alone commits nothing, and changes headroom
    assert controller.headroom.wait(WAIT)
    assert controller.headroom.computed == computed + 1
    assert stranded(controller.metrics) == {"wlc-1": 0.0, "wlc-2": 1.0}
    assert node in kubelet.nodes

    git(fleet.status_work, "pull", "--quiet", "origin", "nova-status")
    fleet.report(remove=("wlc-1",))  # wlc-1's agent is gone from the inventory
    controller.reconcile_once()
    assert controller.headroom.wait(WAIT)
    assert stranded(controller.metrics) == {"wlc-2": 1.0}
    controller.headroom.close()


def test_no_headroom_computes_nothing(tmp_path: Path) -> None:
    fleet = web_fleet(tmp_path)
    fleet.report(cluster_report("wlc-1"), cluster_report("wlc-2"))
    controller = fleet.controller(headroom=False)
    controller.reconcile_once()
    assert controller.headroom is None
    assert stranded(controller.metrics) == {}
    assert controller.metrics.value(COMPUTED) == 0.0


def test_headroom_in_placement_exports_the_renders_result(tmp_path: Path) -> None:
    fleet = web_fleet(tmp_path)
    fleet.report(cluster_report("wlc-1", cpu="1"), cluster_report("wlc-2", cpu="8"))
    controller = fleet.controller(headroom_in_placement=True, wall_clock=lambda: NOW)
    outcome = controller.reconcile_once()
    assert controller.headroom is not None and controller.headroom.wait(WAIT)
    assert outcome.plan is not None and outcome.plan.failover is not None
    assert stranded(controller.metrics) == {"wlc-1": 0.0, "wlc-2": 1.0}
    assert controller.headroom.background == 0  # the render's result, not computed again
    assert controller.metrics.value(COMPUTED) == NOW.timestamp()
    told = [line for line in fleet.show("PLACEMENT.md").splitlines() if line.startswith("- losing")]
    assert told[0].startswith("- losing `wlc-2` strands `demo-policy-")
    assert told[1] == "- losing `wlc-1` strands nothing"
    controller.headroom.close()


def test_a_domain_names_each_loss_by_its_label_value(tmp_path: Path) -> None:
    fleet = web_fleet(tmp_path)
    zone = "topology.kubernetes.io/zone"
    fleet.report(
        cluster_report("wlc-1", labels={zone: "a"}),
        cluster_report("wlc-2", labels={zone: "a"}),
        cluster_report("wlc-3", cpu="1", labels={zone: "b"}),
    )
    controller = fleet.controller(headroom_domain=zone)
    controller.reconcile_once()
    assert controller.headroom is not None and controller.headroom.wait(WAIT)
    assert stranded(controller.metrics) == {f"{zone}=a": 1.0, f"{zone}=b": 0.0}
    controller.headroom.close()


def test_a_reconcile_does_not_wait_and_a_newer_plan_supersedes_a_computation(tmp_path: Path) -> None:
    started, release = threading.Event(), threading.Event()
    seen: list[int] = []

    def blocking(job: Job) -> Headroom:
        seen.append(job.generation)
        if len(seen) == 1:  # the first computation waits until the test lets it end
            started.set()
            assert release.wait(WAIT)
        return headroom.headroom(job.source, today=job.plan)

    fleet = web_fleet(tmp_path)
    fleet.report(cluster_report("wlc-1", cpu="4"), cluster_report("wlc-2", cpu="8"))
    controller = fleet.controller()
    controller.headroom = HeadroomWatch(controller.metrics, clock=lambda: NOW.timestamp(), compute=blocking)
    controller.reconcile_once()
    assert started.wait(WAIT)  # computing, and the reconcile returned meanwhile
    assert controller.headroom.computing
    git(fleet.status_work, "pull", "--quiet", "origin", "nova-status")
    fleet.report(cluster_report("wlc-1", cpu="1"))  # wlc-1 fills up: a newer plan
    controller.reconcile_once()
    release.set()
    assert controller.headroom.wait(WAIT)
    assert seen == [1, 2]
    assert (controller.headroom.dropped, controller.headroom.computed) == (1, 1)
    assert stranded(controller.metrics) == {"wlc-1": 0.0, "wlc-2": 1.0}  # the newest plan's
    controller.headroom.close()


def test_an_unchanged_placement_is_not_computed_again() -> None:
    documents = [
        cluster("wlc-1", cpu="4"),
        policy_of("web", resourceSelectors={"labelSelectors": [{"matchLabels": {"app": "web"}}]}),
        web_deployment("web", cpu="2", labels={"app": "web"}),
    ]
    source, planned = source_set(*documents), plan_of(*documents)
    watch = HeadroomWatch(Metrics(), clock=lambda: 0.0)
    watch.reconciled(planned, source)
    assert watch.wait(WAIT)
    watch.reconciled(plan_of(*documents), source)  # equal placement and capacity
    assert watch.wait(WAIT)
    assert (watch.background, watch.computed) == (1, 1)
    assert not watch.computing  # no thread left idle between changes
    assert headroomwatching.placement_key(planned, source) == headroomwatching.placement_key(
        plan_of(*documents), source
    )
    watch.close()


def test_a_domain_no_cluster_has_is_logged_once_and_exports_nothing(tmp_path: Path) -> None:
    fleet = web_fleet(tmp_path)
    fleet.report(cluster_report("wlc-1"), cluster_report("wlc-2"))
    controller = fleet.controller(headroom_domain="region")
    controller.reconcile_once()
    assert controller.headroom is not None and controller.headroom.wait(WAIT)
    fleet.write_source("web.yaml", deployment(replicas=1, cpu="3"))  # placement changes: computed again
    controller.reconcile_once()
    assert controller.headroom.wait(WAIT)
    assert controller.headroom.background == 2
    assert stranded(controller.metrics) == {}
    assert controller.metrics.value(COMPUTED) == 0.0
    logged = [line for line in controller.log.stream.getvalue().splitlines() if "failover headroom" in line]
    assert len(logged) == 1
    assert "--headroom-domain region: no cluster has the label region" in logged[0]
    (tmp_path / "in-placement").mkdir()
    with_placement = Fleet(tmp_path / "in-placement")
    with_placement.write_source("web.yaml", deployment(replicas=1, cpu="3"))
    with_placement.write_source("policy.yaml", policy())
    with_placement.report(cluster_report("wlc-1"))
    failing = with_placement.controller(headroom_domain="region", headroom_in_placement=True)
    with pytest.raises(UserError, match="--headroom-domain region: no cluster has the label region"):
        failing.reconcile_once()  # the render cannot say what it was asked to: nothing is published
    assert not git(with_placement.remote, "branch", "--list", "main")  # no commit was made


def test_a_computation_plans_no_loss_while_a_reconcile_runs_and_stops_when_superseded() -> None:
    def documents(web_cpu: str) -> list[dict[str, Any]]:
        return [
            cluster("wlc-1", cpu="4"),
            cluster("wlc-2", cpu="4"),
            cluster("wlc-3", cpu="1"),
            policy_of("web", resourceSelectors={"labelSelectors": [{"matchLabels": {"app": "web"}}]}),
            web_deployment("web", cpu=web_cpu, labels={"app": "web"}),
        ]

    older, newer = documents("1"), documents("2")
    watch = HeadroomWatch(Metrics(), clock=lambda: 0.0)
    with watch.reconciling():
        watch.reconciled(plan_of(*older), source_set(*older))
        assert watch.held.wait(WAIT)  # waiting for the reconcile to end before its first loss
        watch.reconciled(plan_of(*newer), source_set(*newer))  # the reconcile's own plan: newer
    assert watch.wait(WAIT)
    assert (watch.background, watch.dropped, watch.computed) == (2, 1, 1)
    assert watch.losses_planned == 3  # the superseded computation planned none of its losses
    assert watch.last == failover.outcomes(headroom.headroom(source_set(*newer), today=plan_of(*newer)))
    watch.close()


def test_a_policy_that_allows_one_more_cluster_is_computed_again_though_nothing_moves(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path)
    tier_a = {"matchLabels": {"tier": "a"}}
    both = {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]}
    fleet.write_source("policy.yaml", policy(clusterSelector=tier_a))
    fleet.write_source("web.yaml", deployment(replicas=1, cpu="2"))
    fleet.report(
        cluster_report("wlc-1", cpu="4", labels={"tier": "a"}),
        cluster_report("wlc-2", cpu="1", labels={"tier": "a"}),
        cluster_report("wlc-3", cpu="8", labels={"tier": "b"}),
    )
    controller = fleet.controller()
    first = controller.reconcile_once()
    assert controller.headroom is not None and controller.headroom.wait(WAIT)
    assert stranded(controller.metrics)["wlc-1"] == 1.0  # wlc-2 is too small, wlc-3 not a candidate
    fleet.write_source("policy.yaml", policy(clusterSelector=both))
    second = controller.reconcile_once()
    assert controller.headroom.wait(WAIT)
    assert first.plan is not None and second.plan is not None
    placed = [(group.name, group.clusters, group.requests) for group in first.plan.groups]
    assert [(group.name, group.clusters, group.requests) for group in second.plan.groups] == placed
    assert second.plan.clusters == first.plan.clusters
    assert stranded(controller.metrics)["wlc-1"] == 0.0  # wlc-3 may take web now
    assert controller.headroom.background == 2
