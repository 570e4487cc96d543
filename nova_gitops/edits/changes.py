"""The edits the source-editing commands make, each on one document of one file's text (docs/editing.md).

A document is found by its kind and ``metadata.name`` (and, when several documents of the file share those,
by the line it starts on, as the loader recorded it): a ``kind: List``'s items are documents too. Values
that YAML would read as anything but text (``"true"``, ``"0123"``) are written double-quoted, as the
Kubernetes API wants strings in labels and annotations; a value replacing a quoted one keeps its quotes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import yaml
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, ScalarString
from ruamel.yaml.tokens import CommentToken

from nova_gitops.edits.splicing import EditError, edited_text

Section = Literal["annotations", "labels"]


@dataclass(frozen=True, slots=True)
class DocumentRef:
    """Which document of a file to edit: its kind and name, and the 1-based line its content starts on."""

    kind: str
    name: str
    line: int


def set_metadata_entry(text: str, target: DocumentRef, section: Section, key: str, value: str | None) -> str:
    """``text`` with ``metadata.<section>[key]`` of ``target`` set to ``value`` (removed when None; a block
    section left empty by the removal is removed too, as it was before a ``pin`` added it; a flow one stays
    ``{}``)."""

    def edit(documents: list[Any]) -> None:
        metadata = found(documents, target).get("metadata")
        if not isinstance(metadata, CommentedMap):
            raise EditError(f"{target.kind} {target.name} has no metadata mapping")
        entries = metadata.get(section)
        if value is None:
            if isinstance(entries, CommentedMap) and key in entries:
                unplaced = _delete(entries, key)
                if not entries and not entries.fa.flow_style():  # a "{}" the user wrote stays
                    _delete(metadata, section, unplaced)
            return
        if entries is None:
            entries = metadata[section] = CommentedMap()
        if not isinstance(entries, CommentedMap):
            raise EditError(f"{target.kind} {target.name}: metadata.{section} is not a mapping")
        entries[key] = _scalar(value, entries.get(key))

    return edited_text(text, edit)


def set_percentage_split(text: str, target: DocumentRef, split: Sequence[tuple[str, int]]) -> str:
    """``text`` with the SchedulePolicy ``target``'s ``spec.spreadConstraints.percentageSplit`` set to
    ``split`` (domain, percent), in the shape it has: v0.9's list of ``{topologyValue, percentage}`` or v1.5's
    map ``{domain: percent}``. Entries of domains ``split`` keeps are changed in place (their comments and
    order stay), the others removed, new ones appended in ``split``'s order. A policy without a split gets a
    list when it names a ``topologyKey``, and a map (cluster names) when it does not, as Nova's docs do."""

    def edit(documents: list[Any]) -> None:
        spec = found(documents, target).get("spec")
        spread = spec.get("spreadConstraints") if isinstance(spec, CommentedMap) else None
        if not isinstance(spread, CommentedMap):
            raise EditError(f"SchedulePolicy {target.name} has no spec.spreadConstraints to split")
        current = spread.get("percentageSplit")
        if current is None:
            current = CommentedSeq() if "topologyKey" in spread else CommentedMap()
            spread["percentageSplit"] = current
        wanted = dict(split)
        if isinstance(current, CommentedMap):
            for domain in [domain for domain in current if domain not in wanted]:
                del current[domain]
            for domain, percent in wanted.items():
                if current.get(domain) != percent:
                    current[domain] = percent
            return
        if not isinstance(current, CommentedSeq):
            raise EditError(f"SchedulePolicy {target.name}: percentageSplit is neither a list nor a map")
        seen: set[str] = set()
        for index in reversed(range(len(current))):
            entry = current[index]
            domain = entry.get("topologyValue") if isinstance(entry, CommentedMap) else None
            if domain not in wanted or domain in seen:
                del current[index]
                continue
            seen.add(domain)
            if entry.get("percentage") != wanted[domain]:
                entry["percentage"] = wanted[domain]
        for domain, percent in wanted.items():
            if domain not in seen:
                current.append(
                    CommentedMap([("topologyValue", _scalar(domain, None)), ("percentage", percent)])
                )

    return edited_text(text, edit)


def _delete(mapping: CommentedMap, key: str, carried: str = "") -> str:
    """Delete ``key`` but keep the comment lines that follow its value (and ``carried`` ones): ruamel.yaml
    attaches them to the key before them, and would drop them with it. They move to the key before (the
    deleted key's own end-of-line comment goes with it); returned when there is none, for the caller to
    place."""
    keys = list(mapping)
    position = keys.index(key)
    token = _comment_after(mapping, key)
    lines = token.value.split("\n", 1)[1] if token is not None and "\n" in token.value else ""
    lines = carried + lines
    del mapping[key]
    if not lines or position == 0:
        return lines
    previous = keys[position - 1]
    kept = _comment_after(mapping, previous)
    if kept is not None:
        kept.value += lines
    else:
        items = mapping.ca.items.setdefault(previous, [None, None, None, None])
        items[2] = CommentToken("\n" + lines, CommentMark(0), None)
    return ""


def _comment_after(mapping: CommentedMap, key: str) -> CommentToken | None:
    items = mapping.ca.items.get(key)
    token = items[2] if items and len(items) > 2 else None
    return token if isinstance(token, CommentToken) else None


def found(documents: list[Any], target: DocumentRef) -> CommentedMap:
    """The document ``target`` names; EditError when the text holds none."""
    matching = [
        document
        for document in _objects(documents)
        if document.get("kind") == target.kind and _name(document) == target.name
    ]
    at_line = [document for document in matching if _line(document) == target.line]
    if at_line or len(matching) == 1:
        return (at_line or matching)[0]
    if not matching:
        raise EditError(f"no {target.kind} {target.name} in the file (was it changed meanwhile?)")
    raise EditError(f"several {target.kind} {target.name} in the file, none on line {target.line}")


def _objects(documents: list[Any]) -> Iterator[CommentedMap]:
    for document in documents:
        if not isinstance(document, CommentedMap):
            continue
        items = document.get("items")
        if document.get("kind") == "List" and isinstance(items, CommentedSeq):
            yield from (item for item in items if isinstance(item, CommentedMap))
        else:
            yield document


def _name(document: CommentedMap) -> object:
    metadata = document.get("metadata")
    return metadata.get("name") if isinstance(metadata, CommentedMap) else None


def _line(document: CommentedMap) -> int | None:
    position = getattr(document, "lc", None)
    return position.line + 1 if position is not None and position.line is not None else None


def _scalar(value: str, replaced: object) -> str:
    """``value`` as it should be written: in the quotes of the value it replaces, double-quoted when YAML
    (1.1, as kubectl reads it) would not read it plainly as this text, else plain."""
    if isinstance(replaced, ScalarString):
        quoted: str = type(replaced)(value)
        return quoted
    try:
        plain = yaml.load(value, Loader=yaml.CSafeLoader) == value
    except yaml.YAMLError:
        plain = False
    return value if plain else DoubleQuotedScalarString(value)
