"""``sources.gitsources``: SOURCE given as ``git-url[@ref]`` or a directory.

Behaviours covered:
- ``url@ref`` splitting keeps the ``@`` of ``git@host:repo`` and ``https://user@host/repo`` (table);
- a checkout exports exactly one revision (branch, tag or commit) and the cache is fetched, never
  re-cloned: a second checkout after a new push sees the new commit in the same cache repository;
- credentials in a URL never reach what is recorded (``public_url``);
- a directory source gets HEAD as its revision only when its work tree is clean; files the user ignores
  everywhere (their global ignore file, or ``core.excludesFile`` of ``~/.gitconfig``) do not make it dirty,
  although git runs without global configuration;
- an empty source repository (no default branch) is a clear RepoError that says so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nova_gitops import errors
from nova_gitops.sources import gitsources
from tests.publishing.conftest import SourceRepo, git, make_bare, workload


@pytest.mark.parametrize(
    ("text", "url", "ref"),
    [
        ("https://example.com/org/repo.git", "https://example.com/org/repo.git", None),
        ("https://example.com/org/repo.git@v1.2", "https://example.com/org/repo.git", "v1.2"),
        ("https://user@example.com/org/repo.git", "https://user@example.com/org/repo.git", None),
        ("https://user@example.com/org/repo.git@main", "https://user@example.com/org/repo.git", "main"),
        ("git@github.com:org/repo.git", "git@github.com:org/repo.git", None),
        ("git@github.com:org/repo.git@feature/x", "git@github.com:org/repo.git", "feature/x"),
        ("file:///srv/src.git@0123abc", "file:///srv/src.git", "0123abc"),
    ],
)
def test_parse_spec(text: str, url: str, ref: str | None) -> None:
    assert gitsources.parse_spec(text) == gitsources.GitSpec(url, ref)


@pytest.mark.parametrize(
    ("url", "public"),
    [
        ("https://user:token@example.com/org/repo.git", "https://example.com/org/repo.git"),
        ("https://example.com/org/repo.git", "https://example.com/org/repo.git"),
        ("git@github.com:org/repo.git", "git@github.com:org/repo.git"),
    ],
)
def test_public_url_drops_credentials(url: str, public: str) -> None:
    assert gitsources.public_url(url) == public


def test_checkout_revisions_and_cache_is_fetched_not_recloned(
    source_repo: SourceRepo, cache_dir: Path
) -> None:
    first = source_repo.commit({"c1/web.yaml": workload("web", 1)})
    git("tag", "v1", cwd=source_repo.work)
    git("push", "--quiet", "origin", "v1", cwd=source_repo.work)
    second = source_repo.commit({"c1/web.yaml": workload("web", 2)})
    with gitsources.checkout(gitsources.parse_spec(source_repo.url), cache_dir=cache_dir) as head:
        assert head.revision == second
        assert "replicas: 2" in (head.root / "c1/web.yaml").read_text()
        cache = head.repository
    marker = cache.git_dir / "nova-test-marker" if cache else None
    assert marker is not None
    marker.write_text("still the same clone")
    with gitsources.checkout(gitsources.parse_spec(f"{source_repo.url}@v1"), cache_dir=cache_dir) as tagged:
        assert tagged.revision == first and "replicas: 1" in (tagged.root / "c1/web.yaml").read_text()
    third = source_repo.commit({"c2/db.yaml": workload("db")})
    with gitsources.checkout(gitsources.parse_spec(f"{source_repo.url}@main"), cache_dir=cache_dir) as latest:
        assert latest.revision == third and (latest.root / "c2/db.yaml").is_file()
    assert marker.read_text() == "still the same clone"
    assert len(list((cache_dir / "sources").glob("*/HEAD"))) == 1


def test_directory_revision_only_when_clean(source_repo: SourceRepo) -> None:
    revision = source_repo.commit({"c1/web.yaml": workload("web")})
    clean = gitsources.open_directory(source_repo.work)
    assert clean.revision == revision and clean.repo == source_repo.url
    (source_repo.work / "c1/web.yaml").write_text(workload("web", 9))
    assert gitsources.open_directory(source_repo.work).revision is None


@pytest.mark.parametrize("configured", [False, True], ids=["xdg-default", "core.excludesFile"])
def test_files_the_user_ignores_everywhere_leave_the_tree_clean(
    source_repo: SourceRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, configured: bool
) -> None:
    revision = source_repo.commit({"c1/web.yaml": workload("web")})
    home = tmp_path / "user-home"
    if configured:
        (home / "ignores").parent.mkdir(parents=True)
        (home / "ignores").write_text(".DS_Store\n")
        (home / ".gitconfig").write_text("[core]\n\texcludesFile = ~/ignores\n")
    else:
        (home / ".config" / "git").mkdir(parents=True)
        (home / ".config" / "git" / "ignore").write_text(".DS_Store\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    (source_repo.work / ".DS_Store").write_bytes(b"\0")
    assert gitsources.open_directory(source_repo.work).revision == revision
    (source_repo.work / "notes.txt").write_text("not ignored\n")
    assert gitsources.open_directory(source_repo.work).revision is None


def test_plain_directory_is_named_by_its_name(tmp_path: Path) -> None:
    (tmp_path / "fleet").mkdir()
    checkout = gitsources.open_directory(tmp_path / "fleet")
    assert (checkout.repo, checkout.revision) == ("fleet", None)


def test_empty_repository_has_no_default_branch(tmp_path: Path) -> None:
    url = make_bare(tmp_path / "empty.git")
    expected = r"has no default branch \(HEAD\); name an existing branch"
    with (
        pytest.raises(errors.RepoError, match=expected),
        gitsources.checkout(gitsources.GitSpec(url), cache_dir=tmp_path / "cache"),
    ):
        pass
