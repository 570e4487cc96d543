"""Write a rendered tree to a directory, changing only what changed.

Why not delete the directory and write it again: on these disks creating files after a mass deletion is
much slower for a while (docs/design.md §11), and a reader (an agent, ``git add``, an editor) would see the
tree half gone. So the directory is compared with the render: files whose bytes are equal are left alone
(a size check first, then the bytes), changed and new files are written to a temporary file beside them and
renamed over (``os.replace``: a reader sees the old file or the new one, never half of one), and files the
render no longer has are removed, then their emptied directories.

Safety: ``-o ~/`` must never delete a user's files. Only paths a render owns are ever removed
(``clusters/``, ``placement/``, ``placement.yaml``, ``PLACEMENT.md``, ``.gitattributes``; ``README.md`` is
written when rendered but never removed, since a user may have put it there); a ``.git`` directory is never
touched; and a non-empty directory without a ``placement.yaml`` (not a previous render) is refused with
``errors.SafetyError`` before anything is written.

Speed with 100k files: ``os.scandir`` walks, string paths (no ``Path`` objects on the hot path), sizes from
the walk's ``lstat``, and old bytes read only when the size matches.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from nova_gitops import errors

CLUSTERS_DIR: Final = "clusters"
PLACEMENT_DIR: Final = "placement"
OWNED_DIRS: Final = frozenset({CLUSTERS_DIR, PLACEMENT_DIR})
"""Top-level directories a render owns whole: every file below them is the render's."""
REMOVABLE_FILES: Final = frozenset({"placement.yaml", "PLACEMENT.md", ".gitattributes"})
"""Top-level files a render owns: written when rendered, removed when no longer rendered."""
WRITE_ONLY_FILES: Final = frozenset({"README.md"})
"""Top-level files a render writes when it has them but never removes (a user may own them)."""
MARKER_FILE: Final = "placement.yaml"
"""A directory holding this file is taken for a previous render."""
_TEMP_SUFFIX: Final = ".nova-tmp"
WRITER_THREADS: Final = 16
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_BINARY: Final = getattr(os, "O_BINARY", 0)
_READ_FLAGS: Final = os.O_RDONLY | _NOFOLLOW | _BINARY
_WRITE_FLAGS: Final = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW | _BINARY
_CREATE_FLAGS: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY


@dataclass(frozen=True, slots=True)
class WriteStats:
    """Files written (new or changed), left unchanged, and removed."""

    written: int
    unchanged: int
    removed: int


def write_tree(out_dir: Path, files: Mapping[str, bytes]) -> WriteStats:
    """Make ``out_dir`` hold exactly ``files`` (paths relative to it, ``/``-separated) among the paths a
    render owns. Raises ValueError for a path a render cannot have, ``errors.SafetyError`` for a directory
    that is not a previous render, ``errors.UserError`` when the file system refuses."""
    root = os.fspath(out_dir)
    for relative in files:
        check_relative_path(relative)
    try:
        _prepare_root(root)
        existing, directories = _existing(root)
        return _apply(root, files, existing, directories)
    except OSError as error:
        where = error.filename or root
        raise errors.UserError(
            f"cannot write the render to {root}: {error.strerror or error} ({where}); "
            "check that the directory is writable and the disk has room"
        ) from error


def check_relative_path(relative: str) -> None:
    """ValueError unless ``relative`` is a path a render owns: a file below ``clusters/`` or ``placement/``
    or one of the top-level report files, with no empty, ``.`` or ``..`` segment, backslash or NUL."""
    segments = relative.split("/")
    for segment in segments:
        if segment in ("", ".", "..") or "\x00" in segment or "\\" in segment:
            raise ValueError(f"rendered path {relative!r} is not a safe relative path")
    if segments[0] in OWNED_DIRS and len(segments) > 1:
        return
    if len(segments) == 1 and (relative in REMOVABLE_FILES or relative in WRITE_ONLY_FILES):
        return
    raise ValueError(
        f"rendered path {relative!r} is outside what a render owns (clusters/, placement/ and the reports)"
    )


def _prepare_root(root: str) -> None:
    if not os.path.lexists(root):
        os.makedirs(root)
        return
    if not os.path.isdir(root):
        raise errors.SafetyError(f"refusing to write the render to {root}: it exists and is not a directory")
    with os.scandir(root) as listing:
        names = {entry.name for entry in listing} - {".git"}
    if names and MARKER_FILE not in names:
        raise errors.SafetyError(
            f"refusing to write the render to {root}: it is not empty and has no {MARKER_FILE}, so it is not "
            "a previous render and its files could be lost; choose an empty or new directory (nothing was "
            "written)"
        )


def _existing(root: str) -> tuple[dict[str, int], list[str]]:
    """Owned files on disk (relative path → size; -1 for symlinks and other non-regular files) and the
    owned directories, parents before children."""
    files: dict[str, int] = {}
    directories: list[str] = []
    with os.scandir(root) as listing:
        for entry in listing:
            name = entry.name
            owned = name in REMOVABLE_FILES or name in WRITE_ONLY_FILES or name in OWNED_DIRS
            temporary = name.startswith(".") and name.endswith(_TEMP_SUFFIX)
            if not (owned or temporary):
                continue
            if name in OWNED_DIRS and entry.is_dir(follow_symlinks=False):
                directories.append(name)
                _walk(entry.path, name, files, directories)
            else:
                files[name] = _size(entry)
    return files, directories


def _walk(path: str, relative: str, files: dict[str, int], directories: list[str]) -> None:
    with os.scandir(path) as listing:
        for entry in listing:
            child = f"{relative}/{entry.name}"
            if entry.is_dir(follow_symlinks=False):
                directories.append(child)
                _walk(entry.path, child, files, directories)
            else:
                files[child] = _size(entry)


def _size(entry: os.DirEntry[str]) -> int:
    return entry.stat(follow_symlinks=False).st_size if entry.is_file(follow_symlinks=False) else -1


def _apply(
    root: str, files: Mapping[str, bytes], existing: dict[str, int], directories: list[str]
) -> WriteStats:
    needed_dirs = {relative.rpartition("/")[0] for relative in files} - {""}
    for directory in list(needed_dirs):
        while "/" in directory:
            directory = directory.rpartition("/")[0]
            needed_dirs.add(directory)
    removed = 0
    for relative in sorted(needed_dirs & existing.keys()):  # a file (or symlink) where a directory must be
        os.unlink(f"{root}/{relative}")
        del existing[relative]
        removed += 1
    for relative in files.keys() & set(directories):  # a directory where a file must be (owned: below ours)
        removed += sum(1 for name in existing if name.startswith(f"{relative}/"))
        shutil.rmtree(f"{root}/{relative}")
        for name in [name for name in existing if name.startswith(f"{relative}/")]:
            del existing[name]
        directories = [d for d in directories if d != relative and not d.startswith(f"{relative}/")]
    for directory in sorted(needed_dirs):
        os.makedirs(f"{root}/{directory}", exist_ok=True)

    def sync_one(item: tuple[str, bytes]) -> bool:
        """Write one file unless its bytes are already there; True when written."""
        relative, data = item
        path = f"{root}/{relative}"
        size = existing.get(relative)
        if size is None and _write_new(path, data):
            return True
        if size == len(data) and _read(path, len(data)) == data:
            return False
        _write_atomically(path, data)
        return True

    # Creating a file is mostly waiting on the disk and almost no CPU: writers in parallel overlap the
    # waits (bench/render.py measures it).
    with ThreadPoolExecutor(max_workers=WRITER_THREADS) as pool:
        written = sum(pool.map(sync_one, files.items(), chunksize=256))
    unchanged = len(files) - written
    for relative in existing.keys() - files.keys():
        if relative in WRITE_ONLY_FILES:
            continue
        _unlink(f"{root}/{relative}")
        if not relative.rpartition("/")[2].endswith(_TEMP_SUFFIX):
            removed += 1
    for directory in reversed(directories):  # children before parents
        if directory not in needed_dirs and directory not in files:
            _remove_if_empty(f"{root}/{directory}")
    return WriteStats(written=written, unchanged=unchanged, removed=removed)


def _read(path: str, size: int) -> bytes:
    """The bytes of ``path``, reading one more than expected so a file that grew since the walk differs. One
    ``os.read`` suffices for a regular file; a short read only makes the file look changed, and it is then
    rewritten, which is harmless. Half the cost of ``open().read()``."""
    descriptor = os.open(path, _READ_FLAGS)
    try:
        return os.read(descriptor, size + 1)
    finally:
        os.close(descriptor)


def _write_new(path: str, data: bytes) -> bool:
    """Create ``path`` with ``data`` when nothing is there (False when something is). A new file needs no
    temporary and rename: no reader had an old version to see half of, and the rename is a second journaled
    metadata operation per file, which on these disks is most of the cost of a cold render."""
    try:
        descriptor = os.open(path, _CREATE_FLAGS, 0o666)
    except FileExistsError:
        return False
    try:
        _write_all(descriptor, data)
    except BaseException:
        os.close(descriptor)
        _unlink(path)
        raise
    os.close(descriptor)
    return True


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]


def _write_atomically(path: str, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path`` and rename it over ``path``."""
    head, _, name = path.rpartition("/")
    temporary = f"{head}/.{name}{_TEMP_SUFFIX}"
    try:
        descriptor = os.open(temporary, _WRITE_FLAGS, 0o666)
    except OSError as error:
        if error.errno not in (errno.ELOOP, errno.EISDIR):
            raise
        _unlink(temporary)  # a symlink or directory in the way of our temporary name: ours to replace
        descriptor = os.open(temporary, _WRITE_FLAGS, 0o666)
    try:
        _write_all(descriptor, data)
    finally:
        os.close(descriptor)
    os.replace(temporary, path)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except IsADirectoryError:
        shutil.rmtree(path)
    except FileNotFoundError:
        pass


def _remove_if_empty(path: str) -> None:
    try:
        os.rmdir(path)
    except OSError as error:
        if error.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOENT, errno.ENOTDIR):
            raise
