"""A cluster the change did not touch is not judged by its rollout, across a controller restart too (review
of issue 21), with real git and real controllers.

The canary wave holds ``wlc-1``, which runs ``base`` and ``web``, and ``wlc-3``, which runs only ``base``;
``wlc-2`` is in the last wave. A change to ``web`` touches ``wlc-1`` and ``wlc-2`` only: ``wlc-3`` is
advanced to it at once (its directory is byte-for-byte the same). ``wlc-3``'s ``base`` is Degraded for a
reason of its own. The strategy rolls back on failure.

Behaviours covered:
- the running controller bakes the canary on ``wlc-1`` alone;
- a controller started in the middle of the bake (an upgrade, an eviction, a lease moved) does too: it does
  not judge ``wlc-3`` (before: ``wlc-3`` was put in ``verify``, its Degraded ``base`` failed the canary wave,
  and the healthy ``wlc-1`` was rolled back while ``rollout status`` said "baking"); ``wlc-2`` gets the
  change after the bake;
- the same restart with a record that does not read judges ``wlc-1`` again (it runs the change: the lost
  record cannot say it passed) but still not ``wlc-3``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from nova_gitops.controller import rolloutcommands
from nova_gitops.controller.rolloutstep import RECORD_PATH, ROLLOUT_BRANCH
from tests.controller.helpers import Fleet, cluster_report, deployment, git, policy
from tests.controller.test_rollout_record_forgery import push_record
from tests.controller.test_rollouts import SPREAD, WallClock, released

STRATEGY = {
    "apiVersion": "gitops.nova.elotl.co/v1alpha1",
    "kind": "RolloutStrategy",
    "metadata": {"name": "fleet"},
    "spec": {
        "waves": [{"name": "canary", "clusterSelector": {"matchLabels": {"tier": "canary"}}}],
        "bakeTime": "5m",
        "healthTimeout": "15m",
        "onFailure": "rollback",
    },
}
LABELS = {"wlc-1": {"tier": "canary"}, "wlc-2": {}, "wlc-3": {"tier": "canary"}}
RUNS = {"wlc-1": ("base", "web"), "wlc-2": ("base", "web"), "wlc-3": ("base",)}
WEB_CLUSTERS = {
    "matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["wlc-1", "wlc-2"]}
    ]
}


def selecting(app: str) -> dict[str, Any]:
    return {"labelSelectors": [{"matchLabels": {"app": app}}]}


@pytest.fixture
def fleet(tmp_path: Path) -> Fleet:
    fleet = Fleet(tmp_path)
    fleet.write_source(
        "base-policy.yaml", policy("base", spreadConstraints=SPREAD, resourceSelectors=selecting("base"))
    )
    fleet.write_source(
        "web-policy.yaml",
        policy(
            "web", spreadConstraints=SPREAD, resourceSelectors=selecting("web"), clusterSelector=WEB_CLUSTERS
        ),
    )
    fleet.write_source("base.yaml", deployment("base", cpu="100m"))
    fleet.write_source("web.yaml", deployment("web"))
    fleet.write_source("rollout.yaml", STRATEGY)
    report(fleet, {})
    return fleet


def report(fleet: Fleet, running: dict[str, str], degraded: str = "") -> None:
    """Each cluster's report: every app it runs healthy for the commit given (none given: an empty report);
    the ``degraded`` cluster's ``base`` Degraded (ProgressDeadlineExceeded)."""
    reports = []
    for name, labels in LABELS.items():
        found = cluster_report(name, labels=labels)
        if name in running:
            revision = running[name]
            found["status"]["syncedRevision"] = revision
            found["status"]["workloads"] = [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "namespace": "demo",
                    "name": app,
                    "healthy": not (name == degraded and app == "base"),
                    "condition": "Progressing" if name == degraded and app == "base" else "Available",
                    "reason": "ProgressDeadlineExceeded"
                    if name == degraded and app == "base"
                    else "MinimumReplicasAvailable",
                    "message": "",
                    "revision": revision,
                }
                for app in RUNS[name]
            ]
        reports.append(found)
    fleet.report(*reports)


def record(fleet: Fleet) -> dict[str, Any]:
    found: dict[str, Any] = yaml.safe_load(git(fleet.remote, "show", f"{ROLLOUT_BRANCH}:{RECORD_PATH}"))
    return found


def baking_change(fleet: Fleet, clock: WallClock) -> tuple[str, str]:
    """The first render rolled out to every cluster; then the change to ``web``, its canary baking."""
    controller = fleet.controller(wall_clock=clock)
    controller.reconcile_once()
    first = fleet.head()
    report(fleet, {"wlc-1": first, "wlc-3": first})
    controller.reconcile_once()
    clock.advance(minutes=6)
    controller.reconcile_once()
    report(fleet, {"wlc-1": first, "wlc-2": first, "wlc-3": first})
    controller.reconcile_once()
    clock.advance(minutes=6)
    controller.reconcile_once()
    assert record(fleet)["outcome"] == "complete"
    fleet.write_source("web.yaml", deployment("web", replicas=3))
    controller.reconcile_once()
    change = fleet.head()
    assert released(fleet) == {"wlc-1": change, "wlc-2": first, "wlc-3": change}  # wlc-3 at once
    report(fleet, {"wlc-1": change, "wlc-2": first, "wlc-3": change}, degraded="wlc-3")
    controller.reconcile_once()  # the bake starts; wlc-3's Degraded base is not the change's
    clock.advance(minutes=2)
    controller.reconcile_once()
    assert record(fleet)["outcome"] == "progressing" and "verify" not in record(fleet)
    return first, change


def status_of(fleet: Fleet, clock: WallClock) -> dict[str, Any]:
    where = rolloutcommands.Where(
        repo_url=fleet.url, source=str(fleet.source), cache_dir=fleet.root / "engineer"
    )
    shown = rolloutcommands.status(where, clock())
    assert shown is not None
    return shown


def test_a_restart_mid_bake_does_not_judge_a_cluster_the_change_left_untouched(fleet: Fleet) -> None:
    clock = WallClock()
    first, change = baking_change(fleet, clock)
    restarted = fleet.controller(wall_clock=clock)  # a new process: it has observed nothing
    restarted.reconcile_once()
    assert released(fleet) == {"wlc-1": change, "wlc-2": first, "wlc-3": change}  # nothing rolled back
    assert record(fleet)["outcome"] == "progressing" and "verify" not in record(fleet)
    canary = next(wave for wave in status_of(fleet, clock)["waves"] if wave["name"] == "canary")
    assert canary["state"] == "baking"
    clock.advance(minutes=3)
    restarted.reconcile_once()
    assert released(fleet) == {"wlc-1": change, "wlc-2": change, "wlc-3": change}


def test_a_restart_with_a_record_that_does_not_read_judges_the_canary_but_not_the_untouched(
    fleet: Fleet,
) -> None:
    clock = WallClock()
    _, change = baking_change(fleet, clock)
    push_record(fleet, {"not": "a record"})
    restarted = fleet.controller(wall_clock=clock)
    restarted.reconcile_once()
    assert record(fleet)["verify"] == ["wlc-1"]  # runs the change; the record that said it passed is lost
    canary = next(wave for wave in status_of(fleet, clock)["waves"] if wave["name"] == "canary")
    assert canary["state"] == "baking", canary  # wlc-1 is healthy: a new bake, wlc-3 not judged
    assert released(fleet)["wlc-1"] == change
