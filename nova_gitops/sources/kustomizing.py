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

- every path a kustomization names, in every field kustomize reads one through, is checked first
  (``sources.kustomizations``): a URL, an absolute path, a path leading out of the source (or through a
  symbolic link), a field kustomize does not have, and Helm are problems at the entry's line; a
  kustomization with one is never built, nor is any kustomization that includes it;
- kustomize runs on a temporary copy of only the directories involved (regular files below the source
  root, read with ``SourceReader``'s rules; no link), each kustomization file written from the spec that
  was checked, with its default load restrictor ``LoadRestrictionsRootOnly`` (never
  ``--load-restrictor LoadRestrictionsNone``): no file outside a kustomization's root is loaded;
- it cannot reach a network or a git remote by construction, whatever reaches it (``run_kustomize``): it
  runs in a process that cannot open a socket (``sources.isolating``'s seccomp filter), with a PATH where
  no ``git`` is found, an environment of its own and a deadline; Go's HTTP client would otherwise send a
  request for ``127.0.0.1`` past any proxy setting;
- no plugins (no ``--enable-alpha-plugins``, ``--enable-exec``, ``--enable-helm``): generators and
  transformers that would run programs fail the build.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml

from nova_gitops.api import fieldlines, loading
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import Problem, SourceLocation, shortened
from nova_gitops.errors import UserError
from nova_gitops.sources import isolating, kustomizations
from nova_gitops.sources.reading import Refused

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
TIMEOUT_SECONDS = 60.0
MAX_OUTPUT_BYTES = 64 * 1024 * 1024
ORIGIN_ANNOTATION = "config.kubernetes.io/origin"
_MESSAGE_LIMIT = 400

_KLOG_PREFIX = re.compile(r"^[EWI]\d{4} [\d:.]+\s+\d+ [\w.]+:\d+\] ")


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
    """What is read of the source (``reading.SourceReader``): the bytes of a
    file below the root, by its ``/``-separated relative path, under the source's rules."""

    def read(self, relative: str, limit: int = ...) -> bytes: ...


def builder(environ: Mapping[str, str]) -> list[str]:
    """The command that builds a kustomization: ``kustomize build`` or ``kubectl kustomize``, as found on
    PATH (an absolute path: it runs with a PATH of nothing); UserError naming both when neither is."""
    path = environ.get("PATH", os.defpath)
    found = shutil.which("kustomize", path=path)
    if found:
        return [os.path.abspath(found), "build"]
    found = shutil.which("kubectl", path=path)
    if found:
        return [os.path.abspath(found), "kustomize"]
    raise UserError(
        "the source holds a kustomization.yaml, and building it needs `kustomize` or `kubectl` (which embeds "
        "kustomize) on PATH: neither was found; install one, or remove the kustomization"
    )


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
    timeout: float = TIMEOUT_SECONDS,
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
    command = builder(environ if environ is not None else os.environ)
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
            done = run_kustomize(command, target, Path(scratch), timeout)
        except subprocess.TimeoutExpired:
            result.problems.append(Problem(top.location, f"kustomize build timed out after {timeout:g}s"))
            return
        except OSError as error:
            result.problems.append(Problem(top.location, f"cannot run {command[0]}: {error.strerror}"))
            return
        if done.returncode != 0:
            result.problems.append(Problem(top.location, _failure(done, scratch)))
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


def _failure(done: subprocess.CompletedProcess[bytes], scratch: str) -> str:
    stderr = done.stderr.decode("utf-8", "replace")
    if done.returncode == isolating.UNAVAILABLE and stderr.startswith(isolating.REFUSAL_PREFIX):
        reason = shortened(stderr.removeprefix(isolating.REFUSAL_PREFIX).strip(" ()\n"), _MESSAGE_LIMIT)
        return f"kustomize is not run where it cannot be kept off the network: {reason}"
    return f"kustomize build failed: {_kustomize_message(stderr, scratch)}"


def run_kustomize(
    command: Sequence[str], target: Path, scratch: Path, timeout: float
) -> subprocess.CompletedProcess[bytes]:
    """``command target`` (``kustomize build DIR``) run so that it can reach no network and run no git: in
    a process that cannot open a socket (``sources.isolating``), with a PATH of nothing, an environment of
    its own (a HOME and a working directory in ``scratch``) and a deadline, after which its whole process
    group is killed. Nothing here checks what ``target`` names; ``build_all`` does, before."""
    scratch.mkdir(parents=True, exist_ok=True)
    argv = isolating.command([*command, str(target)])
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_environment(scratch),
        cwd=scratch,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        raise
    except BaseException:
        _kill_group(process)
        raise
    return subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.communicate()


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


def _environment(scratch: Path) -> dict[str, str]:
    """Nothing of ours for kustomize: a PATH where no program is found (no git, no helm, no plugin), a
    HOME of its own, and, should a git run all the same, no transport and no configuration."""
    unreachable = "http://127.0.0.1:9"
    return {
        "PATH": str(scratch / "no-programs"),
        "HOME": str(scratch / "home"),
        "KUBECONFIG": str(scratch / "no-kubeconfig"),
        "GIT_ALLOW_PROTOCOL": "none",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "HTTP_PROXY": unreachable,
        "HTTPS_PROXY": unreachable,
        "http_proxy": unreachable,
        "https_proxy": unreachable,
        "NO_PROXY": "",
        "no_proxy": "",
    }


def _kustomize_message(stderr: str, scratch: str) -> str:
    """kustomize's error, without the temporary directory's path, klog's prefix and the deprecation
    chatter, shortened."""
    lines = [
        _KLOG_PREFIX.sub("", line.strip())
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
