"""The rendered repository's single-file ``placement.yaml`` (every group's decision in one file), read.

Why this is read entry by entry: that file holds the whole fleet (~5 MB per 100 clusters), so past ~160
clusters it is over the loader's 8 MiB limit (``loading.MAX_FILE_BYTES``), which is right for input written by
others but refused our own output: a publish from a fresh cache, ``diff --base`` and ``render --previous``
then failed on a repository nova-gitops itself had written. As rendered, the file is a block mapping whose
top-level keys start at column 0 and whose ``groups`` list has its items at column 0, so it is cut there as
text (regular expressions over the whole text, not a loop over its 125k lines) and each section and each
group entry is loaded on its own, under the loader's limits. A text not cut that way (written by hand,
flow style) is loaded whole, under the limit.

Where it is still read: a rendered repository written before the per-group layout (docs/design.md §4) is the
previous render of the first publish after the upgrade (``parse_previous``: stickiness holds across it), and
``diff`` compares such a file's group entries with the group files that replace it (``load``).
"""

from __future__ import annotations

import itertools
import re
from typing import Any, Final

from nova_gitops.api import labels, loading, quantities
from nova_gitops.scheduling.plans import PreviousPlacement

_PLACEMENT_GROUP: Final = labels.PLACEMENT_API_VERSION.split("/")[0]
MAX_TEXT: Final = 64 * loading.MAX_FILE_BYTES
"""The most a single-file placement.yaml may hold (512 MiB, ~10,000 clusters): each entry is bounded by the
loader's limit, and the whole by this."""

LINE_BREAKS_BUT_NEWLINE: Final = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # str.splitlines also splits here
SECTION_AFTER_NEWLINE: Final = re.compile(r"\n(?![ \-#\t\n])([^:\n]*):")
SECTION_AT_START: Final = re.compile(r"(?![ \-#\t\n])([^:\n]*):")
ITEM_AFTER_NEWLINE: Final = re.compile(r"\n-(?=[ \n]|\Z)")


def newline_only(text: str) -> bool:
    """Whether the newline is the only line break in ``text`` (as in a rendered placement.yaml): then lines
    can be found with regular expressions over the whole text instead of a Python loop over its lines."""
    return not any(character in text for character in LINE_BREAKS_BUT_NEWLINE)


def top_sections(text: str) -> dict[str, str]:
    """The text of a block-style YAML mapping, by top-level key: a section runs from its key's line to the
    next top-level key (list items may sit at column 0; lines before the first key belong to none; a key
    given twice gets both parts, in order)."""
    if not newline_only(text):
        return {key: "".join(lines) for key, lines in top_section_lines(text).items()}
    starts: list[tuple[int, str]] = []
    if first := SECTION_AT_START.match(text):
        starts.append((0, first.group(1)))
    starts += [(match.start() + 1, match.group(1)) for match in SECTION_AFTER_NEWLINE.finditer(text)]
    sections: dict[str, str] = {}
    for index, (start, key) in enumerate(starts):
        end = starts[index + 1][0] if index + 1 < len(starts) else len(text)
        sections[key] = sections.get(key, "") + text[start:end]
    return sections


def top_section_lines(text: str) -> dict[str, list[str]]:
    """``top_sections`` line by line, for texts with other line breaks than the newline (str.splitlines)."""
    sections: dict[str, list[str]] = {}
    current: list[str] = []
    for line in text.splitlines(keepends=True):
        if line[:1] not in ("", " ", "-", "#", "\n", "\t") and ":" in line:
            current = sections.setdefault(line.split(":", 1)[0], [])
        current.append(line)
    return sections


def list_items(section: str) -> list[str] | None:
    """The items of a top-level list section as text chunks; None when it is not a block list.

    A list at column 0 (as rendered) is cut at its item markers in one pass; anything else goes line by line.
    """
    head, _, body = section.partition("\n")
    if not newline_only(section) or not body or body[:1] == " " or head.rstrip().endswith("[]"):
        return list_item_lines(section.splitlines(keepends=True))
    if head.split(":", 1)[1].strip():
        return None
    if not (body[:1] == "-" and body[1:2] in (" ", "\n", "")):
        return None  # a line before the first item
    starts = [0, *(match.start() + 1 for match in ITEM_AFTER_NEWLINE.finditer(body)), len(body)]
    return [body[start:end] for start, end in itertools.pairwise(starts)]


def list_item_lines(lines: list[str]) -> list[str] | None:
    """``list_items`` line by line: for lists indented under their key and texts with other line breaks."""
    if not lines:
        return []
    head, body = lines[0], lines[1:]
    if head.rstrip().endswith("[]"):
        return []
    if head.split(":", 1)[1].strip() or not body:
        return None if head.split(":", 1)[1].strip() else []
    indent = len(body[0]) - len(body[0].lstrip(" "))
    marker = " " * indent + "-"
    items: list[str] = []
    for line in body:
        if line.startswith(marker) and line[indent + 1 : indent + 2] in (" ", "\n", ""):
            items.append(line[indent:])
        elif items:
            items[-1] += line[indent:] if line[:indent].strip() == "" else line
        else:
            return None
    return items


def load(text: str) -> Any:
    """The document of a placement.yaml of either layout, each top-level list (a single file's ``groups``,
    the index's ``unscheduled`` and ``clusters``) loaded entry by entry when the text is cut as rendered
    (see the module doc), else loaded whole; ``loading.YamlRefused`` saying what is wrong. The index lists
    every unscheduled object, so it too can pass the loader's limit."""
    if len(text) > MAX_TEXT:
        raise loading.YamlRefused(f"{len(text)} characters, over the {MAX_TEXT // (1024 * 1024)} MiB limit")
    if len(text) <= loading.MAX_FILE_BYTES:
        return loading.load_one(text)
    sections = top_sections(text)
    if "".join(sections.values()) != text:  # lines before the first key: not as rendered
        return loading.load_one(text)
    document: dict[str, Any] = {}
    for key, section in sections.items():
        items = list_items(section)
        if items is None:
            part = loading.load_one(section)
            if not isinstance(part, dict) or len(part) != 1 or key in document:
                return loading.load_one(text)  # not one top-level key per section: let the loader say why
            document.update(part)
            continue
        entries: list[Any] = []
        for item in items:
            loaded = loading.load_one(item)
            if not isinstance(loaded, list):
                return loading.load_one(text)
            entries.extend(loaded)
        document[key] = entries
    return document


def parse_previous(text: str) -> PreviousPlacement:
    """The group → clusters decisions (with reasons and requests) of a single-file ``placement.yaml``.
    Unknown fields are ignored; a document that is not a Placement raises ValueError saying what is wrong.
    An index of the per-group layout is a Placement without groups: no decisions."""
    try:
        document = load(text)
    except loading.YamlRefused as error:
        raise ValueError(f"previous placement.yaml is not valid YAML: {error}") from None
    if not isinstance(document, dict):
        raise ValueError("previous placement.yaml must be a mapping with kind: Placement")
    if document.get("kind") != "Placement":
        raise ValueError(f"previous placement.yaml has kind {document.get('kind')!r}, expected 'Placement'")
    api_version = document.get("apiVersion")
    if not isinstance(api_version, str) or not api_version.startswith(_PLACEMENT_GROUP + "/"):
        expected = labels.PLACEMENT_API_VERSION
        raise ValueError(f"previous placement.yaml has apiVersion {api_version!r}, expected {expected!r}")
    groups = document.get("groups")
    groups = [] if groups is None else groups
    if not isinstance(groups, list):
        raise ValueError("previous placement.yaml: groups must be a list")
    decided: dict[str, tuple[str, ...]] = {}
    reasons: dict[str, str] = {}
    requests: dict[str, dict[str, int]] = {}
    for index, entry in enumerate(groups):
        where = f"previous placement.yaml: groups[{index}]"
        if not isinstance(entry, dict):
            raise ValueError(f"{where} must be a mapping")
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"{where}.name must be a non-empty string")
        clusters = entry.get("clusters")
        clusters = [] if clusters is None else clusters
        if not isinstance(clusters, list) or not all(isinstance(c, str) and c for c in clusters):
            raise ValueError(f"{where}.clusters must be a list of cluster names")
        if name in decided:
            raise ValueError(f"{where}: group {name!r} is listed twice")
        decided[name] = tuple(clusters)
        if isinstance(entry.get("reason"), str):
            reasons[name] = entry["reason"]
        raw_requests = entry.get("requests")
        if isinstance(raw_requests, dict):
            try:
                requests[name] = {str(res): quantities.parse_quantity(v) for res, v in raw_requests.items()}
            except quantities.QuantityError as error:
                raise ValueError(f"{where}.requests: {error}") from None
    return PreviousPlacement(groups=decided, reasons=reasons, requests=requests)


def is_index(data: bytes) -> bool:
    """Whether a ``placement.yaml`` is the per-group layout's index (a top-level ``format``, before any
    list): it records no group's decision, so it is never read for one."""
    head = data[:1024]
    return head.startswith(b"apiVersion: " + _PLACEMENT_GROUP.encode()) and b"\nformat: " in head


def is_single_file(data: bytes) -> bool:
    """Whether a ``placement.yaml`` is the single-file layout's (every group in it) rather than the index of
    the per-group layout, which has a top-level ``format`` (``reports.FORMAT``). Only its first lines are
    looked at: ``format`` comes before any group."""
    head = data[:1024]
    return head.startswith(b"apiVersion: " + _PLACEMENT_GROUP.encode()) and b"\nformat: " not in head
