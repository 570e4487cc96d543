"""Reconciles over real git: a source directory, a bare rendered repo and agents' reports on nova-status.

Behaviours covered:
- the first reconcile publishes the render; the same inputs again make no new commit (idempotent);
- agents' reports are the cluster inventory (they replace the source's Clusters of the same name);
- a reschedule request moves a single-cluster group off the cluster that asked, and the commit message
  quotes the agent's reason;
- the group is not moved back while the cool-down lasts, even after the agent stops reporting; a change of
  that cluster's reported capacity, or the end of the cool-down, releases it; a request already released
  is not acted on again;
- the mass-delete guard lets a reschedule empty the cluster it leaves (and tells agents so), but not other
  moves (the cool-down test allows it explicitly);
- a group no other cluster can take stays where it is (no removal from every cluster);
- reschedule requests for spread groups are reported, not acted on;
- external-orchestrator mode: objects labelled for pick-up, placements delegated, spread policies rendered;
- failback to a higher tier waits for --failback-after;
- failback is per group: a group whose wait is over fails back alone, the others keep waiting from when
  their own room appeared;
- a refused status report does not stop the reconcile; a git source renders one revision and records it;
- observers see the plan and the reports after each successful reconcile.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from nova_gitops.controller.ports import ClusterReport
from nova_gitops.controller.sourcereading import GitSource
from nova_gitops.errors import InputError
from nova_gitops.rendering import layout
from nova_gitops.scheduling.plans import Plan
from nova_gitops.workflows.publishing import Outcome
from tests import placements
from tests.controller.helpers import (
    Fleet,
    cluster_report,
    clusters_of,
    deployment,
    git,
    policy,
    reschedule_request,
)

WEB = "demo/deployment-web.yaml"


@pytest.fixture
def fleet(tmp_path: Path) -> Fleet:
    fleet = Fleet(tmp_path)
    fleet.write_source("policy.yaml", policy())
    fleet.write_source("web.yaml", deployment())
    # wlc-2 has more room, so the group goes there first
    fleet.report(cluster_report("wlc-1", cpu="4"), cluster_report("wlc-2", cpu="8"))
    return fleet


def group_name(plan: Plan | None) -> str:
    assert plan is not None
    (group,) = [group for group in plan.groups if group.policy == "demo-policy"]
    return group.name


def test_first_reconcile_publishes_and_the_same_inputs_make_no_commit(fleet: Fleet) -> None:
    controller = fleet.controller()
    first = controller.reconcile_once()
    assert first.outcome is Outcome.PUBLISHED
    assert clusters_of(fleet, WEB) == ["wlc-2"]
    commits = fleet.commit_count()
    for _ in range(2):
        again = controller.reconcile_once()
        assert again.outcome is Outcome.UNCHANGED
        assert again.commit == first.commit
    assert fleet.commit_count() == commits
    # a heartbeat-only status change is not a change either
    fleet.report(cluster_report("wlc-1", cpu="4"), cluster_report("wlc-2", cpu="8"))
    assert controller.reconcile_once().outcome is Outcome.UNCHANGED


def test_reports_replace_the_sources_clusters_of_the_same_name(fleet: Fleet) -> None:
    source_cluster = cluster_report("wlc-2", cpu="100")  # the source claims wlc-2 is huge
    fleet.write_source("clusters.yaml", source_cluster, cluster_report("wlc-3", cpu="2"))
    outcome = fleet.controller().reconcile_once()
    assert outcome.plan is not None
    usage = {usage.cluster: usage.allocatable.get("cpu") for usage in outcome.plan.clusters}
    assert usage == {"wlc-1": 4000, "wlc-2": 8000, "wlc-3": 2000}


def test_a_reschedule_moves_the_group_and_the_commit_quotes_the_reason(fleet: Fleet) -> None:
    controller = fleet.controller()
    group = group_name(controller.reconcile_once().plan)
    fleet.report(cluster_report("wlc-2", cpu="8", requests=[reschedule_request(group)]))
    outcome = controller.reconcile_once()
    assert outcome.outcome is Outcome.PUBLISHED
    assert clusters_of(fleet, WEB) == ["wlc-1"]
    assert [exclusion.cluster for exclusion in outcome.rescheduled] == ["wlc-2"]
    message = fleet.message()
    assert "deployment demo/web does not have minimum replicas available" in message
    assert f"rescheduled {group} from wlc-2 to wlc-1" in message
    assert "Nova-Allow-Mass-Prune: true" in message  # wlc-2 is emptied on purpose: its agent may prune all
    assert "Nova-Remedial" not in message  # a directory source has no revision: its moves stay gated
    placement = rendered_placement(fleet)
    reason = next(entry["reason"] for entry in placement["groups"] if entry["name"] == group)
    assert "Cluster wlc-2 skipped, does not have enough resources" in reason
    assert controller.metrics.value("nova_controller_reschedules_total", action="moved") == 1


def rendered_placement(fleet: Fleet) -> dict[str, Any]:
    """The decisions on the rendered branch: its index and every group file (``tests.placements``)."""
    wanted = [path for path in fleet.files() if path == "placement.yaml" or layout.is_group_file(path)]
    return placements.from_files({path: fleet.show(path).encode() + b"\n" for path in wanted})


def test_the_cool_down_keeps_the_group_away_until_it_ends(fleet: Fleet) -> None:
    controller = fleet.controller(reschedule_cooldown=600.0, allow_mass_delete=True)
    group = group_name(controller.reconcile_once().plan)
    fleet.report(cluster_report("wlc-2", cpu="8", requests=[reschedule_request(group)]))
    controller.reconcile_once()
    # the agent on wlc-2 pruned the group and stopped asking; wlc-1 is now the fuller cluster
    fleet.report(cluster_report("wlc-2", cpu="8"), cluster_report("wlc-1", cpu="4", available="1"))
    fleet.clock.advance(599)
    controller.reconcile_once()
    assert clusters_of(fleet, WEB) == ["wlc-1"]  # sticky, and wlc-2 is still excluded
    # wlc-1 no longer fits the group: with the exclusion still on, it would have nowhere else to go
    fleet.clock.advance(2)
    fleet.report(cluster_report("wlc-1", cpu="4", available="100m"))
    controller.reconcile_once()
    assert clusters_of(fleet, WEB) == ["wlc-2"]  # cool-down over: wlc-2 may take it again


def test_a_capacity_change_releases_the_exclusion_early(fleet: Fleet) -> None:
    controller = fleet.controller(reschedule_cooldown=3600.0)
    group = group_name(controller.reconcile_once().plan)
    fleet.report(cluster_report("wlc-2", cpu="8", requests=[reschedule_request(group)]))
    controller.reconcile_once()
    assert controller.reconciler.memory.avoid() != {}
    fleet.report(cluster_report("wlc-2", cpu="8", nodes=2))  # a node was added to wlc-2
    controller.reconcile_once()
    assert controller.reconciler.memory.avoid() == {}


def test_a_released_request_still_reported_is_not_acted_on_again(fleet: Fleet) -> None:
    controller = fleet.controller(reschedule_cooldown=10.0)
    group = group_name(controller.reconcile_once().plan)
    request = reschedule_request(group)
    fleet.report(cluster_report("wlc-2", cpu="8", requests=[request]))
    controller.reconcile_once()
    fleet.clock.advance(11)
    controller.reconcile_once()  # the cool-down ended while wlc-2 still reports the same request
    assert controller.reconciler.memory.avoid() == {}
    fleet.clock.advance(1)
    controller.reconcile_once()
    assert controller.reconciler.memory.avoid() == {}
    fleet.report(cluster_report("wlc-2", cpu="8", requests=[{**request, "since": "2026-01-01T01:00:00Z"}]))
    controller.reconcile_once()  # a new episode of Pending pods
    assert list(controller.reconciler.memory.avoid()) == [group]


def test_a_group_no_other_cluster_can_take_stays_where_it_is(fleet: Fleet) -> None:
    fleet.write_source("web.yaml", deployment(replicas=1, cpu="6"))  # only wlc-2 (8 cpu) fits
    controller = fleet.controller()
    group = group_name(controller.reconcile_once().plan)
    assert clusters_of(fleet, WEB) == ["wlc-2"]
    fleet.report(cluster_report("wlc-2", cpu="8", requests=[reschedule_request(group)]))
    outcome = controller.reconcile_once()
    assert outcome.stuck == (group,)
    assert outcome.rescheduled == ()
    assert clusters_of(fleet, WEB) == ["wlc-2"]
    assert controller.metrics.value("nova_controller_reschedules_total", action="stuck") == 1


def test_reschedule_requests_for_spread_groups_are_reported_not_acted_on(fleet: Fleet) -> None:
    spread = {"topologyKey": "kubernetes.io/metadata.name", "spreadMode": "Divide"}
    fleet.write_source("policy.yaml", policy(spreadConstraints=spread))
    controller = fleet.controller()
    group = group_name(controller.reconcile_once().plan)
    before = fleet.head()
    fleet.report(cluster_report("wlc-2", cpu="8", requests=[reschedule_request(group)]))
    outcome = controller.reconcile_once()
    assert outcome.outcome is Outcome.UNCHANGED
    assert fleet.head() == before
    assert [request.cluster for request in outcome.reported_only] == ["wlc-2"]
    assert controller.reconciler.memory.avoid() == {}
    assert controller.metrics.value("nova_controller_reschedules_total", action="reported") == 1


def test_external_orchestrator_mode_renders_spread_policies_delegated(fleet: Fleet) -> None:
    spread = {"topologyKey": "kubernetes.io/metadata.name", "spreadMode": "Divide"}
    fleet.write_source("policy.yaml", policy(spreadConstraints=spread))
    fleet.write_source("web.yaml", deployment(replicas=5))
    outcome = fleet.controller(delegated=True).reconcile_once()
    assert outcome.outcome is Outcome.PUBLISHED
    assert clusters_of(fleet, WEB) == ["wlc-1", "wlc-2"]
    replicas = {}
    for cluster in ("wlc-1", "wlc-2"):
        body = yaml.safe_load(fleet.show(f"clusters/{cluster}/{WEB}"))
        assert body["metadata"]["labels"]["nova.elotl.co/target-cluster"] == cluster
        assert body["metadata"]["labels"]["nova.elotl.co/schedule"] == "true"
        replicas[cluster] = body["spec"]["replicas"]
    assert sum(replicas.values()) == 5
    placement = rendered_placement(fleet)
    assert {entry["status"] for entry in placement["groups"]} == {"delegated"}


def test_failback_waits_for_failback_after(fleet: Fleet) -> None:
    tiers = {
        "matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["wlc-1", "wlc-2"]}
        ]
    }
    fleet.write_source("policy.yaml", policy(orderedClusterSelector=tiers))
    fleet.report(cluster_report("wlc-1", cpu="4", available="100m"), cluster_report("wlc-2", cpu="8"))
    controller = fleet.controller(failback_after=300.0)
    controller.reconcile_once()
    assert clusters_of(fleet, WEB) == ["wlc-2"]  # spilled: the first tier has no room
    fleet.report(cluster_report("wlc-1", cpu="4"), cluster_report("wlc-2", cpu="8"))
    controller.reconcile_once()
    assert clusters_of(fleet, WEB) == ["wlc-2"]  # room in wlc-1, but not for long enough yet
    fleet.clock.advance(299)
    controller.reconcile_once()
    assert clusters_of(fleet, WEB) == ["wlc-2"]
    fleet.clock.advance(2)
    outcome = controller.reconcile_once()
    assert clusters_of(fleet, WEB) == ["wlc-1"]
    assert outcome.failed_back
    assert "failed back" in fleet.message()


def test_failback_is_per_group(fleet: Fleet) -> None:
    tiers = {
        "matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["wlc-1", "wlc-2"]}
        ]
    }
    for app in ("web", "api"):
        selectors = {"labelSelectors": [{"matchLabels": {"app": app}}]}
        fleet.write_source(
            f"{app}-policy.yaml",
            policy(f"{app}-policy", orderedClusterSelector=tiers, resourceSelectors=selectors),
        )
    (fleet.source / "policy.yaml").unlink()
    fleet.write_source("api.yaml", deployment("api", cpu="1500m"))
    api = "demo/deployment-api.yaml"

    def report(available: str) -> None:
        fleet.report(cluster_report("wlc-1", cpu="8", available=available), cluster_report("wlc-2", cpu="8"))

    report("100m")
    controller = fleet.controller(failback_after=300.0)
    controller.reconcile_once()
    assert clusters_of(fleet, WEB) == clusters_of(fleet, api) == ["wlc-2"]
    report("1500m")  # room for web (2 x 500m) only
    controller.reconcile_once()
    fleet.clock.advance(200)
    report("8")  # room for both: api starts waiting now
    controller.reconcile_once()
    assert clusters_of(fleet, WEB) == clusters_of(fleet, api) == ["wlc-2"]
    fleet.clock.advance(101)
    outcome = controller.reconcile_once()
    assert [group.split("-")[0] for group in outcome.failed_back] == ["web"]
    assert clusters_of(fleet, WEB) == ["wlc-1"] and clusters_of(fleet, api) == ["wlc-2"]
    fleet.clock.advance(150)  # api has waited 251 s
    assert not controller.reconcile_once().failed_back
    assert clusters_of(fleet, api) == ["wlc-2"]
    fleet.clock.advance(50)
    assert [group.split("-")[0] for group in controller.reconcile_once().failed_back] == ["api"]
    assert clusters_of(fleet, WEB) == clusters_of(fleet, api) == ["wlc-1"]


def test_a_refused_report_does_not_stop_the_reconcile(fleet: Fleet) -> None:
    bad = cluster_report("wlc-2")
    bad["metadata"]["name"] = "wlc-1"  # wlc-2's file claiming to be wlc-1
    status = fleet.status_work / "status"
    (status / "wlc-2.yaml").write_text(yaml.safe_dump(bad))
    git(fleet.status_work, "commit", "--quiet", "-am", "bad")
    git(fleet.status_work, "push", "--quiet", "origin", "HEAD:nova-status")
    outcome = fleet.controller().reconcile_once()
    assert outcome.outcome is Outcome.PUBLISHED
    assert any("may only report cluster 'wlc-2'" in str(problem) for problem in outcome.status_problems)
    assert clusters_of(fleet, WEB) == ["wlc-1"]


def test_invalid_source_raises_every_problem_and_commits_nothing(fleet: Fleet) -> None:
    (fleet.source / "broken.yaml").write_text("kind: [\n")
    (fleet.source / "other.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad_Name}\n")
    with pytest.raises(InputError) as raised:
        fleet.controller().reconcile_once()
    assert len(raised.value.problems) >= 2
    assert git(fleet.remote, "branch", "--list", "main") == ""


def git_source(fleet: Fleet, tmp_path: Path) -> tuple[GitSource, Path]:
    work = tmp_path / "source-work"
    bare = tmp_path / "source.git"
    git(tmp_path, "init", "--quiet", "--bare", "--initial-branch=main", str(bare))
    git(tmp_path, "clone", "--quiet", str(bare), str(work))
    for path in fleet.source.iterdir():
        (work / path.name).write_text(path.read_text())
    git(work, "add", "-A")
    git(work, "commit", "--quiet", "-m", "fleet")
    git(work, "push", "--quiet", "origin", "HEAD:main")
    return GitSource(f"file://{bare}", "main", cache_dir=tmp_path / "cache"), work


def test_a_git_source_is_rendered_at_one_revision(fleet: Fleet, tmp_path: Path) -> None:
    source, work = git_source(fleet, tmp_path)
    revision = git(work, "rev-parse", "HEAD")
    outcome = fleet.controller(source=source).reconcile_once()
    assert outcome.source.revision == revision
    assert f"Nova-Source-Revision: {revision}" in fleet.message()


def test_a_reschedule_of_an_unchanged_source_is_remedial(fleet: Fleet, tmp_path: Path) -> None:
    """Issue 12: a commit whose every move is a reschedule carries Nova-Remedial: true, so a rollout
    releases it at once; a source change never does, nor a reschedule riding along with one."""
    source, work = git_source(fleet, tmp_path)
    controller = fleet.controller(source=source)
    group = group_name(controller.reconcile_once().plan)
    assert "Nova-Remedial" not in fleet.message()
    fleet.report(cluster_report("wlc-2", cpu="8", requests=[reschedule_request(group)]))
    controller.reconcile_once()
    assert f"rescheduled {group} from wlc-2" in fleet.message()
    assert "Nova-Remedial: true" in fleet.message()
    (work / "extra.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra, namespace: demo}\n"
    )
    git(work, "add", "-A")
    git(work, "commit", "--quiet", "-m", "more")
    git(work, "push", "--quiet", "origin", "HEAD:main")
    controller.reconcile_once()
    assert "Nova-Remedial" not in fleet.message()


def test_observers_see_the_plan_and_the_reports(fleet: Fleet) -> None:
    seen: list[tuple[Plan, Mapping[str, ClusterReport]]] = []

    class Recorder:
        def planned(self, plan: Plan, reports: Mapping[str, ClusterReport]) -> None:
            seen.append((plan, reports))

    controller = fleet.controller()
    controller.reconciler.observers = (Recorder(),)
    controller.reconcile_once()
    controller.reconcile_once()
    assert len(seen) == 2
    assert sorted(seen[0][1]) == ["wlc-1", "wlc-2"]
