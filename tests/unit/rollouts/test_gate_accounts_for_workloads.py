"""A gate needs the report to account for every workload rendered for the cluster (issue 21 item 5).

Behaviours covered:
- a report that names the released commit but lists none of its rendered workloads (an agent whose
  ``--path`` is wrong applied nothing) waits, names what is unaccounted for and the likely cause, and after
  healthTimeout fails the wave: the next wave is never released;
- one workload of three missing is named; many missing are named up to three, then counted;
- a report of the same name in another API group does not stand for the rendered one;
- what was rendered not being known proves nothing either (waiting);
- a cluster whose directory holds no such workload (only ConfigMaps) passes on an empty list;
- a reported workload the render does not hold (a custom resource with Ready) still counts when unhealthy;
- the kinds the gate requires are exactly those the agent reports health for and delegated mode watches.
"""

from __future__ import annotations

from datetime import timedelta

from nova_agent import health as agent_health
from nova_agent import observing
from nova_gitops.rollouts import health
from nova_gitops.rollouts.health import ClusterFacts, WorkloadFacts
from tests.unit.rollouts.fleets import NEW, WEB, Fleet, healthy, wave

MINUTE = timedelta(minutes=1)
WAVES = (wave("canary", "c1"), wave("prod", "p1"))
API = ("apps", "Deployment", "shop", "api")
DB = ("apps", "StatefulSet", "shop", "db")


def entry(key: tuple[str, str, str, str], revision: str, healthy: bool = True) -> WorkloadFacts:
    group, kind, namespace, name = key
    api_version = f"{group}/v1" if group else "v1"
    return WorkloadFacts(kind, namespace, name, healthy, revision, api_version=api_version)


def test_a_report_that_accounts_for_nothing_never_passes_and_fails_at_the_timeout() -> None:
    fleet = Fleet(WAVES)
    fleet.step()
    fleet.reports["c1"] = ClusterFacts(NEW, ())  # synced, no error, no workloads: --path was wrong
    waiting = fleet.step(6 * MINUTE)
    assert fleet.state(waiting, "canary") == "waiting" and fleet.released["p1"] != NEW
    reason = waiting.clusters["c1"]
    assert reason.startswith("c1 reports bbbbbbb synced but not Deployment shop/web rendered for it there")
    assert "is its --path clusters/c1?" in reason
    failed = fleet.step(10 * MINUTE)
    assert fleet.state(failed, "canary") == "paused"
    assert fleet.reason(failed, "canary").startswith(
        "paused: not healthy after 15m: c1 reports bbbbbbb synced but not Deployment shop/web"
    )
    assert fleet.released["p1"] != NEW


def test_the_missing_ones_are_named() -> None:
    report = ClusterFacts(NEW, (entry(WEB, NEW), entry(API, NEW)))
    verdict = health.judge("c1", report, NEW, {WEB, API, DB})
    assert verdict.state == "waiting" and "not StatefulSet shop/db rendered" in verdict.reason
    many = {("apps", "Deployment", "shop", f"web-{index}") for index in range(5)}
    verdict = health.judge("c1", ClusterFacts(NEW, ()), NEW, many)
    assert "not Deployment shop/web-0, Deployment shop/web-1, Deployment shop/web-2 and 2 more " in (
        verdict.reason
    )
    assert health.unaccounted(report, {WEB, API, DB}) == [DB]


def test_another_group_does_not_stand_for_the_rendered_workload() -> None:
    impostor = WorkloadFacts("Deployment", "shop", "web", True, NEW, api_version="example.com/v1")
    assert health.judge("c1", ClusterFacts(NEW, (impostor,)), NEW, {WEB}).state == "waiting"


def test_not_knowing_what_was_rendered_proves_nothing() -> None:
    verdict = health.judge("c1", healthy(NEW), NEW)
    assert verdict == health.Verdict("waiting", "c1: what was rendered for it at bbbbbbb is not known yet")


def test_a_directory_without_workloads_passes_on_an_empty_list() -> None:
    fleet = Fleet(WAVES)
    fleet.rendered[("c1", NEW)] = frozenset()  # only ConfigMaps and Services there
    fleet.step()
    fleet.reports["c1"] = ClusterFacts(NEW, ())
    fleet.step()
    passed = fleet.step(5 * MINUTE)
    assert fleet.state(passed, "canary") == "passed" and fleet.released["p1"] == NEW


def test_a_reported_workload_beyond_the_render_still_counts() -> None:
    widget = WorkloadFacts("Widget", "shop", "w", False, NEW, "Ready", "Reconciling", api_version="x.io/v1")
    report = ClusterFacts(NEW, (entry(WEB, NEW), widget))
    assert health.judge("c1", report, NEW, {WEB}).state == "waiting"
    assert health.judge("c1", ClusterFacts(NEW, (entry(WEB, NEW),)), NEW, {WEB}).state == "healthy"


def test_the_kinds_required_are_those_the_agent_reports() -> None:
    assert health.RENDERED_WORKLOAD_KINDS == set(agent_health.RULES) == observing.DELEGATED_KINDS
