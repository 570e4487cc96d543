"""Sources as the loop reads them: a local directory (watched), a git repository (polled), a control plane.

A directory is read as it is on disk, recorded like ``publish`` records it (origin URL and HEAD when the work
tree is clean, else its name and no revision). Its changes come from watchfiles, debounced, so a burst of
saves from an editor or a ``git pull`` is one render, not twenty.

A git source is fetched into the shared clone cache and exported at one commit, so what is rendered is
exactly one revision, never a work tree half-way through an update. The export is kept until the revision
changes: a poll that finds the same commit costs a fetch, not an export of every file. It has no push channel
of its own: the loop polls it at ``--interval`` and the webhook receiver wakes the loop early.

A control plane (``sources.controlplane``) lists documents; ``ControlPlaneReader`` adapts it to the port.

Every snapshot carries a digest of its content, taken before the reconcile reads it (so a file changed
during a read makes the next digest differ, never the other way round): the commit for a git source, the
files' bytes for a directory (``sources.fingerprinting``), the listed documents for a control plane. The
reconciler skips planning when it is the one it last rendered (``controller.skipping``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
import weakref
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from watchfiles import Change, watch

from nova_gitops import errors
from nova_gitops.api.objects import Document
from nova_gitops.controller.ports import SourceSnapshot
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.sources import fingerprinting, gitsources
from nova_gitops.sources.kustomizing import KUSTOMIZATION_FILES

DEFAULT_DEBOUNCE_MS = 300


def is_source_file(change: Change, path: str, root: Path | None = None) -> bool:
    """Changes that can alter a render: YAML files outside hidden directories (``.git`` churns on every
    commit and would trigger renders of nothing), kustomizations, and, with ``root`` (the watched
    directory), any file below a directory holding a kustomization: its generators and patches may read
    files of any name (``app.properties``, ``.env`` files)."""
    parts = Path(path).parts
    if any(part.startswith(".") for part in parts[:-1]):
        return False
    name = parts[-1] if parts else ""
    if name in KUSTOMIZATION_FILES or (path.endswith((".yaml", ".yml")) and not name.startswith(".")):
        return True
    if root is None:
        return False
    return any(
        (root.joinpath(*parts[:depth]) / kustomization).is_file()
        for depth in range(len(parts) - 1, -1, -1)
        for kustomization in KUSTOMIZATION_FILES
    )


class DirectorySource:
    def __init__(
        self,
        root: Path,
        *,
        debounce_ms: int = DEFAULT_DEBOUNCE_MS,
        stop: threading.Event | None = None,
        watch_changes: bool = True,
    ) -> None:
        self.root = root
        self.debounce_ms = debounce_ms
        self.stop = stop or threading.Event()
        self.watch_changes = watch_changes
        self.fingerprint = fingerprinting.DirectoryFingerprint(root)

    @contextmanager
    def read(self) -> Iterator[SourceSnapshot]:
        # git's answer (three commands) and the digest overlap: a poll that finds nothing costs the longer
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="nova-source-info") as pool:
            checkout = pool.submit(gitsources.open_directory, self.root)
            digest = f"directory:{self.fingerprint.digest()}"  # before the reconcile reads the files
            info = SourceInfo(checkout.result().repo, checkout.result().revision)
        yield SourceSnapshot(self.root, None, {}, info, digest)

    def changes(self) -> Iterator[None] | None:
        if not self.watch_changes:
            return None
        return self._watch()

    def _watch(self) -> Iterator[None]:
        watched = self.root.resolve()
        for _batch in watch(
            watched,
            watch_filter=lambda change, path: is_source_file(change, os.path.relpath(path, watched), watched),
            debounce=self.debounce_ms,
            step=50,
            stop_event=self.stop,
            raise_interrupt=False,
        ):
            yield None


class GitSource:
    """``url`` at ``ref`` (a branch, tag or commit; None: the remote's default branch)."""

    def __init__(self, url: str, ref: str | None, *, cache_dir: Path, timeout: float = 120.0) -> None:
        self.spec = gitsources.GitSpec(url, ref)
        self.cache_dir = cache_dir
        self.timeout = timeout
        self._export: tuple[str, Path, weakref.finalize[[Path], GitSource]] | None = (
            None  # revision, its export, its removal
        )

    @classmethod
    def from_spec(cls, text: str, *, cache_dir: Path, timeout: float = 120.0) -> GitSource:
        """``git-url[@ref]``, as every other command accepts it."""
        spec = gitsources.parse_spec(text)
        return cls(spec.url, spec.ref, cache_dir=cache_dir, timeout=timeout)

    @contextmanager
    def read(self) -> Iterator[SourceSnapshot]:
        cache = gitsources.SourceCache(self.spec.url, self.cache_dir, timeout=self.timeout)
        with cache.locked():
            cache.fetch(self.spec.ref)
            revision = cache.resolve(self.spec.ref)
            if revision is None:
                where = f"ref {self.spec.ref!r}" if self.spec.ref else "default branch (HEAD)"
                raise errors.RepoError(
                    f"the source {self.spec.url} has no {where}; name an existing branch, tag or commit"
                )
            if self._export is None or self._export[0] != revision:
                root = Path(tempfile.mkdtemp(prefix="nova-source-"))
                try:
                    cache.export(revision, root)
                except BaseException:
                    _remove(root)
                    raise
                self.close()
                self._export = (revision, root, weakref.finalize(self, _remove, root))
        root = self._export[1]
        info = SourceInfo(gitsources.public_url(self.spec.url), revision)
        yield SourceSnapshot(root, None, {}, info, f"git:{self.spec.url}@{revision}")

    def close(self) -> None:
        """Remove the kept export (done when the source is collected, or at exit, otherwise)."""
        if self._export is not None:
            self._export[2]()
            self._export = None

    def changes(self) -> Iterator[None] | None:
        return None


def _remove(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


class SnapshotSource(Protocol):
    """What a control-plane source offers (``sources.controlplane.ControlPlaneSource``)."""

    def snapshot(self) -> DocumentsSnapshot: ...

    def changes(self) -> Iterator[None]: ...

    def close(self) -> None: ...


class DocumentsSnapshot(Protocol):
    @property
    def documents(self) -> tuple[Document, ...]: ...

    @property
    def texts(self) -> Mapping[str, str]: ...

    @property
    def source(self) -> SourceInfo: ...


class ControlPlaneReader:
    """A control plane as a ``SourceReader``: each read is one listing of every kind; its watches are the
    push channel (the loop still polls, which also re-reads the Clusters' reported status)."""

    def __init__(self, source: SnapshotSource) -> None:
        self.source = source

    @contextmanager
    def read(self) -> Iterator[SourceSnapshot]:
        snapshot = self.source.snapshot()
        documents = tuple(snapshot.documents)
        digest = documents_digest(documents, snapshot.source)
        yield SourceSnapshot(None, documents, dict(snapshot.texts), snapshot.source, digest)

    def changes(self) -> Iterator[None] | None:
        return self.source.changes()


def documents_digest(documents: Sequence[Document], source: SourceInfo) -> str:
    """A digest of listed documents: their bodies (``repr``: key order and types count, ``1`` is not
    ``"1"``) and where each was found."""
    digest = hashlib.sha256(repr(source).encode())
    for document in documents:
        digest.update(f"{document.location!r}\0{document.body!r}\0".encode())
    return f"documents:{digest.hexdigest()}"
