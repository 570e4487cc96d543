"""The whole loop on one machine: a source repo, the controller, a rendered repo, and one nova-agent per
simulated cluster, each piece the real thing (real git over file://, the real controller and agent, the fake
API server in simulated-cluster mode with the real kubernetes client).

Shared by the end-to-end test (stepped: every reconcile, agent pass and simulation step is called in turn,
with fake clocks, so nothing waits and every run is the same), the demo (`examples/demo/run.py`) and the
benchmark (`bench/loop.py`), which run the same pieces on real clocks in threads.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from nova_agent.clocks import FakeClock
from nova_agent.kubeclient import ApiClientKube
from nova_agent.running import Agent, PassOutcome
from nova_agent.settings import AgentSettings
from nova_gitops.api import labels as nova_labels
from nova_gitops.controller.looping import Controller
from nova_gitops.controller.ports import Clock, ManualClock
from nova_gitops.controller.reconciling import ReconcileOutcome
from nova_gitops.controller.settings import ControllerSettings
from nova_gitops.controller.sourcereading import GitSource
from nova_gitops.controller.statusreading import GitStatusReader
from tests.fakekube import clienting
from tests.fakekube.fixtures import client_for
from tests.fakekube.server import FakeKubeServer
from tests.fakekube.simulation import SimulatedCluster

AGENT_NAMESPACE = "nova-agent"
APPLIER = "argocd-controller"  # the field manager of the external orchestrator in delegated mode
NODE = {"cpu": "4", "memory": "8Gi", "pods": "110"}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


class SourceRepo:
    """What platform engineers push to: a bare remote and a work clone on ``main``."""

    def __init__(self, root: Path) -> None:
        self.remote = root / "source.git"
        self.work = root / "source"
        git(root, "init", "--quiet", "--bare", "--initial-branch=main", str(self.remote))
        git(root, "init", "--quiet", "--initial-branch=main", str(self.work))
        git(self.work, "remote", "add", "origin", self.url)

    @property
    def url(self) -> str:
        return f"file://{self.remote}"

    def push(self, files: Mapping[str, str | None], message: str) -> str:
        """Write (or with None delete) files, commit, ``git push``; returns the new commit."""
        for path, text in files.items():
            target = self.work / path
            if text is None:
                target.unlink(missing_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
        git(self.work, "add", "-A")
        git(self.work, "commit", "--quiet", "--allow-empty", "-m", message)
        git(self.work, "push", "--quiet", "origin", "HEAD:main")
        return git(self.work, "rev-parse", "HEAD")


@dataclass
class SimCluster:
    name: str
    server: FakeKubeServer
    sim: SimulatedCluster
    agent: Agent
    api_client: Any

    def workloads(self, resource: str = "deployments.apps") -> dict[str, dict[str, Any]]:
        """Live objects placed here by nova-gitops, by ``namespace/name``."""
        return {
            f"{body['metadata'].get('namespace', '')}/{body['metadata']['name']}": body
            for body in self.server.objects(resource)
            if nova_labels.TARGET_CLUSTER in (body["metadata"].get("labels") or {})
        }

    def pods(self, phase: str | None = None) -> list[dict[str, Any]]:
        return [
            pod
            for pod in self.server.objects("pods")
            if phase is None or (pod.get("status") or {}).get("phase") == phase
        ]


class LocalLoop:
    """Build everything under ``root``. Stepped by default; see ``tests/e2e/test_loop.py`` for a tour."""

    def __init__(
        self,
        root: Path,
        *,
        clusters: Iterable[str] = ("wlc-1", "wlc-2"),
        nodes_per_cluster: int = 2,
        delegated: bool = False,
        agent_clock: Any = None,  # nova_agent Clock; a FakeClock when None
        controller_clock: Clock | None = None,  # a ManualClock when None
        controller_settings: Mapping[str, Any] | None = None,
        agent_settings: Mapping[str, Any] | None = None,
        cluster_settings: Mapping[str, Mapping[str, Any]] | None = None,  # per cluster, over agent_settings
        controller_log: Any = None,
        wall_clock: Callable[[], datetime] | None = None,  # rollout bakes and timeouts; None: the system's
    ) -> None:
        self.root = root
        self.delegated = delegated
        self.source = SourceRepo(root)
        self.rendered = root / "rendered.git"
        git(root, "init", "--quiet", "--bare", "--initial-branch=main", str(self.rendered))
        self.agent_clock = agent_clock if agent_clock is not None else FakeClock()
        self.controller_clock = controller_clock if controller_clock is not None else ManualClock()
        self.clusters: dict[str, SimCluster] = {}
        for name in clusters:
            overrides = {**dict(agent_settings or {}), **dict((cluster_settings or {}).get(name, {}))}
            self.clusters[name] = self._cluster(name, nodes_per_cluster, overrides)
        chosen: dict[str, Any] = {"interval": 1.0, "delegated": delegated, **dict(controller_settings or {})}
        self.settings = ControllerSettings(
            repo_url=self.rendered_url, cache_dir=root / "controller-cache", **chosen
        )
        self.controller = Controller(
            self.settings,
            source=GitSource(self.source.url, "main", cache_dir=root / "controller-cache" / "source"),
            status=GitStatusReader(self.rendered_url, self.settings.status_branch, cache_dir=root / "status"),
            clock=self.controller_clock,
            log=controller_log,
            wall_clock=wall_clock,
        )

    @property
    def rendered_url(self) -> str:
        return f"file://{self.rendered}"

    def _agent(self, name: str, api_client: Any, overrides: dict[str, Any]) -> Agent:
        """The agent of cluster ``name`` (every second, orchestrating unless delegated), ``overrides``
        replacing any of its settings; the simulated and the real loops make theirs alike."""
        chosen: dict[str, Any] = {
            "interval": 1.0,
            "orchestration_enabled": not self.delegated,
            "pending_timeout": timedelta(seconds=30),
            **overrides,
        }
        settings = AgentSettings(
            cluster=name,
            repo=self.rendered_url,
            cache_dir=self.root / f"agent-cache-{name}",
            namespace=AGENT_NAMESPACE,
            **chosen,
        )
        return Agent(settings, ApiClientKube(api_client), self.agent_clock)

    def _cluster(self, name: str, nodes: int, overrides: dict[str, Any]) -> SimCluster:
        server = FakeKubeServer()
        for index in range(1, nodes + 1):
            server.add_node(
                f"{name}-node-{index}", allocatable=NODE, labels={"topology.kubernetes.io/zone": name}
            )
        sim = SimulatedCluster(server, self.agent_clock.now)
        api_client = client_for(server)
        clienting.request(api_client, "POST", "/api/v1/namespaces", {"metadata": {"name": AGENT_NAMESPACE}})
        agent = self._agent(name, api_client, overrides)
        return SimCluster(name, server, sim, agent, api_client)

    # ----- stepping

    def reconcile(self) -> ReconcileOutcome:
        return self.controller.reconcile_once()

    def agent_pass(self, name: str) -> PassOutcome:
        """An agent pass, then the cluster reacts (pods, statuses), then a pass reporting what it shows."""
        cluster = self.clusters[name]
        first = cluster.agent.pass_once()
        cluster.sim.step()
        second = cluster.agent.pass_once()
        return first if first.sync is not None and (first.sync.applied or first.sync.pruned) else second

    def agents(self) -> dict[str, PassOutcome]:
        return {name: self.agent_pass(name) for name in self.clusters}

    def advance(self, seconds: float) -> None:
        """Move both fake clocks (the agents' and the clusters' share one)."""
        if isinstance(self.agent_clock, FakeClock):
            self.agent_clock.advance(seconds)
        if isinstance(self.controller_clock, ManualClock):
            self.controller_clock.advance(seconds)

    # ----- the rendered repository

    def show(self, path: str, ref: str = "main") -> str:
        return git(self.rendered, "show", f"{ref}:{path}")

    def head_message(self, ref: str = "main") -> str:
        return git(self.rendered, "log", "-1", "--format=%B", ref)

    def placement(self) -> dict[str, Any]:
        """Group name → its decision at the branch head (its file ``placement/<policy>/<group>.yaml``), as
        name, mode, status, clusters and objects."""
        listed = git(self.rendered, "ls-tree", "-r", "--name-only", "main", "--", "placement")
        found: dict[str, Any] = {}
        for path in listed.splitlines():
            if path.endswith(".yaml"):
                group = yaml.load(self.show(path), Loader=yaml.CSafeLoader)
                status = group["status"]
                found[group["metadata"]["name"]] = {
                    "name": group["metadata"]["name"],
                    "mode": status["mode"],
                    "status": status["phase"],
                    "clusters": status["clusters"],
                    "objects": group["objectRefs"],
                }
        return found

    def report(self, name: str) -> dict[str, Any]:
        document: dict[str, Any] = yaml.load(
            self.show(f"status/{name}.yaml", self.settings.status_branch), Loader=yaml.CSafeLoader
        )
        return document

    def external_apply(self, name: str, ref: str = "main") -> int:
        """Delegated mode's orchestrator (what Argo CD would do): server-side apply every file of
        ``clusters/<name>/`` at the head of ``ref``, Namespaces first; returns how many objects it applied."""
        listing = git(self.rendered, "ls-tree", "-r", "--name-only", ref, f"clusters/{name}/").splitlines()
        bodies = [
            yaml.load(self.show(path, ref), Loader=yaml.CSafeLoader)
            for path in listing
            if not path.endswith("kustomization.yaml")
        ]
        bodies.sort(key=lambda body: body["kind"] != "Namespace")
        cluster = self.clusters[name]
        for body in bodies:
            clienting.apply(cluster.api_client, _path(cluster.server, body), body, APPLIER, force=True)
        cluster.sim.step()
        return len(bodies)

    def close(self) -> None:
        for cluster in self.clusters.values():
            cluster.sim.stop()
            cluster.api_client.close()
            cluster.server.stop()


def _path(server: FakeKubeServer, body: Mapping[str, Any]) -> str:
    """The REST path of an object, from the server's own resource table (as a client learns it from
    discovery)."""
    api_version, kind = str(body["apiVersion"]), str(body["kind"])
    group, _, version = api_version.rpartition("/")
    resource_type = next(t for t in server.table.of_group_version(group, version) if t.kind == kind)
    base = f"/apis/{api_version}" if group else f"/api/{version}"
    metadata = body["metadata"]
    if resource_type.namespaced:
        base += f"/namespaces/{metadata.get('namespace', 'default')}"
    return f"{base}/{resource_type.plural}/{metadata['name']}"
