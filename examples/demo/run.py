"""The whole nova-gitops loop on your laptop, in one command: ``python examples/demo/run.py``.

What runs, all real except the clusters: a source git repository you push to, the controller
(``nova_gitops.controller``), a rendered git repository, and one ``nova-agent`` per cluster. The two
workload clusters are the test suite's fake Kubernetes API server in simulated-cluster mode (like kwok:
Deployments get pods, pods get nodes or stay Pending when no node fits, statuses follow), spoken to by the
real kubernetes client. Clocks are simulated so that the agents' 30 s pending timeout takes no time; every
step is run in turn, so the output is the same on every run.

Or two real clusters (``--kubeconfig-1 PATH --kubeconfig-2 PATH``, docs/demo.md): the same story on the wall
clock, each step waiting until the clusters show what it tells. A control plane without nodes (kube-apiserver,
controller-manager and scheduler only, as ``../shared/realk8s`` starts them) gets two 4-cpu nodes per cluster
from the test suite's stand-in kubelet (``tests/realkube``); a cluster with nodes of its own (kind) runs the
story on them, with a pullable image (``examples/demo/settings.py``, ``tests/e2e/realloop.py``).

The story: the agents report their clusters; workloads without a policy go nowhere; policies place the
platform on both clusters and each shop colour on one; wlc-2 fills up, its pods stay Pending, its agent asks
for a reschedule and the controller moves the group to wlc-1; room comes back and a push pins blue to wlc-2.

``--waves`` tells another story on the same loop: a progressive rollout, canary first, then the rest, and a
failing revision paused and rolled back (``examples/demo/waves.py``).

Options: ``--workdir DIR`` keeps the repositories there (default: a temporary directory, removed at the end);
``--help`` lists the rest.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

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
    from examples.demo import view

    view.between_steps()
    print(f"\n── {number}. {title}")


def say(text: str) -> None:
    print(f"   {text}")


def show_clusters(loop: Any) -> None:
    for name, cluster in loop.clusters.items():
        deployments = cluster.workloads()
        listed = ", ".join(
            f"{key.split('/')[1]} {_ready(body)}/{body['spec']['replicas']} ready"
            for key, body in sorted(deployments.items())
        )
        pending = len([p for p in cluster.pods("Pending") if p["metadata"]["namespace"] == "shop"])
        say(
            f"{name}: {listed or 'no shop deployment'}"
            + (f"; {pending} shop {'pod' if pending == 1 else 'pods'} Pending" if pending else "")
        )


def _ready(body: dict[str, Any]) -> object:
    status = body.get("status")
    return status.get("readyReplicas", 0) if isinstance(status, dict) else 0


def show_placement(loop: Any) -> None:
    for name, group in sorted(loop.placement().items()):
        objects = ", ".join(sorted({obj["name"] for obj in group["objects"]}))
        say(f"{name:<30} {group['mode']:<9} → {', '.join(group['clusters'])}   ({objects})")


def show_commit(loop: Any) -> None:
    for line in loop.head_message().splitlines():
        if line and not line.startswith("Nova-Source"):
            say(f"│ {line}")


def make_loop(workdir: Path, settings: Any, **options: Any) -> Any:
    """The loop on the simulated clusters, or on the real ones the settings name."""
    if settings.real:
        from tests.e2e.realloop import RealLoop

        return RealLoop(workdir, **settings.loop_options(), **options)
    from tests.e2e.localloop import LocalLoop

    return LocalLoop(workdir, **options)


def files(loop: Any, pushed: dict[str, str]) -> dict[str, str | None]:
    """What to push for these source files: on clusters whose kubelets pull images, images they can pull."""
    rewrite = getattr(loop, "files", None)
    return rewrite(pushed) if rewrite is not None else dict(pushed)


def nodes_of(cluster: Any) -> list[dict[str, Any]]:
    """A cluster's nodes, simulated or real."""
    return cluster.nodes() if hasattr(cluster, "nodes") else list(cluster.server.objects("nodes"))


def describe_nodes(loop: Any) -> str:
    """``2 nodes × 4 cpu each`` (the sizes of the first cluster's nodes)."""
    from nova_gitops.api import quantities

    first = nodes_of(next(iter(loop.clusters.values())))
    sizes = sorted(
        {quantities.parse_quantity(node["status"]["allocatable"]["cpu"]) // 1000 for node in first}
    )
    each = f"{sizes[0]} cpu each" if len(sizes) == 1 else f"{'–'.join(map(str, (sizes[0], sizes[-1])))} cpu"
    return f"{len(first)} {'node' if len(first) == 1 else 'nodes'} × {each}"


def run(workdir: Path, settings: Any) -> int:
    from nova_gitops.controller.logs import JsonLog
    from tests.e2e import manifests

    controller_log = io.StringIO()
    timeout = settings.pending_timeout
    loop = make_loop(
        workdir,
        settings,
        controller_log=JsonLog(controller_log),
        agent_settings={"pending_timeout": timedelta(seconds=timeout)},
    )
    from examples.demo import view

    server = view.serve(loop, settings.ui_listen, settings.ui_step_seconds, "the demo")
    try:
        step(
            1, f"Two workload clusters ({describe_nodes(loop)}), an agent on each; they report their capacity"
        )
        loop.agents()
        for name in loop.clusters:
            nodes = loop.report(name)["status"]["capacityResources"]
            say(f"{name}: status/{name}.yaml on branch nova-status: {len(nodes)} nodes, Ready")

        step(2, "git push: a platform and a shop in two colours, but no SchedulePolicy yet")
        loop.source.push(files(loop, manifests.APPS), "apps: platform and shop")
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
            say(f"pod {pending[0]['metadata']['name']}: {_unschedulable(pending[0])}")

        def requested() -> bool:
            return bool(loop.report("wlc-2")["status"].get("rescheduleRequests"))

        if settings.real:  # the pods wait for real; the agents pass until wlc-2's asks
            loop.until(loop.agents, requested, "wlc-2's agent to ask for a reschedule", timeout=timeout + 120)
        else:
            loop.advance(timeout + 1)
            loop.agents()
        for request in loop.report("wlc-2")["status"]["rescheduleRequests"]:
            say(
                f"nova-agent wlc-2 after the {timeout} s pending timeout: reschedule {request['group']}: "
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
        loop.source.push(files(loop, {"apps/shop-blue.yaml": pinned}), "shop: run blue on wlc-2")
        loop.reconcile()
        show_commit(loop)
        loop.agents()
        show_clusters(loop)

        step(7, "where everything is now (the group files under placement/ of the rendered repo)")
        show_placement(loop)
        say(
            f"repositories: {workdir} (source.git, rendered.git); "
            f"controller log: {len(controller_log.getvalue().splitlines())} JSON lines"
        )
    finally:
        view.close(server)
        loop.close()
    return 0


def _unschedulable(pod: dict[str, Any]) -> str:
    """kube-scheduler's message on a pod it could not place."""
    conditions = (pod.get("status") or {}).get("conditions") or []
    return next((str(c.get("message", "")) for c in conditions if c.get("type") == "PodScheduled"), "")


def main() -> int:
    from examples.demo import settings as demo_settings

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--workdir", type=Path, help="keep the repositories here (default: a temporary directory)"
    )
    parser.add_argument(
        "--waves",
        action="store_true",
        help="the rollout story: canary, then the rest; a bad revision rolled back",
    )
    demo_settings.add_arguments(parser)
    arguments = parser.parse_args()
    chosen = demo_settings.from_arguments(arguments, os.environ)
    for name in [name for name in os.environ if name.startswith("GIT_")]:
        del os.environ[name]
    os.environ.update(GIT_ENVIRONMENT)
    story = run
    if arguments.waves:
        from examples.demo import waves

        story = waves.run
    if arguments.workdir is not None:
        arguments.workdir.mkdir(parents=True, exist_ok=True)
        return story(arguments.workdir.resolve(), chosen)
    with tempfile.TemporaryDirectory(prefix="nova-demo-") as workdir:
        return story(Path(workdir), chosen)


if __name__ == "__main__":
    sys.exit(main())
