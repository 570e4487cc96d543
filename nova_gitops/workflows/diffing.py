"""``diff``: what a change does to placement, between two renders on disk or two revisions of a source.

Two directories: files of equal size are compared byte for byte, files of different size are changed
without reading further, and only the files that differ are parsed (``rendering.diffs``), so two renders of
a 100k-object fleet that differ in one workload compare in about the time it takes to read them.

Two revisions: the base is rendered afresh and the head is rendered with the base's placement as its
previous placement, which is what publishing the head on top of the base would do (stickiness); the diff
therefore shows the moves the change itself causes, not a reshuffle of everything.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from nova_gitops import errors
from nova_gitops.rendering import diffs, reports
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.scheduling.plans import PreviousPlacement
from nova_gitops.sources import git as git_sources
from nova_gitops.workflows.publishing import RenderFiles


def walk(root: Path) -> dict[str, int]:
    """Every file under ``root`` (``.git`` excluded) as relative path → size."""
    sizes: dict[str, int] = {}
    stack = [("", str(root))]
    while stack:
        prefix, directory = stack.pop()
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != ".git":
                        stack.append((f"{prefix}{entry.name}/", entry.path))
                elif entry.is_file(follow_symlinks=False):
                    sizes[prefix + entry.name] = entry.stat(follow_symlinks=False).st_size
    return sizes


def read(root: Path, path: str) -> bytes:
    with open(os.path.join(root, path), "rb") as handle:
        return handle.read()


def directory_changes(old: Path, new: Path) -> list[diffs.FileChange]:
    for side in (old, new):
        if not side.is_dir():
            raise errors.UserError(f"{side} is not a directory holding a render")
    old_sizes, new_sizes = walk(old), walk(new)
    changes: list[diffs.FileChange] = []
    for path, size in old_sizes.items():
        if path not in new_sizes:
            changes.append(diffs.FileChange(path, read(old, path), None))
            continue
        old_bytes = read(old, path) if size == new_sizes[path] or path == diffs.PLACEMENT_FILE else None
        new_bytes = read(new, path) if old_bytes is not None else None
        if old_bytes is None or old_bytes != new_bytes:
            changes.append(diffs.FileChange(path, old_bytes or read(old, path), new_bytes or read(new, path)))
    changes += [diffs.FileChange(path, None, read(new, path)) for path in new_sizes if path not in old_sizes]
    return sorted(changes, key=lambda change: change.path)


def diff_directories(old: Path, new: Path) -> diffs.RenderDiff:
    """Compare two renders on disk (``diff OLD_DIR NEW_DIR``)."""
    return diffs.diff_renders(directory_changes(old, new))


@contextmanager
def revision_of(source: str, ref: str, *, cache_dir: Path, timeout: float) -> Iterator[git_sources.Checkout]:
    path = Path(source)
    if path.is_dir() and not git_sources.is_bare_repository(path):
        with git_sources.checkout_local(path, ref) as checkout:
            yield checkout
        return
    spec = git_sources.GitSpec(git_sources.parse_spec(source).url, ref)
    with git_sources.checkout(spec, cache_dir=cache_dir, timeout=timeout) as checkout:
        yield checkout


def diff_revisions(
    source: str,
    base: str,
    head: str | None,
    *,
    render: RenderFiles,
    cache_dir: Path,
    timeout: float = 120.0,
) -> diffs.RenderDiff:
    """Render ``source`` at ``base`` and at ``head`` (the work tree when None) and compare the renders."""
    if head is None and not (Path(source).is_dir() and not git_sources.is_bare_repository(Path(source))):
        raise errors.UserError(f"{source} has no work tree: give --head as well as --base")
    with ExitStack() as stack:
        base_checkout = stack.enter_context(revision_of(source, base, cache_dir=cache_dir, timeout=timeout))
        if head is None:
            head_checkout = git_sources.open_directory(Path(source))
        else:
            head_checkout = stack.enter_context(
                revision_of(source, head, cache_dir=cache_dir, timeout=timeout)
            )
        repo = base_checkout.repo
        old = render(base_checkout.root, SourceInfo(repo, base_checkout.revision), PreviousPlacement.empty())
        previous = PreviousPlacement.empty()
        if diffs.PLACEMENT_FILE in old:
            previous = reports.parse_previous(old[diffs.PLACEMENT_FILE].decode("utf-8"))
        new = render(head_checkout.root, SourceInfo(repo, head_checkout.revision), previous)
    return diffs.diff_renders(diffs.changed_files(old, new))
