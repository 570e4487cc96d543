"""The files that differ between two trees on disk (two renders), read as fast as the disk allows.

Two renders of a 100k-object fleet that differ in one workload are ~200k files to open and read, so the
system calls are the cost and each file gets three (open relative to its directory, one read, close), none of
which touches its access time; nothing is stat-ed; and the directories are shared among forked processes,
one per idle CPU. See ``TreeReader``, ``TreeComparison`` and ``Child`` for why each of those matters.

This is I/O (files, forks, pipes), so it lives at the edge with the directory writer; ``rendering.diffs``
parses only the files found to differ, and ``workflows.diffing`` wires the two for ``nova-gitops diff``.
"""

from __future__ import annotations

import errno
import functools
import gc
import os
import pickle
import sys
import threading
from collections.abc import Callable
from contextlib import ExitStack, closing
from pathlib import Path

from nova_gitops import errors
from nova_gitops.rendering import diffs

CHUNK = 65536
DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


class TreeReader:
    """Reads files relative to an open directory, without updating their access times where it may.

    Two renders just written are read here for the first time, and on a ``relatime`` mount each first read
    would write the file's inode back: ``O_NOATIME`` spares that, but only the file's owner may ask for it,
    so after the first refusal (EPERM) files are opened plainly.
    """

    __slots__ = ("flags",)

    def __init__(self) -> None:
        self.flags = os.O_RDONLY | getattr(os, "O_NOATIME", 0)

    def read(self, directory: int, name: str) -> bytes:
        """A file's bytes in three system calls for any file under ``CHUNK`` bytes, the usual case."""
        try:
            descriptor = os.open(name, self.flags, dir_fd=directory)
        except PermissionError as error:
            if error.errno != errno.EPERM or self.flags == os.O_RDONLY:
                raise
            self.flags = os.O_RDONLY
            descriptor = os.open(name, self.flags, dir_fd=directory)
        try:
            data = os.read(descriptor, CHUNK)
            if len(data) < CHUNK:
                return data
            whole = bytearray(data)
            while chunk := os.read(descriptor, max(CHUNK, os.fstat(descriptor).st_size - len(whole))):
                whole += chunk
            return bytes(whole)
        finally:
            os.close(descriptor)


def listing(directory: int) -> tuple[list[str], list[str]]:
    """The regular files and the subdirectories (``.git`` excluded) of an open directory, by name; types
    come from the directory entries, so nothing is stat-ed, and symbolic links are neither."""
    files: list[str] = []
    directories: list[str] = []
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != ".git":
                    directories.append(entry.name)
            elif entry.is_file(follow_symlinks=False):
                files.append(entry.name)
    return files, directories


Pending = tuple[str, bool, bool]  # a directory ("" or ending in "/"), whether the old / the new tree has it


class TreeComparison:
    """Two trees walked together, one directory of each at a time, collecting the files that differ.

    Files are opened relative to their directory's descriptor, so the kernel resolves one name per file
    rather than the whole path; and nothing the garbage collector tracks is made per file (only bytes and
    strings), because in a process holding a large heap (a publish, a benchmark) every collection that
    allocations trigger would scan all of it."""

    __slots__ = ("changes", "new_root", "old_root", "reader")

    def __init__(self, old_root: int, new_root: int) -> None:
        self.old_root, self.new_root = old_root, new_root
        self.reader = TreeReader()
        self.changes: list[diffs.FileChange] = []

    def directory(self, path: str, in_old: bool, in_new: bool) -> list[Pending]:
        """Compare the files of one directory (absent from a tree: compared with nothing); return its
        subdirectories, to compare next."""
        with ExitStack() as opened:
            old = self.opened(self.old_root, path, opened) if in_old else None
            new = self.opened(self.new_root, path, opened) if in_new else None
            old_files, old_directories = listing(old) if old is not None else ([], [])
            new_files, new_directories = listing(new) if new is not None else ([], [])
            self.files(path, old, new, old_files, new_files)
        return [
            (f"{path}{name}/", name in old_directories, name in new_directories)
            for name in {*old_directories, *new_directories}
        ]

    def files(
        self, path: str, old: int | None, new: int | None, old_files: list[str], new_files: list[str]
    ) -> None:
        """Files in both directories are compared; those in one only are deleted or added."""
        read, changes = self.reader.read, self.changes
        in_new, in_old = set(new_files), set(old_files)
        if old is not None and new is not None:
            self.compare(path, old, new, [name for name in old_files if name in in_new])
        if old is not None:
            changes += [
                diffs.FileChange(path + name, read(old, name), None)
                for name in old_files
                if name not in in_new
            ]
        if new is not None:
            changes += [
                diffs.FileChange(path + name, None, read(new, name))
                for name in new_files
                if name not in in_old
            ]

    def compare(self, path: str, old: int, new: int, names: list[str]) -> None:
        """Compare the files both directories hold: the loop that runs 100k times, so the usual case (a file
        under ``CHUNK`` bytes, O_NOATIME allowed) calls nothing but the six system calls (less CPU than
        calling ``TreeReader.read`` twice)."""
        read, changes, flags = self.reader.read, self.changes, self.reader.flags
        for name in names:
            try:
                descriptor = os.open(name, flags, dir_fd=old)
                try:
                    old_bytes = os.read(descriptor, CHUNK)
                finally:
                    os.close(descriptor)
                descriptor = os.open(name, flags, dir_fd=new)
                try:
                    new_bytes = os.read(descriptor, CHUNK)
                finally:
                    os.close(descriptor)
                whole = len(old_bytes) < CHUNK and len(new_bytes) < CHUNK
            except PermissionError:
                whole = False
            if not whole:  # a larger file, or O_NOATIME refused: the reader reads it all, or raises
                old_bytes, new_bytes, flags = read(old, name), read(new, name), self.reader.flags
            if old_bytes != new_bytes:
                changes.append(diffs.FileChange(path + name, old_bytes, new_bytes))

    def walk(self, pending: list[Pending]) -> list[diffs.FileChange]:
        """Compare these directories and everything under them; return all the changes found so far."""
        pending = list(pending)
        while pending:
            pending += self.directory(*pending.pop())
        return self.changes

    def frontier(self, wanted: int) -> list[Pending]:
        """Compare the trees level by level until at least ``wanted`` directories wait (or none do), and
        return those, sorted: the rest of the work, ready to be shared out."""
        pending: list[Pending] = [("", True, True)]
        while pending and len(pending) < wanted:
            pending = [child for parent in pending for child in self.directory(*parent)]
        return sorted(pending)

    @staticmethod
    def opened(root: int, path: str, opened: ExitStack) -> int:
        directory = os.open(path or ".", DIRECTORY, dir_fd=root)
        opened.callback(os.close, directory)
        return directory


SPLIT_AT = 32
"""Directories waiting, at the least, before the walk is shared between processes: a smaller tree is read
sooner than a process is forked."""


class Child:
    """``work`` done in a forked child process, which sends its changes back through a pipe.

    Reading files is system calls, which threads cannot share out: each short call would hand the GIL over
    and back. A forked child has its own interpreter, and only the few files that differ travel back. If the
    child fails in any way (an unreadable file, a signal), ``result`` is None and the caller does the work
    itself, so that any error surfaces in the caller as it would without a child.
    """

    __slots__ = ("output", "pid", "waited")

    def __init__(self, work: Callable[[], list[diffs.FileChange]]) -> None:
        self.output, write_end = os.pipe()
        try:
            self.pid = os.fork()
        except OSError:
            os.close(self.output)
            os.close(write_end)
            raise
        if self.pid == 0:  # the child: none of the parent's cleanup runs here, whatever happens
            status = 1
            try:
                gc.freeze()  # a collection would otherwise touch, and so copy, the whole inherited heap
                os.close(self.output)
                fields = [(change.path, change.old, change.new) for change in work()]
                with open(write_end, "wb") as stream:
                    stream.write(pickle.dumps(fields, pickle.HIGHEST_PROTOCOL))
                status = 0
            finally:
                os._exit(status)
        os.close(write_end)
        self.waited = False

    def result(self) -> list[diffs.FileChange] | None:
        """The child's changes once it has finished; None when it failed."""
        try:
            with open(self.output, "rb") as stream:
                payload = stream.read()
        finally:
            self.waited = True
            _, status = os.waitpid(self.pid, 0)
        return [diffs.FileChange(*fields) for fields in pickle.loads(payload)] if status == 0 else None

    def close(self) -> None:
        """Leave the child's result unread: its next write fails, so it exits, and it is waited for."""
        if not self.waited:
            self.waited = True
            os.close(self.output)
            os.waitpid(self.pid, 0)


def started(work: Callable[[], list[diffs.FileChange]]) -> Child | None:
    """A child doing ``work``; None when no process can be had (a limit, a sandbox)."""
    try:
        return Child(work)
    except OSError:
        return None


def gathered(child: Child | None, work: Callable[[], list[diffs.FileChange]]) -> list[diffs.FileChange]:
    """The changes ``child`` found doing ``work``; found here when there is no child or it failed."""
    result = child.result() if child is not None else None
    return work() if result is None else result


def default_processes() -> int:
    """One per idle CPU (by the 1-minute load average, as ``make -l`` judges), at least 1 and at most 4: on
    CPUs that are busy already a helper only adds a fork and shares the same CPU time (a little slower),
    while on an idle second CPU it nearly halves the time."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    try:
        idle = cpus - os.getloadavg()[0]
    except OSError:
        idle = cpus
    return max(1, min(4, cpus, 1 + round(idle)))


def may_fork() -> bool:
    """Forking is safe on Linux while this is the process's only thread: a child of a multi-threaded
    process can wait forever on a lock another thread held at the fork, and macOS's system frameworks are
    not fork-safe at all (which is why multiprocessing spawns there)."""
    return sys.platform == "linux" and threading.active_count() == 1


def directory_changes(old: Path, new: Path, *, processes: int | None = None) -> list[diffs.FileChange]:
    """Every file whose bytes differ between two trees (``.git`` and symbolic links left out), by path.

    Both trees are walked together: a directory on one side only is compared with nothing, so its files
    come out as added or deleted. Once ``SPLIT_AT`` directories wait, they are shared among ``processes``
    (default: ``default_processes``; 1 reads everything here).
    """
    for side in (old, new):
        if not side.is_dir():
            raise errors.UserError(f"{side} is not a directory holding a render")
    with ExitStack() as stack:
        old_root = os.open(old, os.O_RDONLY | os.O_DIRECTORY)
        stack.callback(os.close, old_root)
        new_root = os.open(new, os.O_RDONLY | os.O_DIRECTORY)
        stack.callback(os.close, new_root)
        comparison = TreeComparison(old_root, new_root)
        pending = comparison.frontier(SPLIT_AT)
        count = default_processes() if processes is None else processes
        if count < 2 or len(pending) < SPLIT_AT or not may_fork():
            comparison.walk(pending)
            return sorted(comparison.changes, key=lambda change: change.path)

        def share(index: int) -> list[diffs.FileChange]:
            return TreeComparison(old_root, new_root).walk(pending[index::count])

        works = [functools.partial(share, index) for index in range(1, count)]
        children: list[Child | None] = []
        for work in works:
            child = started(work)
            children.append(child if child is None else stack.enter_context(closing(child)))
        changes = comparison.walk(pending[0::count])
        for child, work in zip(children, works, strict=True):
            changes += gathered(child, work)
    return sorted(changes, key=lambda change: change.path)
