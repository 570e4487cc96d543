"""Source directories that hold a ``kustomization.yaml`` are built the way ``kubectl apply -k`` builds them.

Tutorials and real fleets keep workloads as kustomize bases and overlays (namespace, labels, patches,
ConfigMap generators). Reading their files one by one would render the base without the overlay's changes,
so such a directory is handed to ``kustomize build`` (or ``kubectl kustomize``, which embeds it) and its
output replaces that directory's files. Which directories:

- every directory holding ``kustomization.yaml``/``.yml``/``Kustomization`` is a kustomization; one that
  another kustomization includes (``resources``/``bases``/``components``, transitively) is built only as
  part of it, and those that are included by none are built on their own;
- the files below a built directory, and below every directory it includes, are not read again one by one
  (``kubectl apply -k`` applies only what the kustomization lists).

Problems point at the original file: the top kustomization is built from a temporary copy with
``buildMetadata: [originAnnotations]`` added (the user's files are never edited), kustomize then records in
``config.kubernetes.io/origin`` the ``path`` an object came from (relative to the kustomization) or, for a
generated object, the kustomization that ``configuredIn``. The object is found in its file by kind and name
for its line; what cannot be placed more finely points at line 1 of the file named. The annotation is
removed again unless the user asked for it. Objects built by kustomize are left out of the file digests
(``SourceFiles.built``), so an incremental render always re-emits them: their bytes depend on the overlay
as much as on the base file they came from.

The source is hostile (docs/security.md), and kustomize can fetch remote bases over git and HTTP and read
files anywhere a path leads. So:

- every path a kustomization names (resources, bases, components, patches, generator files...) must be a
  relative path inside the source; a URL, an absolute path or a path leading out of the source is a
  problem at the kustomization, and nothing is run for it. A resource that is not a file or directory of
  the source is refused too, since kustomize would try it as a remote URL;
- kustomize runs on a temporary copy of only the directories involved (regular files below the source
  root, read with ``SourceReader``'s rules), with its default load restrictor ``LoadRestrictionsRootOnly``
  (never ``--load-restrictor LoadRestrictionsNone``): no file outside a kustomization's root is loaded;
- its environment is emptied but for ``PATH``, with a ``HOME`` inside the copy, git refusing every
  transport and an unreachable HTTP(S) proxy, as defence in depth; it runs with a timeout;
- no plugins (no ``--enable-alpha-plugins``, ``--enable-exec``, ``--enable-helm``): generators and
  transformers that would run programs fail the build.
"""

from __future__ import annotations

import os
import posixpath
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml

from nova_gitops.api import loading
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import Problem, SourceLocation, excerpt, shortened
from nova_gitops.errors import UserError

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
TIMEOUT_SECONDS = 60.0
MAX_OUTPUT_BYTES = 64 * 1024 * 1024
ORIGIN_ANNOTATION = "config.kubernetes.io/origin"
_MESSAGE_LIMIT = 400

_INCLUDING_FIELDS = ("resources", "bases", "components")
"""Fields that name other kustomizations (directories) or resource files."""
_FILE_LIST_FIELDS = (
    "crds",
    "patchesStrategicMerge",
    "transformers",
    "generators",
    "validators",
    "configurations",
)
_GENERATOR_FIELDS = ("configMapGenerator", "secretGenerator")
_PATH_ENTRY_FIELDS = ("patches", "patchesJson6902", "replacements")
_REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|git@|git::)", re.IGNORECASE)
"""What kustomize fetches over the network whatever the source holds; other remote forms (``github.com/o/r``)
are paths that do not exist in the source, refused as such where kustomize would fetch them (resources)."""


class _Unsafe(Exception):
    """A kustomization that is not built: why, at which field."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field_name = field_name
        self.message = message


@dataclass(frozen=True, slots=True)
class Kustomization:
    """One kustomization of the source: its directory (relative, ``""`` for the root) and file name."""

    directory: str
    file: str  # relative path of the kustomization file

    @property
    def location(self) -> SourceLocation:
        return SourceLocation(self.file, 1)


@dataclass(slots=True)
class Built:
    """What the kustomizations of a source produced: objects located at their original files, the texts
    of those files (for pointing problems at fields), the problems, the directories whose files are not to
    be read one by one, and the names of files whose objects came from a build (``SourceFiles.built``)."""

    documents: list[Document] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    covered: set[str] = field(default_factory=set)
    built_files: set[str] = field(default_factory=set)

    def covers(self, relative: str) -> bool:
        """Whether the file ``relative`` lies below a directory that a kustomization builds."""
        return any(_below(relative, directory) for directory in self.covered)


def _below(relative: str, directory: str) -> bool:
    return directory == "" or relative.startswith(directory + "/")


class Reader(Protocol):
    """What is read of the source (``directory.SourceReader``, which imports this module): the bytes of a
    file below the root, by its ``/``-separated relative path, under the source's rules."""

    def read(self, relative: str, limit: int = ...) -> bytes: ...


def builder(environ: Mapping[str, str]) -> list[str]:
    """The command that builds a kustomization: ``kustomize build`` or ``kubectl kustomize``, as found on
    PATH; UserError naming both when neither is."""
    path = environ.get("PATH", os.defpath)
    found = shutil.which("kustomize", path=path)
    if found:
        return [found, "build"]
    found = shutil.which("kubectl", path=path)
    if found:
        return [found, "kustomize"]
    raise UserError(
        "the source holds a kustomization.yaml, and building it needs `kustomize` or `kubectl` (which embeds "
        "kustomize) on PATH: neither was found; install one, or remove the kustomization"
    )


def build_all(
    root: Path,
    kustomization_files: Sequence[str],
    reader: Reader,
    *,
    environ: Mapping[str, str] | None = None,
    timeout: float = TIMEOUT_SECONDS,
) -> Built:
    """Build every kustomization of ``root`` that no other includes (see the module docstring)."""
    result = Built()
    kustomizations = {
        posixpath.dirname(name): Kustomization(posixpath.dirname(name), name) for name in kustomization_files
    }
    specs: dict[str, dict[str, Any]] = {}
    includes: dict[str, list[str]] = {}
    for directory, kustomization in sorted(kustomizations.items()):
        try:
            spec = _read_kustomization(reader, kustomization)
            specs[directory] = spec
            includes[directory] = _checked_includes(root, kustomization, spec, kustomizations)
        except _Unsafe as unsafe:
            result.problems.append(Problem(kustomization.location, unsafe.message, unsafe.field_name))
        result.covered.add(directory)
    included = {child for children in includes.values() for child in children}
    tops = [directory for directory in sorted(specs) if directory not in included]
    if not tops:
        return result
    command = builder(environ if environ is not None else os.environ)
    for top in tops:
        closure = _closure(top, includes)
        result.covered.update(closure)
        if any(directory not in specs for directory in closure):
            continue  # an included kustomization was refused: its problem is reported already
        _build_one(root, kustomizations[top], specs[top], closure, reader, command, timeout, result)
    return result


def _read_kustomization(reader: Reader, kustomization: Kustomization) -> dict[str, Any]:
    from nova_gitops.sources.directory import Refused

    try:
        spec = loading.load_one(reader.read(kustomization.file))
    except (Refused, OSError, loading.YamlRefused) as error:
        raise _Unsafe("", f"cannot read the kustomization: {error}") from None
    if not isinstance(spec, dict):
        raise _Unsafe("", "a kustomization must be a mapping (resources, patches, ...)")
    _check_paths(spec)
    return spec


def _entries(spec: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(field, path) for every path or URL a kustomization names."""
    for name in (*_INCLUDING_FIELDS, *_FILE_LIST_FIELDS):
        value = spec.get(name)
        for index, entry in enumerate(value if isinstance(value, list) else []):
            if isinstance(entry, str):
                yield f"{name}[{index}]", entry
            elif isinstance(entry, dict) and isinstance(entry.get("path"), str):
                yield f"{name}[{index}].path", entry["path"]
    for name in _PATH_ENTRY_FIELDS:
        value = spec.get(name)
        for index, entry in enumerate(value if isinstance(value, list) else []):
            if isinstance(entry, dict) and isinstance(entry.get("path"), str):
                yield f"{name}[{index}].path", entry["path"]
    for name in _GENERATOR_FIELDS:
        value = spec.get(name)
        for index, entry in enumerate(value if isinstance(value, list) else []):
            if not isinstance(entry, dict):
                continue
            for key in ("files", "envs"):
                listed = entry.get(key)
                for position, item in enumerate(listed if isinstance(listed, list) else []):
                    if isinstance(item, str):
                        yield f"{name}[{index}].{key}[{position}]", item.partition("=")[2] or item
            if isinstance(entry.get("env"), str):
                yield f"{name}[{index}].env", entry["env"]
    openapi = spec.get("openapi")
    if isinstance(openapi, dict) and isinstance(openapi.get("path"), str):
        yield "openapi.path", openapi["path"]
    if spec.get("helmCharts") or spec.get("helmChartInflationGenerator"):
        yield "helmCharts", "https://helm charts are fetched from the network"


def _check_paths(spec: Mapping[str, Any]) -> None:
    for field_name, entry in _entries(spec):
        if _REMOTE.match(entry.strip()):
            raise _Unsafe(
                field_name,
                f"{excerpt(entry)} is a remote resource: nova-gitops builds kustomizations only from files "
                "of the source (vendor the base into the repository)",
            )
        if entry.startswith("/"):
            raise _Unsafe(field_name, f"{excerpt(entry)} is an absolute path: name a path inside the source")


def _checked_includes(
    root: Path,
    kustomization: Kustomization,
    spec: Mapping[str, Any],
    kustomizations: Mapping[str, Kustomization],
) -> list[str]:
    """The directories (relative) that ``kustomization`` includes; _Unsafe for a path leaving the source or
    naming nothing in it (kustomize would try it as a remote URL)."""
    included: list[str] = []
    real_root = os.path.realpath(root)
    for name in _INCLUDING_FIELDS:
        value = spec.get(name)
        for index, entry in enumerate(value if isinstance(value, list) else []):
            if not isinstance(entry, str):
                continue
            field_name = f"{name}[{index}]"
            joined = posixpath.normpath(posixpath.join(kustomization.directory, entry))
            if joined == ".." or joined.startswith("../"):
                raise _Unsafe(field_name, f"{excerpt(entry)} leads outside the source: name a path inside it")
            joined = "" if joined == "." else joined
            target = os.path.join(real_root, joined)
            resolved = os.path.realpath(target)
            if os.path.commonpath([real_root, resolved]) != real_root:
                raise _Unsafe(field_name, f"{excerpt(entry)} leads outside the source: name a path inside it")
            if os.path.isdir(target):
                if joined not in kustomizations:
                    raise _Unsafe(field_name, f"{excerpt(entry)} is a directory without a kustomization.yaml")
                included.append(joined)
            elif not os.path.isfile(target):
                raise _Unsafe(
                    field_name,
                    f"{excerpt(entry)} is not a file or directory of the source "
                    "(remote resources are refused)",
                )
    return included


def _closure(top: str, includes: Mapping[str, Sequence[str]]) -> list[str]:
    seen: list[str] = []
    pending = [top]
    while pending:
        directory = pending.pop()
        if directory in seen:
            continue
        seen.append(directory)
        pending.extend(includes.get(directory, ()))
    return sorted(seen)


def _build_one(
    root: Path,
    top: Kustomization,
    spec: Mapping[str, Any],
    closure: Sequence[str],
    reader: Reader,
    command: Sequence[str],
    timeout: float,
    result: Built,
) -> None:
    with tempfile.TemporaryDirectory(prefix="nova-kustomize-") as scratch:
        copy = Path(scratch, "source")
        problems = _copy_directories(root, closure, reader, copy)
        if problems:
            result.problems += problems
            return
        wants_origins = _asks_for_origins(spec)
        annotated = dict(spec)
        if not wants_origins:
            metadata = spec.get("buildMetadata")
            listed = (
                [item for item in metadata if isinstance(item, str)] if isinstance(metadata, list) else []
            )
            annotated["buildMetadata"] = [*listed, "originAnnotations"]
        (copy / top.file).write_text(yaml.dump(annotated, Dumper=yaml.CSafeDumper, sort_keys=False))
        target = str(copy / top.directory) if top.directory else str(copy)
        try:
            done = subprocess.run(
                [*command, target],
                capture_output=True,
                timeout=timeout,
                env=_environment(Path(scratch)),
                cwd=scratch,
                check=False,
            )
        except subprocess.TimeoutExpired:
            result.problems.append(Problem(top.location, f"kustomize build timed out after {timeout:g}s"))
            return
        except OSError as error:
            result.problems.append(Problem(top.location, f"cannot run {command[0]}: {error.strerror}"))
            return
        if done.returncode != 0:
            message = _kustomize_message(done.stderr.decode("utf-8", "replace"), scratch)
            result.problems.append(Problem(top.location, f"kustomize build failed: {message}"))
            return
    if len(done.stdout) > MAX_OUTPUT_BYTES:
        result.problems.append(Problem(top.location, "kustomize build output is over the 64 MiB limit"))
        return
    output_name = f"{top.file} (built)"
    documents, problems = loading.load_documents(output_name, done.stdout.decode("utf-8", "replace"))
    result.problems += problems
    locator = _Locator(reader, result.texts)
    for built in documents:
        body = built.body
        origin = _origin(body, remove=not wants_origins)
        location = locator.locate(top, origin, body)
        result.documents.append(Document(body, location))
        result.built_files.add(location.file)


def _asks_for_origins(spec: Mapping[str, Any]) -> bool:
    metadata = spec.get("buildMetadata")
    return isinstance(metadata, list) and "originAnnotations" in metadata


def _copy_directories(root: Path, closure: Sequence[str], reader: Reader, copy: Path) -> list[Problem]:
    """Regular files below each directory of ``closure`` into ``copy`` at the same relative paths, read
    with the source's rules (no link out of the source, size limits); hidden directories are skipped."""
    from nova_gitops.sources.directory import Refused

    problems: list[Problem] = []
    for directory in closure:
        base = root / directory if directory else root
        (copy / directory).mkdir(parents=True, exist_ok=True)
        for current, subdirectories, files in os.walk(base):
            subdirectories[:] = sorted(
                name
                for name in subdirectories
                if not name.startswith(".") and not os.path.islink(os.path.join(current, name))
            )
            relative_dir = os.path.relpath(current, root).replace(os.sep, "/")
            relative_dir = "" if relative_dir == "." else relative_dir
            for name in sorted(files):
                relative = f"{relative_dir}/{name}" if relative_dir else name
                try:
                    data = reader.read(relative)
                except Refused as refused:
                    problems.append(Problem(SourceLocation(relative, 1), refused.reason))
                    continue
                except OSError as error:
                    problems.append(Problem(SourceLocation(relative, 1), f"cannot read: {error.strerror}"))
                    continue
                destination = copy / relative
                destination.parent.mkdir(parents=True, exist_ok=True)
                destination.write_bytes(data)
    return problems


def _environment(scratch: Path) -> dict[str, str]:
    """Nothing of ours for kustomize: PATH only, a HOME of its own, no git transport, no reachable proxy."""
    unreachable = "http://127.0.0.1:9"
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(scratch),
        "KUBECONFIG": str(scratch / "no-kubeconfig"),
        "GIT_ALLOW_PROTOCOL": "none",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HTTP_PROXY": unreachable,
        "HTTPS_PROXY": unreachable,
        "http_proxy": unreachable,
        "https_proxy": unreachable,
        "NO_PROXY": "",
        "no_proxy": "",
    }


def _kustomize_message(stderr: str, scratch: str) -> str:
    """kustomize's error, without the temporary directory's path and the deprecation chatter, shortened."""
    lines = [
        line.strip()
        for line in stderr.replace(os.path.join(scratch, "source") + os.sep, "")
        .replace(scratch, "")
        .splitlines()
        if line.strip() and not line.lstrip().startswith("# Warning:")
    ]
    text = " ".join(lines).removeprefix("Error: ").strip() or "no message"
    return shortened(text, _MESSAGE_LIMIT)


def _origin(body: Any, *, remove: bool) -> dict[str, Any]:
    """The parsed ``config.kubernetes.io/origin`` of ``body`` (empty when absent), removed when asked."""
    metadata = body.get("metadata") if isinstance(body, dict) else None
    if not isinstance(metadata, dict):
        return {}
    annotations = metadata.get("annotations")
    if not isinstance(annotations, dict) or ORIGIN_ANNOTATION not in annotations:
        return {}
    text = annotations[ORIGIN_ANNOTATION]
    if remove:
        del annotations[ORIGIN_ANNOTATION]
        if not annotations:
            del metadata["annotations"]
    try:
        origin = loading.load_one(text) if isinstance(text, str) else None
    except loading.YamlRefused:
        return {}
    return origin if isinstance(origin, dict) else {}


_GENERATOR_KEYS = {"ConfigMapGenerator": "configMapGenerator", "SecretGenerator": "secretGenerator"}


class _Locator:
    """Where a built object came from: its original file and the line its document starts on."""

    def __init__(self, reader: Reader, texts: dict[str, str]) -> None:
        self._reader = reader
        self._texts = texts
        self._documents: dict[str, list[Document]] = {}

    def locate(self, top: Kustomization, origin: Mapping[str, Any], body: Any) -> SourceLocation:
        path = origin.get("path")
        if isinstance(path, str) and not origin.get("repo"):
            name = posixpath.normpath(posixpath.join(top.directory, path))
            documents = self._documents_of(name)
            if documents is not None:
                return SourceLocation(name, self._line(documents, body))
            return SourceLocation(name, 1)
        configured = origin.get("configuredIn")
        if isinstance(configured, str) and not origin.get("repo"):
            name = posixpath.normpath(posixpath.join(top.directory, configured))
            text = self._text(name)
            by = origin.get("configuredBy")
            key = _GENERATOR_KEYS.get(by.get("kind", "")) if isinstance(by, dict) else None
            return SourceLocation(name, _key_line(text, key) if text and key else 1)
        return top.location

    def _text(self, name: str) -> str | None:
        if name in self._texts:
            return self._texts[name]
        from nova_gitops.sources.directory import Refused

        try:
            text: str = self._reader.read(name).decode("utf-8")
        except (Refused, OSError, UnicodeDecodeError):
            return None
        self._texts[name] = text
        return text

    def _documents_of(self, name: str) -> list[Document] | None:
        if name not in self._documents:
            text = self._text(name)
            self._documents[name] = loading.load_documents(name, text)[0] if text is not None else []
        return self._documents[name] or None

    @staticmethod
    def _line(documents: Sequence[Document], body: Any) -> int:
        """The line of the document with the built object's kind and name; else of the only one of its
        kind; else the file's first document (a prefix or suffix renamed it)."""
        kind = body.get("kind") if isinstance(body, dict) else None
        name = _name(body)
        same_kind = [doc for doc in documents if isinstance(doc.body, dict) and doc.body.get("kind") == kind]
        named = [doc for doc in same_kind if _name(doc.body) == name]
        if named:
            return named[0].location.line
        if len(same_kind) == 1:
            return same_kind[0].location.line
        return documents[0].location.line


def _name(body: Any) -> object:
    metadata = body.get("metadata") if isinstance(body, dict) else None
    return metadata.get("name") if isinstance(metadata, dict) else None


def _key_line(text: str, key: str) -> int:
    match = re.search(rf"^{re.escape(key)}\s*:", text, re.MULTILINE)
    return text.count("\n", 0, match.start()) + 1 if match else 1
