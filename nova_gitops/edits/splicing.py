"""Round-trip YAML text through ruamel.yaml and keep every line the edit did not touch, byte for byte.

ruamel.yaml's round-trip mode keeps comments, key order, quoting and flow style, but not everything: it
re-indents a whole document to one indentation, drops ``...`` document ends, and adds a final newline. So
an edit is made as three texts: the original ``O``, ruamel's dump of it unedited ``R0`` and its dump edited
``R1``. ``R0`` and ``R1`` differ only where the edit is (same dumper, same settings); those hunks are carried
onto ``O`` at the lines ``R0`` and ``O`` share. Every other line of ``O`` stays as it was — the property the
tests check with hypothesis. When a hunk cannot be placed (ruamel rewrote the lines around it), or the
spliced text does not read back as the edited data, the edit is refused rather than written wrong.

Only the documents an edit targets go through ruamel: the file is cut into its documents where libyaml
(fast, in C) finds them, and each targeted document is read, dumped and spliced alone, at its own
indentation, so the cost of an edit grows with the file's length, not faster (``aligning``), and ruamel's
slowness is paid for the edited documents only. Lines end as the file's do (LF, CRLF or CR).
"""

from __future__ import annotations

import bisect
import io
import itertools
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError as RuamelError

from nova_gitops.edits import aligning


class EditError(ValueError):
    """An edit that cannot be made to this text; the message says why, for a user. ``line`` (1-based, of
    the whole file) is where, when one line is the reason; ``subject`` names the object edited
    (``Cluster c1``) when the text edit made several."""

    def __init__(self, message: str, *, line: int | None = None, subject: str | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.subject = subject


class NotInPart(EditError):
    """The targeted object is not in the part of the text its line points at."""


@dataclass(frozen=True, slots=True)
class Indentation:
    """How a file indents: a mapping's keys under their parent key, and a sequence's ``-`` under its key."""

    mapping: int = 2
    offset: int = 0  # columns between a key and the ``-`` of its block sequence (kubectl writes 0)


@dataclass(slots=True)
class Part:
    """Some documents of a file as ruamel.yaml read them: what an edit changes in place. ``offset`` is the
    number of lines of the file before the part (a node's ``lc.line + offset + 1`` is its line in the
    file), ``lines`` the part's own lines."""

    documents: list[Any]
    offset: int
    lines: Sequence[str]
    cache: dict[str, Any] = field(default_factory=dict)  # what edits work out once per part (sharing)


PartEdit = Callable[[Part], None]
"""Changes the documents of a part in place; raises ``NotInPart`` when its object is not there."""

_BREAKS = "\r\n\x85\u2028\u2029"  # what YAML readers (libyaml, ruamel) end a line at
_LINE = re.compile(r"[^\r\n\x85\u2028\u2029]*(?:\r\n|[\r\n\x85\u2028\u2029]|\Z)")


def lines_of(text: str) -> list[str]:
    """``text``'s lines, each with its line break, broken where YAML readers break them (so line numbers
    agree with theirs): at LF, CRLF, CR and the Unicode breaks, not at form feeds as ``str.splitlines``."""
    found = _LINE.findall(text)
    if found and found[-1] == "":
        found.pop()
    return found


def _key(line: str) -> str:
    return line.rstrip(_BREAKS)


def _ending(line: str, default: str) -> str:
    for ending in ("\r\n", "\n", "\r"):
        if line.endswith(ending):
            return ending
    return default


def guessed_indentation(text: str) -> Indentation:
    """The indentation most of ``text``'s blocks use (2 and 0 when it shows none)."""
    mapping, offsets = _indentations(text)
    return Indentation(
        mapping.most_common(1)[0][0] if mapping else 2,
        offsets.most_common(1)[0][0] if offsets else 0,
    )


def _indentations(text: str) -> tuple[Counter[int], Counter[int]]:
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    mapping: Counter[int] = Counter()
    offsets: Counter[int] = Counter()
    for opener, line in itertools.pairwise(lines):
        if not opener.rstrip().endswith(":"):
            continue
        stripped = opener.lstrip()
        key_column = len(opener) - len(stripped)
        while stripped.startswith("- "):  # "- key:" opens a block at the key, after the dash
            key_column += 2
            stripped = stripped[2:]
        column = len(line) - len(line.lstrip())
        if line.lstrip().startswith("- "):
            if column >= key_column:
                offsets[column - key_column] += 1
        elif column > key_column:
            mapping[column - key_column] += 1
    return mapping, offsets


def round_trip_yaml(indentation: Indentation) -> YAML:
    """A ruamel.yaml round-trip loader/dumper that keeps quotes and never folds a long line."""
    handler = YAML(typ="rt")
    handler.preserve_quotes = True
    handler.width = 1 << 20
    handler.indent(
        mapping=indentation.mapping,
        sequence=indentation.offset + 2,  # an item's content starts right after its "- "
        offset=indentation.offset,
    )
    return handler


def edited_text(text: str, edits: Sequence[tuple[int, PartEdit]]) -> str:
    """``text`` with ``edits`` applied, every line they did not touch kept as it was. Each edit is given
    with the 1-based line its object starts on, and changes the document holding that line, read alone
    (every document, when the object is not found there). Raises ``EditError`` when the text is not YAML
    ruamel reads, or an edit cannot be carried onto the text without rewriting lines it did not touch."""
    lines = lines_of(text)
    spans = _spans(text, lines, max((line for line, _ in edits), default=0))
    if spans is None:
        return _edited_part(lines, (0, len(lines), ""), [edit for _, edit in edits], text)
    starts = [start for start, _, _ in spans]
    by_span: dict[int, list[PartEdit]] = {}
    for line, edit in edits:
        by_span.setdefault(max(bisect.bisect_right(starts, line - 1) - 1, 0), []).append(edit)
    try:
        parts = {
            index: _edited_part(lines, spans[index], span_edits, text)
            for index, span_edits in sorted(by_span.items())
        }
    except NotInPart:  # the object is not where its line says (the file changed?): read it whole
        return _edited_part(lines, (0, len(lines), ""), [edit for _, edit in edits], text)
    pieces: list[str] = []
    done = 0
    for index, edited in parts.items():
        start, end, _ = spans[index]
        pieces += [*lines[done:start], edited]
        done = end
    pieces += lines[done:]
    return "".join(pieces)


Span = tuple[int, int, str]
"""Lines ``[start, end)`` (0-based) of a file read alone, after the text ``prefix`` (which makes the
items of a List a document of their own: ``kind: List`` and ``items:``)."""
_ITEMS_PREFIX = "kind: List\nitems:\n"


def _spans(text: str, lines: Sequence[str], last: int) -> list[Span] | None:
    """The parts of ``text`` an edit may read alone, up to the one holding the 1-based line ``last`` (the
    rest of the text after it is one more part), covering every line; None when libyaml cannot parse the
    text so far. A part is a document (and the comments after it), or, in a document whose root mapping's
    ``items`` is a block sequence (a ``kind: List``) and which has no YAML anchor, each item of it: ruamel
    reads a large List slowly, and an item without anchors means the same alone."""
    loader = yaml.CSafeLoader(text)
    spans: list[Span] = []
    start = 0
    stack: list[bool] = []  # per open collection: whether it is a mapping
    expect_key = True  # in the root mapping
    key: object = None
    items_at = -1  # depth of the root's items sequence while it is open, else -1
    items: list[int] = []  # the lines the items of the current document start on
    items_end = -1
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.NodeEvent | yaml.CollectionStartEvent):
                depth = len(stack)
                if depth == 1 and stack[0]:
                    if expect_key:
                        key = event.value if isinstance(event, yaml.ScalarEvent) else None
                    elif (
                        key == "items" and isinstance(event, yaml.SequenceStartEvent) and not event.flow_style
                    ):
                        items_at = 2
                    expect_key = not expect_key
                elif depth == items_at and event.start_mark is not None:
                    items.append(event.start_mark.line)
                if isinstance(event, yaml.CollectionStartEvent):
                    stack.append(isinstance(event, yaml.MappingStartEvent))
            elif isinstance(event, yaml.CollectionEndEvent):
                if len(stack) == items_at and event.start_mark is not None:
                    items_end, items_at = event.start_mark.line, -1
                stack.pop()
            elif isinstance(event, yaml.DocumentEndEvent) and event.end_mark is not None:
                end = min(max(event.end_mark.line + (1 if event.end_mark.column else 0), start), len(lines))
                spans += _document_parts(lines, start, end, items, items_end)
                start, expect_key, key, items, items_end = end, True, None, [], -1
                if end >= last:
                    break
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()
    if not spans:
        return None
    if start < len(lines):
        spans.append((start, len(lines), ""))
    return spans


def _document_parts(
    lines: Sequence[str], start: int, end: int, items: list[int], items_end: int
) -> list[Span]:
    """The document ``lines[start:end]`` as one part, or as its head, each of its ``items`` (the lines
    they start on, ending at ``items_end``) and its tail, when the items can be read alone."""
    bounds = [*items, items_end]
    alone = (
        len(items) > 1
        and all(a < b for a, b in itertools.pairwise([start, *bounds]))
        and items_end <= end
        and not any("&" in line for line in lines[start:end])
        and not any(line.startswith("%") for line in lines[start:end])
    )
    if not alone:
        return [(start, end, "")]
    return [
        (start, items[0], ""),
        *((a, b, _ITEMS_PREFIX) for a, b in itertools.pairwise(bounds)),
        (items_end, end, ""),
    ]


def _edited_part(lines: list[str], span: Span, edits: Sequence[PartEdit], whole: str) -> str:
    """The text of ``lines[start:end]`` with ``edits`` made to its documents (read after ``prefix``)."""
    start, end, prefix = span
    prefix_lines = lines_of(prefix)
    original = prefix + "".join(lines[start:end])
    mapping, offsets = _indentations(original)
    if not mapping and not offsets:  # a document that shows no block: indent new ones as the file does
        mapping, offsets = _indentations(whole)
    handler = round_trip_yaml(
        Indentation(
            mapping.most_common(1)[0][0] if mapping else 2, offsets.most_common(1)[0][0] if offsets else 0
        )
    )
    try:
        documents = list(handler.load_all(original))
        before = _dumped(handler, documents)
        part = Part(documents, start - len(prefix_lines), [*prefix_lines, *lines[start:end]])
        for edit in edits:
            edit(part)
        after = _dumped(handler, documents)
    except RuamelError as error:
        raise EditError(f"cannot read it as YAML: {error}") from error
    if after == before:
        return original[len(prefix) :]
    result = splice(original, before, after)
    try:
        same = _data(result) == _data(after)
    except yaml.YAMLError:
        same = False
    if not same or not result.startswith(prefix):
        raise EditError("cannot make this edit without rewriting other lines; edit the file by hand")
    return result[len(prefix) :]


def _dumped(handler: YAML, documents: list[Any]) -> str:
    stream = io.StringIO()
    handler.dump_all(documents, stream)
    return stream.getvalue()


def _data(text: str) -> list[Any]:
    return list(yaml.load_all(text, Loader=yaml.CSafeLoader))


def splice(original: str, before: str, after: str) -> str:
    """``original`` with the hunks that turn ``before`` into ``after``; ``before`` must be ``original`` as
    some dumper wrote it. New lines end as the line they follow (or replace) does. Raises ``EditError``
    when a hunk touches lines ``original`` does not share."""
    lines = lines_of(original)
    default = next((_ending(line, "") for line in lines if _ending(line, "")), "\n")
    missing_newline = bool(lines) and not _ending(lines[-1], "")
    if missing_newline:
        lines[-1] += default  # a hunk may follow the last line; the missing newline is restored below
    old = [_key(line) for line in lines_of(before)]
    new = [_key(line) for line in lines_of(after)]
    shared = dict(aligning.matched(old, [_key(line) for line in lines]))  # line of before → of original
    for start, end, new_start, new_end in reversed(
        aligning.hunks(aligning.matched(old, new), len(old), len(new))
    ):
        if start < end:
            first = shared.get(start)
            if first is None or any(shared.get(line) != first + line - start for line in range(start, end)):
                raise EditError("cannot make this edit without rewriting other lines; edit the file by hand")
            ending = _ending(lines[first], default)
            lines[first : first + end - start] = [line + ending for line in new[new_start:new_end]]
            continue
        if start > 0 and start - 1 in shared:
            position = shared[start - 1] + 1
        elif start in shared:
            position = shared[start]
        else:
            raise EditError("cannot make this edit without rewriting other lines; edit the file by hand")
        ending = _ending(lines[position - 1] if position else lines[position], default) if lines else default
        lines[position:position] = [line + ending for line in new[new_start:new_end]]
    text = "".join(lines)
    return text[: -len(default)] if missing_newline and text.endswith(default) else text
