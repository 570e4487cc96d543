"""Benchmark: reading agents' status reports, hostile and ordinary (issue 21 item 9).

A report of 3.9 MB (under the 4 MiB cap) holding 1.3 million empty ``workloads`` entries made each
controller reconcile take 25-27 s and each ``rollout status`` 29 s: the whole text was composed and
constructed before the 20,000-entry cap cut the list. This measures, in processes of their own:

- ``parse_ms``: ``statusreading.parse_report`` (median of ``--repeat``) on
  ``normal`` — an agent's report of 3 nodes and 20 workloads;
  ``large`` — the agent's own report of 200 nodes and 12,000 workloads (3.4 MB, the largest a real cluster
  sends under the byte cap);
  ``hostile_items`` — the issue's report: 1.3 million ``{}`` in ``status.workloads``, 3.9 MB;
  ``hostile_values`` — 20,000 entries of 20 keys each (820,000 values in 2.0 MB);
  ``dense_accepted`` — 9,400 such entries (385,000 values in 0.96 MB): within every bound, about the
  costliest report that is still read, so what any agent can make one parse cost;
- ``controller``: a small fleet (``--clusters``, ``--workloads``; ``bench/fleet.py``) whose first cluster's
  report is ``hostile_items`` (or ``--controller-report dense_accepted``): ``once_s`` (the first
  reconcile, a publish: what ``controller --once`` pays),
  ``other_report_ms`` (the reconcile after another agent's new report: the hostile blob is unchanged),
  ``hostile_changed_s`` (the reconcile after the hostile report changed: a new blob), ``rollout_status_s``
  (what each ``rollout status`` run pays for the reports: a fresh status cache read, then the source set
  with the reports' Clusters).

With ``--baseline REV`` the same runs are made with the code of REV (``git archive``, alternating REV and
the working tree ``--rounds`` times) so old and new are compared in one sitting (``ratio``: new / old, per
figure). Prints a JSON object as its last line, with the 1-minute load average before and after (the
machine is shared: compare figures taken at similar load).

    python bench/reports.py                         # this code
    python bench/reports.py --baseline main~3      # and main~3's, alternately
    python bench/reports.py --repeat 1 --skip-controller
    python bench/reports.py --controller-report dense_accepted
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, os.environ.get("NOVA_BENCH_CODE") or sys.path[0])  # a baseline's code, in a child run

import nova_gitops
from bench.reconcile import ENV, fleet_repos, git, push_reports
from nova_agent import reportfiles
from nova_agent import reports as agent_reports
from nova_agent.capacity import NodeCapacity
from nova_agent.health import Health
from nova_agent.resources import ObjectRef
from nova_gitops.controller import loading, looping, ports, settings, sourcereading, statusreading
from nova_gitops.controller.logs import JsonLog

ROOT = Path(__file__).resolve().parent.parent
CODE = "NOVA_BENCH_CODE"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
DENSE_ENTRY = "{" + ", ".join(f"{chr(97 + key)}: 1" for key in range(20)) + "}"
CONTROLLER_ITEMS = {"hostile_items": ["{}"] * 1_300_000, "dense_accepted": [DENSE_ENTRY] * 9_400}


def agent_report(name: str, nodes: int, workloads: int) -> str:
    """The agent's own report (``nova_agent.reports``) of a cluster of ``nodes`` nodes, labelled as EKS
    labels them, running ``workloads`` healthy Deployments."""
    found = [
        NodeCapacity(
            name=f"node-{index:05d}",
            allocatable={"cpu": 16000, "memory": 64 * 1024**4, "pods": 110000},
            available={"cpu": 8000, "memory": 32 * 1024**4, "pods": 50000},
            labels={
                "kubernetes.io/hostname": f"node-{index:05d}",
                "topology.kubernetes.io/zone": "us-east-1a",
                "topology.kubernetes.io/region": "us-east-1",
                "node.kubernetes.io/instance-type": "m5.4xlarge",
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
            },
            taints=(),
            ready=True,
        )
        for index in range(nodes)
    ]
    health = Health(True, "Available", "MinimumReplicasAvailable", "Deployment has minimum availability.")
    observation = agent_reports.Observation(
        agent_reports.ClusterIdentity(name),
        found,
        autoscaled=False,
        workloads=[
            agent_reports.WorkloadHealth(
                ObjectRef("apps/v1", "Deployment", f"ns-{index % 50}", f"app-{index:06d}"), health, COMMIT
            )
            for index in range(workloads)
        ],
        synced_revision=COMMIT,
    )
    document = agent_reports.build_status_document(observation, datetime(2026, 1, 1, tzinfo=UTC))
    return reportfiles.dump_status(document).decode()


def with_workloads(report: str, items: list[str]) -> str:
    """``report`` (written with ``workloads: []``) with ``status.workloads`` a flow list of ``items``."""
    assert "  workloads: []\n" in report
    return report.replace("  workloads: []\n", "  workloads: [" + ",".join(items) + "]\n", 1)


def reports() -> dict[str, str]:
    small = agent_report("wlc-1", 3, 0)
    return {
        "normal": agent_report("wlc-1", 3, 20),
        "large": agent_report("wlc-1", 200, 12_000),
        "hostile_items": with_workloads(small, ["{}"] * 1_300_000),
        "hostile_values": with_workloads(small, [DENSE_ENTRY] * 20_000),
        "dense_accepted": with_workloads(small, [DENSE_ENTRY] * 9_400),
    }


def timed(action: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = action()
    return time.perf_counter() - started, result


def parse_figures(repeat: int) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    for name, text in reports().items():
        data = text.encode()
        spent = []
        for _ in range(repeat):
            seconds, (report, problems) = timed(
                lambda data=data: statusreading.parse_report("status/wlc-1.yaml", data)
            )
            spent.append(seconds)
        figures[name] = {
            "bytes": len(data),
            "ms": round(1000 * statistics.median(spent), 1),
            "used": report is not None,
            "problem": str(problems[0])[:160] if problems else None,
        }
    return figures


def controller_figures(arguments: argparse.Namespace) -> dict[str, Any]:
    """A fleet whose first cluster sends a bad report; the reconciles and reads that pay for it."""
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="nova-bench-reports-") as scratch:
        work = Path(scratch)
        made = fleet_repos(work, arguments.clusters, arguments.workloads)
        source, url, status_work, clusters = made.source, made.url, made.status_work, made.clusters
        hostile_name = clusters[0]["metadata"]["name"]

        def push(heartbeat: str, hostile_beat: str) -> None:
            push_reports(status_work, url, clusters[1:], heartbeat)  # writes every other report, commits
            hostile = {**clusters[0], "status": {**clusters[0]["status"], "heartbeat": hostile_beat}}
            text = with_workloads(
                yaml.dump({**hostile, "status": {**hostile["status"], "workloads": []}}, sort_keys=False),
                CONTROLLER_ITEMS[arguments.controller_report],
            )
            (status_work / "status" / f"{hostile_name}.yaml").write_text(text)
            git(status_work, "add", "-A")
            git(status_work, "commit", "--quiet", "--allow-empty", "-m", "hostile")
            git(status_work, "push", "--quiet", "--force", url, "HEAD:nova-status")

        push("2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z")
        configured = settings.ControllerSettings(
            repo_url=url, cache_dir=work / "cache", max_delete_percent=100
        )
        reader = sourcereading.DirectorySource(source, watch_changes=False)
        controller = looping.Controller(
            configured,
            source=reader,
            status=statusreading.GitStatusReader(
                url, configured.status_branch, cache_dir=configured.cache_dir
            ),
            clock=ports.MonotonicClock(),
            log=JsonLog(io.StringIO()),
        )
        figures["load_before"] = round(os.getloadavg()[0], 2)
        seconds, first = timed(controller.reconcile_once)
        figures["once_s"] = round(seconds, 2)
        figures["once_outcome"] = first.outcome.value
        push(
            "2026-01-01T00:05:00Z", "2026-01-01T00:00:00Z"
        )  # another agent's beat: the hostile blob is as it was
        seconds, _ = timed(controller.reconcile_once)
        figures["other_report_ms"] = round(1000 * seconds, 1)
        push("2026-01-01T00:05:00Z", "2026-01-01T00:05:00Z")  # the hostile report changes: a new blob
        seconds, _ = timed(controller.reconcile_once)
        figures["hostile_changed_s"] = round(seconds, 2)

        def rollout_status_reads() -> None:
            fresh = statusreading.GitStatusReader(
                url, configured.status_branch, cache_dir=work / "fresh-cache"
            )
            read = fresh.read()
            with sourcereading.DirectorySource(source, watch_changes=False).read() as snapshot:
                loading.source_set(snapshot, read.reports)

        seconds, _ = timed(rollout_status_reads)
        figures["rollout_status_s"] = round(seconds, 2)
        figures["load_after"] = round(os.getloadavg()[0], 2)
    return figures


def child(arguments: argparse.Namespace) -> dict[str, Any]:
    figures: dict[str, Any] = {"code": str(Path(nova_gitops.__file__).parent)}
    figures["parse_ms"] = parse_figures(arguments.repeat)
    if not arguments.skip_controller:
        figures["controller"] = controller_figures(arguments)
    return figures


def compare(arguments: argparse.Namespace) -> dict[str, Any]:
    passed = [
        f"--clusters={arguments.clusters}",
        f"--workloads={arguments.workloads}",
        f"--repeat={arguments.repeat}",
        f"--controller-report={arguments.controller_report}",
        *(["--skip-controller"] if arguments.skip_controller else []),
    ]
    figures: dict[str, Any] = {"baseline": arguments.baseline, "load_before": round(os.getloadavg()[0], 2)}
    runs: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
    with tempfile.TemporaryDirectory(prefix="nova-bench-baseline-") as exported:
        if arguments.baseline:
            archive = subprocess.run(
                ["git", "archive", "--format=tar", arguments.baseline, "nova_gitops"],
                cwd=ROOT,
                check=True,
                capture_output=True,
            ).stdout
            subprocess.run(["tar", "-x", "-C", exported], input=archive, check=True)
        for _ in range(arguments.rounds):
            for label in ("old", "new") if arguments.baseline else ("new",):
                environ = {key: value for key, value in os.environ.items() if key != CODE}
                if label == "old":
                    environ[CODE] = exported
                done = subprocess.run(
                    [sys.executable, str(Path(__file__).resolve()), "--child", *passed],
                    env=environ,
                    check=True,
                    capture_output=True,
                    text=True,
                )
                runs[label].append(json.loads(done.stdout.strip().splitlines()[-1]))
    figures["load_after"] = round(os.getloadavg()[0], 2)
    figures["runs"] = runs
    if runs["old"] and runs["new"]:
        figures["ratio"] = ratios(runs["old"], runs["new"])
    return figures


def ratios(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> dict[str, float]:
    """new / old of each figure's median over the rounds."""

    def median(runs: list[dict[str, Any]], pick: Any) -> float:
        return float(statistics.median(pick(run) for run in runs))

    found: dict[str, float] = {}
    for name in old[0]["parse_ms"]:
        before = median(old, lambda run, name=name: run["parse_ms"][name]["ms"])
        after = median(new, lambda run, name=name: run["parse_ms"][name]["ms"])
        found[f"parse_{name}"] = round(after / before, 3) if before else 0.0
    if "controller" in old[0]:
        for name in ("once_s", "other_report_ms", "hostile_changed_s", "rollout_status_s"):
            before = median(old, lambda run, name=name: run["controller"][name])
            after = median(new, lambda run, name=name: run["controller"][name])
            found[name] = round(after / before, 3) if before else 0.0
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clusters", type=int, default=5)
    parser.add_argument("--workloads", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3, help="parses of each report, per run (the median)")
    parser.add_argument("--skip-controller", action="store_true", help="only the parse figures")
    parser.add_argument(
        "--controller-report",
        choices=sorted(CONTROLLER_ITEMS),
        default="hostile_items",
        help="the bad report",
    )
    parser.add_argument("--baseline", help="also run the code of this git revision")
    parser.add_argument("--rounds", type=int, default=1, help="with --baseline: old and new runs each")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    for name in [name for name in os.environ if name.startswith("GIT_")]:
        del os.environ[name]
    os.environ.update(ENV)
    print(json.dumps(child(arguments) if arguments.child else compare(arguments)))


if __name__ == "__main__":
    main()
