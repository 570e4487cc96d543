"""The agent and the controller run git under one environment policy (``nova_gitops.clients.gitenvironment``):
run from inside a hook that exports ``GIT_DIR``/``GIT_INDEX_FILE``, each side's git still works on its own
repository, sees the commit identity and credential configuration, and never prompts.

Each runner is asked to run ``env`` as a git alias, so what is checked is the environment git itself got.

Fetches driven through GitPython's ``Remote`` (publishing's rendered-repo cache, the source cache, the agent's
cache) honour the same policy:
- a hostile ``~/.gitconfig`` (hooks path, fsmonitor, ``url.insteadOf`` to a decoy, ``protocol.ext.allow``)
  and a hostile system configuration are not read: nothing runs, the real remote is fetched;
- a hook in the cache repository itself never runs;
- an ``ext::`` URL (a command) is refused by GitPython, and by git itself when GitPython's check is waived,
  with no ``GIT_ALLOW_PROTOCOL`` in the environment (the policy's default allow-list) — and the same URL
  does run the command under plain git, so the marker would show it;
- a remote that accepts the connection and never answers hits the agent's deadline.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from nova_agent.gitrepos import GitUnavailable, RepoCache, run_git
from nova_gitops import errors
from nova_gitops.clients import gitrunning
from nova_gitops.clients.gitrunning import GitFailed
from nova_gitops.publishing import gitwriting
from nova_gitops.publishing.gitcommands import GitCommands
from nova_gitops.sources.gitsources import Repository, SourceCache

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


def _git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def _remote_with_a_commit(root: Path, name: str) -> tuple[str, str]:
    """A bare remote holding one commit on ``main``: its URL and the commit."""
    work = root / f"{name}-work"
    _git("init", "--quiet", "--initial-branch=main", str(work))
    (work / "file").write_text(f"{name}\n")
    _git("add", "-A", cwd=work)
    _git("commit", "--quiet", "-m", name, cwd=work)
    _git("clone", "--quiet", "--bare", str(work), str(root / f"{name}.git"))
    return f"file://{root / f'{name}.git'}", _git("rev-parse", "HEAD", cwd=work)


Fetcher = Callable[[str, Path], tuple[Path, str | None]]
"""Fetch ``main`` of a URL into a cache under a directory: the cache's git directory and the commit."""


def _publishing_fetch(url: str, cache: Path) -> tuple[Path, str | None]:
    repo = gitwriting.RenderedRepo(gitwriting.cache_path(cache, url), url)
    return repo.path, repo.fetch("main")


def _sources_fetch(url: str, cache: Path) -> tuple[Path, str | None]:
    source = SourceCache(url, cache)
    source.fetch("main")
    return source.git_dir, source.resolve("main")


def _agent_fetch(url: str, cache: Path) -> tuple[Path, str | None]:
    repo = RepoCache(url, cache)
    return repo.path, repo.fetch("main", "refs/nova/rendered")


FETCHERS = pytest.mark.parametrize(
    "fetch", [_publishing_fetch, _sources_fetch, _agent_fetch], ids=["publishing", "sources", "agent"]
)


def _marker_script(path: Path, marker: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    path.chmod(0o755)
    return path


@FETCHERS
def test_a_gitpython_fetch_reads_no_hostile_global_or_system_configuration(
    fetch: Fetcher, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real, commit = _remote_with_a_commit(tmp_path, "real")
    decoy, _ = _remote_with_a_commit(tmp_path, "decoy")
    marker = tmp_path / "ran"
    hooks = tmp_path / "hostile-hooks"
    for hook in ("reference-transaction", "post-checkout", "pre-push"):
        _marker_script(hooks / hook, marker)
    fsmonitor = _marker_script(tmp_path / "fsmonitor", marker)
    hostile = (
        f"[core]\n\thooksPath = {hooks}\n\tfsmonitor = {fsmonitor}\n"
        f'[url "{decoy}"]\n\tinsteadOf = {real}\n'
        '[protocol "ext"]\n\tallow = always\n'
    )
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(hostile)
    (tmp_path / "system-config").write_text(hostile)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GIT_CONFIG_NOSYSTEM")
    monkeypatch.setenv("GIT_CONFIG_SYSTEM", str(tmp_path / "system-config"))
    monkeypatch.delenv("GIT_ALLOW_PROTOCOL")

    cache, fetched = fetch(real, tmp_path / "cache")
    assert fetched == commit  # the real remote's commit, not the decoy's
    assert not marker.exists()
    # and a hook in the cache repository itself does not run either
    _marker_script(cache / "hooks" / "reference-transaction", marker)
    work = tmp_path / "real-work"
    _git("commit", "--quiet", "--allow-empty", "-m", "more", cwd=work)
    _git("push", "--quiet", str(tmp_path / "real.git"), "HEAD:main", cwd=work)
    marker.unlink(missing_ok=True)  # the helper's own push above runs under the hostile configuration
    assert fetch(real, tmp_path / "cache")[1] == _git("rev-parse", "HEAD", cwd=work)
    assert not marker.exists()


@FETCHERS
def test_ext_urls_are_refused_by_gitpython_and_by_the_policy(
    fetch: Fetcher, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "ran"
    command = f"ext::sh -c touch% {marker}"
    monkeypatch.delenv("GIT_ALLOW_PROTOCOL")  # the policy's own allow-list decides
    with pytest.raises((errors.RepoError, GitUnavailable), match=r"refused|transport 'ext' not allowed"):
        fetch(command, tmp_path / "cache")
    assert not marker.exists()
    # GitPython's own check waived: git, under the policy, refuses the transport
    remote = gitrunning.Remote(gitrunning.open_bare(tmp_path / "bare.git"), command)
    with pytest.raises(GitFailed, match="transport 'ext' not allowed"):
        remote.fetch(["+refs/heads/main:refs/nova/x"], allow_unsafe_protocols=True)
    assert not marker.exists()
    # the marker works: plain git, allowed the transport, runs the command
    plain = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
    subprocess.run(
        ["git", "-c", "protocol.ext.allow=always", "ls-remote", command],
        env=plain,
        capture_output=True,
        check=False,
    )
    assert marker.exists()


def test_the_agents_fetch_from_a_silent_remote_hits_its_deadline(tmp_path: Path) -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"git://127.0.0.1:{silent.getsockname()[1]}/rendered.git"
        with pytest.raises(GitUnavailable, match="no answer"):
            RepoCache(url, tmp_path / "cache", timeout=1.0).fetch("main", "refs/nova/rendered")
