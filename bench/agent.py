"""Benchmark of nova-agent against the fake API server (tests/fakekube) and a real git repository.

Figures (issue 4): first sync of 1,000 objects = 1,000 apply calls and <= 10 s; second sync 0 write calls;
status report of a 500-node cluster <= 1 s to compute. Issue 11: the second sync checks every object for drift
(still 0 write calls, <= 5 s); then 10 ConfigMaps are edited by hand and the third sync puts them back (one
dry run and one apply each). Prints a table, then one JSON line (last line).

    .venv/bin/python bench/agent.py [--objects 1000] [--nodes 500] [--pods-per-node 10]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml
from kubernetes import client

from nova_agent import capacity, reports
from nova_agent.clocks import FakeClock
from nova_agent.kubeclient import ApiClientKube
from nova_agent.reports import ClusterIdentity, Observation
from nova_agent.running import Agent
from nova_agent.settings import AgentSettings
from nova_gitops.api import labels as nova_labels
from tests.fakekube.fixtures import client_for
from tests.fakekube.server import FakeKubeServer


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
    data = reports.dump_status(document)
    seconds = time.perf_counter() - started
    return {"nodes": nodes, "pods": len(pod_bodies), "report_s": round(seconds, 3), "report_bytes": len(data)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods-per-node", type=int, default=10)
    options = parser.parse_args()
    results = {**bench_sync(options.objects), **bench_report(options.nodes, options.pods_per_node)}
    for key, value in results.items():
        print(f"{key:28} {value}")
    print(json.dumps(results, sort_keys=True))


if __name__ == "__main__":
    main()
