"""Benchmark: a controller reconcile when nothing changed, on the reference fleet (issue 14: ≤ 50 ms, K=1).

Sets up what a running controller sees: the fleet (``bench/fleet.py``, ``--scale K`` copies) as a source
directory that is a clean git work tree (or, with ``--source git``, a repository the controller fetches), a
bare rendered repository, and a status branch holding one agent report per cluster. Then, in this process:
the first reconcile publishes the whole render (not a figure here: ``bench/publish.py`` measures it), the
second finds it on the branch after a full plan and render (``full_no_change_s``: what every poll cost before
the skip), and ``--reconciles`` more find nothing new (``no_change_ms`` p50 and max; each must be a skip:
``skipped`` counts them). Then an agent's heartbeat commit, and the reconcile after it
(``heartbeat_reconcile_ms``: a new status commit whose reports planning cannot tell apart).

Prints a JSON object as its last line, with the 1-minute load average before and after the timed reconciles
(the machine is shared: compare figures taken at similar load).

    python bench/reconcile.py                  # reference fleet: 100 clusters, 2,000 workloads
    python bench/reconcile.py --scale 5 --source git
    python bench/reconcile.py --clusters 20 --workloads 200   # a quick look
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
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.fleet import generate_fleet
from nova_gitops.controller import looping, ports, settings, sourcereading, statusreading
from nova_gitops.controller.logs import JsonLog

ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_ALLOW_PROTOCOL": "file",
}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def push_reports(work: Path, url: str, clusters: list[dict[str, Any]], heartbeat: str) -> None:
    """One agent report per cluster on ``nova-status`` as agents keep it (a Cluster plus their fields)."""
    status = work / "status"
    status.mkdir(parents=True, exist_ok=True)
    for cluster in clusters:
        report = {**cluster, "status": {**cluster["status"], "heartbeat": heartbeat, "workloads": []}}
        name = cluster["metadata"]["name"]
        (status / f"{name}.yaml").write_text(yaml.dump(report, Dumper=yaml.CSafeDumper, sort_keys=False))
    git(work, "add", "-A")
    git(work, "commit", "--quiet", "--allow-empty", "-m", f"status {heartbeat}")
    git(work, "push", "--quiet", "--force", url, "HEAD:nova-status")


def timed(action: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = action()
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clusters", type=int, default=100)
    parser.add_argument("--workloads", type=int, default=2000)
    parser.add_argument("--scale", type=int, default=1, help="K copies of the fleet")
    parser.add_argument("--source", choices=("directory", "git"), default="directory")
    parser.add_argument("--reconciles", type=int, default=20)
    arguments = parser.parse_args()
    for name in [name for name in os.environ if name.startswith("GIT_")]:
        del os.environ[name]
    os.environ.update(ENV)
    figures: dict[str, Any] = {"scale": arguments.scale, "source": arguments.source}
    with tempfile.TemporaryDirectory(prefix="nova-bench-reconcile-") as scratch:
        work = Path(scratch)
        source = work / "source"
        generate_fleet(source, arguments.clusters, arguments.workloads, scale=arguments.scale)
        git(source, "init", "--quiet", "--initial-branch=main")
        git(source, "add", "-A")
        git(source, "commit", "--quiet", "-m", "fleet")
        remote = work / "rendered.git"
        git(work, "init", "--quiet", "--bare", "--initial-branch=main", str(remote))
        url = f"file://{remote}"
        clusters = list(yaml.load_all((source / "clusters.yaml").read_text(), Loader=yaml.CSafeLoader))
        status_work = work / "status-work"
        git(work, "init", "--quiet", "--initial-branch=nova-status", str(status_work))
        push_reports(status_work, url, clusters, "2026-01-01T00:00:00Z")
        configured = settings.ControllerSettings(
            repo_url=url, cache_dir=work / "cache", max_delete_percent=100
        )
        reader: ports.SourceReader = sourcereading.DirectorySource(source, watch_changes=False)
        if arguments.source == "git":
            reader = sourcereading.GitSource(f"file://{source}", "main", cache_dir=work / "cache")
        controller = looping.Controller(
            configured,
            source=reader,
            status=statusreading.GitStatusReader(
                url, configured.status_branch, cache_dir=configured.cache_dir
            ),
            clock=ports.MonotonicClock(),
            log=JsonLog(io.StringIO()),
        )
        first_s, _ = timed(controller.reconcile_once)
        figures["first_publish_s"] = round(first_s, 2)
        figures["rendered_files"] = sum(
            1 for _ in git(remote, "ls-tree", "-r", "--name-only", "main").splitlines()
        )
        full_s, full = timed(controller.reconcile_once)
        assert full.outcome.value == "unchanged" and not full.skipped, full
        figures["full_no_change_s"] = round(full_s, 2)
        figures["load_before"] = round(os.getloadavg()[0], 2)
        durations = []
        skipped = 0
        for _ in range(arguments.reconciles):
            spent, outcome = timed(controller.reconcile_once)
            durations.append(spent)
            skipped += outcome.skipped
        figures["load_after"] = round(os.getloadavg()[0], 2)
        figures["reconciles"] = arguments.reconciles
        figures["skipped"] = skipped
        figures["no_change_p50_ms"] = round(1000 * statistics.median(durations), 1)
        figures["no_change_max_ms"] = round(1000 * max(durations), 1)
        push_reports(status_work, url, clusters, "2026-01-01T00:05:00Z")
        beat_s, beat = timed(controller.reconcile_once)
        figures["heartbeat_reconcile_ms"] = round(1000 * beat_s, 1)
        figures["heartbeat_skipped"] = beat.skipped
        if isinstance(reader, sourcereading.GitSource):
            reader.close()
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
