"""Round-trip YAML text through ruamel.yaml and keep every line the edit did not touch, byte for byte.

ruamel.yaml's round-trip mode keeps comments, key order, quoting and flow style, but not everything: it
re-indents a whole file to one indentation, drops ``...`` document ends, and adds a final newline. So an edit
is made as three texts: the original ``O``, ruamel's dump of it unedited ``R0`` and its dump edited ``R1``.
``R0`` and ``R1`` differ only where the edit is (same dumper, same settings); those hunks are carried onto
``O`` at the lines ``R0`` and ``O`` share. Every other line of ``O`` stays as it was — the property the tests
check with hypothesis. When a hunk cannot be placed (ruamel rewrote the lines around it), or the spliced
text does not read back as the edited data, the edit is refused rather than written wrong.
"""

from __future__ import annotations

import difflib
import io
import itertools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError as RuamelError


class EditError(ValueError):
    """An edit that cannot be made to this text; the message says why, for a user."""


@dataclass(frozen=True, slots=True)
class Indentation:
    """How a file indents: a mapping's keys under their parent key, and a sequence's ``-`` under its key."""

    mapping: int = 2
    offset: int = 0  # columns between a key and the ``-`` of its block sequence (kubectl writes 0)


def guessed_indentation(text: str) -> Indentation:
    """The indentation most of ``text``'s blocks use (2 and 0 when it shows none)."""
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
    return Indentation(
        mapping.most_common(1)[0][0] if mapping else 2,
        offsets.most_common(1)[0][0] if offsets else 0,
    )


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


def edited_text(text: str, edit: Callable[[list[Any]], None]) -> str:
    """``text`` with ``edit`` applied to its documents (ruamel round-trip data, changed in place), every line
    the edit did not touch kept as it was. Raises ``EditError`` when the text is not YAML ruamel reads, or
    when the edit cannot be carried onto the text without rewriting lines it did not touch."""
    handler = round_trip_yaml(guessed_indentation(text))
    try:
        documents = list(handler.load_all(text))
        before = _dumped(handler, documents)
        edit(documents)
        after = _dumped(handler, documents)
    except RuamelError as error:
        raise EditError(f"cannot read it as YAML: {error}") from error
    if after == before:
        return text
    result = splice(text, before, after)
    if _data(result) != _data(after):
        raise EditError("cannot make this edit without rewriting other lines; edit the file by hand")
    return result


def _dumped(handler: YAML, documents: list[Any]) -> str:
    stream = io.StringIO()
    handler.dump_all(documents, stream)
    return stream.getvalue()


def _data(text: str) -> list[Any]:
    return list(yaml.load_all(text, Loader=yaml.CSafeLoader))


def _key(line: str) -> str:
    return line.rstrip("\r\n")


def splice(original: str, before: str, after: str) -> str:
    """``original`` with the hunks that turn ``before`` into ``after``; ``before`` must be ``original`` as
    some dumper wrote it. Raises ``EditError`` when a hunk touches lines ``original`` does not share."""
    lines = original.splitlines(keepends=True)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += newline  # a hunk may follow the last line; the missing newline is restored below
        missing_newline = True
    else:
        missing_newline = False
    old, new = before.splitlines(), after.splitlines()
    shared: dict[int, int] = {}  # line of ``before`` → the same line of ``original``
    alignment = difflib.SequenceMatcher(None, old, [_key(line) for line in lines], autojunk=False)
    for block in alignment.get_matching_blocks():
        shared.update({block.a + step: block.b + step for step in range(block.size)})
    hunks = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    for tag, start, end, new_start, new_end in reversed(hunks):
        if tag == "equal":
            continue
        replacement = [line + newline for line in new[new_start:new_end]]
        if start < end:
            first = shared.get(start)
            if first is None or any(shared.get(line) != first + line - start for line in range(start, end)):
                raise EditError("cannot make this edit without rewriting other lines; edit the file by hand")
            lines[first : first + end - start] = replacement
        elif start > 0 and start - 1 in shared:
            position = shared[start - 1] + 1
            lines[position:position] = replacement
        elif start in shared:
            position = shared[start]
            lines[position:position] = replacement
        else:
            raise EditError("cannot make this edit without rewriting other lines; edit the file by hand")
    text = "".join(lines)
    return text[: -len(newline)] if missing_newline and text.endswith(newline) else text
