"""Real git for publishing tests: bare remotes over file://, source repositories with commits, and a stand-in
renderer (the real one is tested elsewhere) that turns ``<cluster>/<name>.yaml`` source files into a rendered
tree with its placement files, so that a test can move, change, add or delete one workload precisely."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from nova_gitops import errors
from nova_gitops.api.problems import Problem, SourceLocation
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.scheduling.plans import PreviousPlacement


def git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def make_bare(path: Path) -> str:
    git("init", "--bare", "--quiet", "--initial-branch=main", str(path))
    return f"file://{path}"


class SourceRepo:
    """A source work tree whose commits are pushed to a bare remote (``url``)."""

    def __init__(self, root: Path, name: str = "source") -> None:
        self.work = root / name
        self.bare = root / f"{name}.git"
        self.url = make_bare(self.bare)
        git("init", "--quiet", "--initial-branch=main", str(self.work))
        git("remote", "add", "origin", self.url, cwd=self.work)

    def commit(
        self, files: Mapping[str, str | None], message: str = "change", *, allow_empty: bool = False
    ) -> str:
        for name, text in files.items():
            path = self.work / name
            if text is None:
                path.unlink()
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
        git("add", "-A", cwd=self.work)
        git("commit", "--quiet", *(["--allow-empty"] if allow_empty else []), "-m", message, cwd=self.work)
        git("push", "--quiet", "origin", "HEAD:main", cwd=self.work)
        return git("rev-parse", "HEAD", cwd=self.work)


def workload(name: str, replicas: int = 1, kind: str = "Deployment") -> str:
    metadata = f"metadata:\n  name: {name}\n  namespace: default\n"
    return f"apiVersion: apps/v1\nkind: {kind}\n{metadata}spec:\n  replicas: {replicas}\n"


def fake_render(root: Path, source: SourceInfo, previous: PreviousPlacement) -> dict[str, bytes]:
    """``<cluster>/<name>.yaml`` → ``clusters/<cluster>/default/<name>.yaml`` plus kustomizations, a group
    file ``placement/p/<name>.yaml`` per workload name and a placement.yaml index, in the real layout. A file
    named ``BROKEN`` makes the source invalid."""
    if (root / "BROKEN").exists():
        raise errors.InputError([Problem(SourceLocation("BROKEN", 1), "the source is broken on purpose")])
    files: dict[str, bytes] = {}
    groups: dict[str, dict[str, Any]] = {}
    for path in sorted(root.glob("*/*.yaml")):
        cluster, name = path.parent.name, path.stem
        data = path.read_bytes()
        files[f"clusters/{cluster}/default/{path.name}"] = data
        body = yaml.safe_load(data)
        group = groups.setdefault(name, group_document(name))
        group["status"]["clusters"].append(cluster)
        replicas = body.get("spec", {}).get("replicas")
        if replicas is not None:
            objects = group["objectRefs"]
            if not objects:
                objects.append({"kind": body["kind"], "namespace": "default", "name": name, "replicas": {}})
            objects[0]["replicas"][cluster] = replicas
    for cluster in sorted({path.split("/")[1] for path in files}):
        entries = sorted(p.split("/", 2)[2] for p in files if p.startswith(f"clusters/{cluster}/"))
        files[f"clusters/{cluster}/kustomization.yaml"] = yaml.safe_dump({"resources": entries}).encode()
    for name, group in groups.items():
        files[f"placement/p/{name}.yaml"] = yaml.safe_dump(group, sort_keys=False).encode()
    placement = {
        "apiVersion": "gitops.nova.elotl.co/v1alpha1",
        "kind": "Placement",
        "format": 2,
        "source": {"repo": source.repo, "revision": source.revision},
        "policies": [{"name": "p", "folder": "placement/p", "groups": len(groups)}] if groups else [],
        "unscheduled": [],
        "warnings": [],
    }
    files["placement.yaml"] = yaml.safe_dump(placement, sort_keys=False).encode()
    return files


def group_document(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "gitops.nova.elotl.co/v1alpha1",
        "kind": "ScheduleGroupPlacement",
        "metadata": {"name": name},
        "policy": {"name": "p"},
        "objectRefs": [],
        "status": {"mode": "single", "phase": "scheduled", "clusters": [], "reason": "fake"},
    }


@pytest.fixture
def source_repo(tmp_path: Path) -> SourceRepo:
    return SourceRepo(tmp_path)


@pytest.fixture
def rendered_remote(tmp_path: Path) -> str:
    return make_bare(tmp_path / "rendered.git")


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "cache"
