"""``nova-gitops report`` of a source named by a git URL with credentials (issue 27): the file is a CI
artifact attached to pull requests, so the URL's ``user:token@`` is never written into it (the rollout
commands name the source as the controller's view names it, through ``public_url``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from nova_gitops.cli.main import cli
from tests.builders import cluster, deployment, policy

URL = "https://bot:s3cret-token@git.example/fleet.git"


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_a_source_urls_credentials_are_not_in_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    documents = [cluster("wlc-1"), policy("p", clusterSelector={}), deployment("web")]
    (work / "source.yaml").write_text(yaml.safe_dump_all(documents))
    git(work, "init", "-q", "-b", "main")
    git(work, "add", "source.yaml")
    git(work, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "source")
    bare = tmp_path / "fleet.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    config = tmp_path / "gitconfig"  # the URL with credentials is served by the local bare repository
    config.write_text(f'[url "file://{bare}"]\n\tinsteadOf = {URL}\n')
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    output = tmp_path / "fleet.html"
    result = CliRunner().invoke(cli, ["report", URL, "-o", str(output), "--quiet"], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    html = output.read_text()
    assert "--source https://git.example/fleet.git" in html
    assert "s3cret-token" not in html and "bot:" not in html
