"""A rendered repository in the single-file layout (one placement.yaml for the whole fleet, before issue 24)
upgrades to one file per ScheduleGroup in one commit, and nothing moves.

Behaviours covered:
- the first publish after the upgrade reads the old placement.yaml as the previous render (with a fresh
  cache: no index, no kept placement), so every group stays where the old render put it, although a plan
  without it would place them differently; it makes one commit whose message says it converts the layout,
  which adds the group files and pages, rewrites the index, PLACEMENT.md and .gitattributes, and changes no
  cluster file; the next publish, from this cache or a fresh one, finds nothing to do;
- the controller converts the same way, with the same note, and moves nothing;
- ``diff OLD_DIR NEW_DIR`` across the upgrade reports no group moved and no replica changed;
- ``render --previous`` of an old render directory, or of a ref whose tree is in the old layout, keeps its
  groups where they were.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from nova_gitops.cli.main import cli
from nova_gitops.publishing import messages
from nova_gitops.publishing.gitwriting import RenderedRepo, TreeChanges, cache_path
from nova_gitops.rendering import renders
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.scheduling import planning
from nova_gitops.scheduling.plans import PlanSettings, PreviousPlacement
from nova_gitops.workflows import diffing, publishing, renderers
from tests import oldrenders, placements
from tests.builders import cluster, deployment, policy, source_set
from tests.publishing.conftest import SourceRepo, git, make_bare

ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
}
DOCUMENTS = (cluster("a"), cluster("b"), policy("p"), deployment("web"), deployment("api"), deployment("db"))


def old_render(source: SourceInfo) -> tuple[dict[str, bytes], dict[str, tuple[str, ...]]]:
    """The source rendered in the single-file layout with every group on another cluster than a plan from
    nothing puts it (an old render's stickiness the new code must keep), and where those groups are."""
    fresh = planning.plan(source_set(*DOCUMENTS))
    swapped = {group.name: ("b",) if group.clusters == ("a",) else ("a",) for group in fresh.groups}
    plan = planning.plan(source_set(*DOCUMENTS), previous=PreviousPlacement(groups=swapped))
    assert {group.name: group.clusters for group in plan.groups} == swapped
    return oldrenders.old_layout(renders.render(plan, source).files, plan, source), swapped


def placed(files: dict[str, bytes]) -> dict[str, tuple[str, ...]]:
    return {group["name"]: tuple(group["clusters"]) for group in placements.from_files(files)["groups"]}


def head_files(bare: Path) -> dict[str, bytes]:
    paths = git("--git-dir", str(bare), "ls-tree", "-r", "--name-only", "main").split()
    return {
        path: subprocess.run(
            ["git", "--git-dir", str(bare), "show", f"main:{path}"], check=True, capture_output=True
        ).stdout
        for path in paths
        if path == "placement.yaml" or path.startswith("placement/")
    }


def test_the_first_publish_converts_in_one_commit_and_moves_nothing(tmp_path: Path) -> None:
    source = SourceRepo(tmp_path)
    revision = source.commit(
        {"source.yaml": yaml.dump_all(DOCUMENTS, Dumper=yaml.CSafeDumper, sort_keys=False)}
    )
    remote = make_bare(tmp_path / "rendered.git")
    old, swapped = old_render(SourceInfo(source.url, revision))
    upgrader = RenderedRepo(cache_path(tmp_path / "old-version", remote), remote)
    old_head = upgrader.commit(None, TreeChanges(old, ()), "render by the old version", environ=ENV)
    upgrader.push(old_head, "main")

    render = renderers.default_render(PlanSettings())
    result = publishing.publish(source.url, remote, render=render, cache_dir=tmp_path / "cache")
    assert result.outcome is publishing.Outcome.PUBLISHED
    assert messages.LAYOUT_NOTE in result.message
    assert result.message.splitlines()[0].endswith(": +0 ~0 -0 objects, 0 groups moved")
    bare = tmp_path / "rendered.git"
    assert git("--git-dir", str(bare), "rev-parse", "main^") == old_head  # one commit
    changed = git("--git-dir", str(bare), "diff", "--name-only", "main^", "main").split()
    assert not [path for path in changed if path.startswith("clusters/")]  # nothing moved
    assert {".gitattributes", "PLACEMENT.md", "placement.yaml", "placement/p/README.md"} <= set(changed)
    assert sum(path.startswith("placement/p/p-") for path in changed) == len(swapped)
    assert placed(head_files(bare)) == swapped

    for cache in ("cache", "fresh-cache"):
        again = publishing.publish(source.url, remote, render=render, cache_dir=tmp_path / cache)
        assert again.outcome is publishing.Outcome.UNCHANGED


def test_the_controller_converts_with_the_same_note(tmp_path: Path) -> None:
    from tests.controller.helpers import Fleet

    fleet = Fleet(tmp_path)
    fleet.write_source("source.yaml", *DOCUMENTS)
    old, swapped = old_render(SourceInfo("src", None))
    upgrader = RenderedRepo(cache_path(tmp_path / "old-version", fleet.url), fleet.url)
    head = upgrader.fetch("main")
    upgrader.push(upgrader.commit(head, TreeChanges(old, ()), "old render", environ=ENV), "main")
    controller = fleet.controller()
    outcome = controller.reconciler.reconcile()
    assert outcome.outcome is publishing.Outcome.PUBLISHED and outcome.moved == 0
    assert messages.LAYOUT_NOTE in fleet.message()
    groups = {name: group["clusters"] for name, group in placements_of(fleet).items()}
    assert groups == {name: list(clusters) for name, clusters in swapped.items()}


def placements_of(fleet: Any) -> dict[str, Any]:
    files = {
        path: fleet.show(path).encode() + b"\n"
        for path in fleet.files()
        if path == "placement.yaml" or path.startswith("placement/")
    }
    return {group["name"]: group for group in placements.from_files(files)["groups"]}


def write(root: Path, files: dict[str, bytes]) -> Path:
    for path, data in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    return root


def test_diff_and_previous_across_the_upgrade(tmp_path: Path) -> None:
    old, swapped = old_render(SourceInfo("src", None))
    old_dir = write(tmp_path / "old", old)
    source = tmp_path / "src"
    source.mkdir()
    (source / "source.yaml").write_text(yaml.dump_all(DOCUMENTS, Dumper=yaml.CSafeDumper, sort_keys=False))
    runner = CliRunner()
    new_dir = tmp_path / "new"
    result = runner.invoke(cli, ["render", str(source), "-o", str(new_dir), "--previous", str(old_dir)])
    assert result.exit_code == 0, result.output
    assert {name: tuple(c) for name, c in placements_ref(new_dir).items()} == swapped
    diff = diffing.diff_directories(old_dir, new_dir)
    assert diff.groups == () and diff.replicas == () and diff.objects == ()
    assert not diff.new_warnings and not diff.newly_unscheduled

    repository = tmp_path / "rendered"  # a ref of the output's repository whose tree is the old layout
    write(repository, old)
    git("init", "-q", "-b", "main", cwd=repository)
    git("add", "-A", cwd=repository)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "old", cwd=repository)
    result = runner.invoke(cli, ["render", str(source), "-o", str(repository), "--previous", "HEAD"])
    assert result.exit_code == 0, result.output
    assert {name: tuple(c) for name, c in placements_ref(repository).items()} == swapped


def placements_ref(root: Path) -> dict[str, list[str]]:
    return {group["name"]: group["clusters"] for group in placements.read(root)["groups"]}
