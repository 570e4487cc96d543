"""Real git and real files for controller tests: a source directory, a bare rendered repo, a status branch.

Agents' reports are written in the agent's own shape (a Cluster document plus ``rescheduleRequests``), and
pushed to the ``nova-status`` branch as an agent would, so the controller reads them over ``file://``.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from nova_gitops.controller import looping, ports, settings, sourcereading, statusreading


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def dump(*documents: dict[str, Any]) -> str:
    return yaml.safe_dump_all(documents, sort_keys=False)


def policy(name: str = "demo-policy", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"namespaceSelector": {}, "resourceSelectors": {"labelSelectors": [{}]}, **spec}
    return {
        "apiVersion": "policy.elotl.co/v1alpha1",
        "kind": "SchedulePolicy",
        "metadata": {"name": name},
        "spec": body,
    }


def deployment(
    name: str = "web", *, namespace: str = "demo", replicas: int = 2, cpu: str = "500m"
) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [{"name": "app", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}]
                },
            },
        },
    }


def cluster_report(
    name: str,
    *,
    cpu: str = "4",
    available: str | None = None,
    labels: dict[str, str] | None = None,
    requests: list[dict[str, str]] | None = None,
    nodes: int = 1,
) -> dict[str, Any]:
    """A status report as nova-agent writes it (``status/<name>.yaml``)."""
    node_names = [f"{name}-node-{index}" for index in range(nodes)]
    return {
        "apiVersion": "cluster.elotl.co/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name, **(labels or {})}},
        "spec": {"name": name, "provider": "kind", "region": "local", "zone": "local-a"},
        "status": {
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "NodesReady", "message": "1/1 nodes ready"}
            ],
            "capacityResources": {node: {"cpu": cpu, "memory": "16Gi", "pods": "110"} for node in node_names},
            "availableResources": {
                node: {"cpu": available or cpu, "memory": "16Gi", "pods": "110"} for node in node_names
            },
            "nodeLabels": {node: {"kubernetes.io/hostname": node} for node in node_names},
            "nodeTaints": {},
            "autoscaled": False,
            "lastUpdateTime": "2026-01-01T00:00:00Z",
            "syncedRevision": "",
            "workloads": [],
            "rescheduleRequests": requests or [],
            "lastError": "",
            "heartbeat": "2026-01-01T00:00:00Z",
        },
    }


def reschedule_request(
    group: str, *, name: str = "web", since: str = "2026-01-01T00:00:00Z"
) -> dict[str, str]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "namespace": "demo",
        "name": name,
        "group": group,
        "reason": f"deployment demo/{name} does not have minimum replicas available",
        "since": since,
    }


class Fleet:
    """A source directory, a bare rendered repo with a status branch, and a controller over them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.source = root / "source"
        self.source.mkdir()
        self.remote = root / "rendered.git"
        git(root, "init", "--quiet", "--bare", "--initial-branch=main", str(self.remote))
        self.status_work = root / "status-work"
        git(root, "init", "--quiet", "--initial-branch=nova-status", str(self.status_work))
        git(self.status_work, "remote", "add", "origin", self.url)
        self.clock = ports.ManualClock()

    @property
    def url(self) -> str:
        return f"file://{self.remote}"

    def write_source(self, name: str, *documents: dict[str, Any]) -> None:
        (self.source / name).write_text(dump(*documents))

    def report(self, *reports: dict[str, Any], remove: tuple[str, ...] = ()) -> None:
        """Push agents' reports to the status branch (one commit, as a batch of agents would)."""
        status = self.status_work / "status"
        status.mkdir(exist_ok=True)
        for report in reports:
            (status / f"{report['metadata']['name']}.yaml").write_text(dump(report))
        for name in remove:
            (status / f"{name}.yaml").unlink()
        git(self.status_work, "add", "-A")
        git(self.status_work, "commit", "--quiet", "--allow-empty", "-m", "status")
        git(self.status_work, "push", "--quiet", "--force", "origin", "HEAD:nova-status")

    def settings(self, **overrides: Any) -> settings.ControllerSettings:
        values: dict[str, Any] = {"repo_url": self.url, "cache_dir": self.root / "cache", **overrides}
        return settings.ControllerSettings(**values)

    def controller(
        self,
        source: ports.SourceReader | None = None,
        wall_clock: Callable[[], datetime] | None = None,
        observers: Sequence[ports.PlanObserver] = (),
        **overrides: Any,
    ) -> looping.Controller:
        configured = self.settings(**overrides)
        return looping.Controller(
            configured,
            source=source or sourcereading.DirectorySource(self.source, watch_changes=False),
            status=statusreading.GitStatusReader(
                configured.status_url, configured.status_branch, cache_dir=configured.cache_dir
            ),
            clock=self.clock,
            log=_quiet_log(),
            wall_clock=wall_clock,
            observers=observers,
        )

    def head(self, branch: str = "main") -> str:
        return git(self.remote, "rev-parse", branch)

    def show(self, path: str, ref: str = "main") -> str:
        return git(self.remote, "show", f"{ref}:{path}")

    def files(self, ref: str = "main") -> list[str]:
        return git(self.remote, "ls-tree", "-r", "--name-only", ref).splitlines()

    def message(self, ref: str = "main") -> str:
        return git(self.remote, "log", "-1", "--format=%B", ref)

    def commit_count(self, ref: str = "main") -> int:
        return int(git(self.remote, "rev-list", "--count", ref))


def _quiet_log() -> Any:
    import io

    from nova_gitops.controller.logs import JsonLog

    return JsonLog(io.StringIO())


def clusters_of(fleet: Fleet, object_path_suffix: str) -> list[str]:
    """Which cluster directories of the rendered branch hold a file ending with ``object_path_suffix``."""
    return sorted(
        {
            path.split("/")[1]
            for path in fleet.files()
            if path.startswith("clusters/") and path.endswith(object_path_suffix)
        }
    )
