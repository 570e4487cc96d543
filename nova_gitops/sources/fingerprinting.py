"""A digest of everything a source directory's render can read, cheap to take again when nothing changed.

The controller skips a reconcile whose inputs are the ones it last rendered (``controller.skipping``); for a
directory source "the same input" must mean the same bytes, since the directory is read with its uncommitted
changes. Hashing every file each poll costs as much as reading the source, so the digest remembers, per file,
its ``lstat`` and the hash of its bytes, and reads again only the files whose ``lstat`` changed — git's index
does the same, and has the same trap, which is handled the same way ("racily clean" files):

- A file is trusted by its ``lstat`` only when its ``ctime`` and ``mtime`` are older than the moment its
  hash was taken by more than ``RACY_MARGIN_NS``. File times come from a coarse clock (one scheduler tick,
  4–10 ms), so a file rewritten with the same size within the tick of the hash would otherwise keep its
  ``lstat`` and its old hash; any write after the margin moves ``ctime`` (which no one can set by hand,
  unlike ``mtime``: ``touch -d``, ``rsync -t``), so the trusted ``lstat`` no longer matches.
- A replaced file (editors and ``git-sync`` write a new file and rename it) has a new inode.
- A symbolic link is always read again: its target can change without the link's own ``lstat`` changing.

Which files: every file below the root but those ``.git`` and a previous render kept inside the source
hold, and every link (one to a directory is never walked into, but the render reports it): kustomizations
read files of any name, hidden ones included, so "what the reader reads" is over-approximated, never
under. Contents are read with the directory reader's own rules (``SourceReader``: regular files, links
only inside the source, size-bounded, FIFOs never waited on); a refused file counts by its reason.

Nothing here decides anything; equal digests mean equal bytes in every file the render can read.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from nova_gitops.sources import directory, reading

RACY_MARGIN_NS = 2_000_000_000
"""How much older than its hash a file's times must be for its ``lstat`` to vouch for its bytes (seconds
of margin, far above any file-time granularity and small clock corrections)."""


@dataclass(frozen=True, slots=True)
class _Entry:
    key: tuple[int, int, int, int, int, int]  # device, inode, mode, size, mtime_ns, ctime_ns
    digest: bytes
    hashed_at_ns: int

    def vouches(self, key: tuple[int, int, int, int, int, int], margin_ns: int) -> bool:
        """Whether a file with ``key`` still holds the bytes hashed then (see the module doc)."""
        return key == self.key and max(key[4], key[5]) < self.hashed_at_ns - margin_ns


class DirectoryFingerprint:
    """The digest of one directory over time; not thread-safe (one reconcile at a time uses it)."""

    def __init__(self, root: Path, *, racy_margin_ns: int = RACY_MARGIN_NS) -> None:
        self.root = root
        self.racy_margin_ns = racy_margin_ns  # tests shorten it instead of sleeping
        self._entries: dict[str, _Entry] = {}
        self.files_read = 0  # files whose bytes were read by the last ``digest`` (for tests and benches)

    def digest(self) -> str:
        """A hex digest of the names and bytes of every file the render of ``root`` can read. Never raises
        for what it finds: a root that is missing or unreadable has a digest of its own, and reading the
        source then reports the problem as it always did."""
        try:
            return self._digest()
        except OSError as error:
            self._entries = {}
            return f"unreadable:{error.errno}"

    def _digest(self) -> str:
        root = self.root
        if not root.is_dir():  # a single manifest file as the source
            return hashlib.blake2b(_read(root.parent, root.name), digest_size=32).hexdigest()
        total = hashlib.blake2b(digest_size=32)
        entries: dict[str, _Entry] = {}
        self.files_read = 0
        with reading.SourceReader(root) as reader:
            for relative, status in _files(root):
                key = (
                    status.st_dev,
                    status.st_ino,
                    status.st_mode,
                    status.st_size,
                    status.st_mtime_ns,
                    status.st_ctime_ns,
                )
                known = self._entries.get(relative)
                if (
                    known is None
                    or stat.S_ISLNK(status.st_mode)
                    or not known.vouches(key, self.racy_margin_ns)
                ):
                    hashed_at = time.time_ns()  # before the read: a write during it is seen as racy
                    known = _Entry(key, _hash(reader, relative), hashed_at)
                    self.files_read += 1
                entries[relative] = known
                total.update(relative.encode("utf-8", "surrogateescape") + b"\0" + known.digest)
        self._entries = entries
        return total.hexdigest()


def _files(root: Path) -> list[tuple[str, os.stat_result]]:
    """(relative ``/`` path, lstat) of every file below ``root`` (see the module doc), sorted by path."""
    found: list[tuple[str, os.stat_result]] = []
    _scan(str(root), "", found)
    found.sort(key=lambda item: item[0])
    return found


def _scan(folder: str, prefix: str, found: list[tuple[str, os.stat_result]]) -> None:
    try:
        entries = list(os.scandir(folder))
    except OSError:  # gone or unreadable meanwhile: the reader will not read it either
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != ".git" and not directory.is_previous_render(Path(entry.path)):
                    _scan(entry.path, f"{prefix}{entry.name}/", found)
            else:  # a link to a directory too: never walked, but reported (directory.LINKED_DIRECTORY)
                found.append((prefix + entry.name, entry.stat(follow_symlinks=False)))
        except OSError:
            continue


def _hash(reader: reading.SourceReader, relative: str) -> bytes:
    try:
        data = b"+" + reader.read(relative)
    except reading.Refused as refused:
        data = b"!" + refused.reason.encode()
    except OSError as error:
        data = b"?" + str(error.errno).encode()
    return hashlib.blake2b(data, digest_size=32).digest()


def _read(folder: Path, name: str) -> bytes:
    with reading.SourceReader(folder) as reader:
        return _hash(reader, name)
