"""nova-gitops run from inside a git hook, where git exports ``GIT_INDEX_FILE`` (and friends) to the hook.

Behaviours covered:
- ``diff --source . --base HEAD~1`` with ``GIT_INDEX_FILE`` pointing at the work tree's own index leaves
  the user's staging area exactly as it was: the staged file is still staged, the index bytes unchanged,
  and the diff still shows the change between the two revisions.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from nova_gitops.cli.main import cli
from tests.publishing.conftest import git

EXAMPLE_SOURCE = Path(__file__).resolve().parents[2] / "examples" / "repo-layout" / "source"


def test_diff_in_a_hook_keeps_the_users_staging_area(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "fleet"
    shutil.copytree(EXAMPLE_SOURCE, work)
    git("init", "--quiet", "--initial-branch=main", str(work))
    git("add", "-A", cwd=work)
    git("commit", "--quiet", "-m", "fleet", cwd=work)
    storefront = work / "apps" / "web" / "storefront.yaml"
    storefront.write_text(storefront.read_text().replace("replicas: 10", "replicas: 12"))
    git("commit", "--quiet", "-am", "more storefront", cwd=work)
    (work / "notes.txt").write_text("work in progress\n")
    git("add", "notes.txt", cwd=work)
    index = work / ".git" / "index"
    staged_before, index_before = git("diff", "--cached", "--name-only", cwd=work), index.read_bytes()

    monkeypatch.chdir(work)
    monkeypatch.setenv("GIT_INDEX_FILE", str(index))
    result = CliRunner().invoke(
        cli, ["diff", "--source", ".", "--base", "HEAD~1", "--cache-dir", str(tmp_path)]
    )
    monkeypatch.delenv("GIT_INDEX_FILE")

    assert result.exit_code == 1, result.output
    assert "storefront" in result.output
    assert staged_before == "notes.txt"
    assert git("diff", "--cached", "--name-only", cwd=work) == "notes.txt"
    assert index.read_bytes() == index_before
