"""Publishing with the real renderer keeps the committed placement under the commit's id
(``publishing.previousplacements``):

- the cache entry equals what reading the committed group files back gives (so stickiness is unchanged);
- the next publish of the same source uses it and makes no commit;
- a corrupt cache entry is ignored (the group files are read instead, and kept again);
- a head nobody here published is read from its group files, with a fresh cache;
- an unreadable group file at the head is an error naming the file, the head and what to do.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from nova_gitops import errors
from nova_gitops.publishing import placementcache, previousplacements
from nova_gitops.publishing.gitwriting import RenderedRepo, TreeChanges, cache_path
from nova_gitops.rendering import schedulegroups
from nova_gitops.scheduling.plans import PlanSettings, PreviousPlacement
from nova_gitops.workflows import publishing, renderers
from tests.builders import cluster, deployment, policy
from tests.publishing.conftest import SourceRepo, make_bare

ENV = {f"GIT_{role}_{field}": "t" for role in ("AUTHOR", "COMMITTER") for field in ("NAME", "EMAIL")}


def committed_files(bare: Path, commit: str) -> dict[str, bytes]:
    listed = subprocess.run(
        ["git", "--git-dir", str(bare), "ls-tree", "-r", "--name-only", commit, "--", "placement"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return {
        path: subprocess.run(
            ["git", "--git-dir", str(bare), "show", f"{commit}:{path}"], check=True, capture_output=True
        ).stdout
        for path in listed
    }


def entry_files(scratch: Path, key: str, placement: PreviousPlacement) -> list[Path]:
    """Where a cache directory keeps the entry of ``key``: what ``store`` writes into an empty one."""
    placementcache.store(scratch, key, placement)
    return [path.relative_to(scratch) for path in sorted(scratch.rglob("*")) if path.is_file()]


def test_published_placement_is_cached_and_reused(tmp_path: Path) -> None:
    source = SourceRepo(tmp_path)
    documents = (cluster("a"), cluster("b"), policy("p"), deployment("web"), deployment("api"))
    source.commit({"source.yaml": yaml.dump_all(documents, Dumper=yaml.CSafeDumper, sort_keys=False)})
    remote = make_bare(tmp_path / "rendered.git")
    cache_dir = tmp_path / "cache"
    render = renderers.default_render(PlanSettings())

    first = publishing.publish(source.url, remote, render=render, cache_dir=cache_dir)
    assert first.outcome is publishing.Outcome.PUBLISHED and first.commit is not None
    committed = schedulegroups.previous_from_files(committed_files(tmp_path / "rendered.git", first.commit))
    assert len(committed.groups) == 2
    assert placementcache.load(cache_dir, first.commit) == committed

    again = publishing.publish(source.url, remote, render=render, cache_dir=cache_dir)
    assert again.outcome is publishing.Outcome.UNCHANGED

    for entry in entry_files(tmp_path / "scratch", first.commit, committed):  # a write cut short
        (cache_dir / entry).write_bytes(b"not a pickle")
    assert placementcache.load(cache_dir, first.commit) is None
    third = publishing.publish(source.url, remote, render=render, cache_dir=cache_dir)
    assert third.outcome is publishing.Outcome.UNCHANGED
    assert placementcache.load(cache_dir, first.commit) == committed  # read from git and kept again

    fresh = tmp_path / "fresh-cache"  # another machine: no index, no placement kept
    repo = RenderedRepo(cache_path(fresh, remote), remote)
    assert previousplacements.read(repo, repo.fetch("main"), fresh) == committed


def test_an_unreadable_group_file_at_the_head_names_it(tmp_path: Path) -> None:
    remote = make_bare(tmp_path / "rendered.git")
    repo = RenderedRepo(cache_path(tmp_path / "cache", remote), remote)
    changes = TreeChanges({"placement/p/g.yaml": b"kind: Deployment\n", "placement.yaml": b"kind: x\n"}, ())
    head = repo.commit(None, changes, "by hand", environ=ENV)
    with pytest.raises(
        errors.RepoError, match=r"unreadable placement/p/g.yaml \(has kind 'Deployment'.*fix or remove"
    ):
        previousplacements.read(repo, head, tmp_path / "cache")


def test_a_symbolic_link_under_placement_at_the_head_is_not_read(tmp_path: Path) -> None:
    # A render writes no links, and render/get/explain --previous read none: one under placement/ (here
    # "group files" whose targets are no placement) is not the head's decision either.
    source = SourceRepo(tmp_path)
    documents = (cluster("a"), policy("p"), deployment("web"))
    source.commit({"source.yaml": yaml.dump_all(documents, Dumper=yaml.CSafeDumper, sort_keys=False)})
    remote = make_bare(tmp_path / "rendered.git")
    render = renderers.default_render(PlanSettings())
    first = publishing.publish(source.url, remote, render=render, cache_dir=tmp_path / "cache")
    assert first.commit is not None
    committed = schedulegroups.previous_from_files(committed_files(tmp_path / "rendered.git", first.commit))
    work = tmp_path / "by-hand"
    subprocess.run(["git", "clone", "--quiet", remote, str(work)], check=True)
    (work / "placement" / "p" / "linked.yaml").symlink_to("../../clusters")
    (work / "placement" / "q").mkdir()
    (work / "placement" / "q" / "hostname.yaml").symlink_to("/etc/hostname")
    for command in (["add", "-A"], ["commit", "--quiet", "-m", "links"], ["push", "--quiet"]):
        subprocess.run(["git", *command], cwd=work, check=True, env={**ENV, "PATH": os.environ["PATH"]})
    fresh = tmp_path / "fresh-cache"
    repo = RenderedRepo(cache_path(fresh, remote), remote)
    assert previousplacements.read(repo, repo.fetch("main"), fresh) == committed


def test_an_older_versions_entry_is_found_under_the_blob_id_of_its_placement_yaml(tmp_path: Path) -> None:
    # Before the per-group layout a publish kept the placement under its placement.yaml's blob id; after the
    # upgrade, a single-file head is looked up there (docs/upgrading.md), so it is not parsed again.
    remote = make_bare(tmp_path / "rendered.git")
    cache_dir = tmp_path / "cache"
    repo = RenderedRepo(cache_path(cache_dir, remote), remote)
    unparsable = TreeChanges({"placement.yaml": b"groups: [not parsed\n"}, ())
    head = repo.commit(None, unparsable, "old", environ=ENV)
    kept = PreviousPlacement(groups={"p-0a1b2c3d": ("a",)})
    placementcache.store(cache_dir, repo.listing(head)["placement.yaml"], kept)
    assert previousplacements.read(repo, head, cache_dir) == kept
