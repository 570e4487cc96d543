"""Progressive rollouts in the controller (issue 12, docs/rollouts.md), with real git: a render reaches the
canary wave first (its release branch moves, the others' do not), the next wave only after the canary
reports the released commit healthy for that commit for the whole bake; a stale Healthy (an older revision)
never passes; a Degraded canary pauses the rollout and says why in the record; without a strategy and
without release branches nothing is read or pushed beyond today's publish."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from nova_gitops.controller.rolloutstep import RECORD_PATH, ROLLOUT_BRANCH
from nova_gitops.rollouts.events import RolloutEvent
from tests.controller.helpers import Fleet, cluster_report, deployment, git, policy

SPREAD = {"spreadMode": "Duplicate", "topologyKey": "kubernetes.io/metadata.name"}
STRATEGY = {
    "apiVersion": "gitops.nova.elotl.co/v1alpha1",
    "kind": "RolloutStrategy",
    "metadata": {"name": "fleet"},
    "spec": {
        "waves": [{"name": "canary", "clusterSelector": {"matchLabels": {"tier": "canary"}}}],
        "bakeTime": "5m",
        "healthTimeout": "15m",
    },
}


class WallClock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def fleet(tmp_path: Path) -> Fleet:
    return rollout_fleet(tmp_path)


def rollout_fleet(tmp_path: Path) -> Fleet:
    """A Duplicate policy over wlc-1 (label tier=canary) and wlc-2, and a canary-then-others strategy."""
    fleet = Fleet(tmp_path)
    fleet.write_source("policy.yaml", policy(spreadConstraints=SPREAD))
    fleet.write_source("web.yaml", deployment())
    fleet.write_source("rollout.yaml", STRATEGY)
    fleet.report(cluster_report("wlc-1", labels={"tier": "canary"}), cluster_report("wlc-2"))
    return fleet


def released(fleet: Fleet) -> dict[str, str]:
    listed = git(
        fleet.remote, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads/nova/clusters"
    )
    return {
        ref.removeprefix("nova/clusters/"): sha for ref, sha in (line.split() for line in listed.splitlines())
    }


def healthy_report(
    name: str, revision: str, *, labels: dict[str, str] | None = None, **workload: Any
) -> dict[str, Any]:
    report = cluster_report(name, labels=labels)
    report["status"]["syncedRevision"] = revision
    report["status"]["workloads"] = [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "namespace": "demo",
            "name": "web",
            "healthy": True,
            "condition": "Available",
            "reason": "MinimumReplicasAvailable",
            "message": "",
            "revision": revision,
            **workload,
        }
    ]
    return report


def test_a_render_reaches_the_canary_first_and_the_rest_after_the_bake(fleet: Fleet) -> None:
    clock = WallClock()
    controller = fleet.controller(wall_clock=clock)
    controller.reconcile_once()
    target = fleet.head()
    assert released(fleet) == {"wlc-1": target}  # the canary wave only
    assert controller.metrics.value("nova_rollout_wave") == 0
    fleet.report(healthy_report("wlc-1", target, labels={"tier": "canary"}), cluster_report("wlc-2"))
    controller.reconcile_once()  # healthy: the bake starts
    clock.advance(minutes=4)
    controller.reconcile_once()
    assert released(fleet) == {"wlc-1": target}
    clock.advance(minutes=2)
    outcome = controller.reconcile_once()
    assert released(fleet) == {"wlc-1": target, "wlc-2": target}
    clock.advance(minutes=1)
    fleet.report(healthy_report("wlc-1", target, labels={"tier": "canary"}), healthy_report("wlc-2", target))
    controller.reconcile_once()
    clock.advance(minutes=6)
    controller.reconcile_once()
    assert controller.metrics.value("nova_rollout_wave") == -1  # complete
    assert outcome.rollout is not None and outcome.rollout.decision is not None
    record = yaml.safe_load(git(fleet.remote, "show", f"{ROLLOUT_BRANCH}:{RECORD_PATH}"))
    assert record["target"] == target
    assert [wave["name"] for wave in record["waves"]][:1] == ["canary"]


def test_a_stale_healthy_never_passes_the_gate(fleet: Fleet) -> None:
    clock = WallClock()
    controller = fleet.controller(wall_clock=clock)
    controller.reconcile_once()
    target = fleet.head()
    stale = healthy_report("wlc-1", target, labels={"tier": "canary"})
    stale["status"]["workloads"][0]["revision"] = "0" * 40  # healthy, but for an older commit
    fleet.report(stale, cluster_report("wlc-2"))
    for _ in range(3):
        controller.reconcile_once()
        clock.advance(minutes=5)
    assert released(fleet) == {"wlc-1": target}


def test_a_degraded_canary_pauses_the_rollout_and_says_why(fleet: Fleet) -> None:
    clock = WallClock()
    controller = fleet.controller(wall_clock=clock)
    controller.reconcile_once()
    target = fleet.head()
    degraded = healthy_report(
        "wlc-1", target, labels={"tier": "canary"}, healthy=False, reason="ProgressDeadlineExceeded"
    )
    fleet.report(degraded, cluster_report("wlc-2"))
    outcome = controller.reconcile_once()
    clock.advance(minutes=30)
    controller.reconcile_once()
    assert released(fleet) == {"wlc-1": target}
    assert outcome.rollout is not None and outcome.rollout.decision is not None
    assert outcome.rollout.decision.paused
    assert controller.metrics.value("nova_rollout_paused") == 1
    assert controller.metrics.value("nova_rollout_duration_seconds") == 1800
    record = yaml.safe_load(git(fleet.remote, "show", f"{ROLLOUT_BRANCH}:{RECORD_PATH}"))
    assert record["outcome"] == "paused"
    assert "ProgressDeadlineExceeded" in str(record["waves"])


def test_without_a_strategy_or_release_branches_nothing_more_is_pushed(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path)
    fleet.write_source("policy.yaml", policy())
    fleet.write_source("web.yaml", deployment())
    fleet.report(cluster_report("wlc-1"))
    controller = fleet.controller()
    outcome = controller.reconcile_once()
    controller.reconcile_once()
    assert outcome.rollout is not None and outcome.rollout.decision is None
    assert released(fleet) == {}
    assert git(fleet.remote, "branch", "--list", ROLLOUT_BRANCH) == ""


class Told:
    """A plan and rollout observer, as control-plane write-back is: keeps the rollout events told."""

    def __init__(self) -> None:
        self.events: list[RolloutEvent] = []

    def planned(self, plan: Any, reports: Any) -> None:
        pass

    def rolled_out(self, events: Sequence[RolloutEvent]) -> None:
        self.events += events

    def said(self) -> list[tuple[str, str, str]]:
        found = [(event.kind, event.name, event.reason) for event in self.events]
        self.events.clear()
        return found


def test_control_plane_observers_are_told_releases_passed_waves_and_completion(fleet: Fleet) -> None:
    clock, told = WallClock(), Told()
    controller = fleet.controller(wall_clock=clock, observers=[told])
    controller.reconcile_once()
    target = fleet.head()
    assert told.said() == [("Cluster", "wlc-1", "Released")]
    fleet.report(healthy_report("wlc-1", target, labels={"tier": "canary"}), cluster_report("wlc-2"))
    controller.reconcile_once()
    assert told.said() == []  # healthy, baking: nothing to tell
    clock.advance(minutes=6)
    controller.reconcile_once()
    assert told.said() == [("Cluster", "wlc-2", "Released"), ("RolloutStrategy", "fleet", "WavePassed")]
    fleet.report(healthy_report("wlc-1", target, labels={"tier": "canary"}), healthy_report("wlc-2", target))
    controller.reconcile_once()
    clock.advance(minutes=6)
    controller.reconcile_once()
    assert ("RolloutStrategy", "fleet", "RolloutComplete") in told.said()
    controller.reconcile_once()
    assert told.said() == []  # a finished rollout is not told again


def test_a_canary_whose_report_breaks_holds_its_wave_instead_of_leaving_it_empty(fleet: Fleet) -> None:
    """Were the canary left out of the inventory (its report refused), the canary wave would be empty and
    pass at once, so the next change would reach every cluster unverified. It stays in its wave instead.
    (Mass deletion allowed: the render empties the canary's directory, which the publisher otherwise
    refuses on its own.)"""
    clock = WallClock()
    controller = fleet.controller(wall_clock=clock, allow_mass_delete=True)
    controller.reconcile_once()
    first = fleet.head()
    fleet.report(healthy_report("wlc-1", first, labels={"tier": "canary"}), healthy_report("wlc-2", first))
    controller.reconcile_once()
    clock.advance(minutes=6)
    controller.reconcile_once()
    assert released(fleet) == {"wlc-1": first, "wlc-2": first}

    broken = healthy_report("wlc-1", first, labels={"tier": "canary"})
    broken["status"]["capacityResources"] = {"node-1": {"cpu": "lots"}}
    fleet.report(broken, healthy_report("wlc-2", first))
    fleet.write_source("web.yaml", deployment(replicas=4))
    for _ in range(3):
        outcome = controller.reconcile_once()
        clock.advance(minutes=6)
    assert fleet.head() != first and released(fleet) == {"wlc-1": first, "wlc-2": first}
    assert outcome.rollout is not None and outcome.rollout.decision is not None
    reason = outcome.rollout.decision.clusters["wlc-1"]
    assert reason.startswith("no usable report (missing or refused): kept in wave canary")
