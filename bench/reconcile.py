"""Benchmark: a controller reconcile when nothing changed, on the reference fleet (issue 14: ≤ 50 ms, K=1).

Sets up what a running controller sees: the fleet (``bench/fleet.py``, ``--scale K`` copies) as a source
directory that is a clean git work tree (or, with ``--source git``, a repository the controller fetches), a
bare rendered repository, and a status branch holding one agent report per cluster. Then, in this process:
the first reconcile publishes the whole render (not a figure here: ``bench/publish.py`` measures it), the
second finds it on the branch after a full plan and render (``full_no_change_s``: what every poll cost before
the skip), and ``--reconciles`` more find nothing new (``no_change_ms`` p50 and max; each must be a skip:
``skipped`` counts them). Then an agent's heartbeat commit, and the reconcile after it
(``heartbeat_reconcile_ms``: a new status commit whose reports planning cannot tell apart).

``--one-change`` measures instead the reconcile after one workload changed (its replicas, committed to the
source), ``--changes`` times in a row after the first publish (``one_change_s``: the median; issue 14: what
an incremental ``publish`` costs). Each run is a process of its own; with ``--baseline REV``, the same runs
are made with the code of REV too (``git archive``, alternating REV and the working tree, ``--rounds``
times), so old and new are compared in one sitting (``ratio``: new / old).

Prints a JSON object as its last line, with the 1-minute load average before and after the timed reconciles
(the machine is shared: compare figures taken at similar load).

    python bench/reconcile.py                  # reference fleet: 100 clusters, 2,000 workloads
    python bench/reconcile.py --scale 5 --source git
    python bench/reconcile.py --clusters 20 --workloads 200   # a quick look
    python bench/reconcile.py --one-change --baseline main~3 --scale 5
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, os.environ.get("NOVA_BENCH_CODE") or sys.path[0])  # a baseline's code, in a child run

import nova_gitops
from bench.fleet import change_one_workload, forget_outer_repository, generate_fleet
from nova_gitops.controller import looping, ports, settings, sourcereading, statusreading
from nova_gitops.controller.logs import JsonLog

ROOT = Path(__file__).resolve().parent.parent
CODE = "NOVA_BENCH_CODE"  # a directory holding another nova_gitops (the baseline's), for a child run

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


@dataclass(frozen=True)
class FleetRepos:
    source: Path  # the fleet, committed
    remote: Path  # the bare rendered repository
    url: str
    status_work: Path  # the clone that pushes the agents' reports to its status branch
    clusters: list[dict[str, Any]]


def fleet_repos(work: Path, clusters: int, workloads: int, scale: int = 1) -> FleetRepos:
    """The fleet committed in ``work/source``, a bare rendered repository, and a clone to push the agents'
    reports from (no report pushed yet)."""
    source = work / "source"
    generate_fleet(source, clusters, workloads, scale=scale)
    git(source, "init", "--quiet", "--initial-branch=main")
    git(source, "add", "-A")
    git(source, "commit", "--quiet", "-m", "fleet")
    remote = work / "rendered.git"
    git(work, "init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    url = f"file://{remote}"
    documents = list(yaml.load_all((source / "clusters.yaml").read_text(), Loader=yaml.CSafeLoader))
    status_work = work / "status-work"
    git(work, "init", "--quiet", "--initial-branch=nova-status", str(status_work))
    return FleetRepos(source, remote, url, status_work, documents)


def fleet_with_reports(work: Path, arguments: argparse.Namespace) -> FleetRepos:
    """``fleet_repos`` of ``--clusters``, ``--workloads`` and ``--scale``, with one report per cluster on the
    rendered repository's status branch."""
    made = fleet_repos(work, arguments.clusters, arguments.workloads, arguments.scale)
    push_reports(made.status_work, made.url, made.clusters, "2026-01-01T00:00:00Z")
    return made


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
    parser.add_argument("--one-change", action="store_true", help="time the reconcile after a change")
    parser.add_argument("--changes", type=int, default=3, help="one-workload changes in a row, per run")
    parser.add_argument("--baseline", help="with --one-change: also run the code of this git revision")
    parser.add_argument("--rounds", type=int, default=1, help="with --baseline: old and new runs each")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    for name in [name for name in os.environ if name.startswith("GIT_")]:
        del os.environ[name]
    os.environ.update(ENV)
    if arguments.one_change and not arguments.child:
        print(json.dumps(compare(arguments)))
        return
    with tempfile.TemporaryDirectory(prefix="nova-bench-reconcile-") as scratch:
        work = Path(scratch)
        running = start(work, arguments)
        figures = one_change(running, arguments) if arguments.child else no_change(running, arguments)
        if isinstance(running.reader, sourcereading.GitSource):
            running.reader.close()
    print(json.dumps(figures))


class Running:
    """A controller over the fleet, a source it reads, and the rendered repository it publishes to."""

    def __init__(
        self,
        controller: looping.Controller,
        reader: ports.SourceReader,
        source: Path,
        remote: Path,
        status_work: Path,
        clusters: list[dict[str, Any]],
        url: str,
    ) -> None:
        self.controller = controller
        self.reader = reader
        self.source = source
        self.remote = remote
        self.status_work = status_work
        self.clusters = clusters
        self.url = url


def start(work: Path, arguments: argparse.Namespace) -> Running:
    """The fleet as a committed source (a clean work tree, or a repository to fetch), a bare rendered
    repository with one report per cluster on its status branch, and a controller over them."""
    made = fleet_with_reports(work, arguments)
    source, remote, url, status_work, clusters = (
        made.source,
        made.remote,
        made.url,
        made.status_work,
        made.clusters,
    )
    configured = settings.ControllerSettings(repo_url=url, cache_dir=work / "cache", max_delete_percent=100)
    reader: ports.SourceReader = sourcereading.DirectorySource(source, watch_changes=False)
    if arguments.source == "git":
        reader = sourcereading.GitSource(f"file://{source}", "main", cache_dir=work / "cache")
    controller = looping.Controller(
        configured,
        source=reader,
        status=statusreading.GitStatusReader(url, configured.status_branch, cache_dir=configured.cache_dir),
        clock=ports.MonotonicClock(),
        log=JsonLog(io.StringIO()),
    )
    return Running(controller, reader, source, remote, status_work, clusters, url)


def no_change(running: Running, arguments: argparse.Namespace) -> dict[str, Any]:
    """The first publish, a full reconcile that finds it, skipped polls, and a heartbeat's reconcile."""
    controller = running.controller
    figures: dict[str, Any] = {"scale": arguments.scale, "source": arguments.source}
    first_s, _ = timed(controller.reconcile_once)
    figures["first_publish_s"] = round(first_s, 2)
    figures["rendered_files"] = sum(
        1 for _ in git(running.remote, "ls-tree", "-r", "--name-only", "main").splitlines()
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
    push_reports(running.status_work, running.url, running.clusters, "2026-01-01T00:05:00Z")
    beat_s, beat = timed(controller.reconcile_once)
    figures["heartbeat_reconcile_ms"] = round(1000 * beat_s, 1)
    figures["heartbeat_skipped"] = beat.skipped
    return figures


def one_change(running: Running, arguments: argparse.Namespace) -> dict[str, Any]:
    """The first publish (not timed), then ``--changes`` times: one workload's replicas changed and
    committed to the source, and the reconcile that publishes it (timed, each after the last one's garbage
    is collected and its writes flushed)."""
    controller = running.controller
    first = controller.reconcile_once()
    assert first.outcome.value == "published", first
    spent: list[float] = []
    emitted: list[int | None] = []
    for _ in range(arguments.changes):
        change_one_workload(running.source)
        git(running.source, "commit", "--quiet", "-am", "one workload")
        os.sync()
        gc.collect()
        seconds, outcome = timed(controller.reconcile_once)
        assert outcome.outcome.value == "published", outcome
        spent.append(round(seconds, 3))
        emitted.append(getattr(outcome, "emitted", None))  # files rendered (None: code that does not say)
    return {
        "code": str(Path(nova_gitops.__file__).parent),
        "one_change_s": round(statistics.median(spent), 3),
        "each_s": spent,
        "emitted": emitted,
    }


def compare(arguments: argparse.Namespace) -> dict[str, Any]:
    """``--one-change`` runs in processes of their own: the working tree's code, and with ``--baseline``
    the revision's too, alternated so both see the same machine."""
    passed = [
        f"--clusters={arguments.clusters}",
        f"--workloads={arguments.workloads}",
        f"--scale={arguments.scale}",
        f"--source={arguments.source}",
        f"--changes={arguments.changes}",
    ]
    figures: dict[str, Any] = {
        "scale": arguments.scale,
        "source": arguments.source,
        "baseline": arguments.baseline,
        "load_before": round(os.getloadavg()[0], 2),
    }
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
                child = subprocess.run(
                    [sys.executable, str(Path(__file__).resolve()), "--one-change", "--child", *passed],
                    env=environ,
                    check=True,
                    capture_output=True,
                    text=True,
                )
                runs[label].append(json.loads(child.stdout.strip().splitlines()[-1]))
    figures["load_after"] = round(os.getloadavg()[0], 2)
    for label, done in runs.items():
        if done:
            figures[f"{label}_one_change_s"] = round(
                statistics.median(run["one_change_s"] for run in done), 3
            )
            figures[f"{label}_runs"] = done
    if runs["old"]:
        figures["ratio"] = round(figures["new_one_change_s"] / figures["old_one_change_s"], 3)
    return figures


if __name__ == "__main__":
    forget_outer_repository()
    main()
