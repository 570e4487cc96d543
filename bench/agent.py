"""Benchmark of nova-agent against the fake API server (tests/fakekube) and a real git repository.

Figures (issue 4): first sync of 1,000 objects = 1,000 apply calls and <= 10 s; second sync 0 write calls;
status report of a 500-node cluster <= 1 s to compute. Issue 11: the second sync checks every object for drift
(still 0 write calls, <= 5 s); then 10 ConfigMaps are edited by hand and the third sync puts them back (one
dry run and one apply each). Issue 23: a pass of an agent whose cluster runs (the fake's simulated cluster:
``--observe-nodes`` nodes, ``--observe-deployments`` Deployments of 4 pods, ``--stuck`` of them crash-looping)
— the whole pass with its report, and ``observing.observe`` alone — with its requests; with ``--baseline REV``
this code's and that revision's nova_agent and nova_gitops, each in processes of its own, alternately
``--rounds`` times, the best of each and their ratios. Prints a table, then one JSON line (last line).

    .venv/bin/python bench/agent.py [--objects 1000] [--nodes 500] [--pods-per-node 10]
                                    [--baseline REV [--rounds 3]] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# NOVA_BENCH_CODE: where the nova_agent and nova_gitops to measure are (``--baseline``'s child); this
# checkout when unset. The fake API server and its simulation are always this checkout's.
sys.path.insert(0, os.environ.get("NOVA_BENCH_CODE") or str(Path(__file__).resolve().parent.parent))
if os.environ.get("NOVA_BENCH_CODE"):  # the editable install's finder would fill in what that code lacks
    sys.meta_path[:] = [f for f in sys.meta_path if "Editable" not in getattr(f, "__name__", "")]

import yaml
from kubernetes import client

from bench.fleet import forget_outer_repository
from nova_agent import capacity, health, observing, reports
from nova_agent.clocks import FakeClock
from nova_agent.kubeclient import ApiClientKube
from nova_agent.reports import ClusterIdentity, Observation
from nova_agent.running import Agent
from nova_agent.settings import AgentSettings
from nova_gitops.api import labels as nova_labels
from tests.fakekube.fixtures import client_for
from tests.fakekube.server import FakeKubeServer
from tests.fakekube.simulation import SimulatedCluster

ROOT = Path(__file__).resolve().parent.parent
CODE_VARIABLE = "NOVA_BENCH_CODE"


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def rendered_repo(root: Path, objects: int) -> str:
    remote, work = root / "rendered.git", root / "work"
    git(root, "init", "-q", "--bare", "--initial-branch=main", str(remote))
    git(root, "init", "-q", "--initial-branch=main", str(work))
    labels = {nova_labels.TARGET_CLUSTER: "bench"}
    for index in range(objects):
        if index % 4 == 0:
            body: dict[str, Any] = {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": f"web-{index}", "namespace": "default", "labels": labels},
                "spec": {
                    "replicas": 2,
                    "selector": {"matchLabels": {"app": f"web-{index}"}},
                    "template": {
                        "metadata": {"labels": {"app": f"web-{index}"}},
                        "spec": {"containers": [{"name": "app", "image": "registry.example/app:1"}]},
                    },
                },
            }
        else:
            body = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"cfg-{index}", "namespace": "default", "labels": labels},
                "data": {"index": str(index), "payload": "x" * 800},
            }
        path = (
            work
            / "clusters"
            / "bench"
            / "default"
            / f"{body['kind'].lower()}-{body['metadata']['name']}.yaml"
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.dump(body, Dumper=yaml.CSafeDumper, sort_keys=False))
    git(work, "add", "-A")
    git(
        work,
        "-c",
        "user.name=bench",
        "-c",
        "user.email=bench@example.invalid",
        "commit",
        "-q",
        "-m",
        "render",
    )
    git(work, "push", "-q", str(remote), "HEAD:main")
    return f"file://{remote}"


def edit_by_hand(server: FakeKubeServer, objects: int) -> int:
    """``kubectl edit`` one ConfigMap in a hundred (an update under another field manager); how many."""
    core = client.CoreV1Api(client_for(server))
    names = [f"cfg-{index}" for index in range(objects) if index % 4 and index % 100 == 1]
    for name in names:
        live = core.read_namespaced_config_map(name, "default")
        live.data = {**live.data, "index": "edited"}
        core.replace_namespaced_config_map(name, "default", live, field_manager="kubectl-edit")
    return len(names)


def bench_sync(objects: int) -> dict[str, Any]:
    server = FakeKubeServer()
    try:
        with tempfile.TemporaryDirectory(prefix="nova-agent-bench-") as scratch:
            root = Path(scratch)
            url = rendered_repo(root, objects)
            settings = AgentSettings("bench", url, root / "cache", namespace="default", report_enabled=False)
            agent = Agent(settings, ApiClientKube(client_for(server)), FakeClock())
            server.requests.clear()
            started = time.perf_counter()
            first = agent.pass_once()
            first_seconds = time.perf_counter() - started
            applies = [
                r
                for r in server.write_requests()
                if r.content_type.startswith("application/apply-patch")
                and "nova-agent-inventory" not in r.path
            ]
            first_writes = len(server.write_requests())
            server.requests.clear()
            started = time.perf_counter()
            second = agent.pass_once()
            second_seconds = time.perf_counter() - started
            assert first.exit_code == 0 and second.exit_code == 0, (first.message, second.message)
            second_writes, second_requests = len(server.write_requests()), len(server.requests)
            drifted = edit_by_hand(server, objects)
            server.requests.clear()
            started = time.perf_counter()
            third = agent.pass_once()
            third_seconds = time.perf_counter() - started
            assert third.sync is not None and len(third.sync.drifted) == drifted, third.message
            dry_runs = [r for r in server.write_requests() if r.query.get("dryRun") == "All"]
            return {
                "objects": objects,
                "first_sync_s": round(first_seconds, 3),
                "first_sync_apply_calls": len(applies),
                "first_sync_write_calls": first_writes,
                "second_sync_s": round(second_seconds, 3),
                "second_sync_write_calls": second_writes,
                "second_sync_requests": second_requests,
                "drifted_by_hand": drifted,
                "drift_sync_s": round(third_seconds, 3),
                "drift_sync_dry_runs": len(dry_runs),
                "drift_sync_corrections": sum(1 for found in third.sync.drifted if found.corrected),
            }
    finally:
        server.stop()


def bench_report(nodes: int, pods_per_node: int) -> dict[str, Any]:
    node_bodies = [
        {
            "metadata": {
                "name": f"node-{i:04d}",
                "labels": {"kubernetes.io/hostname": f"node-{i:04d}", "pool": "a"},
            },
            "spec": {
                "taints": [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}] if i % 10 == 0 else []
            },
            "status": {
                "allocatable": {"cpu": "7910m", "memory": "31Gi", "pods": "110", "ephemeral-storage": "95Gi"},
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }
        for i in range(nodes)
    ]
    pod_bodies = [
        {
            "metadata": {
                "name": f"p-{i}-{j}",
                "namespace": "default",
                "ownerReferences": [{"uid": f"rs-{j % 7}"}],
            },
            "spec": {
                "nodeName": f"node-{i:04d}",
                "containers": [
                    {"name": "a", "resources": {"requests": {"cpu": f"{100 + j}m", "memory": f"{64 + j}Mi"}}}
                ],
            },
            "status": {"phase": "Running"},
        }
        for i in range(nodes)
        for j in range(pods_per_node)
    ]
    labelled = [{"metadata": {"uid": "dep-1", "labels": {nova_labels.TARGET_CLUSTER: "bench"}}}]
    owned = [{"metadata": {"uid": "rs-1", "ownerReferences": [{"uid": "dep-1"}]}}]
    started = time.perf_counter()
    managed = capacity.managed_uids(labelled, owned)
    node_capacities = capacity.node_capacities(node_bodies, pod_bodies, managed)
    observation = Observation(
        ClusterIdentity("bench"), node_capacities, autoscaled=False, synced_revision="0" * 40
    )
    document = reports.build_status_document(observation, FakeClock().now())
    from nova_agent import reportfiles  # not at the top: --baseline's older code has no such module

    data = reportfiles.dump_status(document)
    seconds = time.perf_counter() - started
    return {"nodes": nodes, "pods": len(pod_bodies), "report_s": round(seconds, 3), "report_bytes": len(data)}


def observe_repo(root: Path, deployments: int, stuck: int) -> str:
    """A rendered repository of ``deployments`` Deployments of 4 pods; the last ``stuck`` crash-loop."""
    remote, work = root / "rendered.git", root / "work"
    git(root, "init", "-q", "--bare", "--initial-branch=main", str(remote))
    git(root, "init", "-q", "--initial-branch=main", str(work))
    labels = {nova_labels.TARGET_CLUSTER: "bench"}
    for index in range(deployments):
        image = "registry.example/app:crashloop" if index >= deployments - stuck else "registry.example/app:1"
        container = {"name": "app", "image": image, "resources": {"requests": {"cpu": "10m"}}}
        body = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": f"web-{index:04d}", "namespace": "default", "labels": labels},
            "spec": {
                "replicas": 4,
                "selector": {"matchLabels": {"app": f"web-{index:04d}"}},
                "template": {
                    "metadata": {"labels": {"app": f"web-{index:04d}"}},
                    "spec": {"containers": [container]},
                },
            },
        }
        path = work / "clusters" / "bench" / "default" / f"deployment-web-{index:04d}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.dump(body, Dumper=yaml.CSafeDumper, sort_keys=False))
    git(work, "add", "-A")
    identity = ("-c", "user.name=bench", "-c", "user.email=bench@example.invalid")
    git(work, *identity, "commit", "-q", "-m", "render")
    git(work, "push", "-q", str(remote), "HEAD:main")
    return f"file://{remote}"


def bench_observe(nodes: int, deployments: int, stuck: int, repeat: int) -> dict[str, Any]:
    """Quiet passes of an agent with its report (nothing to apply), and ``observing.observe`` alone, on a
    simulated cluster whose pods run or crash-loop; the best of ``repeat`` (what the code costs, less the
    load of a shared machine), and the requests of one pass."""
    server = FakeKubeServer()
    try:
        for index in range(nodes):
            server.add_node(f"node-{index:04d}", allocatable={"cpu": "64", "memory": "256Gi", "pods": "110"})
        clock = FakeClock()
        sim = SimulatedCluster(server, clock.now)
        with tempfile.TemporaryDirectory(prefix="nova-agent-bench-observe-") as scratch:
            root = Path(scratch)
            url = observe_repo(root, deployments, stuck)
            settings = AgentSettings("bench", url, root / "cache", namespace="default")
            agent = Agent(settings, ApiClientKube(client_for(server)), clock)
            first = agent.pass_once()
            assert first.exit_code == 0, first.message
            sim.step()
            outcome = agent.pass_once()  # reports what runs
            assert outcome.exit_code == 0 and outcome.sync is not None, outcome.message
            owned = outcome.sync.owned
            passes, observes = [], []
            for _ in range(repeat):
                clock.advance(1)
                server.requests.clear()
                started = time.perf_counter()
                quiet = agent.pass_once()
                passes.append(time.perf_counter() - started)
                requests = list(server.requests)
                assert quiet.exit_code == 0, quiet.message
                started = time.perf_counter()
                observed = observing.observe(
                    ApiClientKube(client_for(server)),
                    settings,
                    owned,
                    clock.now(),
                    synced_revision=outcome.sync.revision,
                    last_error="",
                )
                observes.append(time.perf_counter() - started)
            workloads = observed.observation.workloads
            reasons = sorted({w.health.reason for w in workloads if not w.health.healthy})
            figures: dict[str, Any] = {}
            if hasattr(health, "stuck_container"):  # the code measured has what issue 23 added
                from nova_agent import crashlooping

                pods, replicasets = server.objects("pods"), server.objects("replicasets.apps")
                spent = []
                for _ in range(repeat):
                    started = time.perf_counter()
                    crashlooping.index(pods, replicasets)
                    spent.append(time.perf_counter() - started)
                figures["stuck_index_s"] = round(min(spent), 4)
            return {
                **figures,
                "observe_nodes": nodes,
                "observe_pods": len(server.objects("pods")),
                "observe_deployments": deployments,
                "observe_stuck": stuck,
                "quiet_pass_s": round(min(passes), 3),
                "observe_s": round(min(observes), 3),
                "pass_requests": len(requests),
                "pass_pod_lists": sum(1 for r in requests if r.method == "GET" and r.path.endswith("/pods")),
                "unhealthy": sum(1 for w in workloads if not w.health.healthy),
                "unhealthy_reasons": ",".join(reasons),
            }
    finally:
        server.stop()


def observe_in_child(code: Path, options: argparse.Namespace) -> dict[str, Any]:
    """``bench_observe`` for the nova_agent and nova_gitops under ``code``, in a process of its own with
    this checkout's fake API server."""
    command = [
        sys.executable,
        __file__,
        "--observe-only",
        *("--observe-nodes", str(options.observe_nodes)),
        *("--observe-deployments", str(options.observe_deployments)),
        *("--stuck", str(options.stuck)),
        *("--repeat", str(options.repeat)),
    ]
    environment = {**os.environ, CODE_VARIABLE: str(code)}
    done = subprocess.run(command, check=True, capture_output=True, text=True, env=environment)
    found: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return found


def compare_observe(revision: str, options: argparse.Namespace) -> dict[str, Any]:
    """This code's pass and ``revision``'s (``git archive`` of its nova_agent and nova_gitops), each in
    processes of their own, alternately ``--rounds`` times (a shared machine's load falls on both); the
    best of each, this code's over the baseline's, and every round's figures (this code's/the baseline's)."""
    with tempfile.TemporaryDirectory(prefix="nova-bench-agent-baseline-") as scratch:
        archive = subprocess.run(
            ["git", "archive", revision, "nova_gitops", "nova_agent"],
            cwd=ROOT,
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", scratch], input=archive, check=True)
        runs: dict[str, list[dict[str, Any]]] = {"new": [], "old": []}
        for _ in range(options.rounds):
            runs["new"].append(observe_in_child(ROOT, options))
            runs["old"].append(observe_in_child(Path(scratch), options))
    results: dict[str, Any] = {}
    for key in ("quiet_pass_s", "observe_s"):
        new = min(run[key] for run in runs["new"])
        old = min(run[key] for run in runs["old"])
        results[f"{key}_best"], results[f"baseline_{key}_best"] = new, old
        results[f"ratio_{key}"] = round(new / old, 3)
        pairs = zip(runs["new"], runs["old"], strict=True)
        results[f"{key}_rounds"] = " ".join(f"{run[key]}/{base[key]}" for run, base in pairs)
    for key in ("pass_requests", "pass_pod_lists", "unhealthy_reasons"):
        results[f"baseline_{key}"] = runs["old"][-1][key]
    results["rounds"] = options.rounds
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods-per-node", type=int, default=10)
    parser.add_argument("--observe-nodes", type=int, default=100)
    parser.add_argument("--observe-deployments", type=int, default=500)
    parser.add_argument("--stuck", type=int, default=10, help="of the observed Deployments, crash-looping")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--baseline", help="a git revision whose nova_agent to measure the pass of too")
    parser.add_argument("--rounds", type=int, default=3, help="with --baseline: alternate runs of each")
    parser.add_argument("--observe-only", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    observe = bench_observe(options.observe_nodes, options.observe_deployments, options.stuck, options.repeat)
    if options.observe_only:
        print(json.dumps(observe, sort_keys=True))
        return
    results = {**bench_sync(options.objects), **bench_report(options.nodes, options.pods_per_node), **observe}
    if options.baseline:
        results.update(compare_observe(options.baseline, options))
    for key, value in results.items():
        print(f"{key:28} {value}")
    print(json.dumps(results, sort_keys=True))


if __name__ == "__main__":
    forget_outer_repository()
    main()
