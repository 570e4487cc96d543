"""What a git tree becomes on disk when a source revision is exported: regular files, and links made safe.

A checkout would make a tree's symbolic links real, and ``steal.yaml -> /etc/passwd`` pushed to a source would
then have the renderer read a file of the machine it runs on. So an export is planned from the tree's entries
(``export_plan``, pure): regular blobs are written with their bytes and executable bit; a link is resolved
inside the tree with the tree's top as ``/`` (``link_reach``) and becomes a copy of the regular file it
reaches, a link within the export for a directory, and otherwise a link the directory reader refuses with
the same message it gives a directory source (leaving the tree: :data:`OUTSIDE_LINK`); submodules become
empty directories. ``TreeWriter`` creates files with ``O_EXCL | O_NOFOLLOW`` and links last, so nothing is
written through a link.
"""

from __future__ import annotations

import enum
import hashlib
import os
import posixpath
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

REGULAR_MODES = {"100644": False, "100755": True}  # tree entry mode → executable
LINK_MODE, SUBMODULE_MODE = "120000", "160000"
OUTSIDE_LINK = "/dev/null/outside-the-source"
"""What an exported link that leaves the tree points to: outside any directory, and a path nothing can be
read from even by a reader that follows links."""
MAX_LINK_HOPS = 40  # as Linux's MAXSYMLINKS


@dataclass(frozen=True, slots=True)
class TreeEntry:
    """One line of ``ls-tree -r``: a file, a symbolic link or a submodule of a commit's tree."""

    mode: str
    oid: str
    path: str


def tree_entries(listing: bytes) -> list[TreeEntry]:
    """The entries of ``ls-tree -r -z`` output, less any whose path could not be checked out (an empty,
    ``.``, ``..`` or ``.git`` component: git refuses those too, and they would write outside the export)."""
    entries = []
    for record in listing.split(b"\0"):
        meta, tab, raw_path = record.partition(b"\t")
        if not tab:
            continue
        mode, _, oid = meta.decode().split(" ")
        path = os.fsdecode(raw_path)
        if all(part not in ("", ".", "..") and part.casefold() != ".git" for part in path.split("/")):
            entries.append(TreeEntry(mode, oid, path))
    return entries


class Reach(enum.Enum):
    """Where a symbolic link of the tree leads, resolved within the tree alone."""

    FILE = "a regular file of the tree"
    DIRECTORY = "a directory of the tree"
    MISSING = "nothing"
    LOOP = "round in a loop"
    OUTSIDE = "outside the tree"


def link_reach(
    path: str, targets: Mapping[str, str], files: Collection[str], directories: Collection[str]
) -> tuple[Reach, str]:
    """Follow the link at ``path`` (``targets``: every link's target text) as the kernel would, with the
    tree's top as ``/`` that ``..`` cannot climb past; the reach, and the path of the file or directory
    reached (``""`` for the top)."""
    if targets[path].startswith("/"):
        return Reach.OUTSIDE, ""
    resolved = path.split("/")[:-1]
    pending = targets[path].split("/")
    hops = 0
    while pending:
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            if not resolved:
                return Reach.OUTSIDE, ""
            resolved.pop()
            continue
        candidate = "/".join([*resolved, part])
        if candidate in targets:  # another link: its target replaces it, from the same directory
            hops += 1
            if hops > MAX_LINK_HOPS:
                return Reach.LOOP, ""
            if targets[candidate].startswith("/"):
                return Reach.OUTSIDE, ""
            pending[:0] = targets[candidate].split("/")
            continue
        if pending and candidate not in directories:  # "file/x" or "missing/x": the kernel stops here
            return Reach.MISSING, ""
        resolved.append(part)
    final = "/".join(resolved)
    if final in files:
        return Reach.FILE, final
    return (Reach.DIRECTORY, final) if final in directories or not final else (Reach.MISSING, "")


@dataclass(frozen=True, slots=True)
class ExportPlan:
    """What ``Repository.export`` writes: blob id → (path, executable) of each file holding its bytes;
    directories to create empty; links to create, path → the target they are given."""

    files: dict[str, list[tuple[str, bool]]] = field(default_factory=dict)
    directories: list[str] = field(default_factory=list)
    links: dict[str, str] = field(default_factory=dict)

    def blobs(self) -> dict[str, str]:
        """Path → the blob id whose bytes the export writes there, for each file it writes."""
        return {path: oid for oid, paths in self.files.items() for path, _ in paths}


def blob_id(data: bytes, like: str) -> str:
    """The git blob id of ``data``, in the hash of ``like`` (a blob id of the same repository: 40 hex
    digits for SHA-1, 64 for SHA-256); what ``git hash-object`` prints."""
    algorithm = hashlib.sha256 if len(like) == 64 else hashlib.sha1
    return algorithm(b"blob %d\0" % len(data) + data).hexdigest()


def export_plan(entries: list[TreeEntry], targets: Mapping[str, str]) -> ExportPlan:
    """The export of a tree whose links' target texts are ``targets``. A link becomes:

    - leading to a regular file within the tree: a copy of that file (read from git, like any file);
    - to a directory within the tree: a link to that directory of the export (relative, so it never leads
      out of it), which the reader reports as it reports one in a directory source (it never walks into
      one: ``directory.LINKED_DIRECTORY``);
    - outside the tree: a link to ``OUTSIDE_LINK``; to nothing: a link to a name the tree does not hold; in
      a loop: a link to itself. The reader refuses each with the reason a directory source's link gets,
      so the path is reported, and the target the source gave never reaches the file system.

    Submodules are empty directories, as a checkout leaves them."""
    files = {entry.path: entry for entry in entries if entry.mode in REGULAR_MODES}
    directories = {"/".join(e.path.split("/")[:i]) for e in entries for i in range(1, e.path.count("/") + 1)}
    directories.update(entry.path for entry in entries if entry.mode == SUBMODULE_MODE)
    taken = {*files, *directories, *targets}
    plan = ExportPlan()
    for entry in files.values():
        plan.files.setdefault(entry.oid, []).append((entry.path, REGULAR_MODES[entry.mode]))
    for entry in entries:
        if entry.mode == SUBMODULE_MODE:
            plan.directories.append(entry.path)
        if entry.path not in targets:
            continue
        reach, found = link_reach(entry.path, targets, files, directories)
        name = entry.path.rpartition("/")[2]
        if reach is Reach.FILE:
            plan.files.setdefault(files[found].oid, []).append((entry.path, REGULAR_MODES[files[found].mode]))
        elif reach is Reach.DIRECTORY:
            plan.links[entry.path] = posixpath.relpath(found or ".", posixpath.dirname(entry.path) or ".")
        elif reach is Reach.OUTSIDE:
            plan.links[entry.path] = OUTSIDE_LINK
        elif reach is Reach.LOOP:
            plan.links[entry.path] = name
        else:
            folder = entry.path[: -len(name)]
            missing = next(
                f"{name}.missing{n}"
                for n in range(len(taken) + 1)
                if folder + f"{name}.missing{n}" not in taken
            )
            plan.links[entry.path] = missing
    return plan


class TreeWriter:
    """Writes an export into an empty directory: files are created, never opened through a link
    (``O_EXCL`` | ``O_NOFOLLOW``), and links are made last, so no file is written through one. Paths are
    plain strings: at thousands of files, ``pathlib`` would cost as much as the writes."""

    __slots__ = ("created", "destination")

    def __init__(self, destination: Path) -> None:
        self.destination = str(destination)
        self.created = {""}

    def directory(self, path: str) -> str:
        """``path`` (``/``-separated, below the destination) as a directory, made with its parents."""
        if path not in self.created:
            os.makedirs(f"{self.destination}/{path}", exist_ok=True)
            parts = path.split("/")
            self.created.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
        return f"{self.destination}/{path}"

    def file(self, path: str, data: bytes, *, executable: bool) -> None:
        folder, _, name = path.rpartition("/")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        descriptor = os.open(f"{self.directory(folder)}/{name}", flags, 0o755 if executable else 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(descriptor, view) :]
        finally:
            os.close(descriptor)

    def link(self, path: str, target: str) -> None:
        folder, _, name = path.rpartition("/")
        os.symlink(target, f"{self.directory(folder)}/{name}")
