"""Edit a user's own source files in place, at the edge: read, edit in memory, validate, diff, write.

The commands ``pin``, ``unpin``, ``split``, ``move``, ``cordon`` and ``uncordon`` (docs/editing.md) all go
the same way, so a source is never left half-edited or invalid:

1. the source directory is read and validated as ``validate`` reads it (an invalid source is refused: its
   problems are listed, as any command lists them);
2. the edit is made to the text of the files that hold the objects (``nova_gitops.edits``: ruamel.yaml
   round-trip, only the edited lines change), in memory;
3. the edited source is read again from those texts, in memory, and validated; any problem refuses the
   edit, and so does an edit that does not show in the result (a kustomize patch that sets the field back);
4. the plan before and after is rendered and compared as ``diff --source . --base HEAD`` compares two
   revisions (the after plan has the before plan as its previous placement, so only the moves the edit
   causes show);
   and the edited source must differ from the source read only where the edit says it changes (the
   fields it names, of the objects it names): any other change (through a YAML alias, a merge key, a
   kustomize base) refuses it, so the diff printed is the whole of what the edit does;
5. unless it is a dry run, every file is checked to hold the text that was read before any is written,
   then each is written atomically (a temporary file beside it, renamed over it, with the file's mode):
   an edit of several files that one changed on disk meanwhile writes none.

A kustomize-built directory is read by building it; its objects point at the files they came from. An
edit there changes that file, and step 3 builds a temporary copy of the source with the edited file. An
object kustomize generated (a ``configMapGenerator``'s ConfigMap) has no file of its own and is refused.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nova_gitops.api import inputs, loading
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import errors
from nova_gitops.edits.splicing import EditError
from nova_gitops.errors import InputError, UserError
from nova_gitops.rendering import diffs, renders, reports
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.scheduling import planning
from nova_gitops.scheduling.plans import PreviousPlacement
from nova_gitops.sources import directory, gitsources
from nova_gitops.workflows import rendering

TextEdit = Callable[[str], str]
"""One file's text → its edited text (raises ``EditError``)."""
Check = Callable[[inputs.SourceSet], str | None]
"""Whether the edited source shows the edit: None when it does, else what is wrong."""
Field = tuple[str, ...]
"""A field of an object, as the keys down to it: ``("metadata", "labels", "nova.elotl.co/cordoned")``."""


class EditRefused(UserError):
    """An edit that is not made: the source is left as it was."""


@dataclass(frozen=True, slots=True)
class LoadedSource:
    """A source directory as read, validated, and rendered (the placement before any edit)."""

    root: Path
    files: directory.SourceFiles
    source_set: inputs.SourceSet
    rendered: renders.RenderedTree


@dataclass(frozen=True, slots=True)
class TextChange:
    """An edit of one file: its text edit, what it edits (``Cluster c1``, for messages), and the fields it
    may change, by the line (as loaded) of each object it edits."""

    file: str
    what: str
    edit: TextEdit
    fields: Mapping[int, tuple[Field, ...]]


@dataclass(frozen=True, slots=True)
class FileEdit:
    file: str  # relative to the source root, as problems name it
    old: str
    new: str


@dataclass(frozen=True, slots=True)
class EditResult:
    edits: tuple[FileEdit, ...]  # the files whose text changes (none when the source holds it already)
    diff: diffs.RenderDiff
    written: bool


def load(root: Path) -> LoadedSource:
    """Read and validate the source directory ``root`` (``InputError`` lists its problems)."""
    if gitsources.is_git_spec(str(root)) or not root.exists():
        raise UserError(
            f"{root} is not a source directory: edits are made to a local clone (git clone first)"
        )
    files = directory.read_source(root)
    if errors(list(files.problems)):
        raise InputError(sorted(dict.fromkeys(files.problems)))
    source_set = inputs.build_source_set(files.documents, texts=files.texts)
    rendered = _rendered(source_set, rendering.local_source_info(root), PreviousPlacement.empty())
    return LoadedSource(root, files, source_set, rendered)


def text_of(loaded: LoadedSource, file: str, what: str) -> str:
    """The text of ``file``, which holds ``what``; refused when it is not a file of the source itself."""
    name = file.rsplit("/", 1)[-1]
    if name in directory.SKIPPED_FILE_NAMES or file not in loaded.files.texts:
        raise EditRefused(
            f"{what} is generated by kustomize ({file}): it has no file of its own to edit; change the "
            "generator or add a patch to the kustomization instead"
        )
    path = _path_of(loaded.root, file)
    if path.is_symlink():
        raise EditRefused(f"{file} is a symbolic link: edit the file it points to")
    return loaded.files.texts[file]


def edit(
    loaded: LoadedSource,
    changes: Sequence[TextChange],
    check: Check,
    *,
    dry_run: bool,
) -> EditResult:
    """Make ``changes`` (applied in order, several to a file allowed), validate and diff the result (module
    docstring), and write it unless ``dry_run``."""
    texts: dict[str, str] = {}
    for change in changes:
        before = texts.get(change.file, text_of(loaded, change.file, change.what))
        try:
            texts[change.file] = change.edit(before)
        except EditError as error:
            what = error.subject or change.what
            if error.line is not None:
                raise EditRefused(f"{change.file}:{error.line}: cannot edit {what}: {error}") from None
            raise EditRefused(f"cannot edit {what} in {change.file}: {error}") from None
    changed = tuple(
        FileEdit(file, loaded.files.texts[file], text)
        for file, text in texts.items()
        if text != loaded.files.texts[file]
    )
    documents, after = _edited(loaded, {edit.file: edit.new for edit in changed})
    wrong = check(after)
    if wrong is not None:
        raise EditRefused(f"the edit does not take effect: {wrong}; nothing was written")
    if changed:
        fields: dict[tuple[str, int], tuple[Field, ...]] = {}
        for change in changes:
            for line, named in change.fields.items():
                fields[change.file, line] = (*fields.get((change.file, line), ()), *named)
        unintended = _unintended(loaded, documents, {edit.file for edit in changed}, fields)
        if unintended is not None:
            raise EditRefused(f"the edit would change {unintended}; nothing was written")
    diff = placement_diff(loaded.rendered, after, rendering.local_source_info(loaded.root))
    if not dry_run:
        write_all(loaded.root, changed)
    return EditResult(changed, diff, written=not dry_run and bool(changed))


def _unintended(
    loaded: LoadedSource,
    after: Sequence[Document],
    files: set[str],
    fields: Mapping[tuple[str, int], tuple[Field, ...]],
) -> str | None:
    """What the edited documents ``after`` change beyond ``fields`` (by file and line of the object as
    read), named for a user; None when nothing. Objects a kustomize build makes are all compared (an edit
    of a base shows in others), else those of the edited files."""
    built = any(file in loaded.files.built for file in files)
    before = [d for d in loaded.files.documents if built or d.location.file in files]
    after = [d for d in after if built or d.location.file in files]
    if len(before) != len(after):
        return f"which objects {', '.join(sorted(files))} hold{'s' if len(files) == 1 else ''}"
    for old, new in zip(before, after, strict=True):
        named = fields.get((old.location.file, old.location.line))
        if named is None and old.body != new.body:
            return f"{_object_name(old)} ({old.location.file}:{old.location.line}) too"
        if named is not None and _without(old.body, named) != _without(new.body, named):
            listed = ", ".join(".".join(field) for field in named)
            return f"more of {_object_name(old)} ({old.location.file}:{old.location.line}) than {listed}"
    return None


def _object_name(document: Document) -> str:
    body = document.body if isinstance(document.body, dict) else {}
    metadata = body.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return f"{body.get('kind', 'the object')} {name if isinstance(name, str) else ''}".strip()


def _without(body: Any, fields: Sequence[Field]) -> Any:
    """A copy of ``body`` sharing nothing with it (a YAML alias read as one object becomes two), without
    ``fields``, and without the mappings on their way left empty (``annotations: {}`` and no
    ``annotations`` are the same to this comparison)."""
    copy = _unshared(body)
    for field in fields:
        parents: list[tuple[dict[str, Any], str]] = []
        node = copy
        for key in field[:-1]:
            child = node.get(key) if isinstance(node, dict) else None
            if not isinstance(child, dict):
                break
            parents.append((node, key))
            node = child
        else:
            if isinstance(node, dict):
                node.pop(field[-1], None)
        for parent, key in reversed(parents[1:]):  # not the object's own top-level fields
            if parent.get(key) == {}:
                del parent[key]
    return copy


def _unshared(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _unshared(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_unshared(item) for item in value]
    return value


def edited_source(loaded: LoadedSource, texts: Mapping[str, str]) -> inputs.SourceSet:
    """The source with ``texts`` (file → edited text) in place of those files, validated; ``InputError``
    lists the problems of an edit that would not validate."""
    return _edited(loaded, texts)[1]


def _edited(loaded: LoadedSource, texts: Mapping[str, str]) -> tuple[Sequence[Document], inputs.SourceSet]:
    """``edited_source``, and the documents it is built from (in the order read)."""
    if not texts:
        return loaded.files.documents, loaded.source_set
    if any(file in loaded.files.built for file in texts):
        return _built_copy(loaded, texts)
    documents: list[Document] = []
    problems = [problem for problem in loaded.files.problems if problem.location.file not in texts]
    replaced: set[str] = set()
    for document in loaded.files.documents:  # in the order read: each file's documents where they were
        file = document.location.file
        if file not in texts:
            documents.append(document)
        elif file not in replaced:
            replaced.add(file)
            found, file_problems = loading.load_documents(file, texts[file])
            documents += found
            problems += file_problems
    if errors(problems):
        raise InputError(sorted(dict.fromkeys(problems)))
    texts_after = directory.overlaid_texts(loaded.files.texts, texts)
    return documents, inputs.build_source_set(documents, texts=texts_after)


def _built_copy(
    loaded: LoadedSource, texts: Mapping[str, str]
) -> tuple[Sequence[Document], inputs.SourceSet]:
    """The source read from a temporary copy holding the edited files, so kustomize builds them."""
    base = loaded.root if loaded.root.is_dir() else loaded.root.parent
    with tempfile.TemporaryDirectory(prefix="nova-edit-") as scratch:
        copy = Path(scratch) / "source"
        shutil.copytree(base, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        for file, text in texts.items():
            (copy / file).write_text(text, encoding="utf-8", newline="")
        files = directory.read_source(copy if loaded.root.is_dir() else copy / loaded.root.name)
        if errors(list(files.problems)):
            raise InputError(sorted(dict.fromkeys(files.problems)))
        return files.documents, inputs.build_source_set(files.documents, texts=files.texts)


def placement_diff(
    old: renders.RenderedTree, after: inputs.SourceSet, source: SourceInfo
) -> diffs.RenderDiff:
    """What ``diff --source . --base HEAD`` shows when HEAD rendered as ``old`` and the work tree is
    ``after``: ``after`` is rendered with ``old``'s placement as its previous one."""
    previous = reports.previous_of(old.plan)  # what old's group files give read back, none of them read
    new = _rendered(after, source, previous)
    return diffs.diff_renders(diffs.changed_files(old.files, new.files))


def _rendered(
    source_set: inputs.SourceSet, source: SourceInfo, previous: PreviousPlacement
) -> renders.RenderedTree:
    return rendering.render_plan(planning.plan(source_set, previous=previous), source_set, source)


def write_all(root: Path, edits: Sequence[FileEdit]) -> None:
    """Write each of ``edits`` under ``root``, every file or none when one changed on disk since it was
    read: all are checked first, each new text goes to a temporary file beside its file (with the file's
    mode), all are checked again, and only then is each renamed over its file (readers see the old file or
    the new, never half of one)."""
    paths = [(_path_of(root, edit.file), edit) for edit in edits]
    for path, edit in paths:
        _still(path, edit)
    prepared: list[tuple[str, Path]] = []
    try:
        for path, edit in paths:
            prepared.append((_temporary_copy(path, edit.new), path))
        for path, edit in paths:
            _still(path, edit)
        for temporary, path in prepared:
            os.replace(temporary, path)
    finally:
        for temporary, _ in prepared:
            Path(temporary).unlink(missing_ok=True)


def _still(path: Path, edit: FileEdit) -> None:
    """Refuse when ``path`` no longer holds the text ``edit`` was made to (edited meanwhile)."""
    try:
        current: str | None = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        current = None
    if current != edit.old:
        raise EditRefused(f"{edit.file} changed while it was being edited; nothing was written, run again")


def _temporary_copy(path: Path, text: str) -> str:
    """A temporary file beside ``path`` holding ``text``, flushed to disk, with ``path``'s mode."""
    mode = stat.S_IMODE(os.stat(path).st_mode)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return temporary


def _path_of(root: Path, file: str) -> Path:
    return root / file if root.is_dir() else root.parent / file
