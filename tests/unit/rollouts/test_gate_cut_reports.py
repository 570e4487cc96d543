"""A gate and a report the agent cut to what the controller reads (issue 21, follow-up of items 5 and 9).

An agent whose cluster holds more workloads than a report can (20,000 items, 400,000 values, 4 MiB) lists
those that matter most and says, in a ``ReportComplete`` condition (status False), how many it left out
(``nova_agent.reports``). Decision: such a cluster cannot pass a gate by accounting — the agent's word that
the rest are healthy is not taken — so it waits, and its wave fails at healthTimeout like any other wait.

Behaviours covered:
- the facts of a report read its cut from the condition (only when False);
- a cut report that does not account for a rendered workload waits with a reason that says the report was
  cut, how many are unaccounted for, and how to go on (check, promote); after healthTimeout the wave pauses
  and the next wave is not released;
- a cut never hides a failure: a degraded workload it lists fails the cluster at once;
- a cut report that still lists every rendered workload (what was cut were other listings) passes.
"""

from __future__ import annotations

from datetime import timedelta

from nova_gitops.api import statusreports
from nova_gitops.rollouts import health
from nova_gitops.rollouts.health import ClusterFacts, WorkloadFacts
from tests.unit.rollouts.fleets import NEW, Fleet, wave

MINUTE = timedelta(minutes=1)
WAVES = (wave("canary", "c1"), wave("prod", "p1"))
NOTE = "not reported: 5,000 of 25,000 workloads; a report holds what the controller reads"


def entry(name: str, *, healthy: bool = True, reason: str = "") -> WorkloadFacts:
    return WorkloadFacts("Deployment", "shop", name, healthy, NEW, reason=reason, api_version="apps/v1")


def rendered(count: int) -> frozenset[tuple[str, str, str, str]]:
    return frozenset(("apps", "Deployment", "shop", f"w-{index:05d}") for index in range(count))


def test_the_cut_is_read_from_the_condition_when_it_is_false() -> None:
    condition = {"type": statusreports.REPORT_COMPLETE, "status": "False", "message": NOTE}
    assert health.facts_from_status({"conditions": [condition]}).cut == NOTE
    assert health.facts_from_status({"conditions": [{**condition, "status": "True"}]}).cut == ""
    assert health.facts_from_status({"conditions": [{"type": "Ready", "status": "False"}]}).cut == ""


def test_a_cut_report_cannot_pass_by_accounting_and_says_why() -> None:
    fleet = Fleet(WAVES)
    fleet.rendered[("c1", NEW)] = rendered(6)
    fleet.step()
    listed = tuple(entry(f"w-{index:05d}") for index in range(4))
    fleet.reports["c1"] = ClusterFacts(NEW, listed, cut=NOTE)
    waiting = fleet.step(6 * MINUTE)
    assert fleet.state(waiting, "canary") == "waiting" and fleet.released["p1"] != NEW
    reason = waiting.clusters["c1"]
    assert reason.startswith(
        "c1's report lists 4 workloads, cut to what the controller reads, and not 2 more"
    )
    assert "Deployment shop/w-00004" in reason and "promote the wave" in reason
    failed = fleet.step(10 * MINUTE)
    assert fleet.state(failed, "canary") == "paused" and fleet.released["p1"] != NEW


def test_a_cut_never_hides_a_failure() -> None:
    listed = (entry("w-00000", healthy=False, reason="ProgressDeadlineExceeded"), entry("w-00001"))
    verdict = health.judge("c1", ClusterFacts(NEW, listed, cut=NOTE), NEW, rendered(6))
    assert verdict.state == "failed" and "Deployment shop/w-00000 Degraded on c1" in verdict.reason


def test_a_cut_report_listing_every_rendered_workload_passes() -> None:
    listed = tuple(entry(f"w-{index:05d}") for index in range(6))
    verdict = health.judge("c1", ClusterFacts(NEW, listed, cut=NOTE), NEW, rendered(6))
    assert verdict.state == "healthy"
