"""Publishing under concurrency and failure, with real git (file:// remotes and a loopback git daemon).

Behaviours covered:
- two publishers racing on one branch both finish and the branch ends at a complete render of the newest
  source: the older one, losing the race, reports ``superseded``; the newer one, losing the race, re-plans
  on the new head and pushes on top of it; real concurrent publishers, round after round, both finish and
  the branch ends at the newest source;
- a push that loses the remote's ref lock to another push (``failed to update ref``, ``incorrect old
  value``) is retried like a non-fast-forward; only hook and protection refusals name branch protection;
- a process killed between commit and push leaves the remote untouched, and the next run still works
  (the cache lock dies with the process);
- over git://: an unreachable remote, a remote that never answers (deadline) and a push refused by a hook
  each give one clear RepoError and commit nothing; an ordinary publish works.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from nova_gitops import errors
from nova_gitops.publishing import gitwriting
from nova_gitops.publishing.gitcommands import GitFailed
from nova_gitops.workflows import publishing
from nova_gitops.workflows.publishing import Outcome, PublishOptions
from tests.publishing.conftest import SourceRepo, fake_render, git, make_bare, workload

BASE = {"c1/web.yaml": workload("web", 2), "c1/api.yaml": workload("api"), "c2/db.yaml": workload("db")}


def head_message(url: str, branch: str = "main") -> str:
    return git(
        "--git-dir", url.removeprefix("file://").removeprefix("git://"), "log", "-1", "--format=%B", branch
    )


def test_older_publisher_losing_the_race_is_superseded(
    source_repo: SourceRepo, rendered_remote: str, tmp_path: Path
) -> None:
    older = source_repo.commit(BASE)
    newer = source_repo.commit({"c1/web.yaml": workload("web", 3)})
    raced: list[publishing.PublishResult] = []

    def other_machine_publishes_first(_: str) -> None:
        if not raced:
            raced.append(
                publishing.publish(
                    source_repo.url, rendered_remote, render=fake_render, cache_dir=tmp_path / "b"
                )
            )

    result = publishing.publish(
        f"{source_repo.url}@{older}",
        rendered_remote,
        render=fake_render,
        cache_dir=tmp_path / "a",
        on_committed=other_machine_publishes_first,
    )
    assert raced[0].outcome is Outcome.PUBLISHED
    assert result.outcome is Outcome.SUPERSEDED and result.head_revision == newer
    assert f"Nova-Source-Revision: {newer}" in head_message(rendered_remote)


def test_newer_publisher_losing_the_race_publishes_on_top(
    source_repo: SourceRepo, rendered_remote: str, tmp_path: Path
) -> None:
    older = source_repo.commit(BASE)
    newer = source_repo.commit({"c1/web.yaml": workload("web", 3)})
    raced: list[publishing.PublishResult] = []

    def other_machine_publishes_first(_: str) -> None:
        if not raced:
            raced.append(
                publishing.publish(
                    f"{source_repo.url}@{older}",
                    rendered_remote,
                    render=fake_render,
                    cache_dir=tmp_path / "b",
                )
            )

    result = publishing.publish(
        source_repo.url,
        rendered_remote,
        render=fake_render,
        cache_dir=tmp_path / "a",
        on_committed=other_machine_publishes_first,
    )
    assert result.outcome is Outcome.PUBLISHED and result.attempts == 2
    bare = rendered_remote.removeprefix("file://")
    assert git("--git-dir", bare, "rev-parse", "main^") == raced[0].commit
    assert f"Nova-Source-Revision: {newer}" in head_message(rendered_remote)
    assert git("--git-dir", bare, "diff", "--name-only", "main^", "main").splitlines() == [
        "clusters/c1/default/web.yaml",
        "placement.yaml",
        "placement/p/web.yaml",
    ]


def test_a_push_that_loses_the_remote_ref_lock_is_retried(
    source_repo: SourceRepo, rendered_remote: str, cache_dir: Path
) -> None:
    source_repo.commit(BASE)
    first = publishing.publish(source_repo.url, rendered_remote, render=fake_render, cache_dir=cache_dir)
    newer = source_repo.commit({"c1/web.yaml": workload("web", 3)})
    ref_lock = Path(rendered_remote.removeprefix("file://")) / "refs" / "heads" / "main.lock"
    commits: list[str] = []

    def another_push_holds_the_ref_lock(commit: str) -> None:  # as a concurrent receive-pack does
        commits.append(commit)
        if len(commits) == 1:
            ref_lock.write_text(f"{first.commit}\n")
        else:
            ref_lock.unlink()

    result = publishing.publish(
        source_repo.url,
        rendered_remote,
        render=fake_render,
        cache_dir=cache_dir,
        on_committed=another_push_holds_the_ref_lock,
    )
    assert result.outcome is Outcome.PUBLISHED and result.attempts == 2
    assert f"Nova-Source-Revision: {newer}" in head_message(rendered_remote)


@pytest.mark.parametrize(
    ("rejection", "retried"),
    [
        ("[rejected] (non-fast-forward)", True),
        ("[rejected] (fetch first)", True),
        ("[remote rejected] (failed to update ref)", True),
        ("[remote rejected] (failed to lock)", True),
        ("[remote rejected] (incorrect old value provided)", True),
        ("[remote rejected] (cannot lock ref 'refs/heads/main': is at 1 but expected 2)", True),
        ("[remote rejected] (pre-receive hook declined)", False),
        ("[remote rejected] (protected branch hook declined)", False),
        ("[remote rejected] (shallow update not allowed)", False),
    ],
)
def test_which_push_rejections_are_retried(rejection: str, retried: bool) -> None:
    assert gitwriting.is_retryable(f"!\tHEAD:refs/heads/main\t{rejection}") is retried


@pytest.mark.parametrize(
    ("stderr", "protection_hint"),
    [
        ("!\tHEAD:refs/heads/main\t[remote rejected] (pre-receive hook declined)", True),
        ("!\tHEAD:refs/heads/main\t[remote rejected] (protected branch)", True),
        ("!\tHEAD:refs/heads/main\t[remote rejected] (unpacker error)", False),
    ],
)
def test_branch_protection_is_suggested_only_for_hooks_and_protection(
    stderr: str, protection_hint: bool
) -> None:
    error = gitwriting.remote_error("file:///r.git", "push to", GitFailed(("push",), 1, stderr))
    assert ("branch protection" in str(error)) is protection_hint


def test_concurrent_publishers_end_at_the_newest_source_round_after_round(
    source_repo: SourceRepo, rendered_remote: str, tmp_path: Path
) -> None:
    source_repo.commit(BASE)
    for round_number in range(6):
        older = source_repo.commit({"c1/api.yaml": workload("api", 2 * round_number + 2)})
        newer = source_repo.commit({"c1/api.yaml": workload("api", 2 * round_number + 3)})
        with ThreadPoolExecutor(max_workers=2) as pool:
            racing = [
                pool.submit(
                    publishing.publish,
                    f"{source_repo.url}@{revision}",
                    rendered_remote,
                    render=fake_render,
                    cache_dir=tmp_path / name,
                )
                for name, revision in (("older", older), ("newer", newer))
            ]
            outcomes = [future.result().outcome for future in racing]  # a lost race raises here
        assert outcomes[1] is Outcome.PUBLISHED or outcomes[1] is Outcome.UNCHANGED, round_number
        assert f"Nova-Source-Revision: {newer}" in head_message(rendered_remote), round_number


KILLER = """
import os, signal, sys
from pathlib import Path
from nova_gitops.workflows import publishing
from tests.publishing.conftest import fake_render
publishing.publish(sys.argv[1], sys.argv[2], render=fake_render, cache_dir=Path(sys.argv[3]),
                   on_committed=lambda commit: os.kill(os.getpid(), signal.SIGKILL))
"""


def test_kill_between_commit_and_push_leaves_the_remote_untouched(
    source_repo: SourceRepo, rendered_remote: str, cache_dir: Path
) -> None:
    source_repo.commit(BASE)
    first = publishing.publish(source_repo.url, rendered_remote, render=fake_render, cache_dir=cache_dir)
    source_repo.commit({"c2/db.yaml": workload("db", 4)})
    killed = subprocess.run(
        [sys.executable, "-c", KILLER, source_repo.url, rendered_remote, str(cache_dir)],
        cwd=Path(__file__).parents[2],
        capture_output=True,
    )
    assert killed.returncode == -signal.SIGKILL
    assert git("ls-remote", rendered_remote, "refs/heads/main").split("\t")[0] == first.commit
    after = publishing.publish(source_repo.url, rendered_remote, render=fake_render, cache_dir=cache_dir)
    assert after.outcome is Outcome.PUBLISHED


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A git daemon on loopback serving (and accepting pushes to) the repositories under ``served``."""
    served = tmp_path / "served"
    served.mkdir()
    port = free_port()
    process = subprocess.Popen(
        [
            "git",
            "daemon",
            "--reuseaddr",
            "--export-all",
            "--enable=receive-pack",
            f"--base-path={served}",
            "--listen=127.0.0.1",
            f"--port={port}",
            str(served),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    try:
        yield f"git://127.0.0.1:{port}", served
    finally:
        process.terminate()
        process.wait()


def test_publish_over_git_daemon(source_repo: SourceRepo, daemon: tuple[str, Path], cache_dir: Path) -> None:
    base_url, served = daemon
    make_bare(served / "rendered.git")
    source_repo.commit(BASE)
    result = publishing.publish(
        source_repo.url, f"{base_url}/rendered.git", render=fake_render, cache_dir=cache_dir
    )
    assert result.outcome is Outcome.PUBLISHED
    assert git("--git-dir", str(served / "rendered.git"), "rev-parse", "main") == result.commit


def test_push_refused_by_a_hook_is_a_clear_error(
    source_repo: SourceRepo, daemon: tuple[str, Path], cache_dir: Path
) -> None:
    base_url, served = daemon
    make_bare(served / "rendered.git")
    hook = served / "rendered.git" / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'protected branch' >&2\nexit 1\n")
    hook.chmod(0o755)
    source_repo.commit(BASE)
    with pytest.raises(errors.RepoError, match="refused the push"):
        publishing.publish(
            source_repo.url, f"{base_url}/rendered.git", render=fake_render, cache_dir=cache_dir
        )
    assert git("ls-remote", f"{base_url}/rendered.git") == ""


def test_remote_down_is_a_clear_error(source_repo: SourceRepo, cache_dir: Path) -> None:
    source_repo.commit(BASE)
    with pytest.raises(errors.RepoError, match="check the URL, your network and your credentials"):
        publishing.publish(
            source_repo.url,
            f"git://127.0.0.1:{free_port()}/rendered.git",
            render=fake_render,
            cache_dir=cache_dir,
        )


def test_remote_that_never_answers_hits_the_deadline(source_repo: SourceRepo, cache_dir: Path) -> None:
    source_repo.commit(BASE)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        with pytest.raises(errors.RepoError, match="gave no answer in time"):
            publishing.publish(
                source_repo.url,
                f"git://127.0.0.1:{port}/rendered.git",
                render=fake_render,
                cache_dir=cache_dir,
                options=PublishOptions(timeout=1.0),
            )


def test_environment_git_dir_does_not_leak(
    source_repo: SourceRepo,
    rendered_remote: str,
    cache_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    decoy = tmp_path / "decoy.git"
    make_bare(decoy)
    source_repo.commit(BASE)  # before the decoy variables: the test's own git calls must not see them
    monkeypatch.setenv("GIT_DIR", str(decoy))
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "decoy-index"))
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", str(decoy / "objects"))
    result = publishing.publish(source_repo.url, rendered_remote, render=fake_render, cache_dir=cache_dir)
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_INDEX_FILE")
    monkeypatch.delenv("GIT_OBJECT_DIRECTORY")
    assert result.outcome is Outcome.PUBLISHED
    assert git("--git-dir", str(decoy), "count-objects") == "0 objects, 0 kilobytes"
    assert git("--git-dir", str(decoy), "for-each-ref") == ""
