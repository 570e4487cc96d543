"""``nova-gitops publish`` through click, with the real renderer and a bare remote over file://.

Behaviours covered:
- ``--pull-request --body-file F`` writes F even when the render changes nothing (a CI step that posts F
  must not break), says so in F, and pushes no render branch.
- a relative ``--cache-dir`` is the directory it names from where the command runs (git runs elsewhere).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from nova_gitops.cli.main import cli
from tests.publishing.conftest import SourceRepo, git

EXAMPLE_SOURCE = Path(__file__).resolve().parents[2] / "examples" / "repo-layout" / "source"


def test_pull_request_without_changes_still_writes_the_body_file(
    source_repo: SourceRepo, rendered_remote: str, cache_dir: Path, tmp_path: Path
) -> None:
    shutil.copytree(EXAMPLE_SOURCE, source_repo.work, dirs_exist_ok=True)
    source_repo.commit({}, "fleet")
    common = ["--repo", rendered_remote, "--cache-dir", str(cache_dir)]
    first = CliRunner().invoke(cli, ["publish", f"{source_repo.url}@main", *common])
    assert first.exit_code == 0, first.output
    body_file = tmp_path / "pr.md"
    again = CliRunner().invoke(
        cli, ["publish", f"{source_repo.url}@main", *common, "--pull-request", "--body-file", str(body_file)]
    )
    assert again.exit_code == 0, again.output
    assert "No placement changes" in body_file.read_text()
    assert git("ls-remote", rendered_remote, "refs/heads/nova/*") == ""


def test_a_relative_cache_directory_is_taken_from_where_the_command_runs(
    source_repo: SourceRepo, rendered_remote: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(EXAMPLE_SOURCE, source_repo.work, dirs_exist_ok=True)
    source_repo.commit({}, "fleet")
    monkeypatch.chdir(tmp_path)
    common = ["--repo", rendered_remote, "--cache-dir", "relative-cache"]
    result = CliRunner().invoke(cli, ["publish", f"{source_repo.url}@main", *common])
    assert result.exit_code == 0, result.output  # was: git fast-import failed ... not a git repository
    assert (tmp_path / "relative-cache").is_dir()
    assert git("ls-remote", rendered_remote, "refs/heads/main") != ""
