"""Parsed and classified source files, cached by file name and content hash across runs.

Parsing is the biggest part of loading a source (libyaml), and validating what was parsed the next
(``inputs.build_source_set``); between two publishes almost every file is unchanged. A cache entry is keyed by
the file's name *and* the SHA-256 of its bytes, so it can only ever return what parsing those bytes gives; it
also keeps each document's ``classifying.Classified`` (``memo``), which ``build_source_set`` takes only while
what it depends on (the default namespace, the CRD scope of its kind) is unchanged. The whole cache is one
file per source, holding only the entries the last run used (no unbounded growth).

A file exported from git (``sources.gitsources``) or that a work tree's index vouches for
(``sources.worktree``) is also known by its blob id: a load that is told the blob ids
(``directory.read_source``'s ``blobs``) takes an entry recorded with the same blob id without reading the
file at all. That trusts git's object ids as git
does: the export wrote exactly that blob's bytes, and ``git status`` found the file unchanged. An entry
records a blob id only when the bytes read had exactly that id.

The stored form is what loads fastest: ``marshal`` for the bulk (bodies, and each workload's validated fields
as a tuple), ``pickle`` only for the few entries with problems or a non-workload classification, read with
the garbage collector paused (it would otherwise walk the growing heap many times over while about a million
containers are made, for a large fleet). Each key and short text is
stored once however many documents hold it (``_shared``), and the pickled dataclasses are rebuilt by their
own constructors (``_pickled``). Nothing is built from an entry until a load asks for it.

A cache written by other parsing or validation code (``code_digest``) is ignored. The cache lives in the
user's own cache directory (``$XDG_CACHE_HOME/nova-gitops``), like the clone cache: a
file there is trusted as much as the clones next to it. An unreadable cache is ignored.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import inspect
import io
import marshal
import os
import pickle
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from nova_gitops import api
from nova_gitops.api.classifying import OBJECT_CLAIM, Classified, Role
from nova_gitops.api.objects import Document, Manifest
from nova_gitops.api.problems import Problem, SourceLocation
from nova_gitops.clients import codedigests, collection

Parsed = tuple[tuple[Document, ...], tuple[Problem, ...]]
FORMAT = 7
"""Bumped whenever parsing, classifying or the stored form changes (2: timestamps stay strings, non-JSON tags
are problems; 3: documents stored as tuples; 4: problems carry a column and the quoted line; 5: marshal, and
each document's classification; 6: a workload's group; 7: keys and short texts shared)."""
SHARED_TEXT = 64
"""Texts up to this many characters are stored once however many documents hold them (``_shared``)."""
UNSAVED_CHANGES = 32
"""Files parsed or documents classified anew (or files no longer used) that a load may leave unsaved:
rewriting the whole cache to record one changed file costs more than parsing and classifying it again next
time."""


@functools.cache
def code_digest() -> str:
    """A digest of the code that parses and validates (the ``api`` package): a cache written by other code
    — an upgrade, a local change to a validation rule — is not trusted to say what this code makes of a
    file, whether or not someone remembered to bump ``FORMAT``."""
    return codedigests.package_digest(api)


@dataclass(slots=True)
class _Entry:
    """One file as the cache knows it: its bytes' hashes, and its documents, parse problems and each
    document's classification (None: not classified yet)."""

    sha256: bytes
    blob: str | None  # the git blob id of the bytes, when they were read from an export that said so
    digest: str  # sha1 of the bytes (``load_source_with_digests``'s digest of the file)
    documents: tuple[Document, ...]
    problems: tuple[Problem, ...]
    classified: list[Classified | None]


class ParseCache:
    """``get``/``put`` parsed files during one load, classifications through ``memo``, then ``save`` what
    this load used.

    One object may serve load after load (a process that keeps watching a source, like the controller):
    after ``save`` it keeps what the load used in memory, as built objects, so the next load neither reads
    the cache file nor rebuilds anything from it; what it did not write yet is counted towards the next
    ``save``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stored: dict[str, Any] = {}  # name → the stored form, built into an _Entry when asked for
        self._extras: dict[str, Any] = {}  # name → (problems, {index: Classified}) that marshal cannot hold
        self._kept: dict[str, _Entry] = {}  # what the previous load of this object used
        self._used: dict[str, _Entry] = {}
        self._changes = 0  # files parsed anew and documents classified anew, and not written yet
        self._documents: dict[int, tuple[Document, _Entry, int]] = {}  # id → where its classification goes
        self._read = False  # whether a cache file was read: the first load always writes one
        with (
            contextlib.suppress(
                OSError, EOFError, ValueError, TypeError, pickle.UnpicklingError, AttributeError, ImportError
            ),
            open(path, "rb") as cached,
            collection.paused(),
        ):
            version, code, entries, extras = marshal.loads(cached.read())
            if (
                (version, code) == (FORMAT, code_digest())
                and isinstance(entries, dict)
                and isinstance(extras, bytes)
            ):
                self._extras = pickle.loads(extras) if extras else {}
                self._stored = entries
                self._read = True

    @property
    def memo(self) -> _Memo:
        """The classification memo over this cache (made on each use: held by the cache, it would make a
        reference cycle that kept every loaded document alive until a garbage collection)."""
        return _Memo(self)

    @classmethod
    def for_source(cls, cache_dir: Path, source_key: str) -> ParseCache:
        """The cache of one source (a URL or a resolved directory path) under ``cache_dir``."""
        digest = hashlib.sha256(source_key.encode()).hexdigest()[:32]
        return cls(cache_dir / "parsed" / f"{digest}.cache")

    def get(self, name: str, data: bytes, blob: str | None = None) -> Parsed | None:
        """The documents and problems of ``name`` when its bytes are ``data``; None when not cached.
        ``blob`` is the git blob id ``data`` was checked to have: kept with the entry, so the next load that
        is told it finds the file without reading it (``get_blob``)."""
        entry = self._entry(name)
        if entry is None or entry.sha256 != hashlib.sha256(data).digest():
            return None
        if blob is not None and entry.blob != blob:
            entry.blob = blob
            self._changes += 1
        return self._use(name, entry)

    def get_blob(self, name: str, blob: str) -> tuple[Parsed, str] | None:
        """The documents and problems of ``name`` when it holds the git blob ``blob``, and the digest of its
        bytes, without reading it; None when not cached with that blob id."""
        entry = self._entry(name)
        if entry is None or entry.blob is None or entry.blob != blob:
            return None
        return self._use(name, entry), entry.digest

    def put(
        self,
        name: str,
        data: bytes,
        found: Sequence[Document],
        problems: Sequence[Problem],
        blob: str | None = None,
    ) -> Parsed:
        """Keep what parsing ``data`` gave: ``found`` and ``problems``. The same documents are returned,
        each with its body's keys and short texts shared (``_shared``), for the load to use instead."""
        documents = tuple(Document(_shared(document.body), document.location) for document in found)
        digest = hashlib.sha1(data, usedforsecurity=False).hexdigest()
        entry = _Entry(
            hashlib.sha256(data).digest(), blob, digest, documents, tuple(problems), [None] * len(documents)
        )
        self._changes += 1
        return self._use(name, entry)

    def save(self) -> None:
        """Write the entries this load used (atomically) when there is no cache file yet or more than
        ``UNSAVED_CHANGES`` files or documents differ from what it holds; never fails the load."""
        dropped = {*self._stored, *self._kept}.difference(self._used)
        self._changes += len(dropped)
        try:
            if self._changes and not (self._read and self._changes <= UNSAVED_CHANGES):
                self._write()
        finally:  # the next load of this object starts from what this one used
            self._kept, self._used, self._stored, self._extras = self._used, {}, {}, {}
            self._documents = {}

    def _write(self) -> None:
        entries: dict[str, Any] = {}
        extras: dict[str, Any] = {}
        for name, entry in self._used.items():
            entries[name], extra = _stored(entry)
            if extra is not None:
                extras[name] = extra
        with contextlib.suppress(OSError, ValueError, pickle.PicklingError):
            pickled = _pickled(extras)
            stored = marshal.dumps((FORMAT, code_digest(), entries, pickled))
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.path.parent, suffix=".tmp")
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(stored)
                os.replace(temporary, self.path)
                self._changes, self._read = 0, True
            except OSError:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise

    def _entry(self, name: str) -> _Entry | None:
        kept = self._kept.get(name)
        if kept is not None:
            return kept
        stored = self._stored.get(name)
        if stored is None:
            return None
        try:
            return _entry(name, stored, self._extras.get(name))
        except (TypeError, ValueError, IndexError):  # not what this code stores: parse the file again
            self._stored.pop(name)
            return None

    def _use(self, name: str, entry: _Entry) -> Parsed:
        self._used[name] = entry
        for index, document in enumerate(entry.documents):
            self._documents[id(document)] = (document, entry, index)
        return entry.documents, entry.problems


class _Memo:
    """``classifying.ClassifiedMemo`` over the cache's entries: a document of a cached or newly put file gets
    its kept classification, and a new one is kept with its file; other documents (a kustomize build's, an
    agent's report) are neither."""

    __slots__ = ("_cache",)

    def __init__(self, cache: ParseCache) -> None:
        self._cache = cache

    def get(self, document: Document) -> Classified | None:
        found = self._cache._documents.get(id(document))
        if found is None or found[0] is not document:
            return None
        return found[1].classified[found[2]]

    def put(self, document: Document, classified: Classified) -> None:
        found = self._cache._documents.get(id(document))
        if found is None or found[0] is not document:
            return
        found[1].classified[found[2]] = classified
        self._cache._changes += 1


# The stored form of an entry: (sha256, blob, digest, ((body, line), ...), (workload or None, ...)) with each
# workload classified without problems as (api_version, kind, name, namespace, namespaced, scope_note,
# default namespace, crd_scope); the rest (problems, other classifications) in the pickled extras as
# (problems, {index: Classified}).


Extra = tuple[tuple[Problem, ...], dict[int, Classified]]


def _stored(entry: _Entry) -> tuple[tuple[Any, ...], Extra | None]:
    workloads: list[tuple[Any, ...] | None] = []
    others: dict[int, Classified] = {}
    for index, (document, classified) in enumerate(zip(entry.documents, entry.classified, strict=True)):
        if classified is not None and _is_plain(document, classified):
            manifest = classified.value
            assert isinstance(manifest, Manifest)
            workloads.append(
                (
                    manifest.api_version,
                    manifest.group,
                    manifest.kind,
                    manifest.name,
                    manifest.namespace,
                    manifest.namespaced,
                    manifest.scope_note,
                    classified.namespace,
                    classified.crd_scope,
                )
            )
            continue
        workloads.append(None)
        if classified is not None:
            others[index] = classified
    bodies = tuple((document.body, document.location.line) for document in entry.documents)
    stored = (entry.sha256, entry.blob, entry.digest, bodies, tuple(workloads))
    return stored, ((entry.problems, others) if entry.problems or others else None)


def _pickled(extras: dict[str, Any]) -> bytes:
    """``extras`` pickled so that each of our dataclasses (a cluster's nodes, a policy's selectors) is
    rebuilt by calling its class with its fields, rather than by the generic ``__setstate__`` of
    ``dataclass(slots=True)``, which looks up the fields again for every object and loads several times
    slower."""
    buffer = io.BytesIO()
    _FieldsPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(extras)
    return buffer.getvalue()


class _FieldsPickler(pickle.Pickler):
    fields: ClassVar[dict[type, tuple[str, ...] | None]] = {}  # each class's ``_init_fields``, found once

    def reducer_override(self, obj: Any) -> Any:
        cls = type(obj)
        if cls not in self.fields:
            self.fields[cls] = _init_fields(cls)
        names = self.fields[cls]
        if names is None:
            return NotImplemented
        return cls, tuple(getattr(obj, name) for name in names)


def _init_fields(cls: type) -> tuple[str, ...] | None:
    """The fields of dataclass ``cls`` when calling it with them, in order, makes an equal object: every
    field is a positional parameter of ``__init__`` and nothing else is, and no ``__post_init__`` runs."""
    if not dataclasses.is_dataclass(cls) or hasattr(cls, "__post_init__"):
        return None
    names = tuple(field.name for field in dataclasses.fields(cls))
    try:
        parameters = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return None
    positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
    if tuple(parameter.name for parameter in parameters if parameter.kind is positional) != names:
        return None
    return names if len(parameters) == len(names) else None


def _shared(value: Any) -> Any:
    """``value`` (a parsed body) with each key and short text replaced by the one interned copy of it.
    marshal writes a text it has written before as a reference to it (and reads it back interned), so the
    cache holds each of a fleet's few thousand distinct keys and values once instead of each time a document
    names it (~300,000 at the reference size): a quarter less to store, a third less time to load, and less
    memory. A workload's validated fields are texts of its body, so they are shared too. Equal to
    ``value``, and a mapping or list that a YAML alias made appear twice is still one object (copied once:
    an alias is never expanded); ``value`` itself when it nests too deep to copy."""
    try:
        return _interned(value, {})
    except RecursionError:
        return value


def _interned(value: Any, copies: dict[int, Any]) -> Any:
    kind = type(value)
    if kind is str:
        return sys.intern(value) if len(value) <= SHARED_TEXT else value
    if kind is not dict and kind is not list and kind is not tuple:
        return value
    copied = copies.get(id(value))
    if copied is None:
        if kind is dict:
            copied = {_interned(key, copies): _interned(item, copies) for key, item in value.items()}
        elif kind is list:
            copied = [_interned(item, copies) for item in value]
        else:
            copied = tuple(_interned(item, copies) for item in value)
        copies[id(value)] = copied
    return copied


def _is_plain(document: Document, classified: Classified) -> bool:
    """A valid workload without problems, which the stored tuple rebuilds exactly."""
    manifest = classified.value
    return (
        classified.role is Role.WORKLOAD
        and isinstance(manifest, Manifest)
        and not classified.problems
        and manifest.body is document.body
        and manifest.location == document.location
        and classified.claim
        == (OBJECT_CLAIM, (manifest.group, manifest.kind, manifest.namespace, manifest.name))
        and classified.kind_key == (manifest.group, manifest.kind)
    )


def _entry(name: str, stored: Any, extra: Any) -> _Entry:
    """The entry ``stored`` describes, built in one pass over its documents: what a load of an unchanged
    file costs (most of it the five objects each document is)."""
    sha256, blob, digest, bodies, workloads = stored
    problems, others = extra if extra is not None else ((), {})
    documents = []
    classified: list[Classified | None] = []
    workload_role = Role.WORKLOAD
    for index, ((body, line), workload) in enumerate(zip(bodies, workloads, strict=True)):
        location = SourceLocation(name, line)
        documents.append(Document(body, location))
        if workload is None:
            classified.append(others.get(index))
            continue
        api_version, group, kind, object_name, namespace, namespaced, note, default_namespace, crd_scope = (
            workload
        )
        manifest = Manifest(body, location, api_version, kind, object_name, namespace, namespaced, note)
        claim = (OBJECT_CLAIM, (group, kind, namespace, object_name))
        classified.append(
            Classified(workload_role, manifest, claim, (), default_namespace, crd_scope, (group, kind))
        )
    return _Entry(sha256, blob, digest, tuple(documents), tuple(problems), classified)
