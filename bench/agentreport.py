"""Benchmark: what building nova-agent's status report costs a pass, for this code and another revision's.

The report is kept within what the controller reads (``nova_agent.reports.build_status_report``): an
ordinary one is bounded from its JSON and written only to commit; a large one is written and counted when it
changed; one over the bounds is cut. This measures, per cluster size, in a process of each code:

- ``pass_s``: building the report with no previous one (a first pass, or a pass after a change);
- ``commit_s``: building it and writing its bytes (what a pass that commits pays);
- ``quiet_s`` (this code only): a pass where nothing but the times changed since the report read back.

Sizes: 3 nodes and 100 workloads; 200 nodes and 12,000 workloads (3.3 MB, near the 4 MiB cap); 3 nodes and
20,100 workloads (over the 20,000 items a list: cut; the old code wrote a report the controller refused).
Prints a JSON object per code as its last lines.

    python bench/agentreport.py                    # this code
    python bench/agentreport.py --baseline 105b890 # and 105b890's, in a process of its own
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SIZES = (("100 workloads", 3, 100), ("12,000 workloads", 200, 12_000), ("20,100 workloads", 3, 20_100))


def child(code: Path, repeat: int) -> dict[str, Any]:
    sys.path.insert(0, str(code))
    from nova_agent import reportfiles, reports
    from nova_agent.capacity import NodeCapacity
    from nova_agent.health import Health
    from nova_agent.resources import ObjectRef

    def observation(nodes: int, workloads: int) -> Any:
        health = Health(True, "Available", "MinimumReplicasAvailable", "Deployment has minimum availability.")
        found = [
            NodeCapacity(
                f"node-{index:05d}",
                {"cpu": 16000, "memory": 64 * 1024**4, "pods": 110000},
                {"cpu": 8000, "memory": 32 * 1024**4, "pods": 50000},
                {"kubernetes.io/hostname": f"node-{index:05d}", "kubernetes.io/os": "linux"},
                (),
                True,
            )
            for index in range(nodes)
        ]
        entries = [
            reports.WorkloadHealth(
                ObjectRef("apps/v1", "Deployment", f"ns-{i % 50}", f"app-{i:06d}"), health, "c" * 40
            )
            for i in range(workloads)
        ]
        return reports.Observation(
            reports.ClusterIdentity("wlc-1"), found, False, entries, synced_revision="c" * 40
        )

    def timed(action: Any) -> float:
        spent = []
        for _ in range(repeat):
            started = time.perf_counter()
            action()
            spent.append(time.perf_counter() - started)
        return round(statistics.median(spent), 3)

    now = datetime(2026, 1, 1, tzinfo=UTC)
    new = hasattr(reports, "build_status_report")
    figures: dict[str, Any] = {}
    for label, nodes, workloads in SIZES:
        seen = observation(nodes, workloads)
        figure = {"pass_s": timed(lambda seen=seen: reports.build_status_document(seen, now))}
        if new:
            figure["commit_s"] = timed(lambda seen=seen: reports.build_status_report(seen, now).data)
            data = reports.build_status_report(seen, now).data
            previous, later = reportfiles.load_status(data), now + timedelta(minutes=1)
            figure["quiet_s"] = timed(
                lambda seen=seen, previous=previous, data=data, later=later: reports.build_status_report(
                    seen, later, previous, len(data)
                )
            )
        else:
            figure["commit_s"] = timed(
                lambda seen=seen: reportfiles.dump_status(reports.build_status_document(seen, now))
            )
        figures[label] = figure
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline", help="a git revision whose code to measure too")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        print(json.dumps(child(Path(arguments.child), arguments.repeat)))
        return
    with tempfile.TemporaryDirectory(prefix="nova-bench-agentreport-") as scratch:
        codes = {"new": ROOT}
        if arguments.baseline:
            old = Path(scratch) / "old"
            old.mkdir()
            archive = subprocess.run(
                ["git", "archive", arguments.baseline, "nova_gitops", "nova_agent"],
                cwd=ROOT,
                check=True,
                capture_output=True,
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
            codes["old"] = old
        for name, code in codes.items():
            command = [sys.executable, __file__, "--child", str(code), "--repeat", str(arguments.repeat)]
            done = subprocess.run(command, check=True, capture_output=True, text=True, cwd=scratch)
            print(json.dumps({"code": name, **json.loads(done.stdout.splitlines()[-1])}))


if __name__ == "__main__":
    main()
