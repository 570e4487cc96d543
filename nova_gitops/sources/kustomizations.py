"""What a kustomization names, checked before kustomize is run on it, and which kustomizations include which.

kustomize reads a file or a directory through many fields, and fetches a URL through most of them: an
``http(s)://`` file with its own HTTP client, a remote base by running ``git``. Every such field is listed
here from kustomize's ``types.Kustomization`` (v5): the ones that name kustomizations or files
(``resources``, ``bases``, ``components``, ``generators``, ``transformers``, ``validators``), the ones that
name files (``crds``, ``configurations``, ``patchesStrategicMerge``, the ``path`` of ``patches``,
``patchesJson6902``, ``replacements`` and ``openapi``, the ``files``/``envs``/``env`` of
``configMapGenerator`` and ``secretGenerator``), and Helm's (``helmCharts``, ``helmGlobals``,
``helmChartInflationGenerator``), which download charts and are refused. A field kustomize does not have is
refused too (kustomize refuses it as well), so a field added to kustomize later cannot name a path we did not
check. Entries that hold YAML instead of a path (an inline patch in ``patchesStrategicMerge``, an inline
transformer configuration) are told apart as kustomize tells them apart: YAML that is a mapping (with a
``kind``, for generators, transformers and validators).

Each path must stay inside the source, lexically (kustomize joins paths without resolving links) and on
disk (no symbolic link out of it, none to a directory, which the reader never walks into); a path that
would include a directory must name a kustomization of the source, and one naming nothing is refused,
since kustomize would try ``github.com/org/repo`` as a remote URL. ``Unsafe`` says which field and why;
the entry itself is quoted only as an excerpt, and nothing read from a path is ever quoted.

The include graph (``named``) is what decides what is built: a kustomization named by no other is built on
its own, with every kustomization it names; one in a cycle is never built, and the cycle is a problem
naming each kustomization of it and the line of the entry that leads on (``cycles``).
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nova_gitops.api import loading
from nova_gitops.api.problems import excerpt

FIELDS = frozenset(
    {
        "apiVersion", "kind", "metadata", "openapi", "namePrefix", "nameSuffix", "namespace", "commonLabels",
        "labels", "commonAnnotations", "patchesStrategicMerge", "patchesJson6902", "patches", "images",
        "imageTags", "replacements", "replicas", "vars", "sortOptions", "resources", "components", "crds",
        "bases", "configMapGenerator", "secretGenerator", "helmGlobals", "helmCharts",
        "helmChartInflationGenerator", "generatorOptions", "configurations", "generators", "transformers",
        "validators", "inventory", "buildMetadata",
    }
)  # fmt: skip
"""Every field of kustomize's ``types.Kustomization`` (v5.x); kustomize refuses any other."""

INCLUDING = ("resources", "bases", "components", "generators", "transformers", "validators")
"""Fields whose entries may name a directory holding a kustomization (built with the one naming it)."""
_INLINE_CONFIGS = frozenset({"generators", "transformers", "validators"})
_FILE_LISTS = ("crds", "configurations", "patchesStrategicMerge")
_PATH_ENTRIES = ("patches", "patchesJson6902", "replacements")
_GENERATORS = ("configMapGenerator", "secretGenerator")
_DOWNLOADING = ("helmCharts", "helmGlobals", "helmChartInflationGenerator")
_REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|git@|git::)", re.IGNORECASE)
"""What kustomize fetches whatever the source holds; other remote forms (``github.com/o/r``) are paths that
name nothing in the source, refused as such."""


class Unsafe(Exception):
    """A kustomization that is not built: why, at which field."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field_name = field_name
        self.message = message


@dataclass(frozen=True, slots=True)
class Entry:
    """One path a kustomization names: the field it is in (``patches[0].path``), the path as written, and
    whether it may name a kustomization's directory."""

    field: str
    path: str
    including: bool


def entries(spec: Mapping[str, Any]) -> Iterator[Entry]:
    """Every path ``spec`` names, in field order; Unsafe for a field kustomize does not have or Helm's."""
    for name in spec:
        if name not in FIELDS:
            raise Unsafe(
                str(name),
                f"{excerpt(name)} is not a field of kustomize's Kustomization: nova-gitops builds only "
                "kustomizations whose every path it has checked (kustomize refuses unknown fields too)",
            )
        if name in _DOWNLOADING and spec[name]:
            raise Unsafe(
                name, "Helm charts are downloaded and rendered by helm: render the chart into the source"
            )
    for name in INCLUDING:
        for index, item in _items(spec.get(name)):
            if isinstance(item, str) and not (name in _INLINE_CONFIGS and _inline(item, needs_kind=True)):
                yield Entry(f"{name}[{index}]", item, including=True)
    for name in _FILE_LISTS:
        for index, item in _items(spec.get(name)):
            if isinstance(item, str) and not (name == "patchesStrategicMerge" and _inline(item)):
                yield Entry(f"{name}[{index}]", item, including=False)
    for name in _PATH_ENTRIES:
        for index, item in _items(spec.get(name)):
            if isinstance(item, dict) and isinstance(item.get("path"), str):
                yield Entry(f"{name}[{index}].path", item["path"], including=False)
    for name in _GENERATORS:
        for index, item in _items(spec.get(name)):
            if not isinstance(item, dict):
                continue
            for key in ("files", "envs"):
                for position, source in _items(item.get(key)):
                    if isinstance(source, str):  # files: [key=]path
                        path = source.partition("=")[2] if key == "files" and "=" in source else source
                        yield Entry(f"{name}[{index}].{key}[{position}]", path, including=False)
            if isinstance(item.get("env"), str):
                yield Entry(f"{name}[{index}].env", item["env"], including=False)
    openapi = spec.get("openapi")
    if isinstance(openapi, dict) and isinstance(openapi.get("path"), str):
        yield Entry("openapi.path", openapi["path"], including=False)


def _items(value: object) -> Iterator[tuple[int, object]]:
    return enumerate(value) if isinstance(value, list) else iter(())


def _inline(text: str, *, needs_kind: bool = False) -> bool:
    """Whether kustomize takes ``text`` as YAML rather than a path: a mapping (with a ``kind``)."""
    try:
        value = loading.load_one(text)
    except loading.YamlRefused:
        return False
    return isinstance(value, dict) and (not needs_kind or isinstance(value.get("kind"), str))


def joined(directory: str, path: str) -> str | None:
    """``path`` of the kustomization in ``directory``, relative to the source (``""`` its top), as
    kustomize joins it; None when it leads out of the source."""
    normal = posixpath.normpath(posixpath.join(directory, path))
    if normal == ".." or normal.startswith("../"):
        return None
    return "" if normal == "." else normal


def named(directory: str, spec: Mapping[str, Any], kustomizations: Mapping[str, object]) -> list[Entry]:
    """The entries of ``spec`` (in ``directory``) that name another kustomization of the source, read
    lexically: what it includes if it is built. Never raises."""
    found = []
    for name in INCLUDING:
        for index, item in _items(spec.get(name)):
            if isinstance(item, str) and not _REMOTE.match(item.strip()) and not item.startswith("/"):
                target = joined(directory, item)
                if target is not None and target in kustomizations:
                    found.append(Entry(f"{name}[{index}]", target, including=True))
    return found


def check(
    real_root: str, directory: str, spec: Mapping[str, Any], kustomizations: Mapping[str, object]
) -> None:
    """Unsafe, at the first entry of ``spec`` (the kustomization in ``directory``) that kustomize must not
    be given: see the module docstring."""
    for entry in entries(spec):
        _check_entry(real_root, directory, entry, kustomizations)


def _check_entry(real_root: str, directory: str, entry: Entry, kustomizations: Mapping[str, object]) -> None:
    quoted = excerpt(entry.path)
    if not entry.path.strip():
        raise Unsafe(entry.field, "an empty path: name a file of the source")
    if _REMOTE.match(entry.path.strip()):
        raise Unsafe(
            entry.field,
            f"{quoted} is a remote resource: nova-gitops builds kustomizations only from files of the source "
            "(vendor it into the repository)",
        )
    if entry.path.startswith("/"):
        raise Unsafe(entry.field, f"{quoted} is an absolute path: name a path inside the source")
    target = joined(directory, entry.path)
    if target is None:
        raise Unsafe(entry.field, f"{quoted} leads outside the source: name a path inside it")
    parts = target.split("/") if target else []
    for depth in range(1, len(parts) + 1):
        prefix = "/".join(parts[:depth])
        on_disk = os.path.join(real_root, prefix)
        if not os.path.islink(on_disk):
            continue
        resolved = os.path.realpath(on_disk)
        if os.path.commonpath([real_root, resolved]) != real_root:
            raise Unsafe(entry.field, f"{quoted} leads outside the source through a symbolic link")
        if depth < len(parts) or os.path.isdir(resolved):
            raise Unsafe(
                entry.field,
                f"{quoted} goes through a symlinked directory ({excerpt(prefix)}), which is not read: "
                "name the directory itself",
            )
    on_disk = os.path.join(real_root, target)
    if os.path.isdir(on_disk):
        if not entry.including:
            raise Unsafe(entry.field, f"{quoted} is a directory: name a file")
        if target not in kustomizations:
            raise Unsafe(entry.field, f"{quoted} is a directory without a kustomization.yaml")
    elif not os.path.isfile(on_disk):
        what = "a file or directory" if entry.including else "a file"
        raise Unsafe(entry.field, f"{quoted} is not {what} of the source (remote resources are refused)")


@dataclass(frozen=True, slots=True)
class Step:
    """One edge of a cycle: the kustomization in ``directory`` includes ``target`` through ``field``."""

    directory: str
    field: str
    target: str


def cycles(graph: Mapping[str, Sequence[Entry]]) -> list[list[Step]]:
    """One cycle for each group of kustomizations that include each other (a strongly connected part of
    ``graph`` with more than one member, or one that includes itself), starting at its first directory."""
    found = []
    for part in _strong_parts(graph):
        members = set(part)
        start = min(part)
        if len(part) == 1 and not any(entry.path == start for entry in graph.get(start, ())):
            continue
        found.append(_cycle_from(start, graph, members))
    return sorted(found, key=lambda steps: steps[0].directory)


def _cycle_from(start: str, graph: Mapping[str, Sequence[Entry]], members: set[str]) -> list[Step]:
    """The shortest cycle through ``start`` within ``members`` (breadth first, edges in field order)."""
    came_from: dict[str, Step] = {}
    frontier = [start]
    while frontier:
        following = []
        for directory in frontier:
            for entry in graph.get(directory, ()):
                if entry.path not in members:
                    continue
                if entry.path == start:
                    steps = [Step(directory, entry.field, start)]
                    while steps[0].directory != start:
                        steps.insert(0, came_from[steps[0].directory])
                    return steps
                if entry.path not in came_from:
                    came_from[entry.path] = Step(directory, entry.field, entry.path)
                    following.append(entry.path)
        frontier = following
    raise AssertionError("a strongly connected part holds a cycle through each member")


def _strong_parts(graph: Mapping[str, Sequence[Entry]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively (a hostile chain of kustomizations is deep)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    parts: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            node, position = work.pop()
            if position == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            edges = graph.get(node, ())
            if position < len(edges):
                work.append((node, position + 1))
                child = edges[position].path
                if child not in index:
                    work.append((child, 0))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            if low[node] == index[node]:
                part = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    part.append(member)
                    if member == node:
                        break
                parts.append(sorted(part))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return parts
