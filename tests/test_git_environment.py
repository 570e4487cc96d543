"""The agent and the controller run git under one environment policy (``nova_gitops.clients.gitenvironment``):
run from inside a hook that exports ``GIT_DIR``/``GIT_INDEX_FILE``, each side's git still works on its own
repository, sees the commit identity and credential configuration, and never prompts.

Each runner is asked to run ``env`` as a git alias, so what is checked is the environment git itself got.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from nova_agent.gitrepos import run_git
from nova_gitops.publishing.gitcommands import GitCommands
from nova_gitops.sources.git import Repository

SHOW_ENV = ["-c", "alias.showenv=!env", "showenv"]
Runner = Callable[[Path], str]


def _agent(repo: Path) -> str:
    return run_git(SHOW_ENV, repo).stdout.decode()


def _publishing(repo: Path) -> str:
    return GitCommands(repo).run(*SHOW_ENV).stdout.decode()


def _sources(repo: Path) -> str:
    return Repository(repo).run(*SHOW_ENV)


def _environment(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


@pytest.mark.parametrize("runner", [_agent, _publishing, _sources], ids=["agent", "publishing", "sources"])
def test_git_sees_no_inherited_location_but_identity_and_credentials(
    runner: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, decoy = tmp_path / "ours.git", tmp_path / "decoy.git"
    for path in (repo, decoy):
        subprocess.run(["git", "init", "--bare", "--quiet", str(path)], check=True)
    monkeypatch.setenv("GIT_DIR", str(decoy))
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "decoy-index"))
    monkeypatch.setenv("GIT_SSH_COMMAND", "ssh -i /keys/deploy")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "http.extraHeader")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "Authorization: Bearer x")
    monkeypatch.delenv("GIT_TERMINAL_PROMPT")
    seen = _environment(runner(repo))
    assert seen.get("GIT_DIR") != str(decoy)
    assert "GIT_INDEX_FILE" not in seen
    assert seen["GIT_AUTHOR_NAME"] == "Nova Test"  # tests/conftest.py's identity
    assert seen["GIT_SSH_COMMAND"] == "ssh -i /keys/deploy"
    assert seen["GIT_CONFIG_KEY_0"] == "http.extraHeader"
    assert seen["GIT_TERMINAL_PROMPT"] == "0"
