"""A source directory: every ``*.yaml``/``*.yml`` below it, read in path order.

Hidden directories (``.git``, ``.github``) are skipped, and so are kustomize's own files
(``kustomization.yaml``), which are build instructions rather than objects. So is any subdirectory that
holds a previous render (a ``placement.yaml`` of ours next to a ``clusters/`` directory): rendering into
``src/rendered`` is a natural layout, and reading the output back as source would double every object on the
next render. File names in problems are relative to the directory, with ``/`` separators, so messages read
the same on every machine.
Files are read through ``reading.SourceReader``, which says why and how."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from nova_gitops.api import loading
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import Problem, Severity, SourceLocation
from nova_gitops.errors import UserError
from nova_gitops.sources import exporting, kustomizing
from nova_gitops.sources.parsecache import ParseCache
from nova_gitops.sources.reading import OUTSIDE, Refused, SourceReader, open_regular

SKIPPED_FILE_NAMES = frozenset({"kustomization.yaml", "kustomization.yml", "Kustomization"})
RENDER_MARKER_FILE = "placement.yaml"
RENDER_API_VERSION_PREFIX = "apiVersion: gitops.nova.elotl.co/"
_RENDER_MARKER_BYTES = 512

LINKED_DIRECTORY = (
    "symlink to a directory: nothing below it is read (only links to files are followed); link each file, "
    "or move the directory here"
)
LINKED_READ_DIRECTORY = (
    "symlink to a directory is not followed: the files it leads to are read where they are, at {target}"
)


@dataclass(frozen=True, slots=True)
class SourceFiles:
    documents: tuple[Document, ...]
    texts: Mapping[str, str]  # file name → text, for pointing problems at their exact line
    problems: tuple[Problem, ...]  # unreadable files and YAML syntax errors
    built: frozenset[str] = frozenset()  # files whose objects came out of a kustomize build (not digested)
    digests: Mapping[str, str] = field(default_factory=dict)
    """Each file read one by one (not built) → sha1 of its bytes: what an incremental render compares."""


def yaml_files(root: Path) -> list[str]:
    """Relative paths of the YAML files below ``root``, sorted; ``root`` may also be one file. Entries that
    are not directories are listed whatever they are (links, FIFOs): reading decides, and reports them."""
    return _walk(root).files


@dataclass(frozen=True, slots=True)
class _Walked:
    files: list[str]  # YAML files, relative and sorted
    kustomizations: list[str]  # kustomization files, relative and sorted
    problems: list[Problem]  # symbolic links to directories, which are never walked into


def _walk(root: Path) -> _Walked:
    """What is below ``root``: see ``_Walked``.

    A symbolic link to a directory is never walked into: ``kubectl apply -R`` does not follow one either,
    a git source's export cannot hold one that leads out of its tree, and one inside the tree would read
    its files twice (or loop). It is not skipped without a word: one leading out of the source is the
    problem a link to a file outside gets (``OUTSIDE``); one to a directory of the source that is walked
    anyway is a warning (``LINKED_READ_DIRECTORY``: its files are read once, where they are); one to a
    directory nothing reads (hidden, or a previous render) is ``LINKED_DIRECTORY``. The errors stop a render,
    so a directory replaced by a link never makes its objects (and a kustomization below it) vanish from a
    publish, which would prune them from every cluster; the warning keeps a source that linked a directory
    for convenience (``web-current -> web``) rendering as it did."""
    if not root.is_dir():
        return _Walked([root.name], [], [])
    found = []
    kustomizations = []
    problems: list[Problem] = []
    real_root = os.path.realpath(root)
    for directory, subdirectories, files in os.walk(root):
        relative = os.path.relpath(directory, root)
        prefix = "" if relative == "." else relative.replace(os.sep, "/") + "/"
        walked = []
        for name in sorted(subdirectories):
            if name.startswith("."):
                continue
            path = os.path.join(directory, name)
            if os.path.islink(path):  # not looked into (is_previous_render would read through it)
                problems.append(_linked_directory(SourceLocation(prefix + name, 1), real_root, path))
            elif not is_previous_render(Path(path)):
                walked.append(name)
        subdirectories[:] = walked
        for name in files:
            if name in SKIPPED_FILE_NAMES:
                kustomizations.append(prefix + name)
            elif name.endswith((".yaml", ".yml")) and not name.startswith("."):
                found.append(prefix + name)
    return _Walked(sorted(found), sorted(kustomizations), problems)


def _linked_directory(location: SourceLocation, real_root: str, link: str) -> Problem:
    """What a link to a directory at ``location`` is: see ``_walk``."""
    target = os.path.realpath(link)
    if os.path.commonpath([real_root, target]) != real_root:
        return Problem(location, OUTSIDE)
    relative = os.path.relpath(target, real_root)
    parts = [] if relative == "." else relative.split(os.sep)
    walked = not any(part.startswith(".") for part in parts) and not any(
        is_previous_render(Path(real_root, *parts[:count])) for count in range(1, len(parts) + 1)
    )
    if not walked:
        return Problem(location, LINKED_DIRECTORY)
    shown = "/".join(parts) + "/" if parts else "the source's root"
    return Problem(location, LINKED_READ_DIRECTORY.format(target=shown), severity=Severity.WARNING)


def is_previous_render(directory: Path) -> bool:
    """Whether ``directory`` holds a nova-gitops render: a ``clusters/`` directory and a ``placement.yaml``
    whose first line that is not blank, a comment or ``---`` is ``apiVersion: gitops.nova.elotl.co/...``.
    Reads only the first few hundred bytes of the file, and only of a regular file (not a link)."""
    try:
        if not stat.S_ISDIR(os.lstat(directory / "clusters").st_mode):
            return False
        descriptor = open_regular(directory / RENDER_MARKER_FILE)
    except (OSError, Refused):
        return False
    try:
        head = os.read(descriptor, _RENDER_MARKER_BYTES)
    except OSError:
        return False
    finally:
        os.close(descriptor)
    for line in head.decode("utf-8", "replace").splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and stripped != "---":
            return stripped.startswith(RENDER_API_VERSION_PREFIX)
    return False


class SourceTexts(Mapping[str, str]):
    """File name → text, for pointing problems at their exact line. A file taken from the parse cache by its
    git blob id was not read; its text is read here when asked for (only a file a problem points into is),
    through a ``SourceReader`` of the same root, so it is the same text a full load would hold."""

    def __init__(self, texts: dict[str, str], unread: Mapping[str, str], root: Path) -> None:
        self._texts = texts
        self._unread = dict(unread)  # name → path relative to the root
        self._root = root

    def __getitem__(self, name: str) -> str:
        text = self._texts.get(name)
        if text is not None:
            return text
        relative = self._unread.get(name)
        if relative is None:
            raise KeyError(name)
        try:
            with SourceReader(self._root) as reader:
                text = reader.read(relative).decode("utf-8")
        except (OSError, Refused, UnicodeDecodeError):
            raise KeyError(name) from None
        self._texts[name] = text
        return text

    def __contains__(self, name: object) -> bool:
        return name in self._texts or name in self._unread

    def __iter__(self) -> Iterator[str]:
        yield from self._texts
        yield from (name for name in self._unread if name not in self._texts)

    def __len__(self) -> int:
        return len(self._texts) + sum(1 for name in self._unread if name not in self._texts)

    def overlaid(self, more: Mapping[str, str]) -> SourceTexts:
        """These texts with ``more``'s in place of any of the same name."""
        unread = {name: relative for name, relative in self._unread.items() if name not in more}
        return SourceTexts({**self._texts, **more}, unread, self._root)


def overlaid_texts(texts: Mapping[str, str], more: Mapping[str, str]) -> Mapping[str, str]:
    """``texts`` with ``more``'s in place of any of the same name, reading no unread text."""
    return texts.overlaid(more) if isinstance(texts, SourceTexts) else {**texts, **more}


def read_source(
    root: Path,
    prefix: str = "",
    cache: ParseCache | None = None,
    *,
    blobs: Mapping[str, str] | None = None,
    save_cache: bool = True,
) -> SourceFiles:
    """Read and parse every YAML file below ``root``; file names in problems are ``prefix`` + the path
    relative to ``root`` (a prefix keeps two directories' files apart). ``cache`` skips parsing files seen
    before with the same bytes (and is saved afterwards unless ``save_cache`` is false: a caller that also
    classifies through its memo saves it then). A file given as ``root`` is read as one below its directory.
    Raises UserError when ``root`` does not exist.

    ``blobs`` (path relative to ``root`` → git blob id) says which bytes a git export wrote where, or
    which files of a work tree hold their index blob (``gitsources.Checkout.blobs``): a file the cache holds
    with the same blob id is taken from it without being read, so a load reads only the files that changed
    since the cached one. Walking the tree still decides which files are sources, exactly as without
    ``blobs``.

    A directory holding a ``kustomization.yaml`` is built by kustomize instead (``sources.kustomizing``):
    its objects are located at the files they came from, and the files below it (and below what it
    includes) are not read one by one."""
    if not root.exists():
        raise UserError(f"source {root} does not exist: give a directory of YAML manifests")
    loaded = _Loaded(prefix)
    walked = _walk(root)
    relatives = walked.files
    loaded.problems += [_prefixed(problem, prefix) for problem in walked.problems]
    built_files: frozenset[str] = frozenset()
    reader_root = root if root.is_dir() else root.parent
    with SourceReader(reader_root) as reader:
        if walked.kustomizations:
            built = kustomizing.build_all(root, walked.kustomizations, reader)
            relatives = [relative for relative in relatives if not built.covers(relative)]
            loaded.add_built(built)
            built_files = frozenset(prefix + name for name in built.built_files)
        for relative in relatives:
            blob = blobs.get(relative) if blobs is not None else None
            loaded.read(reader, relative, blob, cache)
    if cache is not None and save_cache:
        cache.save()
    digests = loaded.digests
    if built_files:  # a file a build read too is digested as built: its objects depend on more than it
        digests = {name: digest for name, digest in digests.items() if name not in built_files}
    texts = loaded.texts
    all_texts: Mapping[str, str] = SourceTexts(texts, loaded.unread, reader_root) if loaded.unread else texts
    return SourceFiles(tuple(loaded.documents), all_texts, tuple(loaded.problems), built_files, digests)


_Located = TypeVar("_Located", Document, Problem)


def _prefixed(found: _Located, prefix: str) -> _Located:
    """``found`` (a Document or a Problem) with ``prefix`` before its file name."""
    return replace(found, location=replace(found.location, file=prefix + found.location.file))


@dataclass(slots=True)
class _Loaded:
    """What ``read_source`` has read so far: file names in it are ``prefix`` + the path below the root."""

    prefix: str
    documents: list[Document] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)
    unread: dict[str, str] = field(default_factory=dict)  # taken from the cache by blob id: name → path
    digests: dict[str, str] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def add_built(self, built: kustomizing.Built) -> None:
        """The objects, texts and problems of the source's kustomize builds."""
        prefix = self.prefix
        self.documents += [_prefixed(document, prefix) for document in built.documents]
        self.texts.update({prefix + name: text for name, text in built.texts.items()})
        self.problems += [_prefixed(problem, prefix) for problem in built.problems]

    def read(self, reader: SourceReader, relative: str, blob: str | None, cache: ParseCache | None) -> None:
        """One file's documents and problems: from ``cache`` by its blob id without reading it, else read
        (and parsed, unless the cache has its bytes)."""
        name = self.prefix + relative
        if blob is not None and cache is not None:
            known = cache.get_blob(name, blob)
            if known is not None:
                (found_documents, found_problems), self.digests[name] = known
                self.unread[name] = relative
                self.documents += found_documents
                self.problems += found_problems
                return
        try:
            data = reader.read(relative)
            # a blob id is kept with the file's entry only when the bytes read are that blob's
            checked = blob is not None and cache is not None and exporting.blob_id(data, blob) == blob
            verified = blob if checked else None
            cached = cache.get(name, data, verified) if cache is not None else None
            text = data.decode("utf-8")
        except Refused as refused:
            self.problems.append(Problem(SourceLocation(name, 1), refused.reason))
            return
        except UnicodeDecodeError as error:
            self.problems.append(Problem(SourceLocation(name, 1), f"not UTF-8 text: {error.reason}"))
            return
        except OSError as error:
            self.problems.append(Problem(SourceLocation(name, 1), f"cannot read: {error.strerror}"))
            return
        self.texts[name] = text
        self.digests[name] = hashlib.sha1(data, usedforsecurity=False).hexdigest()
        if cached is not None:
            self.documents += cached[0]
            self.problems += cached[1]
            return
        found, file_problems = loading.load_documents(name, text)
        if cache is not None:  # the same documents, their bodies' texts shared
            self.documents += cache.put(name, data, found, file_problems, verified)[0]
        else:
            self.documents += found
        self.problems += file_problems
