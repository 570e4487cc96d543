"""Three waves through the controller with real git (issue 12's tests): a rollout that passes wave after wave,
each only after the previous one baked; a controller replaced mid-bake finishes the bake at the time the
record started it; a Deployment that never becomes Available in wave 2 pauses the rollout (wave 3 never gets
the revision), and `rollout abort` rolls back every cluster the rollout released, waves 1 and 2 (an abort
returns the fleet to where it was; `onFailure: rollback` would roll back the failed wave alone); a newer push
mid-rollout starts over at the canary and the later waves skip the superseded commit."""

from __future__ import annotations

from pathlib import Path

import pytest

from nova_gitops.controller import rolloutcommands
from tests.controller.helpers import Fleet, cluster_report, deployment, policy
from tests.controller.test_rollouts import SPREAD, WallClock, healthy_report, released

WAVES = {
    "apiVersion": "gitops.nova.elotl.co/v1alpha1",
    "kind": "RolloutStrategy",
    "metadata": {"name": "fleet"},
    "spec": {
        "waves": [
            {"name": "canary", "clusterSelector": {"matchLabels": {"tier": "canary"}}},
            {"name": "early", "clusterSelector": {"matchLabels": {"tier": "early"}}},
        ],
        "bakeTime": "5m",
        "healthTimeout": "15m",
    },
}
TIERS = {"wlc-1": {"tier": "canary"}, "wlc-2": {"tier": "early"}, "wlc-3": {}}


@pytest.fixture
def fleet(tmp_path: Path) -> Fleet:
    fleet = Fleet(tmp_path)
    fleet.write_source("policy.yaml", policy(spreadConstraints=SPREAD))
    fleet.write_source("web.yaml", deployment())
    fleet.write_source("rollout.yaml", WAVES)
    report_all(fleet, {})
    return fleet


def report_all(fleet: Fleet, healthy_at: dict[str, str], **unhealthy: str) -> None:
    """Each cluster's report: healthy for the commit given, unhealthy with the reason given, else empty."""
    reports = []
    for name, labels in TIERS.items():
        if name in unhealthy:
            revision = healthy_at[name]
            report = healthy_report(name, revision, labels=labels, healthy=False, reason=unhealthy[name])
        elif name in healthy_at:
            report = healthy_report(name, healthy_at[name], labels=labels)
        else:
            report = cluster_report(name, labels=labels)
        reports.append(report)
    fleet.report(*reports)


def test_three_waves_pass_one_after_the_other_across_a_controller_restart(fleet: Fleet) -> None:
    clock = WallClock()
    controller = fleet.controller(wall_clock=clock)
    controller.reconcile_once()
    target = fleet.head()
    assert released(fleet) == {"wlc-1": target}
    report_all(fleet, {"wlc-1": target})
    controller.reconcile_once()  # the canary's bake starts now
    clock.advance(minutes=3)
    successor = fleet.controller(wall_clock=clock)  # the controller is replaced mid-bake
    successor.reconcile_once()
    assert released(fleet) == {"wlc-1": target}  # 3 of 5 minutes: the successor keeps the recorded bake
    clock.advance(minutes=2)
    successor.reconcile_once()
    assert released(fleet) == {"wlc-1": target, "wlc-2": target}  # released at the bake's recorded end
    report_all(fleet, {"wlc-1": target, "wlc-2": target})
    successor.reconcile_once()
    clock.advance(minutes=5)
    successor.reconcile_once()
    assert released(fleet) == {"wlc-1": target, "wlc-2": target, "wlc-3": target}


def test_a_failure_in_wave_two_pauses_and_abort_rolls_wave_two_back(fleet: Fleet) -> None:
    clock = WallClock()
    controller = fleet.controller(wall_clock=clock)
    controller.reconcile_once()
    good = fleet.head()
    report_all(fleet, {"wlc-1": good})
    controller.reconcile_once()
    clock.advance(minutes=6)
    controller.reconcile_once()
    report_all(fleet, {"wlc-1": good, "wlc-2": good})
    controller.reconcile_once()
    clock.advance(minutes=6)
    controller.reconcile_once()
    assert released(fleet) == {"wlc-1": good, "wlc-2": good, "wlc-3": good}
    report_all(fleet, {"wlc-1": good, "wlc-2": good, "wlc-3": good})
    controller.reconcile_once()
    clock.advance(minutes=6)
    controller.reconcile_once()  # complete: an abort of the next rollout returns everyone to `good`
    fleet.write_source("web.yaml", deployment(replicas=3))  # a new revision
    controller.reconcile_once()
    bad = fleet.head()
    report_all(fleet, {"wlc-1": bad, "wlc-2": good, "wlc-3": good})
    controller.reconcile_once()
    clock.advance(minutes=6)
    controller.reconcile_once()
    assert released(fleet) == {"wlc-1": bad, "wlc-2": bad, "wlc-3": good}
    report_all(fleet, {"wlc-1": bad, "wlc-2": bad, "wlc-3": good}, **{"wlc-2": "ProgressDeadlineExceeded"})
    outcome = controller.reconcile_once()
    assert outcome.rollout is not None and outcome.rollout.decision is not None
    assert outcome.rollout.decision.paused
    clock.advance(minutes=30)
    controller.reconcile_once()
    assert released(fleet)["wlc-3"] == good  # paused: wave 3 never gets the failing revision
    where = rolloutcommands.Where(
        repo_url=fleet.url, source=str(fleet.source), cache_dir=fleet.root / "engineer"
    )
    said = rolloutcommands.request(where, "abort", now=clock(), environ={"GIT_AUTHOR_NAME": "Ops"})
    assert "abort" in said
    controller.reconcile_once()
    assert released(fleet) == {"wlc-1": good, "wlc-2": good, "wlc-3": good}  # every release rolled back


def test_a_newer_push_mid_rollout_starts_over_and_later_waves_skip_the_superseded_commit(
    fleet: Fleet,
) -> None:
    clock = WallClock()
    controller = fleet.controller(wall_clock=clock)
    controller.reconcile_once()
    first = fleet.head()
    report_all(fleet, {"wlc-1": first})
    controller.reconcile_once()
    fleet.write_source("web.yaml", deployment(replicas=3))  # pushed while the canary bakes
    controller.reconcile_once()
    second = fleet.head()
    assert released(fleet) == {"wlc-1": second}  # the canary first again
    clock.advance(minutes=6)
    controller.reconcile_once()
    assert "wlc-2" not in released(fleet)  # the canary has not proven the second commit yet
    report_all(fleet, {"wlc-1": second})
    controller.reconcile_once()
    clock.advance(minutes=6)
    controller.reconcile_once()
    assert released(fleet) == {"wlc-1": second, "wlc-2": second}  # wlc-2 never ran the first commit
