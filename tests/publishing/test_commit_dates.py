"""A publish honours GIT_AUTHOR_DATE and GIT_COMMITTER_DATE as `git commit` does: with both pinned, the same
source gives the same commit id whenever it is published (reproducible renders, and tests that compare two
runs); unset, a commit carries the time it was made. git's raw form (`[@]<seconds> <zone>`) and ISO 8601
with a zone are read; any other form is ignored (the time of the commit)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from nova_gitops.workflows import publishing
from nova_gitops.workflows.publishing import PublishOptions
from tests.publishing.conftest import SourceRepo, fake_render, git, make_bare, workload


def dates(url: str) -> str:
    shown = git("--git-dir", url.removeprefix("file://"), "log", "-1", "--format=%at %ai|%ct %ci", "main")
    return shown.strip()


def published(source: SourceRepo, tmp_path: Path, name: str, environ: dict[str, str]) -> str:
    remote = make_bare(tmp_path / f"{name}.git")
    result = publishing.publish(
        source.url,
        remote,
        render=fake_render,
        cache_dir=tmp_path / f"cache-{name}",
        options=PublishOptions(),
        environ=environ,
    )
    assert result.commit is not None
    return remote


@pytest.mark.parametrize(
    ("pinned", "shown"),
    [
        ("2026-11-30T12:00:00Z", "1796040000 2026-11-30 12:00:00 +0000"),
        ("2026-11-30T13:30:00+01:30", "1796040000 2026-11-30 13:30:00 +0130"),
        ("@1796040000 -0700", "1796040000 2026-11-30 05:00:00 -0700"),
        ("1796040000 +0000", "1796040000 2026-11-30 12:00:00 +0000"),
    ],
)
def test_pinned_dates_are_the_commits_dates(
    source_repo: SourceRepo, tmp_path: Path, pinned: str, shown: str
) -> None:
    source_repo.commit({"c1/web.yaml": workload("web")})
    environ = {"GIT_AUTHOR_DATE": pinned, "GIT_COMMITTER_DATE": pinned}
    first = published(source_repo, tmp_path, "first", environ)
    second = published(source_repo, tmp_path, "second", environ)
    assert dates(first) == f"{shown}|{shown}"
    assert git("--git-dir", first.removeprefix("file://"), "rev-parse", "main") == git(
        "--git-dir", second.removeprefix("file://"), "rev-parse", "main"
    )


@pytest.mark.parametrize("pinned", [None, "yesterday", "1969-01-01T00:00:00Z", "2026-11-30T12:00:00"])
def test_without_a_date_git_reads_the_commit_has_its_time(
    source_repo: SourceRepo, tmp_path: Path, pinned: str | None
) -> None:
    source_repo.commit({"c1/web.yaml": workload("web")})
    environ = {} if pinned is None else {"GIT_COMMITTER_DATE": pinned}
    before = int(time.time())
    remote = published(source_repo, tmp_path, "only", environ)
    after = int(time.time())
    committed = int(dates(remote).split("|")[1].split()[0])
    assert before <= committed <= after
