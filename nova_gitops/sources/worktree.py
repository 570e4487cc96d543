"""Which files of a git work tree hold exactly their index entry's blob, so a load can take them from the
parse cache by blob id without reading them (``directory.read_source``'s ``blobs``), as it does for a git
export.

``git status`` already decides whether each tracked file differs from the index (it hashes a file whose
timestamps it cannot trust, so a file changed in the same second as the index was written is seen). A file
it does not list is unchanged *after git's clean conversion*; that is the very bytes of the index's blob only
when no conversion applies. Conversions come from attributes (``text``/``eol`` line endings, ``ident``,
``filter``, ``working-tree-encoding``) and from ``core.autocrlf``. So blob ids are given only when:

- ``core.autocrlf`` is unset or false, and no attributes file can apply: no ``core.attributesFile``, none
  at git's default user path, no ``info/attributes`` in the git directory, no ``.gitattributes`` in the
  index, and none in any directory above a file given (untracked or ignored alike: git reads them all);
- and then only for files the index holds as regular files (mode 100644 or 100755, no link, submodule or
  sparse directory), merged (stage 0), checked by ``status`` (not marked assume-unchanged or
  skip-worktree, which ``status`` does not look at), and not named in ``status`` (modified, deleted,
  renamed, type changed, added with intent).

Every other file (changed, untracked, ignored, a link) is read, as in a directory without git. A blob id is
only a key into the cache, never trusted alone: the cache keeps one for a file only when the bytes it read
had exactly that id (``parsecache``), so a wrong answer here could cost a read, never a wrong document.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

REGULAR_MODES = frozenset({"100644", "100755"})
CHECKED = "H"  # ``ls-files -v``'s tag of an entry status compares with the work tree
ATTRIBUTES_FILE = ".gitattributes"
FALSE = frozenset({"false", "no", "off", "0"})


def status_paths(status: bytes) -> set[str]:
    """Every path ``git status --porcelain -z`` names (both of a rename or copy)."""
    paths: set[str] = set()
    records = iter(os.fsdecode(status).split("\0"))
    for record in records:
        if len(record) < 4:
            continue
        paths.add(record[3:])
        if "R" in record[:2] or "C" in record[:2]:  # the next record is where it came from
            paths.add(next(records, ""))
    return paths


def clean_blobs(
    root: Path,
    git_dir: Path,
    listing: bytes,
    status: bytes,
    settings: Mapping[str, str],
    environ: Mapping[str, str],
) -> dict[str, str] | None:
    """Path → blob id of each file under ``root`` (the top of the work tree) that holds its index blob's
    bytes, from ``git ls-files --stage -v -z`` (``listing``), ``git status --porcelain -z`` (``status``)
    and the configuration (``settings``, lower-case keys); None when a conversion could apply."""
    if not _without_conversions(git_dir, settings, environ):
        return None
    changed = status_paths(status)
    blobs: dict[str, str] = {}
    for record in os.fsdecode(listing).split("\0"):  # decoded at once: as each path alone, faster
        meta, tab, path = record.partition("\t")
        fields = meta.split(" ")
        if not tab or len(fields) != 4:
            continue
        tag, mode, oid, stage = fields
        if path.rpartition("/")[2] == ATTRIBUTES_FILE:  # git reads it from the index too
            return None
        if tag == CHECKED and stage == "0" and mode in REGULAR_MODES and path not in changed:
            blobs[path] = oid
    folders = {path.rpartition("/")[0] for path in blobs}
    for folder in list(folders):
        while folder:
            folder = folder.rpartition("/")[0]
            folders.add(folder)
    if any(os.path.lexists(os.path.join(root, folder, ATTRIBUTES_FILE)) for folder in folders):
        return None
    return blobs


def _without_conversions(git_dir: Path, settings: Mapping[str, str], environ: Mapping[str, str]) -> bool:
    """Whether no attributes file and no ``core.autocrlf`` can make a work-tree file differ from its blob
    while ``status`` calls it unchanged."""
    if settings.get("core.autocrlf", "false").strip().lower() not in FALSE:
        return False
    if settings.get("core.attributesfile") or environ.get("GIT_ATTR_SOURCE"):
        return False
    home = Path(environ.get("HOME") or "~").expanduser()
    xdg = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
    common = git_dir
    if (git_dir / "commondir").is_file():  # a linked work tree: info/ is the main repository's
        try:
            common = git_dir / (git_dir / "commondir").read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return False
    candidates = (xdg / "git" / "attributes", git_dir / "info" / "attributes", common / "info" / "attributes")
    return not any(os.path.lexists(candidate) for candidate in candidates)
