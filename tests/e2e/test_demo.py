"""The README's tour keeps working: ``python examples/demo/run.py`` runs the whole loop and tells its story,
on the simulated clusters, or on two real ones when the environment names them (``tests/e2e/conftest.py``:
``REALK8S_KUBECONFIG_1``/``_2``, as ``../shared/realk8s/up DIR 2`` sets them).

Behaviours covered:
- the demo exits 0 and shows each step: the placement, the Pending pods with kube-scheduler's message, the
  agent's reschedule request, the moving commit quoting the reason, the prune, and the pinned placement;
- on real clusters, the same story (the stand-in kubelet's nodes, another tenant's pods preempting wlc-2's,
  the wall clock), and the clusters are left as the demo found them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from nova_gitops.clients.kuberest import KubeRest, build_api_client
from tests.e2e import realloop
from tests.e2e.democlusters import DemoClusters
from tests.e2e.realloop import Kubeconfig

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo" / "run.py"


def run_demo(tmp_path: Path, clusters: DemoClusters, *arguments: str) -> str:
    """The demo's output; it must exit 0. Not the user's NOVA_DEMO_* settings: the test's clusters."""
    environment = {name: value for name, value in os.environ.items() if not name.startswith("NOVA_DEMO_")}
    done = subprocess.run(
        [sys.executable, str(DEMO), *arguments, "--workdir", str(tmp_path), *clusters.arguments],
        capture_output=True,
        text=True,
        timeout=900 if clusters.real else 180,
        env=environment,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for where in clusters.kubeconfigs:
        assert_left_as_found(where)
    return done.stdout


def assert_left_as_found(where: Kubeconfig) -> None:
    """None of the story's namespaces, none of the stand-in kubelet's nodes, no other tenant's priority."""
    api_client = build_api_client(where.path, where.context)
    try:
        rest = KubeRest(api_client)
        assert not realloop.present_namespaces(rest)
        nodes = (rest.request("GET", "/api/v1/nodes") or {}).get("items") or []
        assert not [node for node in nodes if node["metadata"]["name"].startswith(("wlc-1-", "wlc-2-"))]
        classes = rest.request("GET", "/apis/scheduling.k8s.io/v1/priorityclasses")["items"]
        assert realloop.TENANT_PRIORITY not in [body["metadata"]["name"] for body in classes]
    finally:
        api_client.close()


def test_the_demo_runs_the_whole_loop(tmp_path: Path, demo_clusters: DemoClusters) -> None:
    output = run_demo(tmp_path, demo_clusters)
    for expected in (
        "Two workload clusters (2 nodes × 4 cpu each)",
        "6 objects unscheduled (no SchedulePolicy matches)",
        "wlc-1: blue-web 2/2 ready",
        "wlc-2: green-web 0/2 ready; 2 shop pods Pending",
        "0/2 nodes are available: 2 Insufficient cpu, 2 Insufficient memory.",
        "does not have minimum replicas available",
        "rescheduled shop-",
        "pruned ['Deployment shop/green-web', 'Namespace shop']",
        "wlc-1: blue-web 2/2 ready, green-web 2/2 ready",
        "wlc-2: blue-web 2/2 ready",
    ):
        assert expected in output, output
