"""Issue 24's "done when": a pull request that changes one workload shows, in ``git diff --stat``, only its
group's file and its policy's page, the small index and summary, and the workload's files on its clusters.

The fleet is ``bench/fleet.py``'s at a small size (single placement, groups, Divide and Duplicate policies
over 12 clusters): one Deployment's replicas change in the source, ``publish --pull-request`` pushes the PR
branch, and the branch's diff against ``main`` is read with git's own ``diff --stat``. Covered for a workload
placed on one cluster, and for one of a Duplicate group (its file on every cluster of the group changes,
and still one group's file).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from bench.fleet import generate_fleet
from nova_gitops.publishing import messages
from nova_gitops.rendering import layout
from nova_gitops.scheduling.plans import PlanSettings
from nova_gitops.workflows import publishing, renderers
from tests import placements
from tests.publishing.conftest import git, make_bare


def fleet_source(root: Path) -> Path:
    source = root / "source"
    source.mkdir()
    generate_fleet(source, clusters=12, workloads=100, seed=0)  # every style: 40, 25, 20, 15 in 100
    git("init", "--quiet", "--initial-branch=main", str(source))
    git("add", "-A", cwd=source)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "fleet", cwd=source)
    return source


def bump(source: Path, style: str) -> str:
    """Add one replica to the first Deployment of a placement ``style`` (``single``, ``duplicate``, as the
    fleet labels its workloads); its name."""
    for path in sorted(source.rglob("*.yaml")):
        documents = list(yaml.safe_load_all(path.read_text()))
        for document in documents:
            if (
                isinstance(document, dict)
                and document.get("kind") == "Deployment"
                and document["metadata"].get("labels", {}).get("style") == style
            ):
                document["spec"]["replicas"] += 1
                path.write_text(yaml.safe_dump_all(documents, sort_keys=False))
                git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "one workload", cwd=source)
                return str(document["metadata"]["name"])
    raise AssertionError(f"no Deployment of style {style}")


@pytest.mark.parametrize("style", ["single", "duplicate"])
def test_a_one_workload_pull_request_shows_only_what_it_touches(tmp_path: Path, style: str) -> None:
    source = fleet_source(tmp_path)
    remote = make_bare(tmp_path / "rendered.git")
    render = renderers.default_render(PlanSettings(), cache_dir=tmp_path / "cache")
    first = publishing.publish(str(source), remote, render=render, cache_dir=tmp_path / "cache")
    assert first.outcome is publishing.Outcome.PUBLISHED
    name = bump(source, style)
    options = publishing.PublishOptions(pull_request=True)
    result = publishing.publish(
        str(source), remote, render=render, cache_dir=tmp_path / "cache", options=options
    )
    assert result.outcome is publishing.Outcome.PUBLISHED
    revision = git("rev-parse", "HEAD", cwd=source)
    assert result.branch == messages.pull_request_branch(revision)
    bare = str(tmp_path / "rendered.git")
    stat = git("--git-dir", bare, "diff", "--stat=200", "main", result.branch)
    changed = [line.split("|")[0].strip() for line in stat.splitlines()[:-1]]
    group_files = [path for path in changed if layout.is_group_file(path)]
    assert len(group_files) == 1, stat
    folder = group_files[0].rpartition("/")[0]
    objects = [path for path in changed if path.startswith("clusters/")]
    assert objects and all(re.fullmatch(rf"clusters/[^/]+/[^/]+/deployment-{name}\.yaml", p) for p in objects)
    summaries = sorted(set(changed) - set(objects) - set(group_files))
    assert summaries == sorted(["PLACEMENT.md", "placement.yaml", f"{folder}/README.md"]), stat
    group = yaml.safe_load(show(bare, result.branch, group_files[0]))
    assert any(ref["name"] == name for ref in group["objectRefs"])
    assert {path.split("/")[1] for path in objects} == set(group["status"]["clusters"])
    if style == "duplicate":
        assert len(objects) == 12
    written = sum(len(show(bare, result.branch, path)) for path in changed)
    assert written < 64 * 1024  # kilobytes: the fleet's placement is far more
    every = placements.from_files({path: show(bare, "main", path) for path in placement_paths(bare)})
    assert len(every["groups"]) > 20


def show(bare: str, ref: str, path: str) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", bare, "show", f"{ref}:{path}"], check=True, capture_output=True
    ).stdout


def placement_paths(bare: str) -> list[str]:
    listed = git("--git-dir", bare, "ls-tree", "-r", "--name-only", "main").split()
    return [path for path in listed if path == "placement.yaml" or layout.is_group_file(path)]
