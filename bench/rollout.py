"""The rollout figures of ``bench/loop.py`` (issue 12): wave N healthy for bakeTime → wave N+1 released within
one controller interval, and a rollout over three waves (bake 5 s) complete within 3 × (bake + 2 intervals).

A loop of its own, on real clocks like the rest of the bench: three simulated clusters (one per wave:
``canary`` selects ``tier=canary``, ``second`` selects ``tier=second``, the implicit ``others`` takes wlc-3),
agents with ``--follow-release`` (their settle interval in the ratio of the defaults, 5 s to 30 s) and the
controller polling every ``interval`` in threads, the controller's
rollout clock the system's. A watcher polls the rendered repository every 10 ms for the release branches, the
agents' reports and the record, and times:

- ``healthy`` — the first report in which every cluster of a wave has synced the released commit and reports
  every workload healthy *for that commit* (what the gate waits for);
- ``released`` — the release branch of the next wave's cluster pointing at the commit;
- ``complete`` — the record saying ``complete``.

The gap ``released(N+1) - healthy(N) - bake`` is what the controller adds: it sees a report at its next poll
(the bake starts there) and releases at the first poll after the bake ends, so up to about two intervals;
the figure says how much of one it takes.
"""

from __future__ import annotations

import itertools
import subprocess
import threading
import time
from collections.abc import Iterable
from datetime import timedelta
from pathlib import Path
from typing import Any

from nova_agent.clocks import SystemClock
from nova_gitops.controller.logs import JsonLog
from nova_gitops.controller.ports import MonotonicClock
from nova_gitops.controller.rolloutstep import ROLLOUT_BRANCH
from tests.e2e import rollouts
from tests.e2e.localloop import LocalLoop

BAKE_S = 5.0  # rollouts.strategy()'s bakeTime
SETTLE_RATIO = 5.0 / 30.0  # the agent's defaults: --settle-interval 5s beside --interval 30s
WAVES = (("canary", "wlc-1"), ("second", "wlc-2"), ("others", "wlc-3"))
LABELS = {"wlc-1": {"tier": "canary"}, "wlc-2": {"tier": "second"}}


def healthy_for(loop: LocalLoop, name: str, target: str) -> bool:
    try:
        status = loop.report(name).get("status") or {}
    except subprocess.CalledProcessError:  # no report from this cluster yet
        return False
    workloads = status.get("workloads") or []
    return (
        status.get("syncedRevision") == target
        and bool(workloads)
        and all(entry.get("healthy") is True and entry.get("revision") == target for entry in workloads)
    )


def watch(loop: LocalLoop, target: str, started: float, timeout: float) -> dict[str, float]:
    """Seconds after ``started`` at which each wave was released, reported healthy, seen healthy by the
    controller (its bake started in the record), and the rollout was complete (keys ``released:<wave>``,
    ``healthy:<wave>``, ``baking:<wave>``, ``complete``). A later render that goes on with the same rollout
    (the controller re-renders PLACEMENT.md when reported capacity changes) counts as ``target``."""
    seen: dict[str, float] = {}
    last_status = last_record = ""
    targets = {target}  # and the renders after it that go on with its rollout (a capacity-only re-render)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and "complete" not in seen:
        now = time.monotonic() - started
        targets |= _descendants(loop, target)
        released = rollouts.released(loop)
        for wave, cluster in WAVES:
            if released.get(cluster) in targets:
                seen.setdefault(f"released:{wave}", now)
        status = _ref(loop, "nova-status")
        if status != last_status:
            last_status = status
            for wave, cluster in WAVES:
                if f"healthy:{wave}" not in seen and any(healthy_for(loop, cluster, t) for t in targets):
                    seen[f"healthy:{wave}"] = now
        record = _ref(loop, ROLLOUT_BRANCH)
        if record and record != last_record:
            last_record = record
            document = rollouts.record(loop)
            if document.get("target") in targets:
                for wave in document.get("waves") or []:
                    if wave.get("healthySince"):
                        seen.setdefault(f"baking:{wave['name']}", now)
                if document.get("outcome") == "complete":
                    seen["complete"] = now
        time.sleep(0.01)
    if "complete" not in seen:
        raise SystemExit(f"the rollout of {target[:12]} was not complete within {timeout:.0f} s: {seen}")
    return seen


def figures(root: Path, interval: float, log: Any) -> dict[str, Any]:
    """Roll the demo's storefront 1.0 out (and wait for it), then time the rollout of 2.0 over three waves."""
    agent_clock = SystemClock()
    loop = LocalLoop(
        root,
        clusters=[cluster for _, cluster in WAVES],
        agent_clock=agent_clock,
        controller_clock=MonotonicClock(),
        controller_settings={"interval": interval},
        agent_settings={
            "follow_release": True,
            "interval": interval,
            "settle_interval": interval * SETTLE_RATIO,
            "pending_timeout": timedelta(0),
        },
        cluster_settings={name: {"cluster_labels": labels} for name, labels in LABELS.items()},
        controller_log=JsonLog(log),
    )
    stop = threading.Event()
    threads = [threading.Thread(target=loop.controller.run, args=(stop,), daemon=True)]
    threads += [threading.Thread(target=c.agent.run, daemon=True) for c in loop.clusters.values()]
    strategy = rollouts.strategy([(wave, LABELS[cluster]) for wave, cluster in WAVES[:2]])
    budget = 3 * (BAKE_S + 2 * interval)
    try:
        for cluster in loop.clusters.values():
            cluster.sim.start()
        loop.source.push({**rollouts.SOURCE, "rollout/strategy.yaml": strategy}, "bench: storefront 1.0")
        for thread in threads:
            thread.start()
        first = _wait_for_render(loop, "", 60)
        watch(loop, first, time.monotonic(), 120)
        started = time.monotonic()
        loop.source.push({"apps/storefront.yaml": rollouts.storefront("2.0")}, "bench: storefront 2.0")
        target = _wait_for_render(loop, first, 60, holding="storefront:2.0")
        seen = watch(loop, target, started, 120)
    finally:
        stop_loop(loop, stop, agent_clock, threads)
        loop.close()
    pairs = list(itertools.pairwise(wave for wave, _ in WAVES))
    return {
        "rollout_waves": len(WAVES),
        "rollout_bake_s": BAKE_S,
        "rollout_released_to_healthy_report_s": _rounded(
            seen[f"healthy:{wave}"] - seen[f"released:{wave}"] for wave, _ in WAVES
        ),
        "rollout_healthy_report_to_bake_start_s": _rounded(
            seen[f"baking:{wave}"] - seen[f"healthy:{wave}"] for wave, _ in WAVES
        ),
        "rollout_bake_end_to_next_wave_s": _rounded(
            seen[f"released:{later}"] - seen[f"baking:{wave}"] - BAKE_S for wave, later in pairs
        ),
        "rollout_push_to_complete_s": round(seen["complete"], 3),
        "rollout_complete_budget_s": budget,
    }


def stop_loop(
    loop: LocalLoop, stop: threading.Event, agent_clock: SystemClock, threads: Iterable[threading.Thread]
) -> None:
    """Stop the controller loop and the agents' loops the benchmarks run in threads, and wait for them."""
    stop.set()
    loop.controller.triggers.put("stop")
    agent_clock.stop()
    for thread in threads:
        thread.join(timeout=30)


def _rounded(values: Iterable[float]) -> list[float]:
    return [round(value, 3) for value in values]


def _wait_for_render(loop: LocalLoop, previous: str, timeout: float, holding: str = "") -> str:
    """The first head of ``main`` after ``previous`` whose cluster directories hold ``holding`` (any new
    head when empty): the render of the push, not a capacity-only re-render that came first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        head = _ref(loop, "main")
        if head and head != previous and (not holding or _holds(loop, head, holding)):
            return head
        time.sleep(0.01)
    raise SystemExit(f"no new render within {timeout:.0f} s")


def _holds(loop: LocalLoop, commit: str, text: str) -> bool:
    found = subprocess.run(
        ["git", "grep", "-q", "-F", text, commit, "--", "clusters/"], cwd=loop.rendered, capture_output=True
    )
    return found.returncode == 0


def _descendants(loop: LocalLoop, commit: str) -> set[str]:
    """Every commit of ``main`` after ``commit``: the renders that may go on with its rollout (a watcher
    polling ``main`` can miss a head that lasted less than its poll)."""
    done = subprocess.run(
        ["git", "rev-list", "--ancestry-path", f"{commit}..main"], cwd=loop.rendered, capture_output=True
    )
    return set(done.stdout.decode().split())


def _ref(loop: LocalLoop, name: str) -> str:
    """The commit of a branch of the rendered repository; empty while it does not exist."""
    done = subprocess.run(
        ["git", "rev-parse", "--verify", "-q", name], cwd=loop.rendered, capture_output=True
    )
    return done.stdout.decode().strip()
