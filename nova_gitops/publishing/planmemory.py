"""The memory of each source's last plan (``scheduling.memory``), kept in publish's cache directory.

A plan reuses the parts of a memory whose inputs are unchanged, so a memory can never make a plan other than
the one made afresh, whatever plan it came from; it is only worth reading when it is of the same source and
was made by the same code. Each part is one file named by a digest of its key (which the file holds too,
and which must equal the key asked for): reading a memory reads only the parts a plan asks for, and keeping
one writes only the parts the plan made (a change to one workload writes its component, not the fleet) and
deletes the parts it did not use. What is kept per workload and group is one small file. Parts live under
the source's directory and a digest of the planner's code: an upgrade or a local change starts afresh.

A part file is named by a digest of its key's ``marshal`` encoding (plain data: the same bytes in every
process); it starts with the digest and the part, and the key's own bytes follow, read only to list the
parts. Finding a part reads and compares 40 hex digits, not the key. (The largest keys, a component's and
its spreads', which name every input of every group in it, are digests already: ``scheduling.recalling``.)

Like the other caches it is trusted as much as the clones next to it; an unreadable part is a part not found.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import marshal
import os
import pickle
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Generic, TypeVar

from nova_gitops import api, scheduling
from nova_gitops.clients import codedigests, collection
from nova_gitops.scheduling.memory import Fitted, Kept, Key, Placement, PlanMemory, Spreads

KEPT_SOURCES = 4
"""Sources whose memory a cache directory keeps."""
WORKLOADS = "workloads.pickle"
"""The parts of every workload and group (decisions, groupings, measures): small, read and kept whole."""
UNREADABLE = (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError)

Part = TypeVar("Part", Placement, Spreads, Kept, Fitted)


@functools.cache
def planner_digest() -> str:
    """A digest of the code a plan's memory depends on (the api and scheduling packages)."""
    return codedigests.package_digest(api, scheduling)


def _directory(cache_dir: Path, source_key: str) -> Path:
    source = hashlib.sha256(source_key.encode()).hexdigest()[:32]
    return cache_dir / "plan-memory" / source / planner_digest()[:32]


@functools.lru_cache(maxsize=4096)
def encoded_key(key: Key) -> tuple[str, bytes] | None:
    """A part's key as ``marshal`` bytes and their digest (which names the part's file); None for a key that
    is not plain data (such a part is not kept). Kept for the keys of a publish (a few, and one keeps part
    per cluster): the plan keeps a part under the very key it looked it up by."""
    plain: Any = key  # checked by marshal itself
    try:
        encoded = marshal.dumps(plain, 2)
    except ValueError:
        return None
    return hashlib.blake2b(encoded, digest_size=20).hexdigest(), encoded


def part_name(kind: str, digest: str) -> str:
    return f"{kind}-{digest}.pickle"


def _read(path: Path) -> object:
    try:
        with open(path, "rb") as kept, collection.paused():
            return pickle.load(kept)
    except UNREADABLE:
        return None


class _Parts(Mapping[Key, Part], Generic[Part]):
    """The parts of one kind kept in a directory, read when asked for."""

    def __init__(self, directory: Path, kind: str, part_type: type[Part]) -> None:
        self.directory, self.kind = directory, kind
        self.part_type: type[Part] = part_type

    def __getitem__(self, key: Key) -> Part:
        encoded = encoded_key(key)
        if encoded is None:
            raise KeyError(key)
        found = self._part(self.directory / part_name(self.kind, encoded[0]))
        if found is None or found[0] != encoded[0]:  # none, unreadable, or another key's part
            raise KeyError(key)
        return found[1]

    def __iter__(self) -> Iterator[Key]:
        for path in sorted(self.directory.glob(f"{self.kind}-*.pickle")):
            with contextlib.suppress(*UNREADABLE), open(path, "rb") as kept, collection.paused():
                found = self._found(pickle.load(kept))
                key = marshal.loads(kept.read())
                encoded = encoded_key(key) if isinstance(key, tuple) else None
                if found is not None and encoded is not None and encoded[0] == found[0]:
                    yield key

    def _part(self, path: Path) -> tuple[str, Part] | None:
        return self._found(_read(path))

    def _found(self, read: object) -> tuple[str, Part] | None:
        """(key digest, part) when ``read`` is the head of a part file of this kind."""
        if not (isinstance(read, tuple) and len(read) == 2 and isinstance(read[0], str)):
            return None
        digest, part = read
        return (digest, part) if isinstance(part, self.part_type) else None

    def __len__(self) -> int:
        return sum(1 for _ in self)


def load(cache_dir: Path, source_key: str) -> PlanMemory:
    """The memory kept for the source (empty when there is none); its parts are read when a plan asks."""
    directory = _directory(cache_dir, source_key)
    workloads = _read(directory / WORKLOADS)
    if not (
        isinstance(workloads, tuple)
        and len(workloads) == 4
        and all(isinstance(part, dict) for part in workloads)
    ):
        workloads = ({}, {}, {}, {})
    decisions, groupings, measures, choices = workloads
    return PlanMemory(
        measures,
        _Parts(directory, "spreads", Spreads),
        _Parts(directory, "component", Placement),
        decisions,
        groupings,
        choices,
        _Parts(directory, "keeps", Kept),
        _Parts(directory, "fits", Fitted),
    )


def store(cache_dir: Path, source_key: str, memory: PlanMemory, recalled: PlanMemory | None = None) -> None:
    """Keep ``memory`` as the source's: write the parts not kept yet, delete the parts it does not have;
    never fails a publish. ``recalled``: the memory the plan was given (its measures are not written again
    when they are the same)."""
    directory = _directory(cache_dir, source_key)
    with contextlib.suppress(OSError, pickle.PicklingError, RecursionError), collection.paused():
        wanted = {WORKLOADS}
        for kind, parts in (
            ("spreads", memory.spreads),
            ("component", memory.components),
            ("keeps", memory.keeps),
            ("fits", memory.fits),
        ):
            for key in parts:  # a part is asked for only to write it: a plan carries some unread
                encoded = encoded_key(key)
                if encoded is None:
                    continue
                digest, key_bytes = encoded
                name = part_name(kind, digest)
                if not (directory / name).exists():
                    part = parts.get(key)
                    if part is None:  # carried from a memory that no longer has it
                        continue
                    head = pickle.dumps((digest, part), protocol=pickle.HIGHEST_PROTOCOL)
                    _write(directory, name, head + key_bytes)
                wanted.add(name)
        workloads = tuple(dict(part) for part in _workload_parts(memory))
        if recalled is None or _workload_parts(recalled) != workloads:
            _write(directory, WORKLOADS, pickle.dumps(workloads, protocol=pickle.HIGHEST_PROTOCOL))
        directory.mkdir(parents=True, exist_ok=True)
        for path in directory.iterdir():
            if path.name not in wanted:
                path.unlink(missing_ok=True)
        _prune(directory)


def _workload_parts(memory: PlanMemory) -> tuple[Mapping[Key, object], ...]:
    """The parts kept in the one small file, in its order."""
    return (memory.decisions, memory.groupings, memory.measures, memory.choices)


def _write(directory: Path, name: str, data: bytes) -> None:
    """Write a part atomically: a reader sees the whole file or none."""
    directory.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=directory, suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, directory / name)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _prune(directory: Path) -> None:
    """Delete the memories of other code for this source, and of all but the newest few sources."""
    for stale in directory.parent.iterdir():
        if stale != directory:
            shutil.rmtree(stale, ignore_errors=True)
    sources = sorted(directory.parent.parent.iterdir(), key=lambda path: path.stat().st_mtime, reverse=True)
    for stale in sources[KEPT_SOURCES:]:
        shutil.rmtree(stale, ignore_errors=True)
    os.utime(directory.parent)
