"""The waves story (``examples/demo/run.py --waves``, issue 12) end to end, stepped on one simulated clock:
source repo → controller with a RolloutStrategy → rendered repo and release branches → agents that follow
them → simulated clusters.

Behaviours covered:
- a render reaches the canary first: only ``nova/clusters/wlc-1`` moves; wlc-2 keeps running the previous
  image until the canary reports the released commit healthy *for that commit* for the 5 s bake;
- then the ``others`` wave is released within one reconcile and wlc-2 applies it;
- a revision whose pods fit no node stays at the canary: ``ProgressDeadlineExceeded`` on the simulated clock
  pauses the rollout, the record says why and ``nova_rollout_paused`` is 1;
- an abort request (``rollout/requests.yaml`` on ``nova/rollout``) moves wlc-1's branch back and its agent
  re-applies the previous image; wlc-2 never runs the failing revision at any step;
- the demo script prints that story, on the simulated clusters or on two real ones when the environment
  names them (``tests/e2e/conftest.py``), where the bakes and the progress deadline pass on the wall clock;
- an abort holds when a later render changes no cluster's directory (a capacity change re-renders
  ``PLACEMENT.md`` only): that commit goes on with the aborted rollout instead of starting a new one that
  would release the aborted content to the canary again.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e import rollouts
from tests.e2e.democlusters import DemoClusters
from tests.e2e.localloop import LocalLoop
from tests.e2e.test_demo import run_demo

IMAGE = "registry.example/storefront:{}"
SIMULATED_CLOCK = "counts cycles of the simulated clock shared by the agents, the clusters and the controller"


def runs(loop: LocalLoop, name: str) -> str:
    return rollouts.images(loop, name)["web/storefront"]


@pytest.mark.fake_only(SIMULATED_CLOCK)
def test_a_good_image_goes_wave_by_wave_and_a_failing_one_is_paused_and_rolled_back(tmp_path: Path) -> None:
    loop = rollouts.waves_loop(tmp_path)
    try:
        loop.agents()
        assert loop.report("wlc-1")["metadata"]["labels"]["tier"] == "canary"
        loop.source.push(rollouts.SOURCE, "storefront 1.0 with a rollout strategy")
        loop.reconcile()
        first = rollouts.head(loop)
        assert rollouts.released(loop) == {"wlc-1": first}  # even the first render goes canary first
        rollouts.until_complete(loop)
        assert rollouts.released(loop) == {"wlc-1": first, "wlc-2": first}
        assert runs(loop, "wlc-1") == runs(loop, "wlc-2") == IMAGE.format("1.0")

        # A new image: only the canary's branch moves.
        loop.source.push({"apps/storefront.yaml": rollouts.storefront("2.0")}, "storefront 2.0")
        loop.reconcile()
        good = rollouts.head(loop)
        assert rollouts.released(loop) == {"wlc-1": good, "wlc-2": first}
        rollouts.cycle(loop)
        assert runs(loop, "wlc-1") == IMAGE.format("2.0") and runs(loop, "wlc-2") == IMAGE.format("1.0")
        [entry] = [w for w in loop.report("wlc-1")["status"]["workloads"] if w["kind"] == "Deployment"]
        assert entry["healthy"] and entry["revision"] == good
        assert rollouts.record(loop)["waves"][0]["healthySince"]

        # Healthy for less than the bake: the others wave waits; then it is released and applies.
        rollouts.cycle(loop, times=4)
        assert rollouts.released(loop)["wlc-2"] == first
        rollouts.cycle(loop, times=2)
        assert rollouts.released(loop)["wlc-2"] == good
        rollouts.cycle(loop)
        assert runs(loop, "wlc-2") == IMAGE.format("2.0")
        rollouts.until_complete(loop)

        # A failing revision: pods fit no node on the canary; the rollout pauses and says why.
        loop.source.push({"apps/storefront.yaml": rollouts.storefront("3.0", cpu="6")}, "storefront 3.0")
        loop.reconcile()
        bad = rollouts.head(loop)
        assert rollouts.released(loop) == {"wlc-1": bad, "wlc-2": good}
        for _ in range(6):
            rollouts.cycle(loop, seconds=5)
            assert runs(loop, "wlc-2") == IMAGE.format("2.0")
        assert runs(loop, "wlc-1") == IMAGE.format("3.0")
        assert loop.clusters["wlc-1"].pods("Pending")
        record = rollouts.record(loop)
        assert record["outcome"] == "paused"
        assert (
            "Deployment web/storefront Degraded on wlc-1 (ProgressDeadlineExceeded"
            in record["waves"][0]["failure"]
        )
        assert "nova_rollout_paused 1.0" in rollouts.rollout_metrics(loop)
        assert rollouts.released(loop) == {"wlc-1": bad, "wlc-2": good}

        # The abort: wlc-1's branch goes back, its agent re-applies 2.0; wlc-2 never saw 3.0.
        rollouts.request_abort(loop, bad)
        rollouts.cycle(loop)
        assert rollouts.released(loop) == {"wlc-1": good, "wlc-2": good}
        rollouts.cycle(loop, times=2)
        assert rollouts.record(loop)["outcome"] == "aborted"
        assert runs(loop, "wlc-1") == runs(loop, "wlc-2") == IMAGE.format("2.0")
        assert not [p for p in loop.clusters["wlc-1"].pods("Pending") if p["metadata"]["namespace"] == "web"]
        assert rollouts.head(loop) == bad  # main keeps the render; the release branches say what runs
    finally:
        loop.close()


def test_the_demo_tells_the_waves_story(tmp_path: Path, demo_clusters: DemoClusters) -> None:
    output = run_demo(tmp_path, demo_clusters, "--waves")
    for expected in (
        "wlc-1: status/wlc-1.yaml on nova-status: tier=canary",
        "controller: wave others: pending: waits for wave canary",
        "(storefront:1.0)   ← behind main",
        "= released",
        "controller: wave others: releasing: released",
        "0/2 nodes are available: 2 Insufficient cpu.",
        "outcome paused; canary failure:",
        "Deployment web/storefront Degraded on wlc-1 (ProgressDeadlineExceeded",
        "/metrics: nova_rollout_paused 1",
        "aborted by request: rolled back",
        "nova-agent wlc-1 re-applies storefront:2.0",
        "wlc-2 never ran storefront:3.0",
    ):
        assert expected in output, output


@pytest.mark.fake_only(SIMULATED_CLOCK)
def test_an_abort_holds_when_a_later_render_changes_no_cluster_directory(tmp_path: Path) -> None:
    loop = rollouts.waves_loop(tmp_path)
    try:
        loop.agents()
        loop.source.push(rollouts.SOURCE, "storefront 1.0 with a rollout strategy")
        loop.reconcile()
        good = rollouts.head(loop)
        rollouts.until_complete(loop)
        loop.source.push({"apps/storefront.yaml": rollouts.storefront("3.0", cpu="6")}, "storefront 3.0")
        loop.reconcile()
        bad = rollouts.head(loop)
        rollouts.cycle(loop, seconds=5, times=6)
        assert rollouts.record(loop)["outcome"] == "paused"
        rollouts.request_abort(loop, bad)
        rollouts.cycle(loop, times=2)
        assert rollouts.released(loop) == {"wlc-1": good, "wlc-2": good}
        loop.clusters["wlc-2"].sim.occupy("wlc-2-node-1")  # another tenant: only capacity changes
        rollouts.cycle(loop, times=3)
        assert rollouts.head(loop) != bad  # the controller did re-render (PLACEMENT.md)
        assert runs(loop, "wlc-1") == IMAGE.format("1.0")
    finally:
        loop.close()
