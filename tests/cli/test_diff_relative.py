"""``nova-gitops diff --source <relative path> --base REF``: a relative path works as the absolute one does.

Behaviours covered (a real git repository, run from its parent directory and from inside it):
- ``--source fleet --base main`` (the work tree against main) shows the same change, with the same output,
  as ``--source /abs/fleet``; it once failed with "no branch named main" because git was run in the
  repository's own directory with a path relative to another;
- ``--source .`` from inside the repository, and ``--head`` naming a branch, work the same way;
- a clean work tree is recorded by its commit whether the path is relative or not.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from nova_gitops.cli.diff import diff_command
from nova_gitops.sources import gitsources
from tests.builders import cluster, deployment, policy


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def write(root: Path, replicas: int) -> None:
    documents = (cluster("c1"), policy("p"), deployment("web", replicas=replicas))
    (root / "source.yaml").write_text(yaml.safe_dump_all(documents, sort_keys=False))


@pytest.fixture
def fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A source repository at ``tmp_path/fleet`` with main at 1 replica and a work tree at 3."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "fleet"
    root.mkdir()
    git("init", "--quiet", "--initial-branch=main", cwd=root)
    write(root, 1)
    git("add", "-A", cwd=root)
    git("commit", "--quiet", "-m", "one replica", cwd=root)
    write(root, 3)
    return root


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(diff_command, [*args, "--no-color"])
    return result.exit_code, result.output


def test_a_relative_source_diffs_like_an_absolute_one(fleet: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    absolute = run("--source", str(fleet), "--base", "main")
    assert absolute[0] == 1, absolute[1]
    monkeypatch.chdir(fleet.parent)
    assert run("--source", "fleet", "--base", "main") == absolute
    assert run("--source", "./fleet", "--base", "main") == absolute
    monkeypatch.chdir(fleet)
    assert run("--source", ".", "--base", "main") == absolute


def test_a_relative_source_with_head(fleet: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    git("checkout", "--quiet", "-b", "more", cwd=fleet)
    git("commit", "--quiet", "-am", "three replicas", cwd=fleet)
    absolute = run("--source", str(fleet), "--base", "main", "--head", "more")
    assert absolute[0] == 1, absolute[1]
    monkeypatch.chdir(fleet.parent)
    assert run("--source", "fleet", "--base", "main", "--head", "more") == absolute
    assert run("--source", "fleet", "--base", "main", "--head", "main") == (0, "No changes.\n")


def test_a_clean_relative_work_tree_is_recorded_by_its_commit(
    fleet: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(fleet, 1)
    monkeypatch.chdir(fleet.parent)
    relative = gitsources.open_directory(Path("fleet"))
    absolute = gitsources.open_directory(fleet)
    assert relative.revision is not None and relative.revision == absolute.revision
