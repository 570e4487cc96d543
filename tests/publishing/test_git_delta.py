"""placement.yaml is stored as a git delta publish writes itself (``publishing.gitdelta``), checked by git.

Behaviours covered:
- any base and any mix of copied ranges and new bytes: the thin pack ``index-pack --fix-thin`` completes
  resolves to exactly the joined bytes (real git, hypothesis);
- a delta that resolves to other bytes (a wrong base size, ranges of another base) is not taken: the
  expected blob is missing, and ``store_delta`` says so;
- the cache sets core.bigFileThreshold, and still opens while another publisher holds its config;
- an incremental publish stores the new placement.yaml as a delta of the old one, with the tree a full
  render makes, and the cache passes ``git fsck``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from nova_gitops.publishing import gitdelta, gitwriting
from nova_gitops.rendering.increments import blob_id
from nova_gitops.scheduling.plans import PlanSettings
from nova_gitops.workflows import publishing
from tests.publishing.conftest import SourceRepo, git, make_bare
from tests.publishing.test_incremental_publish import STEPS


def cache_with(tmp_path: Path, base: bytes) -> tuple[gitwriting.RenderedRepo, str]:
    """A publish cache holding ``base`` as a blob, and the blob's id."""
    remote = make_bare(tmp_path / "remote.git")
    repo = gitwriting.RenderedRepo(tmp_path / "cache.git", remote)
    stored = repo.git.run("hash-object", "-w", "--stdin", stdin=base).stdout.decode().strip()
    return repo, stored


@st.composite
def edits(draw: st.DrawFn) -> tuple[bytes, list[gitdelta.Segment]]:
    base = draw(st.binary(min_size=1, max_size=3000))
    segments: list[gitdelta.Segment] = []
    for _ in range(draw(st.integers(0, 12))):
        if draw(st.booleans()):
            offset = draw(st.integers(0, len(base) - 1))
            segments.append((offset, draw(st.integers(0, len(base) - offset))))
        else:
            segments.append(draw(st.binary(max_size=400)))
    return base, segments


def joined(base: bytes, segments: list[gitdelta.Segment]) -> bytes:
    return b"".join(base[s[0] : s[0] + s[1]] if isinstance(s, tuple) else s for s in segments)


@settings(max_examples=25, deadline=None)
@given(edit=edits())
def test_a_delta_resolves_to_the_copied_ranges_and_new_bytes(
    tmp_path_factory: pytest.TempPathFactory, edit: tuple[bytes, list[gitdelta.Segment]]
) -> None:
    base, segments = edit
    wanted = joined(base, segments)
    assume(wanted)  # placement.yaml is never empty (git does not resolve a delta to nothing)
    repo, base_id = cache_with(tmp_path_factory.mktemp("delta"), base)
    assert repo.store_delta(base_id, gitdelta.delta(len(base), segments), blob_id(wanted))
    assert repo.git.run("cat-file", "blob", blob_id(wanted)).stdout == wanted


def test_long_copies_and_inserts_are_split_as_git_reads_them(tmp_path: Path) -> None:
    base = bytes(range(256)) * 300 + b"x" * 0x20000  # copies past 0x10000 and inserts past 127 bytes
    segments: list[gitdelta.Segment] = [(0, len(base)), b"y" * 1000, (5, 0x10000), (7, 0x10001)]
    repo, base_id = cache_with(tmp_path, base)
    wanted = joined(base, segments)
    assert repo.store_delta(base_id, gitdelta.delta(len(base), segments), blob_id(wanted))
    assert repo.git.run("cat-file", "blob", blob_id(wanted)).stdout == wanted


def test_a_delta_of_other_bytes_is_not_taken(tmp_path: Path) -> None:
    base = b"apiVersion: v1\nkind: Placement\ngroups: []\n"
    repo, base_id = cache_with(tmp_path, base)
    wanted = base + b"warnings: []\n"
    wrong_size = gitdelta.delta(len(base) + 1, [(0, len(base)), b"warnings: []\n"])
    assert not repo.store_delta(base_id, wrong_size, blob_id(wanted))
    other_bytes = gitdelta.delta(len(base), [(1, len(base) - 1), b"warnings: []\n"])
    assert not repo.store_delta(base_id, other_bytes, blob_id(wanted))
    assert repo.store_delta(base_id, gitdelta.delta(len(base), [(0, len(base))]), base_id)  # has it already
    missing_base = gitdelta.delta(len(base), [(0, len(base))])
    assert not repo.store_delta("0" * 40, missing_base, blob_id(base + b"!"))
    try:
        gitdelta.delta(len(base), [(10, len(base))])
    except ValueError as error:
        assert "outside a base" in str(error)
    else:
        raise AssertionError("a copy outside the base was encoded")


def test_an_incremental_publish_stores_placement_yaml_as_a_delta_of_the_old_one(tmp_path: Path) -> None:
    source = SourceRepo(tmp_path)
    remote = make_bare(tmp_path / "rendered.git")
    render = publishing.default_render(PlanSettings())
    cache = tmp_path / "cache"
    source.commit(STEPS[0])
    publishing.publish(source.url, remote, render=render, cache_dir=cache)
    source.commit(STEPS[1])
    second = publishing.publish(source.url, remote, render=render, cache_dir=cache)
    assert second.commit is not None
    cache_repo = gitwriting.cache_path(cache, remote)
    old, new = (
        git("--git-dir", str(cache_repo), "rev-parse", f"{commit}:placement.yaml")
        for commit in (f"{second.commit}~1", second.commit)
    )
    described = subprocess.run(
        ["git", "--git-dir", str(cache_repo), "cat-file", "--batch-check=%(objectname) %(deltabase)"],
        input=new + "\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert described.split() == [new, old]
    git("--git-dir", str(cache_repo), "fsck", "--no-dangling")
    git("--git-dir", str(tmp_path / "rendered.git"), "fsck", "--no-dangling")


def test_the_cache_sets_its_big_file_threshold_and_opens_while_another_publisher_holds_its_config(
    tmp_path: Path,
) -> None:
    remote = make_bare(tmp_path / "remote.git")
    cache = tmp_path / "cache.git"
    git("init", "--quiet", "--bare", str(cache))
    (cache / "config.lock").write_text("another publisher opening the same new cache")
    gitwriting.RenderedRepo(cache, remote)  # only a speed-up: the cache is used as it is
    (cache / "config.lock").unlink()
    gitwriting.RenderedRepo(cache, remote)
    assert git("--git-dir", str(cache), "config", "core.bigFileThreshold") == gitwriting.BIG_FILE_THRESHOLD
