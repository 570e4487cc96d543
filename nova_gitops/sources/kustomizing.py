"""Source directories that hold a ``kustomization.yaml`` are built the way ``kubectl apply -k`` builds them.

Tutorials and real fleets keep workloads as kustomize bases and overlays (namespace, labels, patches,
ConfigMap generators). Reading their files one by one would render the base without the overlay's changes,
so such a directory is handed to ``kustomize build`` (or ``kubectl kustomize``, which embeds it) and its
output replaces that directory's files. Which directories:

- every directory holding ``kustomization.yaml``/``.yml``/``Kustomization`` is a kustomization; one that
  another kustomization includes (``resources``/``bases``/``components``, or ``generators``/
  ``transformers``/``validators``, transitively) is built only as part of it, and those that are included by
  none are built on their own; kustomizations that include each other (a cycle, ``resources: [.]``
  included) are an error naming each of them, never a silent omission of their objects;
- the files below a built directory, and below every directory it includes, are not read again one by one
  (``kubectl apply -k`` applies only what the kustomization lists).

Problems point at the original file (``kustomizeorigins``). Objects built by kustomize are left out of the
file digests (``SourceFiles.built``), so an incremental render always re-emits them: their bytes depend on
the overlay as much as on the base file they came from.

The source is hostile (docs/security.md), and kustomize can fetch remote bases over git and HTTP and read
files anywhere a path leads. So:

- every path a kustomization names, in every field kustomize reads one through, is checked first
  (``sources.kustomizations``): a URL, an absolute path, a path leading out of the source (or through a
  symbolic link), a field kustomize does not have, and Helm are problems at the entry's line; a
  kustomization with one is never built, nor is any kustomization that includes it;
- kustomize runs on a temporary copy of only the directories involved (regular files below the source
  root, read with ``SourceReader``'s rules; no link), each kustomization file written from the spec that
  was checked, with its default load restrictor ``LoadRestrictionsRootOnly`` (never
  ``--load-restrictor LoadRestrictionsNone``): no file outside a kustomization's root is loaded;
- kustomize runs kept off the network, with no plugins (``kustomizerunning``).
"""

from __future__ import annotations

import os
import posixpath
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from nova_gitops.api import fieldlines, loading
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import Problem, SourceLocation
from nova_gitops.sources import kustomizations, kustomizeorigins, kustomizerunning
from nova_gitops.sources.reading import Reader, Refused

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
MAX_OUTPUT_BYTES = 64 * 1024 * 1024


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


class _Sources:
    """The kustomizations of one source, read and checked: which may be built, what each names."""

    def __init__(self, root: Path, kustomization_files: Sequence[str], reader: Reader) -> None:
        self.all: dict[str, Kustomization] = {}
        self.problems: list[Problem] = []
        for name in kustomization_files:
            directory = posixpath.dirname(name)
            if directory in self.all:
                self.problems.append(
                    Problem(
                        SourceLocation(name, 1),
                        f"a second kustomization file in one directory (with {self.all[directory].file}): "
                        "kustomize refuses to choose; keep one",
                    )
                )
            self.all.setdefault(directory, Kustomization(directory, name))
        self.refused = {posixpath.dirname(problem.location.file) for problem in self.problems}
        self.specs: dict[str, dict[str, Any]] = {}  # the ones that passed every check
        self.texts: dict[str, str] = {}
        self.named: dict[str, list[kustomizations.Entry]] = {}
        real_root = os.path.realpath(root)
        for directory, kustomization in sorted(self.all.items()):
            try:
                spec = self._read(reader, kustomization)
            except kustomizations.Unsafe as unsafe:
                self._refuse(kustomization, unsafe)
                continue
            self.named[directory] = kustomizations.named(directory, spec, self.all)
            try:
                kustomizations.check(real_root, directory, spec, self.all)
            except kustomizations.Unsafe as unsafe:
                self._refuse(kustomization, unsafe)
                continue
            if directory not in self.refused:
                self.specs[directory] = spec
        for cycle in kustomizations.cycles(self.named):
            self._cycle(cycle)

    def _read(self, reader: Reader, kustomization: Kustomization) -> dict[str, Any]:
        try:
            data = reader.read(kustomization.file)
            spec = loading.load_one(data)
        except (Refused, OSError, loading.YamlRefused) as error:
            raise kustomizations.Unsafe("", f"cannot read the kustomization: {error}") from None
        self.texts[kustomization.directory] = data.decode("utf-8")
        if not isinstance(spec, dict):
            raise kustomizations.Unsafe("", "a kustomization must be a mapping (resources, patches, ...)")
        return spec

    def line(self, directory: str, field_name: str) -> int:
        text = self.texts.get(directory)
        return fieldlines.FieldLocator(text).line_of(1, field_name) if text and field_name else 1

    def _refuse(self, kustomization: Kustomization, unsafe: kustomizations.Unsafe) -> None:
        at = SourceLocation(kustomization.file, self.line(kustomization.directory, unsafe.field_name))
        self.problems.append(Problem(at, unsafe.message, unsafe.field_name or None))
        self.refused.add(kustomization.directory)
        self.specs.pop(kustomization.directory, None)

    def _cycle(self, steps: Sequence[kustomizations.Step]) -> None:
        shown = ", ".join(
            f"{self.all[step.directory].file}:{self.line(step.directory, step.field)} includes "
            f"{step.target or '.'}"
            for step in steps
        )
        first = steps[0]
        self.problems.append(
            Problem(
                SourceLocation(self.all[first.directory].file, self.line(first.directory, first.field)),
                f"kustomizations include each other in a cycle, which kustomize cannot build: {shown}",
                first.field,
            )
        )
        for step in steps:
            self.refused.add(step.directory)
            self.specs.pop(step.directory, None)

    def tops(self) -> list[str]:
        """The kustomizations to build on their own: checked, and named by no kustomization."""
        included = {entry.path for entries in self.named.values() for entry in entries}
        return [directory for directory in sorted(self.specs) if directory not in included]

    def closure(self, top: str) -> list[str]:
        """``top`` and every kustomization it names, transitively."""
        seen: set[str] = set()
        pending = [top]
        while pending:
            directory = pending.pop()
            if directory not in seen:
                seen.add(directory)
                pending.extend(entry.path for entry in self.named.get(directory, ()))
        return sorted(seen)


def build_all(
    root: Path,
    kustomization_files: Sequence[str],
    reader: Reader,
    *,
    environ: Mapping[str, str] | None = None,
    timeout: float = kustomizerunning.TIMEOUT_SECONDS,
) -> Built:
    """Build every kustomization of ``root`` that no other includes (see the module docstring). One that
    was refused (a problem names it) is never built, nor is any kustomization that includes it."""
    result = Built()
    found = _Sources(root, kustomization_files, reader)
    result.problems += sorted(found.problems)
    result.covered.update(found.all)
    tops = found.tops()
    if not tops:
        return result
    command = kustomizerunning.builder(environ if environ is not None else os.environ)
    for top in tops:
        closure = found.closure(top)
        if any(directory not in found.specs for directory in closure):
            continue  # an included kustomization was refused: its problem is reported already
        specs = {directory: (found.all[directory], found.specs[directory]) for directory in closure}
        _build_one(root, found.all[top], specs, reader, command, timeout, result)
    return result


def _build_one(
    root: Path,
    top: Kustomization,
    specs: Mapping[str, tuple[Kustomization, Mapping[str, Any]]],
    reader: Reader,
    command: Sequence[str],
    timeout: float,
    result: Built,
) -> None:
    """Build ``top`` from a copy of the directories of ``specs`` (``top`` and what it includes), each
    kustomization file written from its checked spec: kustomize reads exactly what was checked, never a
    text YAML parsers might read two ways."""
    spec = specs[top.directory][1]
    with tempfile.TemporaryDirectory(prefix="nova-kustomize-") as scratch:
        copy = Path(scratch, "source")
        problems = _copy_directories(root, sorted(specs), reader, copy)
        if problems:
            result.problems += problems
            return
        wants_origins = _asks_for_origins(spec)
        _write_kustomizations(copy, top, specs, origins=not wants_origins)
        target = copy / top.directory if top.directory else copy
        try:
            done = kustomizerunning.run_kustomize(command, target, Path(scratch), timeout)
        except subprocess.TimeoutExpired:
            result.problems.append(Problem(top.location, f"kustomize build timed out after {timeout:g}s"))
            return
        except OSError as error:
            result.problems.append(Problem(top.location, f"cannot run {command[0]}: {error.strerror}"))
            return
        if done.returncode != 0:
            result.problems.append(Problem(top.location, kustomizerunning.failure(done, scratch)))
            return
    if len(done.stdout) > MAX_OUTPUT_BYTES:
        result.problems.append(Problem(top.location, "kustomize build output is over the 64 MiB limit"))
        return
    output_name = f"{top.file} (built)"
    documents, problems = loading.load_documents(output_name, done.stdout.decode("utf-8", "replace"))
    result.problems += problems
    locator = kustomizeorigins.Locator(reader, result.texts)
    for built in documents:
        body = built.body
        origin = kustomizeorigins.origin(body, remove=not wants_origins)
        location = locator.locate(top.directory, top.location, origin, body)
        result.documents.append(Document(body, location))
        result.built_files.add(location.file)


def _write_kustomizations(
    copy: Path,
    top: Kustomization,
    specs: Mapping[str, tuple[Kustomization, Mapping[str, Any]]],
    *,
    origins: bool,
) -> None:
    """Each kustomization file of the copy written from its checked spec; ``top``'s asks for origin
    annotations when ``origins``."""
    for directory, (kustomization, checked) in specs.items():
        written = dict(checked)
        if directory == top.directory and origins:
            metadata = checked.get("buildMetadata")
            listed = metadata if isinstance(metadata, list) else []
            listed = [item for item in listed if isinstance(item, str)]
            written["buildMetadata"] = [*listed, "originAnnotations"]
        text = yaml.dump(written, Dumper=yaml.CSafeDumper, sort_keys=False)
        (copy / kustomization.file).write_text(text)


def _asks_for_origins(spec: Mapping[str, Any]) -> bool:
    metadata = spec.get("buildMetadata")
    return isinstance(metadata, list) and "originAnnotations" in metadata


def _copy_directories(root: Path, closure: Sequence[str], reader: Reader, copy: Path) -> list[Problem]:
    """Regular files below each directory of ``closure`` into ``copy`` at the same relative paths, read
    with the source's rules (no link out of the source, size limits); hidden directories and symlinked
    ones are skipped (the source's walk reports the latter). The copy holds no link: kustomize, which
    joins paths lexically, finds there what the checks saw."""
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
                destination = copy / relative
                if destination.exists():  # below two directories of the closure: copied once
                    continue
                try:
                    data = reader.read(relative)
                except Refused as refused:
                    problems.append(Problem(SourceLocation(relative, 1), refused.reason))
                    continue
                except OSError as error:
                    problems.append(Problem(SourceLocation(relative, 1), f"cannot read: {error.strerror}"))
                    continue
                destination.parent.mkdir(parents=True, exist_ok=True)
                destination.write_bytes(data)
    return problems
