"""Writing a rendered tree to a real directory (publishing.directories).

Behaviours covered:
- a new or empty directory (or one holding only ``.git``) receives exactly the files;
- a second write of the same tree writes nothing and leaves modification times alone;
- changed files are replaced, removed objects' files and their emptied directories are deleted, and the
  stats count written / unchanged / removed;
- a non-empty directory that is not a previous render is refused (SafetyError) and left untouched, as is a
  path that is a file;
- files outside the owned paths, ``.git`` and a user's README.md survive; rendered paths outside the owned
  layout or escaping the directory are refused (ValueError);
- no temporary files are left behind; stale ones from an interrupted write are cleaned up;
- a symlink in the rendered tree is replaced, never written through;
- property: after any sequence of writes the owned part of the directory equals the last tree.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nova_gitops import errors
from nova_gitops.publishing import directories

TREE = {
    "clusters/wlc-1/kustomization.yaml": b"resources:\n- shop/deployment-web.yaml\n",
    "clusters/wlc-1/shop/deployment-web.yaml": b"kind: Deployment\n",
    "clusters/wlc-2/kustomization.yaml": b"resources: []\n",
    "placement.yaml": b"kind: Placement\n",
    "PLACEMENT.md": b"# Placement\n",
    ".gitattributes": b"placement.yaml linguist-generated=true\n",
}


def on_disk(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` except .git, relative path → bytes."""
    found = {}
    for path in root.rglob("*"):
        relative = path.relative_to(root).as_posix()
        if path.is_file() and not relative.startswith(".git/"):
            found[relative] = path.read_bytes()
    return found


def test_a_new_directory_receives_exactly_the_files(tmp_path: Path) -> None:
    out = tmp_path / "rendered"
    stats = directories.write_tree(out, TREE)
    assert on_disk(out) == TREE
    assert stats == directories.WriteStats(written=len(TREE), unchanged=0, removed=0)


def test_a_directory_holding_only_git_is_accepted(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    directories.write_tree(tmp_path, TREE)
    assert on_disk(tmp_path) == TREE
    assert (tmp_path / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"


def test_rewriting_the_same_tree_writes_nothing(tmp_path: Path) -> None:
    directories.write_tree(tmp_path, TREE)
    before = {path: os.stat(tmp_path / path).st_mtime_ns for path in TREE}
    inodes = {path: os.stat(tmp_path / path).st_ino for path in TREE}
    stats = directories.write_tree(tmp_path, TREE)
    assert stats == directories.WriteStats(written=0, unchanged=len(TREE), removed=0)
    assert {path: os.stat(tmp_path / path).st_mtime_ns for path in TREE} == before
    assert {path: os.stat(tmp_path / path).st_ino for path in TREE} == inodes


def test_changes_and_removals(tmp_path: Path) -> None:
    directories.write_tree(tmp_path, TREE)
    changed = dict(TREE)
    del changed["clusters/wlc-1/shop/deployment-web.yaml"]
    del changed["clusters/wlc-2/kustomization.yaml"]
    changed["clusters/wlc-1/kustomization.yaml"] = b"resources: []\n"  # same size class, new bytes
    changed["placement.yaml"] = b"kind: Placemenu\n"  # same size, different bytes
    changed["clusters/wlc-3/_cluster/namespace-shop.yaml"] = b"kind: Namespace\n"
    stats = directories.write_tree(tmp_path, changed)
    assert on_disk(tmp_path) == changed
    assert stats == directories.WriteStats(written=3, unchanged=2, removed=2)
    assert not (tmp_path / "clusters" / "wlc-1" / "shop").exists()
    assert not (tmp_path / "clusters" / "wlc-2").exists()


def test_a_foreign_directory_is_refused_and_untouched(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "clusters").mkdir()
    (tmp_path / "clusters" / "precious.yaml").write_text("mine too")
    with pytest.raises(errors.SafetyError, match=r"no placement\.yaml"):
        directories.write_tree(tmp_path, TREE)
    assert on_disk(tmp_path) == {"notes.txt": b"mine", "clusters/precious.yaml": b"mine too"}


def test_a_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(errors.SafetyError, match="not a directory"):
        directories.write_tree(target, TREE)


def test_unowned_files_and_a_users_readme_survive(tmp_path: Path) -> None:
    directories.write_tree(tmp_path, {**TREE, "README.md": b"# rendered\n"})
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "README.md").write_text("# my own words\n")
    directories.write_tree(tmp_path, {"placement.yaml": b"kind: Placement\n"})
    assert on_disk(tmp_path) == {
        "placement.yaml": b"kind: Placement\n",
        "notes.txt": b"mine",
        "README.md": b"# my own words\n",
    }
    assert not (tmp_path / "clusters").exists()


@pytest.mark.parametrize(
    "relative",
    [
        "../escape.yaml",
        "clusters/../../x",
        "/etc/passwd",
        "clusters//x",
        "notes.txt",
        "clusters",
        "clusters/a\\b",
    ],
)
def test_paths_a_render_cannot_have_are_refused(tmp_path: Path, relative: str) -> None:
    with pytest.raises(ValueError, match="rendered path"):
        directories.write_tree(tmp_path / "out", {relative: b"x"})
    assert not (tmp_path / "out").exists()


def test_no_temporary_files_are_left_and_stale_ones_are_cleaned(tmp_path: Path) -> None:
    directories.write_tree(tmp_path, TREE)
    (tmp_path / "clusters" / "wlc-1" / ".kustomization.yaml.nova-tmp").write_text("half")
    (tmp_path / ".placement.yaml.nova-tmp").write_text("half")
    stats = directories.write_tree(tmp_path, TREE)
    assert on_disk(tmp_path) == TREE
    assert stats.removed == 0


def test_symlinks_are_replaced_not_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.yaml").write_text("keep")
    out = tmp_path / "out"
    directories.write_tree(out, TREE)
    os.symlink(outside / "victim.yaml", out / "clusters" / "wlc-1" / "kustomization.yaml.tmp-link")
    os.replace(
        out / "clusters" / "wlc-1" / "kustomization.yaml.tmp-link",
        out / "clusters" / "wlc-1" / "kustomization.yaml",
    )
    (out / "clusters" / "wlc-2" / "kustomization.yaml").unlink()
    (out / "clusters" / "wlc-2").rmdir()
    os.symlink(outside, out / "clusters" / "wlc-2")
    directories.write_tree(out, TREE)
    assert on_disk(out) == TREE
    assert not (out / "clusters" / "wlc-1" / "kustomization.yaml").is_symlink()
    assert not (out / "clusters" / "wlc-2").is_symlink()
    assert [p.name for p in outside.iterdir()] == ["victim.yaml"]
    assert (outside / "victim.yaml").read_text() == "keep"


_SEGMENT = st.sampled_from(["a", "b", "c"])
_PATHS = st.builds(lambda parts: "clusters/" + "/".join(parts), st.lists(_SEGMENT, min_size=1, max_size=3))
_TREES = st.dictionaries(
    st.one_of(_PATHS, st.sampled_from(["placement.yaml", "PLACEMENT.md"])), st.binary(max_size=8), max_size=8
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(trees=st.lists(_TREES, min_size=1, max_size=4))
def test_the_directory_always_ends_equal_to_the_last_tree(
    tmp_path_factory: pytest.TempPathFactory, trees: list[dict[str, bytes]]
) -> None:
    out = tmp_path_factory.mktemp("out")
    for tree in trees:
        # a path may not be both a file and a directory in one tree
        names = set(tree)
        tree = {p: v for p, v in tree.items() if not any(other.startswith(p + "/") for other in names)}
        stats = directories.write_tree(out, {"placement.yaml": b"x", **tree})
        assert stats.written + stats.unchanged == len({"placement.yaml": b"x", **tree})
        assert on_disk(out) == {"placement.yaml": b"x", **tree}
