"""The GitPython port (``nova_gitops.clients.gitrunning``), with real git over ``file://``.

Behaviours covered:
- a fetch or push given a progress hook reports git's stages (what the progress bars will show);
- a push reports each ref: pushed, up to date, rejected with git's reason, and a lease that no longer holds;
- no private push ref is left behind in the cache;
- GitPython's refusal of an unsafe option comes out as ``GitFailed`` (a ``RepoError``), not GitPython's own.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from nova_gitops import errors
from nova_gitops.clients import gitrunning
from nova_gitops.clients.gitrunning import GitFailed, Progress


def _git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def _commit(work: Path, text: str) -> str:
    (work / "file").write_text(text)
    _git("add", "-A", cwd=work)
    _git("commit", "--quiet", "-m", text, cwd=work)
    return _git("rev-parse", "HEAD", cwd=work)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    _git("init", "--quiet", "--initial-branch=main", str(work))
    _commit(work, "one\n")
    return work


def test_progress_hook_sees_the_stages_of_a_fetch_and_a_push(work: Path, tmp_path: Path) -> None:
    seen: list[Progress] = []
    cache = gitrunning.open_bare(tmp_path / "cache.git")
    gitrunning.Remote(cache, f"file://{work}", progress=seen.append).fetch(["+refs/heads/main:refs/nova/x"])
    assert {report.stage for report in seen} >= {"counting"}
    assert all(report.total is None or report.done <= report.total for report in seen)
    seen.clear()
    _git("init", "--quiet", "--bare", str(tmp_path / "remote.git"))
    remote = gitrunning.Remote(cache, f"file://{tmp_path}/remote.git", progress=seen.append)
    remote.push({"refs/heads/main": str(cache.commit("refs/nova/x").hexsha)})
    assert {report.stage for report in seen} & {"writing", "counting", "compressing"}


def test_a_push_reports_each_ref_and_leaves_no_private_ref(work: Path, tmp_path: Path) -> None:
    _git("init", "--quiet", "--bare", str(tmp_path / "remote.git"))
    first = _git("rev-parse", "HEAD", cwd=work)
    second = _commit(work, "two\n")
    cache = gitrunning.open_bare(tmp_path / "cache.git")
    gitrunning.Remote(cache, f"file://{work}").fetch(["+refs/heads/main:refs/nova/x"])
    remote = gitrunning.Remote(cache, f"file://{tmp_path}/remote.git")

    pushed = remote.push({"refs/heads/main": second, "refs/heads/old": first})
    assert [(u.ref, u.flag) for u in pushed.updates] == [("refs/heads/main", "*"), ("refs/heads/old", "*")]
    assert not pushed.error
    again = remote.push({"refs/heads/main": second})
    assert [u.flag for u in again.updates] == ["="]
    backwards = remote.push({"refs/heads/main": first})
    assert [u.line() for u in backwards.rejected] == ["!\trefs/heads/main\t[rejected] (non-fast-forward)"]
    assert backwards.error
    lost = remote.push({"refs/heads/old": second}, force_with_lease="refs/heads/old:" + second)
    assert [u.summary for u in lost.rejected] == ["[rejected] (stale info)"]
    assert _git("for-each-ref", "refs/nova/push/", cwd=tmp_path / "cache.git") == ""


def test_gitpythons_refusals_are_ours(work: Path, tmp_path: Path) -> None:
    cache = gitrunning.open_bare(tmp_path / "cache.git")
    remote = gitrunning.Remote(cache, f"file://{work}")
    with pytest.raises(GitFailed, match="refused") as refused:
        remote.fetch(["main"], upload_pack="touch /tmp/never")
    assert isinstance(refused.value, errors.RepoError)
