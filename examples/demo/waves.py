"""The waves story of the demo (``python examples/demo/run.py --waves``): a progressive rollout (issue 12,
docs/rollouts.md) on the same local loop.

A RolloutStrategy releases each render to the canary wave (wlc-1, labelled ``tier=canary``) first and to the
rest (the implicit ``others`` wave: wlc-2) once the canary has run *that* commit healthy for the 5 s bake.
The agents run with ``--follow-release``: each applies the commit on its branch ``nova/clusters/<cluster>``,
not the head of ``main``. A good image goes everywhere, wave by wave; a revision whose pods cannot be
scheduled stops at the canary (``ProgressDeadlineExceeded``), the rollout pauses and says why, and an abort
puts the canary back on the previous revision. wlc-2 never runs the failing one.

One simulated clock drives the controller's bakes, the agents and the clusters, so the story takes seconds
and prints the same every run. On real clusters (``--kubeconfig-1``/``-2``) the bakes and the progress
deadline pass on the wall clock, and each step cycles the agents and the controller until the clusters and
the rendered repository show what it tells (``rollouts.until``); the failing revision asks for more cpu than
the largest node has, whatever the nodes.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from examples.demo import view


def step(number: int, title: str) -> None:
    view.between_steps()
    print(f"\n── {number}. {title}")


def say(text: str) -> None:
    print(f"   {text}")


class Story:
    def __init__(self, workdir: Path, settings: Any) -> None:
        from nova_gitops.controller.logs import JsonLog
        from tests.e2e import rollouts

        self.log = io.StringIO()
        self.read_to = 0
        self.settings = settings
        self.loop = rollouts.waves_loop(workdir, controller_log=JsonLog(self.log), **settings.loop_options())
        self.renders: dict[str, str] = {}  # rendered commit → the image it releases, for the printouts

    def branches(self) -> None:
        from tests.e2e import rollouts

        released = rollouts.released(self.loop)
        main = rollouts.head(self.loop)
        for name in self.loop.clusters:
            commit = released.get(name)
            where = (
                "not released yet" if commit is None else f"{commit[:7]} ({self.renders.get(commit, '?')})"
            )
            behind = "" if commit is None or commit == main else "   ← behind main"
            say(f"nova/clusters/{name:<6} → {where}{behind}")

    def clusters(self) -> None:
        for name, cluster in self.loop.clusters.items():
            listed = ", ".join(
                f"{key.split('/')[1]} ({_image_tag(body)}) {_ready(body)}/{body['spec']['replicas']} ready"
                for key, body in sorted(cluster.workloads().items())
            )
            pending = len(pending_pods(cluster))
            say(
                f"{name}: {listed or 'nothing yet'}"
                + (f"; {pending} {'pod' if pending == 1 else 'pods'} Pending" if pending else "")
            )

    def controller_says(self) -> None:
        """The controller's rollout log lines since the last look (one per wave when refs move)."""
        lines = self.log.getvalue().splitlines()
        for line in lines[self.read_to :]:
            entry: dict[str, Any] = json.loads(line)
            if entry.get("event") == "rollout":
                say(f"controller: wave {entry['wave']}: {entry['state']}: {entry['reason']}")
        self.read_to = len(lines)

    def push(self, files: dict[str, str], message: str, image: str) -> str:
        from examples.demo.run import files as pullable
        from tests.e2e import rollouts

        self.loop.source.push(pullable(self.loop, files), message)
        self.loop.reconcile()
        main = rollouts.head(self.loop)
        self.renders[main] = image
        return main

    def version(self, cluster: str) -> str:
        """What the cluster's storefront runs (``storefront:2.0``)."""
        return _image_tag(self.loop.clusters[cluster].workloads()["web/storefront"])


def run(workdir: Path, settings: Any) -> int:
    from tests.e2e import rollouts

    story = Story(workdir, settings)
    loop = story.loop
    bake, deadline = settings.bake_time, settings.progress_deadline
    server = view.serve(loop, settings.ui_listen, settings.ui_step_seconds, "the waves demo")
    try:
        step(1, "Two clusters; each agent follows its release branch (--follow-release); wlc-1 is the canary")
        loop.agents()
        for name in loop.clusters:
            labels = loop.report(name)["metadata"]["labels"]
            tier = f"tier={labels['tier']}" if "tier" in labels else "no tier label"
            say(f"{name}: status/{name}.yaml on nova-status: {tier}")

        step(2, "git push: the platform, a storefront on every cluster, and a RolloutStrategy")
        say(f"waves: canary (clusterSelector tier=canary) then others; bakeTime {bake}s; healthTimeout 2m")
        story.push(
            rollouts.source(bake, deadline), "storefront 1.0 with a rollout strategy", "storefront:1.0"
        )
        story.controller_says()
        rollouts.until_complete(loop)
        story.controller_says()
        story.branches()
        story.clusters()

        step(3, "git push: storefront 2.0 — the render goes to main; only the canary's release branch moves")
        target = story.push(
            {"apps/storefront.yaml": rollouts.storefront("2.0", progress_deadline=deadline)},
            "storefront 2.0",
            "storefront:2.0",
        )
        story.controller_says()
        story.branches()

        step(4, "wlc-1's agent applies the released commit and reports it healthy *for that commit*")

        def canary_healthy() -> bool:
            entries = [w for w in loop.report("wlc-1")["status"]["workloads"] if w["kind"] == "Deployment"]
            waves = rollouts.record(loop).get("waves") or [{}]
            return bool(entries and entries[0]["revision"] == target and waves[0].get("healthySince"))

        rollouts.until(loop, canary_healthy, "wlc-1 healthy at the released commit", cycles=1)
        [entry] = [w for w in loop.report("wlc-1")["status"]["workloads"] if w["kind"] == "Deployment"]
        same = "= released" if entry["revision"] == target else "≠ released"
        say(
            f"status/wlc-1.yaml: Deployment web/storefront healthy={entry['healthy']} ({entry['reason']}), "
            f"revision {entry['revision'][:7]} {same}"
        )
        canary = rollouts.record(loop)["waves"][0]
        say(f"rollout/record.yaml on nova/rollout: wave canary healthySince {canary['healthySince']}")
        story.clusters()

        clock = "on the simulated clock" if not settings.real else "on the wall clock"
        step(5, f"{bake} s later (the bake, {clock}) the next wave is released: wlc-2 applies 2.0")
        rollouts.until(
            loop, lambda: story.version("wlc-2") == "storefront:2.0", "wlc-2 running 2.0", cycles=bake + 1
        )
        story.controller_says()
        story.branches()
        story.clusters()
        rollouts.until_complete(loop)
        say(f"rollout/record.yaml: outcome {rollouts.record(loop)['outcome']} (wlc-2 baked too)")

        cpu = largest_cpu(loop) + 2
        step(
            6,
            f"git push: storefront 3.0 asking {cpu} cpu per pod — no node has that much; only wlc-1 gets it",
        )
        bad = story.push(
            {"apps/storefront.yaml": rollouts.storefront("3.0", cpu=str(cpu), progress_deadline=deadline)},
            "storefront 3.0",
            "storefront:3.0",
        )
        story.controller_says()
        rollouts.until(
            loop, lambda: bool(pending_pods(loop.clusters["wlc-1"])), "3.0's pods Pending", cycles=1
        )
        story.clusters()
        pending = pending_pods(loop.clusters["wlc-1"])
        say(f"pod {pending[0]['metadata']['name']}: {_unschedulable(pending[0])}")
        rollouts.until(
            loop,
            lambda: rollouts.record(loop).get("outcome") == "paused",
            "the rollout paused",
            cycles=(deadline + 10) // 5,
            seconds=5,
        )
        story.controller_says()
        failed = rollouts.record(loop)["waves"][0]
        say(f"rollout/record.yaml: outcome {rollouts.record(loop)['outcome']}; canary failure:")
        say(f"  {failed.get('failure', '')}")
        for line in rollouts.rollout_metrics(loop):
            say(f"/metrics: {line}")
        story.branches()

        step(7, f"roll back: abort the rollout of {bad[:7]} (rollout/requests.yaml on nova/rollout)")
        rollouts.request_abort(loop, bad)
        say(f"nova-gitops rollout abort: requests.yaml now says abort: {{revision: {bad[:12]}...}}")
        rollouts.until(
            loop, lambda: rollouts.released(loop)["wlc-1"] != bad, "wlc-1's branch rolled back", cycles=1
        )
        story.controller_says()
        story.branches()

        def back() -> bool:
            return (
                rollouts.record(loop).get("outcome") == "aborted"
                and story.version("wlc-1") == "storefront:2.0"
                and not pending_pods(loop.clusters["wlc-1"])
            )

        rollouts.until(loop, back, "wlc-1 back on 2.0", cycles=2)
        say(f"nova-agent wlc-1 re-applies {story.renders[rollouts.released(loop)['wlc-1']]}:")
        story.clusters()

        step(8, "where everything is")
        say(f"rollout/record.yaml: outcome {rollouts.record(loop)['outcome']}")
        say(f"wlc-2 never ran storefront:3.0: it runs {story.version('wlc-2')}")
        say(f"repositories: {workdir} (source.git, rendered.git: main, nova/clusters/*, nova/rollout)")
    finally:
        view.close(server)
        loop.close()
    return 0


def pending_pods(cluster: Any) -> list[dict[str, Any]]:
    return [p for p in cluster.pods("Pending") if p["metadata"]["namespace"] == "web"]


def largest_cpu(loop: Any) -> int:
    """The cpu of the largest node of any cluster, in whole cores."""
    from examples.demo.run import nodes_of
    from nova_gitops.api import quantities

    return max(
        -(-quantities.parse_quantity(node["status"]["allocatable"]["cpu"]) // 1000)
        for cluster in loop.clusters.values()
        for node in nodes_of(cluster)
    )


def _unschedulable(pod: dict[str, Any]) -> str:
    from examples.demo.run import _unschedulable as message

    return message(pod)


def _image_tag(body: dict[str, Any]) -> str:
    """``storefront:2.0``: the Deployment's name and its pod template's version label (its image's tag on
    the simulated clusters; on clusters with kubelets of their own every version runs a pullable image)."""
    template = body["spec"]["template"]
    version = (template["metadata"].get("labels") or {}).get("app.kubernetes.io/version")
    if version is None:
        return str(template["spec"]["containers"][0]["image"]).rpartition("/")[2]
    return f"{body['metadata']['name']}:{version}"


def _ready(body: dict[str, Any]) -> object:
    status = body.get("status")
    return status.get("readyReplicas", 0) if isinstance(status, dict) else 0
