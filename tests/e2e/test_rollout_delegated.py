"""A rollout over clusters another tool applies (Flux or Argo CD pointed at ``nova/clusters/<cluster>``),
with ``nova-agent --no-orchestration-enabled --follow-release`` beside it only reporting: the gates work as
for clusters nova-agent applies, because the agent proves from the live objects which released commit each
cluster holds (docs/agent.md, "Delegated mode").

Behaviours covered:
- a new image is released to the canary only; while the orchestrator has not applied it, the canary's
  report keeps ``syncedRevision`` empty and the previous image's Healthy does not pass the gate, however long
  the bake;
- once the orchestrator applies the release, the canary reports the released commit and its workload
  healthy for it, and after the bake the next wave is released and the rollout completes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nova_agent.clocks import FakeClock
from tests.e2e import rollouts
from tests.e2e.localloop import LocalLoop

pytestmark = pytest.mark.fake_only(
    "steps two simulated clusters on the rollout's fake clock (LocalLoop): bakes and health timeouts pass "
    "without waiting"
)
IMAGE = "registry.example/storefront:{}"


def flux_cycle(loop: LocalLoop, seconds: float = 1.0, times: int = 1, apply: bool = True) -> None:
    """As :func:`rollouts.cycle`, with the orchestrator first applying each cluster's release branch."""
    for _ in range(times):
        if apply:
            for name in rollouts.released(loop):
                loop.external_apply(name, ref=f"{rollouts.RELEASE_PREFIX}{name}")
        rollouts.cycle(loop, seconds)


def until_complete(loop: LocalLoop, limit: int = 30) -> None:
    for _ in range(limit):
        flux_cycle(loop)
        if rollouts.record(loop).get("outcome") == "complete":
            return
    raise AssertionError(f"the rollout is not complete after {limit} cycles: {rollouts.record(loop)}")


def test_gates_hold_for_clusters_an_orchestrator_applies(tmp_path: Path) -> None:
    clock = FakeClock()
    loop = LocalLoop(
        tmp_path,
        delegated=True,
        agent_clock=clock,
        wall_clock=clock.now,
        agent_settings={"follow_release": True},
        cluster_settings={"wlc-1": {"cluster_labels": rollouts.CANARY_LABELS}},
    )
    try:
        loop.agents()
        loop.source.push(rollouts.SOURCE, "storefront 1.0 with a rollout strategy")
        loop.reconcile()
        first = rollouts.head(loop)
        until_complete(loop)
        assert rollouts.released(loop) == {"wlc-1": first, "wlc-2": first}
        assert loop.report("wlc-2")["status"]["syncedRevision"] == first

        loop.source.push({"apps/storefront.yaml": rollouts.storefront("2.0")}, "storefront 2.0")
        loop.reconcile()
        good = rollouts.head(loop)
        assert rollouts.released(loop) == {"wlc-1": good, "wlc-2": first}
        flux_cycle(loop, seconds=5, times=4, apply=False)  # the orchestrator is slow: nothing applied
        status = loop.report("wlc-1")["status"]
        assert status["syncedRevision"] == ""
        assert rollouts.released(loop)["wlc-2"] == first  # the old image's Healthy passed no gate

        flux_cycle(loop)
        status = loop.report("wlc-1")["status"]
        assert status["syncedRevision"] == good
        [entry] = [w for w in status["workloads"] if w["kind"] == "Deployment"]
        assert entry["healthy"] and entry["revision"] == good
        until_complete(loop)
        assert rollouts.released(loop) == {"wlc-1": good, "wlc-2": good}
        assert rollouts.images(loop, "wlc-2")["web/storefront"] == IMAGE.format("2.0")
    finally:
        loop.close()
