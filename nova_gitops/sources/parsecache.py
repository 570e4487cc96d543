"""Parsed source files, cached by file name and content hash across runs.

Parsing is the biggest part of loading a source (libyaml: ~300 µs per manifest, ~1.9 s for the reference
fleet's 6,000 documents), and between two publishes almost every file is unchanged. A cache entry is keyed by
the file's name *and* the SHA-256 of its bytes, so it can only ever return what parsing those bytes gives; the
whole cache is one pickle per source, holding only the entries the last run used (no unbounded growth).

The cache lives in the user's own cache directory (``$XDG_CACHE_HOME/nova-gitops``), like the clone cache: a
file there is trusted as much as the clones next to it. An unreadable cache is ignored.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any

from nova_gitops.api.objects import Document
from nova_gitops.api.problems import Problem, SourceLocation

Parsed = tuple[tuple[Document, ...], tuple[Problem, ...]]
FORMAT = 4
"""Bumped whenever parsing itself or the stored form changes (2: timestamps stay strings, non-JSON tags
are problems; 3: documents stored as tuples; 4: problems carry a column and the quoted line)."""
UNSAVED_CHANGES = 32
"""Files parsed anew (or no longer used) that a load may leave unsaved: rewriting the whole cache (~0.1 s at
the reference size) to record one changed file costs more than parsing it again next time (~1 ms)."""


class ParseCache:
    """``get``/``put`` parsed files during one load, then ``save`` what this load used."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._old: dict[tuple[str, bytes], Parsed] = {}
        self._used: dict[tuple[str, bytes], Parsed] = {}
        self._read = False  # whether a cache file was read: the first load always writes one
        with contextlib.suppress(
            OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError
        ):
            with open(path, "rb") as cached:
                version, entries = pickle.load(cached)
            if version == FORMAT and isinstance(entries, dict):
                self._old = {key: _parsed(stored) for key, stored in entries.items()}
                self._read = True

    @classmethod
    def for_source(cls, cache_dir: Path, source_key: str) -> ParseCache:
        """The cache of one source (a URL or a resolved directory path) under ``cache_dir``."""
        digest = hashlib.sha256(source_key.encode()).hexdigest()[:32]
        return cls(cache_dir / "parsed" / f"{digest}.pickle")

    def get(self, name: str, data: bytes) -> Parsed | None:
        key = (name, hashlib.sha256(data).digest())
        found = self._old.get(key)
        if found is not None:
            self._used[key] = found
        return found

    def put(self, name: str, data: bytes, parsed: Parsed) -> None:
        self._used[(name, hashlib.sha256(data).digest())] = parsed

    def save(self) -> None:
        """Write the entries this load used (atomically) when there is no cache file yet or more than
        ``UNSAVED_CHANGES`` files differ from what it holds; never fails the load."""
        new = sum(1 for key in self._used if key not in self._old)
        changes = new + len(self._old) - (len(self._used) - new)
        if changes == 0 or (self._read and changes <= UNSAVED_CHANGES):
            return
        with contextlib.suppress(OSError, pickle.PicklingError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.path.parent, suffix=".tmp")
            with os.fdopen(handle, "wb") as out:
                stored = {key: _stored(parsed) for key, parsed in self._used.items()}
                pickle.dump((FORMAT, stored), out, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, self.path)


def _stored(parsed: Parsed) -> tuple[tuple[tuple[Any, str, int], ...], tuple[Problem, ...]]:
    """Documents as plain tuples: unpickling ~6,000 frozen dataclasses goes through ``__setstate__`` and
    ``dataclasses.fields`` for each (~0.1 s at the reference size); tuples load in C."""
    documents, problems = parsed
    return (
        tuple((document.body, document.location.file, document.location.line) for document in documents),
        problems,
    )


def _parsed(stored: tuple[tuple[tuple[Any, str, int], ...], tuple[Problem, ...]]) -> Parsed:
    documents, problems = stored
    return tuple(Document(body, SourceLocation(file, line)) for body, file, line in documents), problems
