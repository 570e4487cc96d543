"""Benchmark of the whole loop on loopback: source push → controller (webhook) → rendered repo → agents.

Figures (issue 5): time from ``git push`` of a source change to the agents having applied it, p50 <= 3 s and
p95 <= 6 s over 50 pushes, with the controller and agents polling every 1 s and the webhook announcing each
push; reschedule latency from the first status report that shows Pending pods (with a reschedule request) to
the commit that moves the group, <= one controller interval; controller memory flat (+-10 %) over 1,000
reconciles (RSS after the first and after the last; most of them find nothing new and skip planning, see
``bench/reconcile.py`` for that figure on the reference fleet); and the rollout figures of issue 12
(``bench/rollout.py``: wave N healthy for bakeTime → wave N+1 released within one interval, three waves of
bake 5 s complete within 3 × (bake + 2 intervals)). Prints a table, then one JSON line (last line).

Everything runs in this process on real clocks: the controller loop and its webhook receiver, one nova-agent
``run`` loop per cluster, and two fake API servers in simulated-cluster mode (background threads), as in
``tests/e2e/localloop.py``.

    .venv/bin/python bench/loop.py [--pushes 50] [--reconciles 1000] [--interval 1.0] [--rollout-only]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import rollout
from nova_agent.clocks import SystemClock
from nova_gitops.controller import webhook
from nova_gitops.controller.logs import JsonLog
from nova_gitops.controller.ports import MonotonicClock
from nova_gitops.controller.settings import Address, WebhookSecrets
from tests.e2e import manifests
from tests.e2e.localloop import LocalLoop

SECRET = "bench-webhook-secret"
GIT_ENVIRONMENT = {
    "GIT_AUTHOR_NAME": "Nova Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "Nova Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_ALLOW_PROTOCOL": "file",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
}
CONFIGMAP_KEY = (("", "configmaps"), "platform", "platform-settings")


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered) + 0.5) - 1))]


def platform_with(marker: str) -> str:
    return manifests.PLATFORM.replace(
        "  log-level: info\n", f"  log-level: info\n  bench-push: '{marker}'\n", 1
    )


def notify(port: int) -> None:
    """What the git host does after a push: POST the push event, signed."""
    payload = json.dumps({"ref": "refs/heads/main"}).encode()
    headers = {"X-Hub-Signature-256": "sha256=" + webhook.hmac_sha256(SECRET, payload)}
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/", data=payload, headers=headers, method="POST"
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 202


def applied_everywhere(loop: LocalLoop, marker: str) -> bool:
    for cluster in loop.clusters.values():
        with cluster.server.store.lock:
            live = cluster.server.store.get(*CONFIGMAP_KEY)
        if live is None or (live.get("data") or {}).get("bench-push") != marker:
            return False
    return True


def wait_for(condition: Any, timeout: float, step: float = 0.005) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step)
    return False


def ref(loop: LocalLoop, name: str) -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--verify", "-q", name], cwd=loop.rendered, capture_output=True
    )
    return done.stdout.decode().strip()


def push_latencies(loop: LocalLoop, port: int, pushes: int) -> list[float]:
    latencies = []
    for index in range(pushes):
        marker = f"push-{index}"
        started = time.monotonic()
        loop.source.push({"apps/platform.yaml": platform_with(marker)}, f"bench: {marker}")
        notify(port)
        if not wait_for(lambda marker=marker: applied_everywhere(loop, marker), 60):
            raise SystemExit(f"{marker} was not applied within 60 s")
        latencies.append(time.monotonic() - started)
    return latencies


def reschedule_latency(loop: LocalLoop) -> dict[str, Any]:
    """Fill wlc-2; time from the first report that shows it (Pending pods with a reschedule request, or the
    capacity gone) to the moving commit. Which comes first is a race between the simulated cluster and the
    agent's pass; both are right reasons to move, and ``reschedule_moved_by`` says which one did."""
    placement = loop.placement()
    [group] = [name for name, entry in placement.items() if entry["clusters"] == ["wlc-2"]]
    status_before, main_before = ref(loop, "nova-status"), ref(loop, "main")
    loop.clusters["wlc-2"].sim.fill_nodes()
    reported_at = moved_at = None
    deadline = time.monotonic() + 60
    seen_status = status_before
    while time.monotonic() < deadline and moved_at is None:
        now_status = ref(loop, "nova-status")
        if reported_at is None and now_status != seen_status:
            seen_status = now_status
            status = loop.report("wlc-2")["status"]
            full = all(
                str(node.get("cpu")) in ("0", "0m")
                for node in (status.get("availableResources") or {}).values()
            )
            if status.get("rescheduleRequests") or full:
                reported_at = time.monotonic()
        if ref(loop, "main") != main_before and loop.placement()[group]["clusters"] != ["wlc-2"]:
            moved_at = time.monotonic()
        time.sleep(0.01)
    if moved_at is None:
        raise SystemExit("the group was not moved off wlc-2 within 60 s")
    message = loop.head_message()
    quoted = "rescheduled" in message and "reported" in message
    return {
        "reschedule_report_to_commit_s": round(moved_at - (reported_at or moved_at), 3),
        "reschedule_moved_by": "reschedule request" if quoted else "reported capacity",
        "reschedule_commit_quotes_reason": quoted,
    }


def memory(loop: LocalLoop, reconciles: int) -> dict[str, Any]:
    """RSS after the first and the last of ``reconciles`` reconciles (a source change every 50)."""
    first = last = 0
    durations = []
    skipped = 0
    for index in range(reconciles):
        if index and index % 50 == 0:
            loop.source.push(
                {"apps/platform.yaml": platform_with(f"memory-{index}")}, f"bench: memory {index}"
            )
        started = time.monotonic()
        skipped += loop.controller.reconcile_once().skipped
        durations.append(time.monotonic() - started)
        if index == 0:
            first = rss_kib()
    last = rss_kib()
    return {
        "reconciles": reconciles,
        "controller_rss_first_kib": first,
        "controller_rss_last_kib": last,
        "controller_rss_growth_pct": round(100 * (last - first) / first, 1) if first else None,
        "reconcile_p50_ms": round(1000 * statistics.median(durations), 1),
        "reconciles_skipped": skipped,  # nothing changed: not planned (issue 14; bench/reconcile.py)
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pushes", type=int, default=50)
    parser.add_argument("--reconciles", type=int, default=1000)
    parser.add_argument("--interval", type=float, default=1.0, help="controller and agent poll seconds")
    parser.add_argument("--rollout-only", action="store_true", help="only the rollout figures")
    arguments = parser.parse_args()
    for name in [name for name in os.environ if name.startswith("GIT_")]:
        del os.environ[name]
    os.environ.update(GIT_ENVIRONMENT)
    logging.getLogger("nova_agent").setLevel(
        logging.ERROR
    )  # "no branch 'main' (yet)" before the first render
    results: dict[str, Any] = {"pushes": arguments.pushes, "interval_s": arguments.interval}
    if arguments.rollout_only:
        del results["pushes"]
    else:
        results.update(loop_figures(arguments))
    with tempfile.TemporaryDirectory(prefix="nova-bench-rollout-") as workdir, open(os.devnull, "w") as null:
        results.update(rollout.figures(Path(workdir), arguments.interval, null))
    width = max(len(key) for key in results)
    for key, value in results.items():
        print(f"{key:{width}} {value}")
    print(json.dumps(results, sort_keys=True))
    return 0


def loop_figures(arguments: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="nova-bench-loop-") as workdir, open(os.devnull, "w") as null:
        agent_clock = SystemClock()
        loop = LocalLoop(
            Path(workdir),
            agent_clock=agent_clock,
            controller_clock=MonotonicClock(),
            controller_settings={
                "interval": arguments.interval,
                "webhook_secrets": WebhookSecrets(github=SECRET),
            },
            agent_settings={"pending_timeout": timedelta(0), "interval": arguments.interval},
            controller_log=JsonLog(null),
        )
        stop = threading.Event()
        receiver = webhook.webhook_server(
            Address("127.0.0.1", 0), loop.settings.webhook_secrets, loop.controller.triggers, JsonLog(null)
        ).start()
        threads = [threading.Thread(target=loop.controller.run, args=(stop,), daemon=True)]
        threads += [threading.Thread(target=c.agent.run, daemon=True) for c in loop.clusters.values()]
        try:
            for cluster in loop.clusters.values():
                cluster.sim.start()
            loop.source.push({**manifests.APPS, **manifests.POLICIES}, "bench: the shop")
            for thread in threads:
                thread.start()
            if not wait_for(lambda: all(c.workloads() for c in loop.clusters.values()), 60, 0.05):
                raise SystemExit("the first render did not reach the clusters within 60 s")
            latencies = push_latencies(loop, receiver.port, arguments.pushes)
            results.update(
                push_to_applied_p50_s=round(statistics.median(latencies), 3),
                push_to_applied_p95_s=round(percentile(latencies, 0.95), 3),
                push_to_applied_max_s=round(max(latencies), 3),
            )
            results.update(reschedule_latency(loop))
        finally:
            rollout.stop_loop(loop, stop, agent_clock, threads)
            receiver.close()
        for cluster in loop.clusters.values():
            cluster.sim.stop()
        results.update(memory(loop, arguments.reconciles))
        loop.close()
    return results


if __name__ == "__main__":
    sys.exit(main())
