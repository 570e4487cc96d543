"""A reconcile with nothing changed skips planning, rendering and publishing (issue 14, item 3); real git.

Behaviours covered (the skip is observed through ``ReconcileOutcome.skipped``, ``replanned_because`` and the
reconciler's ``skips`` counter, never through timing):
- after an unchanged reconcile, the same inputs skip; so does a status commit that only moves heartbeats or
  health (what planning never reads); the first reconcile after a commit plans in full;
- no skip when any one input changes: a source edit (same size, within the file-time tick), a new file, a
  report's capacity, a new reschedule request, someone else's push to the rendered branch, the settings, a
  reschedule cool-down that ends, a failback hold that is over — and the full reconcile then does what it
  would have done without the skip (the edit is published, the group fails back);
- a git source skips while its commit stays, and plans when a new commit arrives;
- the rollout step still runs on a skipped reconcile (a bake that ends releases the next wave);
- the pure rules (``skipping.why_not``) and the report digest (``statusreading.plan_fingerprint``).
"""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest

from nova_gitops.api import clusters as cluster_api
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import SourceLocation
from nova_gitops.controller import looping, rescheduling, skipping, statusreading
from nova_gitops.controller.settings import ControllerSettings
from nova_gitops.controller.sourcereading import GitSource
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.workflows.publishing import Outcome
from tests.controller.helpers import (
    Fleet,
    cluster_report,
    clusters_of,
    deployment,
    git,
    policy,
    reschedule_request,
)
from tests.controller.test_rollouts import SPREAD, WallClock, released

WEB = "demo/deployment-web.yaml"


@pytest.fixture
def fleet(tmp_path: Path) -> Fleet:
    fleet = Fleet(tmp_path)
    fleet.write_source("policy.yaml", policy())
    fleet.write_source("web.yaml", deployment())
    fleet.report(cluster_report("wlc-1", cpu="4"), cluster_report("wlc-2", cpu="8"))
    return fleet


def settled(fleet: Fleet, **overrides: object) -> looping.Controller:
    """A controller that has published and then confirmed its render once: the next reconcile may skip."""
    controller = fleet.controller(**overrides)
    assert controller.reconcile_once().outcome is Outcome.PUBLISHED
    confirmed = controller.reconcile_once()
    assert confirmed.outcome is Outcome.UNCHANGED and not confirmed.skipped  # plans once on its own head
    return controller


def test_the_same_inputs_skip_and_answer_as_the_full_reconcile_did(fleet: Fleet) -> None:
    controller = fleet.controller()
    first = controller.reconcile_once()
    assert not first.skipped and first.replanned_because == "no unchanged reconcile before"
    full = controller.reconcile_once()
    assert not full.skipped and full.outcome is Outcome.UNCHANGED
    commits = fleet.commit_count()
    for count in (1, 2):
        skipped = controller.reconcile_once()
        assert skipped.skipped and skipped.outcome is Outcome.UNCHANGED
        assert controller.reconciler.skips == count
        assert skipped.commit == full.commit == fleet.head()
        assert skipped.plan is full.plan and skipped.source == full.source
        assert skipped.rollout is not None  # the rollout step ran
    assert fleet.commit_count() == commits


def test_a_heartbeat_or_health_only_report_still_skips(fleet: Fleet) -> None:
    controller = settled(fleet)
    beat = cluster_report("wlc-2", cpu="8")
    beat["status"].update(heartbeat="2026-01-01T00:05:00Z", lastUpdateTime="2026-01-01T00:05:00Z")
    beat["status"]["workloads"] = [{"kind": "Deployment", "name": "web", "healthy": True, "revision": "x"}]
    beat["status"]["syncedRevision"] = "abc"
    fleet.report(beat)  # a new status commit
    assert controller.reconcile_once().skipped


def test_a_source_edit_of_the_same_size_in_the_same_tick_is_seen(fleet: Fleet) -> None:
    controller = settled(fleet)
    assert controller.reconcile_once().skipped
    path = fleet.source / "web.yaml"
    text = path.read_text()
    path.write_text(text.replace("replicas: 2", "replicas: 3"))  # same size, moments after the digest
    outcome = controller.reconcile_once()
    assert not outcome.skipped and outcome.replanned_because == "the source changed"
    assert outcome.outcome is Outcome.PUBLISHED


def test_a_new_source_file_is_seen(fleet: Fleet) -> None:
    controller = settled(fleet)
    fleet.write_source("api.yaml", deployment("api"))
    outcome = controller.reconcile_once()
    assert not outcome.skipped and outcome.outcome is Outcome.PUBLISHED


def test_a_reported_capacity_change_is_seen(fleet: Fleet) -> None:
    controller = settled(fleet)
    fleet.report(cluster_report("wlc-1", cpu="4", available="1"))
    outcome = controller.reconcile_once()
    assert not outcome.skipped and outcome.replanned_because == "the reports changed"


def test_a_new_reschedule_request_is_seen(fleet: Fleet) -> None:
    controller = settled(fleet)
    group = next(group.name for group in controller.reconcile_once().plan.groups)
    fleet.report(cluster_report("wlc-2", cpu="8", requests=[reschedule_request(group)]))
    outcome = controller.reconcile_once()
    assert not outcome.skipped and outcome.outcome is Outcome.PUBLISHED
    assert clusters_of(fleet, WEB) == ["wlc-1"]


def test_someone_elses_push_to_the_rendered_branch_is_seen(fleet: Fleet, tmp_path: Path) -> None:
    controller = settled(fleet)
    work = tmp_path / "intruder"
    git(tmp_path, "clone", "--quiet", fleet.url, str(work))
    (work / "clusters" / "wlc-2" / "demo" / "deployment-web.yaml").write_text("edited: by hand\n")
    git(work, "commit", "--quiet", "-am", "a hand edit")
    git(work, "push", "--quiet", "origin", "HEAD:main")
    outcome = controller.reconcile_once()
    assert not outcome.skipped and outcome.replanned_because == "the rendered branch moved"
    assert outcome.outcome is Outcome.PUBLISHED  # the render is restored
    assert "edited: by hand" not in fleet.show(f"clusters/wlc-2/{WEB}")


def test_a_settings_change_is_seen(fleet: Fleet) -> None:
    controller = settled(fleet)
    reconciler = controller.reconciler
    reconciler.settings = dataclasses.replace(reconciler.settings, luna_management=False)
    outcome = controller.reconcile_once()
    assert not outcome.skipped and outcome.replanned_because == "the settings changed"
    assert outcome.outcome is Outcome.PUBLISHED  # the elotl-luna label goes


def test_the_end_of_a_reschedule_cool_down_is_seen(fleet: Fleet) -> None:
    controller = fleet.controller(reschedule_cooldown=600.0, allow_mass_delete=True)
    group = next(group.name for group in controller.reconcile_once().plan.groups)
    fleet.report(cluster_report("wlc-2", cpu="8", requests=[reschedule_request(group)]))
    assert controller.reconcile_once().outcome is Outcome.PUBLISHED  # moved to wlc-1
    fleet.report(cluster_report("wlc-2", cpu="8"))  # the agent stopped asking
    assert not controller.reconcile_once().skipped  # the reports changed
    fleet.clock.advance(599)
    assert controller.reconcile_once().skipped  # wlc-2 is still excluded: nothing can change
    fleet.clock.advance(2)
    outcome = controller.reconcile_once()
    assert not outcome.skipped and outcome.replanned_because == "the reschedule exclusions changed"
    assert controller.reconciler.memory.exclusions == {}


def test_a_failback_hold_that_is_over_is_seen(fleet: Fleet) -> None:
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
    assert not controller.reconcile_once().skipped  # room in wlc-1: the hold starts
    fleet.clock.advance(299)
    assert controller.reconcile_once().skipped  # the hold is not over: the same plan
    assert clusters_of(fleet, WEB) == ["wlc-2"]
    fleet.clock.advance(2)
    outcome = controller.reconcile_once()
    assert not outcome.skipped and outcome.replanned_because == "a failback hold is over"
    assert outcome.failed_back and clusters_of(fleet, WEB) == ["wlc-1"]


def test_a_git_source_skips_while_its_commit_stays(fleet: Fleet, tmp_path: Path) -> None:
    bare = tmp_path / "source.git"
    git(tmp_path, "init", "--quiet", "--bare", "--initial-branch=main", str(bare))
    git(fleet.source, "init", "--quiet", "--initial-branch=main")
    git(fleet.source, "add", "-A")
    git(fleet.source, "commit", "--quiet", "-m", "fleet")
    git(fleet.source, "push", "--quiet", f"file://{bare}", "HEAD:main")
    source = GitSource(f"file://{bare}", "main", cache_dir=tmp_path / "source-cache")
    controller = fleet.controller(source=source)
    controller.reconcile_once()
    controller.reconcile_once()
    assert controller.reconcile_once().skipped
    fleet.write_source("web.yaml", deployment(replicas=3))
    git(fleet.source, "commit", "--quiet", "-am", "three")
    git(fleet.source, "push", "--quiet", f"file://{bare}", "HEAD:main")
    outcome = controller.reconcile_once()
    assert not outcome.skipped and outcome.outcome is Outcome.PUBLISHED
    assert outcome.source.revision == git(fleet.source, "rev-parse", "HEAD")
    source.close()


def test_the_rollout_step_runs_on_a_skipped_reconcile(fleet: Fleet) -> None:
    from tests.controller.test_rollout_waves import WAVES, report_all

    fleet.write_source("policy.yaml", policy(spreadConstraints=SPREAD))
    fleet.write_source("rollout.yaml", WAVES)
    report_all(fleet, {})
    clock = WallClock()
    controller = fleet.controller(wall_clock=clock)
    controller.reconcile_once()
    target = fleet.head()
    assert released(fleet) == {"wlc-1": target}
    report_all(fleet, {"wlc-1": target})  # health only: the plan's inputs are the same
    assert not controller.reconcile_once().skipped  # the first reconcile on its own commit; the bake starts
    clock.advance(minutes=5)
    outcome = controller.reconcile_once()
    assert outcome.skipped
    assert released(fleet) == {"wlc-1": target, "wlc-2": target}  # released by the skipped reconcile


def test_reports_are_not_changed_by_a_reconcile(fleet: Fleet) -> None:
    """Parsed reports are kept between reads (by blob): nothing downstream may change them."""
    controller = fleet.controller()
    controller.reconcile_once()
    reader = controller.reconciler.status
    before = {name: copy.deepcopy(report.document.body) for name, report in reader.read().reports.items()}
    controller.reconcile_once()
    controller.reconcile_once()
    assert {name: report.document.body for name, report in reader.read().reports.items()} == before


def test_the_plan_digest_of_a_report_ignores_what_planning_never_reads() -> None:
    base = cluster_report("wlc-1")
    noisy = copy.deepcopy(base)
    for field in statusreading.UNPLANNED_FIELDS:
        noisy["status"][field] = ["changed", field]
        noisy[field] = "changed at the top too"
    assert statusreading.plan_fingerprint(noisy) == statusreading.plan_fingerprint(base)
    # ...because the Cluster parser never reads them
    parsed = [
        cluster_api.parse_cluster(Document(body, SourceLocation("status/wlc-1.yaml", 1)), [])
        for body in (base, noisy)
    ]
    assert parsed[0] == parsed[1]
    for change in ("capacityResources", "availableResources", "rescheduleRequests", "conditions"):
        changed = copy.deepcopy(base)
        changed["status"][change] = {"changed": True}
        assert statusreading.plan_fingerprint(changed) != statusreading.plan_fingerprint(base)
    renamed = copy.deepcopy(base)
    renamed["metadata"]["labels"]["tier"] = "canary"
    assert statusreading.plan_fingerprint(renamed) != statusreading.plan_fingerprint(base)


def _basis(**changes: object) -> skipping.Basis:
    values: dict[str, object] = {
        "inputs": INPUTS,
        "avoid": {},
        "head": "h1",
        "failback_due": None,
        "plan": None,
        "strategy": None,
        "clusters": (),
        "source_reports": {},
        "refused": (),
        "warnings": (),
        "stuck": (),
        **changes,
    }
    return skipping.Basis(**values)  # type: ignore[arg-type]


INPUTS = skipping.Inputs(
    source=SourceInfo("repo", "abc"),
    source_digest="d1",
    reports=(("wlc-1", "r1"),),
    settings=ControllerSettings(repo_url="file:///rendered.git", cache_dir=Path("cache")),
)


@pytest.mark.parametrize(
    ("basis", "inputs", "avoid", "now", "head", "expected"),
    [
        (_basis(), INPUTS, {}, 10.0, "h1", None),
        (None, INPUTS, {}, 10.0, "h1", "no unchanged reconcile before"),
        (_basis(), None, {}, 10.0, "h1", "the source has no digest"),
        (_basis(), dataclasses.replace(INPUTS, source_digest="d2"), {}, 10.0, "h1", "the source changed"),
        (_basis(), dataclasses.replace(INPUTS, reports=()), {}, 10.0, "h1", "the reports changed"),
        (_basis(), INPUTS, {"g": {"wlc-1": "full"}}, 10.0, "h1", "the reschedule exclusions changed"),
        (_basis(failback_due=10.0), INPUTS, {}, 9.9, "h1", None),
        (_basis(failback_due=10.0), INPUTS, {}, 10.0, "h1", "a failback hold is over"),
        (_basis(), INPUTS, {}, 10.0, "h2", "the rendered branch moved"),
        (_basis(), INPUTS, {}, 10.0, None, "the rendered branch moved"),
    ],
)
def test_why_not(
    basis: skipping.Basis | None,
    inputs: skipping.Inputs | None,
    avoid: dict[str, dict[str, str]],
    now: float,
    head: str | None,
    expected: str | None,
) -> None:
    assert skipping.why_not(basis, inputs, avoid, now, lambda: head) == expected


def test_failback_due_is_the_first_hold_plus_the_wait() -> None:
    hold = rescheduling.FailbackHold({"a": 100.0, "b": 50.0})
    assert skipping.failback_due(hold, 300.0) == 350.0
    assert skipping.failback_due(rescheduling.FailbackHold(), 300.0) is None
    assert skipping.failback_due(hold, 0.0) is None  # failback at once: no hold
