"""The edits the source-editing commands make, each on one document of one file's text (docs/editing.md).

A document is found by its kind and ``metadata.name`` (and, when several documents of the file share those,
by the line it starts on, as the loader recorded it): a ``kind: List``'s items are documents too. Values
that YAML would read as anything but text (``"true"``, ``"0123"``) are written double-quoted, as the
Kubernetes API wants strings in labels and annotations; a value replacing a quoted one keeps its quotes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import yaml
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, ScalarString
from ruamel.yaml.tokens import CommentToken

from nova_gitops.edits.sharing import Route
from nova_gitops.edits.splicing import EditError, NotInPart, Part, edited_text

Section = Literal["annotations", "labels"]


@dataclass(frozen=True, slots=True)
class DocumentRef:
    """Which document of a file to edit: its kind and name, the 1-based line its content starts on, and
    its API group when the file may hold the same kind and name in two (None: any group)."""

    kind: str
    name: str
    line: int
    group: str | None = None

    @property
    def subject(self) -> str:
        return f"{self.kind} {self.name}"


def set_metadata_entry(text: str, target: DocumentRef, section: Section, key: str, value: str | None) -> str:
    """``text`` with ``metadata.<section>[key]`` of ``target`` set to ``value`` (removed when None; a block
    section left empty by the removal is removed too, as it was before a ``pin`` added it; a flow one stays
    ``{}``)."""
    return set_metadata_entries(text, [target], section, key, value)


def set_metadata_entries(
    text: str, targets: Sequence[DocumentRef], section: Section, key: str, value: str | None
) -> str:
    """``set_metadata_entry`` on each of ``targets`` (documents of one file), in one pass over the text."""

    def edit_of(target: DocumentRef) -> Any:
        return lambda part: _set_entry(part, target, section, key, value)

    return edited_text(text, [(target.line, edit_of(target)) for target in targets])


def _set_entry(part: Part, target: DocumentRef, section: Section, key: str, value: str | None) -> None:
    route = Route(part, target.subject)
    document = route.through(found(part, target), "document")
    metadata = route.child(document, "metadata", "metadata")
    if not isinstance(metadata, CommentedMap):
        raise EditError(f"{target.subject} has no metadata mapping", subject=target.subject)
    name = f"metadata.{section}"
    entries = route.child(metadata, section, name)
    if value is None:
        if isinstance(entries, CommentedMap) and key in entries:
            route.owns(entries, key, f"{name}.{key}")
            route.child(entries, key, f"{name}.{key}")
            unplaced = _delete(entries, key)
            if not entries and not entries.fa.flow_style():  # a "{}" the user wrote stays
                route.owns(metadata, section, name)
                _delete(metadata, section, unplaced)
            elif unplaced:  # the last entry of a "{}" that stays: its comment lines follow the block
                _attach((metadata, section, 2), unplaced)
        return
    if entries is None:
        with _appending(metadata):
            metadata[section] = CommentedMap([(key, _scalar(value, None))])
        return
    if not isinstance(entries, CommentedMap):
        raise EditError(f"{target.subject}: {name} is not a mapping", subject=target.subject)
    replaced = route.child(entries, key, f"{name}.{key}")
    if key in entries:
        entries[key] = _scalar(value, replaced)
        return
    with _appending(entries):
        entries[key] = _scalar(value, None)


def set_percentage_split(text: str, target: DocumentRef, split: Sequence[tuple[str, int]]) -> str:
    """``text`` with the SchedulePolicy ``target``'s ``spec.spreadConstraints.percentageSplit`` set to
    ``split`` (domain, percent), in the shape it has: v0.9's list of ``{topologyValue, percentage}`` or v1.5's
    map ``{domain: percent}``. Entries of domains ``split`` keeps are changed in place (their comments and
    order stay), the others removed, new ones appended in ``split``'s order. A policy without a split gets a
    list when it names a ``topologyKey``, and a map (cluster names) when it does not, as Nova's docs do."""
    return edited_text(text, [(target.line, lambda part: _set_split(part, target, split))])


def _set_split(part: Part, target: DocumentRef, split: Sequence[tuple[str, int]]) -> None:
    route = Route(part, target.subject)
    document = route.through(found(part, target), "document")
    spec = route.child(document, "spec", "spec")
    spread = (
        route.child(spec, "spreadConstraints", "spec.spreadConstraints")
        if isinstance(spec, CommentedMap)
        else None
    )
    if not isinstance(spread, CommentedMap):
        raise EditError(f"SchedulePolicy {target.name} has no spec.spreadConstraints to split")
    name = "spec.spreadConstraints.percentageSplit"
    current = route.child(spread, "percentageSplit", name)
    wanted = dict(split)
    if current is None:  # made whole before it is added, so that comments after the block stay after it
        made: CommentedSeq | CommentedMap
        if "topologyKey" in spread:
            made = CommentedSeq(
                CommentedMap([("topologyValue", _scalar(domain, None)), ("percentage", percent)])
                for domain, percent in split
            )
        else:
            made = CommentedMap(split)
        with _appending(spread):
            spread["percentageSplit"] = made
        return
    if isinstance(current, CommentedMap):
        _set_split_map(route, current, wanted, name)
        return
    if not isinstance(current, CommentedSeq):
        raise EditError(f"SchedulePolicy {target.name}: percentageSplit is neither a list nor a map")
    _set_split_list(route, current, wanted, name)


def _set_split_map(route: Route, current: CommentedMap, wanted: Mapping[str, int], name: str) -> None:
    """v1.5's map ``{domain: percent}`` set to ``wanted``, its kept entries changed in place."""
    for domain in [domain for domain in current if domain not in wanted]:
        route.owns(current, domain, f"{name}.{domain}")
        route.child(current, domain, f"{name}.{domain}")
        _delete(current, domain)
    for domain, percent in wanted.items():
        if current.get(domain) == percent:
            continue
        if domain in current:
            route.child(current, domain, f"{name}.{domain}")
            current[domain] = percent
        else:
            with _appending(current):
                current[domain] = percent


def _set_split_list(route: Route, current: CommentedSeq, wanted: Mapping[str, int], name: str) -> None:
    """v0.9's list of ``{topologyValue, percentage}`` set to ``wanted``, its kept entries changed in place."""
    seen: set[str] = set()
    for index in reversed(range(len(current))):
        entry = (
            route.through(current[index], f"{name}[{index}]")
            if isinstance(current[index], CommentedMap)
            else current[index]
        )
        domain = entry.get("topologyValue") if isinstance(entry, CommentedMap) else None
        if not isinstance(domain, str) or domain not in wanted or domain in seen:
            _delete(current, index)
            continue
        seen.add(domain)
        if entry.get("percentage") != wanted[domain]:
            route.child(entry, "percentage", f"{name}[{index}].percentage")
            entry["percentage"] = wanted[domain]
    for domain, percent in wanted.items():
        if domain not in seen:
            with _appending(current):
                current.append(
                    CommentedMap([("topologyValue", _scalar(domain, None)), ("percentage", percent)])
                )


# --- comments: ruamel.yaml attaches the comment lines after an entry to the entry, wherever they stand -----


def _delete(collection: CommentedMap | CommentedSeq, at: Any, carried: str = "") -> str:
    """Delete the entry ``at`` (a key, or an index) but keep the comment lines that follow it (and
    ``carried`` ones): ruamel.yaml attaches them to the entry before them, and would drop them with it.
    They go after the entry before (at the end of its value, when that is a block), or before the first
    entry left when it was the first, so they stay where they stood; the deleted entry's own end-of-line
    comment goes with it. Returned when no entry is left, for the caller to place."""
    keys = list(range(len(collection))) if isinstance(collection, CommentedSeq) else _keys(collection)
    position = keys.index(at)
    slot = _entry_slot(collection, at)
    token = _slot_token(slot)
    lines = _first_line(token.value)[1] if token is not None else ""
    lines = carried + lines
    del collection[at]
    if not lines:
        return ""
    if position > 0:
        _attach(_entry_slot(collection, keys[position - 1]), lines)
    elif collection:
        _place_before_first(collection, lines)
    else:
        return lines
    return ""


def _place_before_first(collection: CommentedMap | CommentedSeq, lines: str) -> None:
    """Comment ``lines`` before the first entry of ``collection`` (after those there already)."""
    comment = collection.ca.comment
    before = comment[1] if isinstance(comment, list) and len(comment) > 1 else None
    if not isinstance(before, list):
        before = []
        collection.ca.comment = [comment[0] if isinstance(comment, list) and comment else None, before]
    before.append(CommentToken(lines, CommentMark(0), None))


@contextmanager
def _appending(collection: CommentedMap | CommentedSeq) -> Iterator[None]:
    """Around appending an entry to ``collection``: the comment lines after its last entry that stand at
    the collection's own column or left of it (and the blank lines before them) belong to what follows
    the block, and ruamel.yaml would leave them before the new entry: they go after it. Lines indented
    deeper belong to the last entry's value, and stay."""
    slot = _last_slot(collection)
    token = _slot_token(slot) if slot is not None else None
    moved = ""
    if token is not None:
        head, tail = _first_line(token.value)
        inner, moved = _split_outer(tail, getattr(collection.lc, "col", None) or 0)
        token.value = head + inner
    yield
    if moved:
        after = _last_slot(collection)
        if after is None:  # nowhere to hang them (a flow block): put them back
            assert token is not None
            token.value += moved
        else:
            _attach(after, moved)


def _first_line(value: str) -> tuple[str, str]:
    """A comment token's text as (its first line with the line break, the lines after it): the first
    line is the end-of-line comment of the entry, or empty. ruamel.yaml keeps the file's line breaks
    there (CR, CRLF or LF)."""
    for index, character in enumerate(value):
        if character in "\r\n":
            end = index + 2 if value.startswith("\r\n", index) else index + 1
            return value[:end], value[end:]
    return value, ""


def _split_outer(tail: str, column: int) -> tuple[str, str]:
    """``tail``'s comment lines as (those of the block, those after it): the second part starts at the
    first comment at ``column`` or left of it, with the blank lines before it (or at the trailing blank
    lines)."""
    lines = tail.splitlines(keepends=True)
    first = next(
        (
            index
            for index, line in enumerate(lines)
            if line.lstrip(" ").startswith("#") and len(line) - len(line.lstrip(" ")) <= column
        ),
        len(lines),
    )
    while first > 0 and not lines[first - 1].strip():
        first -= 1
    return "".join(lines[:first]), "".join(lines[first:])


Slot = tuple[CommentedMap | CommentedSeq, Any, int]
"""Where ruamel.yaml keeps the comment after an entry: (collection, key or index, place in ``ca.items``)."""


def _last_slot(collection: Any) -> Slot | None:
    """The slot of the comment after ``collection``'s last entry (the deepest last one: ruamel.yaml hangs
    the lines after a block on its innermost last entry); None for a flow or empty collection."""
    if (
        not isinstance(collection, CommentedMap | CommentedSeq)
        or not collection
        or collection.fa.flow_style()
    ):
        return None
    if isinstance(collection, CommentedSeq):
        return _entry_slot(collection, len(collection) - 1)
    return _entry_slot(collection, _keys(collection)[-1])


def _entry_slot(collection: CommentedMap | CommentedSeq, at: Any) -> Slot:
    deeper = _last_slot(collection[at])
    if deeper is not None:
        return deeper
    return (collection, at, 0 if isinstance(collection, CommentedSeq) else 2)


def _slot_token(slot: Slot) -> CommentToken | None:
    collection, at, place = slot
    items = collection.ca.items.get(at)
    token = items[place] if items and len(items) > place else None
    return token if isinstance(token, CommentToken) else None


def _attach(slot: Slot, lines: str) -> None:
    """Put comment ``lines`` after the entry of ``slot`` (after its end-of-line comment, if any)."""
    token = _slot_token(slot)
    if token is not None:
        token.value += lines if token.value.endswith(("\n", "\r")) else "\n" + lines
        return
    collection, at, place = slot
    items = collection.ca.items.setdefault(at, [None, None, None, None])
    items[place] = CommentToken("\n" + lines, CommentMark(0), None)


def _comment_after(mapping: CommentedMap, key: str) -> CommentToken | None:
    return _slot_token((mapping, key, 2))


def _keys(mapping: CommentedMap) -> list[Any]:
    """``mapping``'s own keys in order (not those a merge key brings in)."""
    return (
        [key for key, _ in mapping.non_merged_items()] if getattr(mapping, "merge", None) else list(mapping)
    )


def found(part: Part, target: DocumentRef) -> CommentedMap:
    """The document ``target`` names in ``part``; ``NotInPart`` when the part holds none."""
    matching = [
        document
        for document in _objects(part.documents)
        if document.get("kind") == target.kind
        and _name(document) == target.name
        and (target.group is None or _group(document) == target.group)
    ]
    at_line = [document for document in matching if _line(document, part.offset) == target.line]
    if at_line or len(matching) == 1:
        return (at_line or matching)[0]
    if not matching:
        raise NotInPart(f"no {target.subject} in the file (was it changed meanwhile?)")
    raise EditError(f"several {target.subject} in the file, none on line {target.line}")


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


def _group(document: CommentedMap) -> object:
    api_version = document.get("apiVersion")
    return api_version.rpartition("/")[0] if isinstance(api_version, str) else None


def _line(document: CommentedMap, offset: int) -> int | None:
    position = getattr(document, "lc", None)
    return position.line + offset + 1 if position is not None and position.line is not None else None


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
