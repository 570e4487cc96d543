"""The whole nova-gitops loop on your laptop, in one command: ``python examples/demo/run.py``.

What runs, all real except the clusters: a source git repository you push to, the controller
(``nova_gitops.controller``), a rendered git repository, and one ``nova-agent`` per cluster. The two
workload clusters are the test suite's fake Kubernetes API server in simulated-cluster mode (like kwok:
Deployments get pods, pods get nodes or stay Pending when no node fits, statuses follow), spoken to by the
real kubernetes client. Clocks are simulated so that the agents' 30 s pending timeout takes no time; every
step is run in turn, so the output is the same on every run.

The story: the agents report their clusters; workloads without a policy go nowhere; policies place the
platform on both clusters and each shop colour on one; wlc-2 fills up, its pods stay Pending, its agent asks
for a reschedule and the controller moves the group to wlc-1; room comes back and a push pins blue to wlc-2.

``--waves`` tells another story on the same loop: a progressive rollout, canary first, then the rest, and a
failing revision paused and rolled back (``examples/demo/waves.py``).

Options: ``--workdir DIR`` keeps the repositories there (default: a temporary directory, removed at the end).
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the demo runs from a checkout: tests/ holds the simulated clusters

GIT_ENVIRONMENT = {
    "GIT_AUTHOR_NAME": "Nova Demo",
    "GIT_AUTHOR_EMAIL": "demo@example.invalid",
    "GIT_COMMITTER_NAME": "Nova Demo",
    "GIT_COMMITTER_EMAIL": "demo@example.invalid",
    "GIT_ALLOW_PROTOCOL": "file",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
}


def step(number: int, title: str) -> None:
    print(f"\n── {number}. {title}")


def say(text: str) -> None:
    print(f"   {text}")


def show_clusters(loop: object) -> None:
    from tests.e2e.localloop import LocalLoop

    assert isinstance(loop, LocalLoop)
    for name, cluster in loop.clusters.items():
        deployments = cluster.workloads()
        listed = ", ".join(
            f"{key.split('/')[1]} {_ready(body)}/{body['spec']['replicas']} ready"
            for key, body in sorted(deployments.items())
        )
        pending = len([p for p in cluster.pods("Pending") if p["metadata"]["namespace"] == "shop"])
        say(
            f"{name}: {listed or 'no shop deployment'}"
            + (f"; {pending} shop pods Pending" if pending else "")
        )


def _ready(body: dict[str, object]) -> object:
    status = body.get("status")
    return status.get("readyReplicas", 0) if isinstance(status, dict) else 0


def show_placement(loop: object) -> None:
    from tests.e2e.localloop import LocalLoop

    assert isinstance(loop, LocalLoop)
    for name, group in sorted(loop.placement().items()):
        objects = ", ".join(sorted({obj["name"] for obj in group["objects"]}))
        say(f"{name:<30} {group['mode']:<9} → {', '.join(group['clusters'])}   ({objects})")


def show_commit(loop: object) -> None:
    from tests.e2e.localloop import LocalLoop

    assert isinstance(loop, LocalLoop)
    for line in loop.head_message().splitlines():
        if line and not line.startswith("Nova-Source"):
            say(f"│ {line}")


def run(workdir: Path) -> int:
    from nova_gitops.controller.logs import JsonLog
    from tests.e2e import manifests
    from tests.e2e.localloop import LocalLoop

    controller_log = io.StringIO()
    loop = LocalLoop(workdir, controller_log=JsonLog(controller_log))
    try:
        step(1, "Two workload clusters (2 nodes × 4 cpu each), an agent on each; they report their capacity")
        loop.agents()
        for name in loop.clusters:
            nodes = loop.report(name)["status"]["capacityResources"]
            say(f"{name}: status/{name}.yaml on branch nova-status: {len(nodes)} nodes, Ready")

        step(2, "git push: a platform and a shop in two colours, but no SchedulePolicy yet")
        loop.source.push(manifests.APPS, "apps: platform and shop")
        outcome = loop.reconcile()
        say(
            f"controller: {outcome.unscheduled} objects unscheduled (no SchedulePolicy matches); "
            "no cluster gets them"
        )

        step(3, "git push: policies (platform on every cluster, each shop colour whole on one cluster)")
        loop.source.push(manifests.POLICIES, "policies: platform everywhere, shop grouped by colour")
        loop.reconcile()
        show_commit(loop)
        show_placement(loop)
        for name, outcome_ in loop.agents().items():
            applied = len(outcome_.sync.applied) if outcome_.sync else 0
            say(f"nova-agent {name}: applied {applied} objects")
        show_clusters(loop)

        step(4, "wlc-2 fills up (other tenants take its nodes); its shop pods are evicted and stay Pending")
        wlc2 = loop.clusters["wlc-2"]
        wlc2.sim.fill_nodes()
        loop.agents()
        show_clusters(loop)
        pending = [p for p in wlc2.pods("Pending") if p["metadata"]["namespace"] == "shop"]
        if pending:
            say(f"pod {pending[0]['metadata']['name']}: {pending[0]['status']['conditions'][0]['message']}")
        loop.advance(31)
        loop.agents()
        for request in loop.report("wlc-2")["status"]["rescheduleRequests"]:
            say(
                f"nova-agent wlc-2 after the 30 s pending timeout: reschedule {request['group']}: "
                f"{request['reason']}"
            )

        step(5, "the controller's next reconcile moves the group; the agents apply and prune")
        outcome = loop.reconcile()
        show_commit(loop)
        for name, outcome_ in loop.agents().items():
            sync = outcome_.sync
            if sync is not None:
                say(f"nova-agent {name}: applied {len(sync.applied)}, pruned {[str(r) for r in sync.pruned]}")
        show_clusters(loop)

        step(6, "room comes back on wlc-2; a push pins blue there (annotation nova.elotl.co/cluster)")
        wlc2.sim.release()
        loop.agents()
        pinned = manifests.shop_colour("blue").replace(
            "  namespace: shop\n", "  namespace: shop\n  annotations: {nova.elotl.co/cluster: wlc-2}\n", 1
        )
        loop.source.push({"apps/shop-blue.yaml": pinned}, "shop: run blue on wlc-2")
        loop.reconcile()
        show_commit(loop)
        loop.agents()
        show_clusters(loop)

        step(7, "where everything is now (placement.yaml of the rendered repo)")
        show_placement(loop)
        say(
            f"repositories: {workdir} (source.git, rendered.git); "
            f"controller log: {len(controller_log.getvalue().splitlines())} JSON lines"
        )
    finally:
        loop.close()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--workdir", type=Path, help="keep the repositories here (default: a temporary directory)"
    )
    parser.add_argument(
        "--waves",
        action="store_true",
        help="the rollout story: canary, then the rest; a bad revision rolled back",
    )
    arguments = parser.parse_args()
    for name in [name for name in os.environ if name.startswith("GIT_")]:
        del os.environ[name]
    os.environ.update(GIT_ENVIRONMENT)
    story = run
    if arguments.waves:
        from examples.demo import waves

        story = waves.run
    if arguments.workdir is not None:
        arguments.workdir.mkdir(parents=True, exist_ok=True)
        return story(arguments.workdir)
    with tempfile.TemporaryDirectory(prefix="nova-demo-") as workdir:
        return story(Path(workdir))


if __name__ == "__main__":
    sys.exit(main())
