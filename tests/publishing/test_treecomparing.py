"""``publishing.treecomparing.directory_changes``: the files that differ between two renders on disk.

Behaviours covered:
- the changes found on disk are exactly those of the same two trees in memory (``diffs.changed_files``):
  added, changed and deleted files, whole directories on one side only, a file on one side where the
  other has a directory of that name (property);
- ``.git`` directories (at any depth) and symbolic links are left out, on either side;
- files of exactly one read buffer, of several buffers and empty files are read whole;
- a path that is not a directory is a user error naming it;
- a tree of many directories shared among 1, 2 or 3 processes gives the same changes; by default there are
  1 to 4 processes, never more than the CPUs this process may use;
- a child process's work comes back from that other process; a child that fails or is killed gives no
  result, and then (as without a child) the work is done in the caller; a child left unread is waited for.
"""

from __future__ import annotations

import os
import signal
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops import errors
from nova_gitops.publishing import treecomparing
from nova_gitops.rendering import diffs


def write(root: Path, files: dict[str, bytes]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


def consistent(files: dict[str, bytes]) -> bool:
    """No path is both a file and the directory of another file."""
    return not any(other.startswith(path + "/") for path in files for other in files)


paths = st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3).map("/".join)
trees = st.dictionaries(paths, st.binary(max_size=6), max_size=8).filter(consistent)


@settings(max_examples=60, deadline=None)
@given(trees, trees)
def test_changes_on_disk_are_those_in_memory(old: dict[str, bytes], new: dict[str, bytes]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        found = treecomparing.directory_changes(
            write(Path(scratch, "old"), old), write(Path(scratch, "new"), new)
        )
    assert found == diffs.changed_files(old, new)


def test_git_directories_and_symbolic_links_are_left_out(tmp_path: Path) -> None:
    old = write(tmp_path / "old", {"clusters/c1/a.yaml": b"a\n", ".git/HEAD": b"ref: main\n"})
    new = write(
        tmp_path / "new",
        {"clusters/c1/a.yaml": b"a\n", "clusters/c1/.git/config": b"x\n", "sub/.git/HEAD": b"y\n"},
    )
    (new / "clusters/c1/link.yaml").symlink_to(new / "clusters/c1/a.yaml")
    (new / "linked").symlink_to(new / "clusters")
    (old / "clusters/c2").symlink_to(old / "clusters/c1", target_is_directory=True)
    assert treecomparing.directory_changes(old, new) == []


@pytest.mark.parametrize(
    "size",
    [0, 1, treecomparing.CHUNK - 1, treecomparing.CHUNK, treecomparing.CHUNK + 1, 3 * treecomparing.CHUNK],
)
def test_files_of_any_size_are_read_whole(tmp_path: Path, size: int) -> None:
    data = os.urandom(size)
    old = write(tmp_path / "old", {"placement.yaml": data + b"old"})
    new = write(tmp_path / "new", {"placement.yaml": data + b"new", "big.bin": data})
    assert treecomparing.directory_changes(old, new) == [
        diffs.FileChange("big.bin", None, data),
        diffs.FileChange("placement.yaml", data + b"old", data + b"new"),
    ]


def test_a_path_that_is_no_directory_is_a_user_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(errors.UserError, match=r"file is not a directory holding a render"):
        treecomparing.directory_changes(tmp_path / "file", tmp_path)
    with pytest.raises(errors.UserError, match=r"missing is not a directory holding a render"):
        treecomparing.directory_changes(tmp_path, tmp_path / "missing")


def fleet(version: int) -> dict[str, bytes]:
    """40 clusters × 3 namespaces; ``version`` changes, adds and deletes a few files."""
    files = {
        f"clusters/c{cluster:02}/ns{namespace}/deployment-w{cluster}.yaml": f"replicas: {cluster}\n".encode()
        for cluster in range(40)
        for namespace in range(3)
    }
    files["placement.yaml"] = f"groups: []\nsource: {version}\n".encode()
    if version:
        files["clusters/c07/ns1/deployment-w7.yaml"] = b"replicas: 70\n"
        files["clusters/c40/ns0/new.yaml"] = b"new\n"
        del files["clusters/c31/ns2/deployment-w31.yaml"]
    return files


@pytest.mark.parametrize("processes", [1, 2, 3])
def test_shared_among_processes_the_changes_are_the_same(tmp_path: Path, processes: int) -> None:
    old, new = fleet(0), fleet(1)
    found = treecomparing.directory_changes(
        write(tmp_path / "old", old), write(tmp_path / "new", new), processes=processes
    )
    assert found == diffs.changed_files(old, new)
    assert len(found) == 4


def test_default_processes_are_bounded_by_the_cpus() -> None:
    assert 1 <= treecomparing.default_processes() <= min(4, len(os.sched_getaffinity(0)))


def test_a_child_works_in_another_process() -> None:
    child = treecomparing.Child(lambda: [diffs.FileChange(str(os.getpid()), b"x", None)])
    assert child.result() == [diffs.FileChange(str(child.pid), b"x", None)]
    assert child.pid != os.getpid()


def fail() -> list[diffs.FileChange]:
    raise PermissionError("unreadable")


def killed() -> list[diffs.FileChange]:
    os.kill(os.getpid(), signal.SIGKILL)
    return []


@pytest.mark.parametrize("work", [fail, killed])
def test_a_failed_child_gives_no_result_and_the_caller_does_the_work(
    work: Callable[[], list[diffs.FileChange]],
) -> None:
    assert treecomparing.Child(work).result() is None
    here = [diffs.FileChange("here", None, b"")]
    assert treecomparing.gathered(treecomparing.Child(work), lambda: here) == here
    assert treecomparing.gathered(None, lambda: here) == here


def test_a_child_left_unread_is_waited_for() -> None:
    child = treecomparing.Child(lambda: [diffs.FileChange("big", os.urandom(1 << 20), None)])
    child.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(child.pid, os.WNOHANG)
