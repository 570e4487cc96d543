"""Reading the files of a source safely.

Why files are opened the way ``SourceReader`` opens them: a source's contents belong to whoever can push to
its repository, not to us, and the machine reading it (a CI runner, the controller's pod) holds files that
person must not see. A symbolic link ``steal.yaml -> /var/run/secrets/.../token`` would otherwise be rendered
and committed, and one to ``/dev/zero`` or a FIFO would be read forever. So only regular files are read, a
symbolic link only when it resolves to a regular file inside the source, and at most ``MAX_FILE_BYTES`` of
it whatever ``stat`` said. Every refusal is a problem that names the path and the reason, never anything
read from the target. Each open is checked on the descriptor it returns (``O_NOFOLLOW``, then ``fstat``), so
a file swapped for a link or a FIFO between the check and the read is refused too, and ``O_NONBLOCK`` means
opening a FIFO cannot wait for a writer.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Protocol

MAX_FILE_BYTES = 8 * 1024 * 1024

OUTSIDE = "symlink to a path outside the source is not read"
MISSING = "symlink to a missing file is not read"
NOT_REGULAR = "not a regular file (only regular files and symlinks to them are read)"
TOO_LARGE = f"file is over the {MAX_FILE_BYTES // (1024 * 1024)} MiB limit; split it"

_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


class Refused(Exception):
    """A file that is not read, and why: the reason only, never anything from the file or its target."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def read_limited(descriptor: int, limit: int) -> bytes:
    """Up to ``limit`` bytes of an open regular file; Refused when it holds more. What is read is counted,
    not what ``fstat`` says: a file that grows while it is read stops at the limit all the same."""
    chunks: list[bytes] = []
    total = 0
    while total <= limit:
        chunk = os.read(descriptor, min(limit + 1 - total, 1024 * 1024))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
    raise Refused(TOO_LARGE)


def open_regular(name: str | Path, directory: int | None = None) -> int:
    """A descriptor of the regular file ``name`` (relative to ``directory`` when given), never opened
    through a symbolic link in its last component and never anything but a regular file; Refused
    otherwise. Callers close it."""
    try:
        descriptor = os.open(name, _FILE_FLAGS, dir_fd=directory)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENXIO, errno.ENODEV, errno.EISDIR):
            raise Refused(NOT_REGULAR) from None  # a link (O_NOFOLLOW), a socket, a device, a directory
        raise
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise Refused(NOT_REGULAR)
    return descriptor


def read_regular(path: str | Path, limit: int) -> bytes:
    """Up to ``limit`` bytes of the regular file at ``path`` (not a link to one); Refused otherwise."""
    descriptor = open_regular(path)
    try:
        return read_limited(descriptor, limit)
    finally:
        os.close(descriptor)


class SourceReader:
    """Reads files below one root, whose own path the user chose and is followed as it is; below it, a
    symbolic link is followed only to a regular file that is itself below the root.

    Every file is opened relative to a descriptor of its directory, and that directory was opened one
    component at a time from the root with ``O_NOFOLLOW``: whatever the path, the file opened is below the
    root. Paths come in sorted, so the last directory's descriptor is kept for the next file."""

    __slots__ = ("_directory", "_directory_name", "_root", "real_root")

    def __init__(self, root: Path) -> None:
        self.real_root = os.path.realpath(root)
        self._root = os.open(self.real_root, os.O_RDONLY | os.O_DIRECTORY)
        self._directory_name = ""
        self._directory = self._root

    def close(self) -> None:
        if self._directory != self._root:
            os.close(self._directory)
        os.close(self._root)
        self._directory = self._root = -1

    def __enter__(self) -> SourceReader:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def read(self, relative: str, limit: int = MAX_FILE_BYTES) -> bytes:
        """The bytes of ``relative`` (``/``-separated, below the root); Refused with the reason when it is
        not read, OSError when it cannot be."""
        return self._read(relative, limit, follow=True)

    def _read(self, relative: str, limit: int, *, follow: bool) -> bytes:
        folder, _, name = relative.rpartition("/")
        directory = self._opened_directory(folder)
        mode = os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode
        if stat.S_ISLNK(mode):
            if not follow:  # a resolved path holds no link unless the tree changed under us
                raise Refused(NOT_REGULAR)
            return self._read(self._resolved(relative), limit, follow=False)
        if not stat.S_ISREG(mode):  # not even opened: opening a device can act on it
            raise Refused(NOT_REGULAR)
        descriptor = open_regular(name, directory)
        try:
            return read_limited(descriptor, limit)
        finally:
            os.close(descriptor)

    def _resolved(self, relative: str) -> str:
        """Where the link at ``relative`` leads, relative to the root; Refused when that is outside the
        root (whether or not anything is there: the answer must not tell) or nothing."""
        target = os.path.realpath(os.path.join(self.real_root, relative))
        if os.path.commonpath([self.real_root, target]) != self.real_root:
            raise Refused(OUTSIDE)
        if target == self.real_root:
            raise Refused(NOT_REGULAR)
        try:
            os.stat(target, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            raise Refused(MISSING) from None
        return os.path.relpath(target, self.real_root).replace(os.sep, "/")

    def _opened_directory(self, folder: str) -> int:
        if folder == self._directory_name:
            return self._directory
        descriptor = self._root
        try:
            for part in folder.split("/") if folder else ():
                if part in ("", ".", ".."):
                    raise Refused(OUTSIDE)
                try:
                    opened = os.open(part, _DIRECTORY_FLAGS, dir_fd=descriptor)
                except OSError as error:
                    if error.errno in (errno.ELOOP, errno.ENOTDIR):
                        raise Refused(NOT_REGULAR) from None
                    raise
                if descriptor != self._root:
                    os.close(descriptor)
                descriptor = opened
        except BaseException:
            if descriptor != self._root:
                os.close(descriptor)
            raise
        if self._directory != self._root:
            os.close(self._directory)
        self._directory_name, self._directory = folder, descriptor
        return descriptor


class Reader(Protocol):
    """What is read of the source (``reading.SourceReader``): the bytes of a
    file below the root, by its ``/``-separated relative path, under the source's rules."""

    def read(self, relative: str, limit: int = ...) -> bytes: ...
