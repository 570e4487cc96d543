"""Commands a person runs read their own git configuration (credential helpers, ``url.*.insteadOf``), as git
in their shell does; the controller, a daemon, does not; and the environment is put back after each command
(docs/publishing.md, "Git")."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from nova_gitops.cli.main import cli
from nova_gitops.clients import gitenvironment


def test_the_persons_configuration_unless_the_environment_says_otherwise() -> None:
    assert gitenvironment.person_configuration({}, "/home/me/.gitconfig") == {
        "GIT_CONFIG_NOSYSTEM": "0",
        "GIT_CONFIG_GLOBAL": "/home/me/.gitconfig",
    }
    assert gitenvironment.person_configuration({}, None) == {"GIT_CONFIG_NOSYSTEM": "0"}
    chosen = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/etc/ours"}
    assert gitenvironment.person_configuration(chosen, "/home/me/.gitconfig") == {}


def test_a_command_follows_insteadof_from_the_persons_gitconfig(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``diff --source URL`` reads a source at a URL the person's ``~/.gitconfig`` rewrites to a real one."""
    real = tmp_path / "real"
    work = tmp_path / "work"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(real)], check=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    (work / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: d}\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@x"
    for args in (["add", "-A"], ["commit", "-qm", "one"], ["push", "-q", str(real), "main"]):
        subprocess.run(["git", *args], cwd=work, check=True, env=env)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        f'[url "file://{real}"]\n\tinsteadOf = https://git.example.invalid/fleet\n'
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    monkeypatch.delenv("GIT_CONFIG_NOSYSTEM", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    result = CliRunner().invoke(cli, ["validate", "https://git.example.invalid/fleet"])
    assert result.exit_code == 0, result.output
    assert "GIT_CONFIG_GLOBAL" not in os.environ  # put back after the command
