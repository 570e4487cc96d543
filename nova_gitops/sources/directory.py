"""A source directory: every ``*.yaml``/``*.yml`` below it, read in path order.

Hidden directories (``.git``, ``.github``) are skipped, and so are kustomize's own files
(``kustomization.yaml``), which are build instructions rather than objects. So is any subdirectory that
holds a previous render (a ``placement.yaml`` of ours next to a ``clusters/`` directory): rendering into
``src/rendered`` is a natural layout, and reading the output back as source would double every object on the
next render. File names in problems are relative to the directory, with ``/`` separators, so messages read
the same on every machine.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from nova_gitops.api import loading
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import Problem, SourceLocation
from nova_gitops.errors import UserError
from nova_gitops.sources.parsecache import ParseCache

SKIPPED_FILE_NAMES = frozenset({"kustomization.yaml", "kustomization.yml", "Kustomization"})
MAX_FILE_BYTES = 8 * 1024 * 1024
RENDER_MARKER_FILE = "placement.yaml"
RENDER_API_VERSION_PREFIX = "apiVersion: gitops.nova.elotl.co/"
_RENDER_MARKER_BYTES = 512


@dataclass(frozen=True, slots=True)
class SourceFiles:
    documents: tuple[Document, ...]
    texts: dict[str, str]  # file name → text, for pointing problems at their exact line
    problems: tuple[Problem, ...]  # unreadable files and YAML syntax errors


def yaml_files(root: Path) -> list[str]:
    """Relative paths of the YAML files below ``root``, sorted; ``root`` may also be one file."""
    if root.is_file():
        return [root.name]
    found = []
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(
            name
            for name in subdirectories
            if not name.startswith(".") and not is_previous_render(Path(directory, name))
        )
        relative = os.path.relpath(directory, root)
        for name in files:
            if (
                name.endswith((".yaml", ".yml"))
                and name not in SKIPPED_FILE_NAMES
                and not name.startswith(".")
            ):
                found.append(name if relative == "." else f"{relative}/{name}".replace(os.sep, "/"))
    return sorted(found)


def is_previous_render(directory: Path) -> bool:
    """Whether ``directory`` holds a nova-gitops render: a ``clusters/`` directory and a ``placement.yaml``
    whose first line that is not blank, a comment or ``---`` is ``apiVersion: gitops.nova.elotl.co/...``.
    Reads only the first few hundred bytes of the file."""
    if not (directory / "clusters").is_dir():
        return False
    try:
        with open(directory / RENDER_MARKER_FILE, "rb") as marker:
            head = marker.read(_RENDER_MARKER_BYTES)
    except OSError:
        return False
    for line in head.decode("utf-8", "replace").splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and stripped != "---":
            return stripped.startswith(RENDER_API_VERSION_PREFIX)
    return False


def read_source(root: Path, prefix: str = "", cache: ParseCache | None = None) -> SourceFiles:
    """Read and parse every YAML file below ``root``; file names in problems are ``prefix`` + the path
    relative to ``root`` (a prefix keeps two directories' files apart). ``cache`` skips parsing files seen
    before with the same bytes. Raises UserError when ``root`` does not exist."""
    if not root.exists():
        raise UserError(f"source {root} does not exist: give a directory of YAML manifests")
    base = root.parent if root.is_file() else root
    documents: list[Document] = []
    texts: dict[str, str] = {}
    problems: list[Problem] = []
    for relative in yaml_files(root):
        path = base / relative
        name = prefix + relative
        try:
            size = path.stat().st_size
            if size > MAX_FILE_BYTES:
                problems.append(
                    Problem(SourceLocation(name, 1), f"file is {size} bytes, over the {MAX_FILE_BYTES} limit")
                )
                continue
            data = path.read_bytes()
            cached = cache.get(name, data) if cache is not None else None
            if cached is not None:
                texts[name] = data.decode("utf-8")
                documents += cached[0]
                problems += cached[1]
                continue
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            problems.append(Problem(SourceLocation(name, 1), f"not UTF-8 text: {error.reason}"))
            continue
        except OSError as error:
            problems.append(Problem(SourceLocation(name, 1), f"cannot read: {error.strerror}"))
            continue
        texts[name] = text
        found, file_problems = loading.load_documents(name, text)
        documents += found
        problems += file_problems
        if cache is not None:
            cache.put(name, data, (tuple(found), tuple(file_problems)))
    if cache is not None:
        cache.save()
    return SourceFiles(tuple(documents), texts, tuple(problems))
