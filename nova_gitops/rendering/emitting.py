"""YAML text for Kubernetes data, several times faster than libyaml's emitter.

A render writes ~100,000 manifests, and its whole time budget is what PyYAML's C dumper alone would need
to dump them, so the bulk path cannot afford a general YAML emitter. Kubernetes data is narrow (what a
YAML safe-load yields: dict / list / str / int / float / bool / None) and repetitive (the same keys and
label values thousands of times), so a specialised emitter can decide each key's and string's text once,
cache it, and then only join strings.

Contract: ``yaml.load(dump(obj), Loader=yaml.CSafeLoader) == obj`` for every input, types included.
Layout is the one kubectl and PyYAML users know (docs/design.md §4): block style, keys in source order,
2-space
indent, sequences at their parent key's indent (``containers:`` then ``- name: x``), ``{}`` / ``[]`` for
empty collections, LF line ends and a trailing newline, no tags, no anchors, no line folding. Strings are
plain where that is safe, otherwise single-quoted, otherwise double-quoted with escapes; multi-line strings
are literal block scalars (``|``, ``|-``, ``|+``) because ConfigMaps hold files that reviewers read in
diffs.

"Safe as plain" is decided by PyYAML's analysis rules and its YAML 1.1 implicit resolvers (the reader the
agents use), and additionally by what other common readers of the rendered repo would take for a
non-string (YAML 1.2 / JSON numbers such as ``1e3`` and ``0o17``, go-yaml v2's ``y`` / ``n`` booleans):
Argo CD, Flux and kubectl read these files too, and a ConfigMap value they see as a number is rejected.
"""

from __future__ import annotations

import datetime
import functools
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import yaml.resolver

__all__ = ["dump", "scalar"]

# Keys longer than this are written as explicit keys (``? key``): YAML readers stop looking for the ``:`` of
# a simple key after 1024 characters.
_SIMPLE_KEY_LIMIT = 1000
# Decisions for strings up to this length are cached (names and label values recur thousands of times);
# longer ones (files in ConfigMaps) are decided afresh so the cache never holds large texts.
_CACHED_LENGTH = 256
_CACHE_SIZE = 1 << 16

# The common case, decided without a character-by-character scan: names, images, paths, URLs, label values.
_COMMON_PLAIN = re.compile(r"(?!\.\.\.)[A-Za-z0-9_./][A-Za-z0-9_./+=@%()-]*(?::[A-Za-z0-9_./+=@%()-]+)*")
# Characters YAML can only carry escaped (outside the printable set, a BOM), and tab, which is legal in quotes
# but invisible, so it is written as ``\t`` like PyYAML does.
_SPECIAL = re.compile("[^\n\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010fffe]|\ufeff")
# The same, allowing tab: a literal block may keep tabs (Makefiles in ConfigMaps stay readable).
_SPECIAL_IN_BLOCK = re.compile("[^\t\n\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010fffe]|\ufeff")
_LINE_BREAKS = re.compile("[\n\r\x85\u2028\u2029]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_DOUBLE_QUOTE_ESCAPE = re.compile(
    '["\\\\\x85\u2028\u2029\ufeff]|[^\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010fffe]'
)
_NAMED_ESCAPES = {
    "\0": "\\0",
    "\x07": "\\a",
    "\x08": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\x0b": "\\v",
    "\x0c": "\\f",
    "\r": "\\r",
    "\x1b": "\\e",
    '"': '\\"',
    "\\": "\\\\",
    "\x85": "\\N",
    "\u2028": "\\L",
    "\u2029": "\\P",
}
# Strings that other readers of the rendered repo (YAML 1.2 core schema, JSON, go-yaml v2) would not read as
# strings, beyond PyYAML's YAML 1.1 resolvers.
_OTHER_READERS_NON_STRING = re.compile(
    r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?0[xXoObB][0-9a-fA-F_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|[yYnN]|~"
)
_INDICATORS_FIRST = frozenset("#,[]{}&*!|>'\"%@`")
_WHITESPACE_AFTER = frozenset("\0 \t\r\n\x85\u2028\u2029")


def dump(obj: Mapping[str, Any]) -> str:
    """One YAML document for ``obj`` (no ``---``), block style, source key order, ending with a newline.

    Raises ``TypeError`` for a value that would need a YAML tag (bytes from ``!!binary``, sets, objects) and
    ``ValueError`` for a string no YAML reader accepts (a lone surrogate).
    """
    if not obj:
        return "{}\n"
    out: list[str] = []
    _emit_mapping(obj, "", "", out)
    return "".join(out)


def dump_items(items: Sequence[Any]) -> str:
    """The block sequence ``items`` as ``dump`` writes a non-empty list that is the value of a top-level key,
    without the key's line: items of one long list can be emitted apart (and cached) and joined."""
    out: list[str] = []
    _emit_sequence(items, "", "", out)
    return "".join(out)


def scalar(value: str | int | float | bool | None) -> str:
    """The YAML text of one scalar as ``dump`` writes it as a mapping value or sequence item.

    A multi-line string, which ``dump`` writes as a literal block indented under its key, is returned
    double-quoted on one line instead, so the text can be spliced at any indentation.
    """
    if type(value) is str:
        text = _any_value_text(value)
        return _double_quoted(value) if text is None else text
    return _non_string_scalar(value)


# --- collections ------------------------------------------------------------------------------------------


def _emit_mapping(mapping: Mapping[Any, Any], lead: str, indent: str, out: list[str]) -> None:
    """Write ``mapping`` with its keys at column ``len(indent)``; the first line starts with ``lead``."""
    append = out.append
    child_indent = indent + "  "
    for key, value in mapping.items():
        if type(key) is str:
            key_text = _cached_key_text(key) if len(key) <= _CACHED_LENGTH else _key_text(key)
        else:
            key_text = _other_key(key)
        if key_text is None:  # too long for a simple key: an explicit ``? key`` line, then ``: value``
            append(f"{lead}? {_quoted_key(key)}\n")
            key_text = ":"
            lead = indent
        kind = type(value)
        if kind is str:
            text = _cached_value_text(value) if len(value) <= _CACHED_LENGTH else _value_text(value)
            if text is None:
                append(f"{lead}{key_text} {_literal_block(value, child_indent)}")
            else:
                append(f"{lead}{key_text} {text}\n")
        elif kind is dict:
            if value:
                append(f"{lead}{key_text}\n")
                _emit_mapping(value, child_indent, child_indent, out)
            else:
                append(f"{lead}{key_text} {{}}\n")
        elif kind is list:
            if value:
                append(f"{lead}{key_text}\n")
                _emit_sequence(value, indent, indent, out)
            else:
                append(f"{lead}{key_text} []\n")
        elif kind is int:
            append(f"{lead}{key_text} {value}\n")
        elif kind is bool:
            append(f"{lead}{key_text} true\n" if value else f"{lead}{key_text} false\n")
        else:
            _emit_node(value, f"{lead}{key_text}", indent, False, out)
        lead = indent


def _emit_sequence(sequence: Sequence[Any], lead: str, indent: str, out: list[str]) -> None:
    """Write ``sequence`` with its dashes at column ``len(indent)``; the first line starts with ``lead``."""
    append = out.append
    child_indent = indent + "  "
    for item in sequence:
        kind = type(item)
        if kind is dict:
            if item:
                _emit_mapping(item, f"{lead}- ", child_indent, out)
            else:
                append(f"{lead}- {{}}\n")
        elif kind is str:
            text = _cached_value_text(item) if len(item) <= _CACHED_LENGTH else _value_text(item)
            if text is None:
                append(f"{lead}- {_literal_block(item, child_indent)}")
            else:
                append(f"{lead}- {text}\n")
        elif kind is list:
            if item:
                _emit_sequence(item, f"{lead}- ", child_indent, out)
            else:
                append(f"{lead}- []\n")
        elif kind is int:
            append(f"{lead}- {item}\n")
        else:
            _emit_node(item, f"{lead}-", indent, True, out)
        lead = indent


def _emit_node(value: Any, head: str, indent: str, in_sequence: bool, out: list[str]) -> None:
    """Any node the fast paths above do not take: non-string scalars, subclasses, tuples, other mappings.

    ``head`` is the line so far without its trailing space (``key:`` or ``- ``); ``indent`` is the column of
    that key or dash. Laid out exactly as the fast paths lay out dicts, lists and strings.
    """
    child_indent = indent + "  "
    if value is None or isinstance(value, int | float):
        out.append(f"{head} {_non_string_scalar(value)}\n")
    elif isinstance(value, Mapping):
        if not value:
            out.append(f"{head} {{}}\n")
        elif in_sequence:
            _emit_mapping(value, head + " ", child_indent, out)
        else:
            out.append(f"{head}\n")
            _emit_mapping(value, child_indent, child_indent, out)
    elif isinstance(value, list | tuple):
        if not value:
            out.append(f"{head} []\n")
        elif in_sequence:
            _emit_sequence(value, head + " ", child_indent, out)
        else:
            out.append(f"{head}\n")
            _emit_sequence(value, indent, indent, out)
    elif isinstance(value, str):
        plain_text = str.__str__(value)
        text = _any_value_text(plain_text)
        if text is None:
            out.append(f"{head} {_literal_block(plain_text, child_indent)}")
        else:
            out.append(f"{head} {text}\n")
    else:
        out.append(f"{head} {_non_string_scalar(value)}\n")


# --- scalars ----------------------------------------------------------------------------------------------


def _non_string_scalar(value: object) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _float_text(value)
    if isinstance(value, datetime.date):  # datetime too: safe-load yields both for unquoted timestamps
        return value.isoformat()
    if isinstance(value, str):
        return scalar(str.__str__(value))
    raise TypeError(f"cannot write a {type(value).__name__} as Kubernetes YAML: {value!r:.80}")


def _float_text(value: float) -> str:
    """Text that YAML 1.1 reads back as the same float (it needs a '.' in the mantissa, as PyYAML writes)."""
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = float.__repr__(value).lower()
    if "." not in text and "e" in text:
        text = text.replace("e", ".0e", 1)
    return text


def _any_value_text(text: str) -> str | None:
    """The inline text of a string value, or None when it is to be written as a literal block."""
    return _cached_value_text(text) if len(text) <= _CACHED_LENGTH else _value_text(text)


def _any_key_text(text: str) -> str | None:
    """``key:`` for a string key, or None when the key is too long to be a simple key."""
    return _cached_key_text(text) if len(text) <= _CACHED_LENGTH else _key_text(text)


def _value_text(text: str) -> str | None:
    """Decides how a string value is written (see ``_any_value_text``)."""
    if _COMMON_PLAIN.fullmatch(text) is not None:
        return text if _reads_as_string(text) else f"'{text}'"
    if _SURROGATE.search(text) is not None:
        raise ValueError(f"string {text!r:.80} contains a lone surrogate, which no YAML reader accepts")
    if "\n" in text and _literal_block_allowed(text):
        return None
    return _flow_scalar(text)


def _key_text(text: str) -> str | None:
    """Decides how a string key is written (see ``_any_key_text``)."""
    if _COMMON_PLAIN.fullmatch(text) is not None:
        written = text if _reads_as_string(text) else f"'{text}'"
    else:
        if _SURROGATE.search(text) is not None:
            raise ValueError(f"key {text!r:.80} contains a lone surrogate, which no YAML reader accepts")
        written = _flow_scalar(text)
    if len(written) > _SIMPLE_KEY_LIMIT:
        return None
    return written + ":"


_cached_value_text = functools.lru_cache(maxsize=_CACHE_SIZE)(_value_text)
_cached_key_text = functools.lru_cache(maxsize=_CACHE_SIZE)(_key_text)


def _other_key(key: object) -> str | None:
    if isinstance(key, str):
        return _any_key_text(str.__str__(key))
    text = _non_string_scalar(key)
    return None if len(text) > _SIMPLE_KEY_LIMIT else text + ":"


def _quoted_key(key: object) -> str:
    return _flow_scalar(str.__str__(key)) if isinstance(key, str) else _non_string_scalar(key)


def _flow_scalar(text: str) -> str:
    """A string on one line: plain if safe, else single-quoted if possible, else double-quoted."""
    if _SPECIAL.search(text) is not None or _LINE_BREAKS.search(text) is not None:
        return _double_quoted(text)
    if _plain_allowed(text) and _reads_as_string(text):
        return text
    return "'" + text.replace("'", "''") + "'"


def _plain_allowed(text: str) -> bool:
    """PyYAML's rules for a plain scalar in block context (the text is one line of printable characters)."""
    if not text or text[0] == " " or text[-1] == " ":
        return False
    if text.startswith(("---", "...")):
        return False
    first = text[0]
    length = len(text)
    if first in _INDICATORS_FIRST:
        return False
    if first in "?:-" and (length == 1 or text[1] in _WHITESPACE_AFTER):
        return False
    for index in range(1, length):
        char = text[index]
        if char == ":" and (index + 1 == length or text[index + 1] in _WHITESPACE_AFTER):
            return False
        if char == "#" and text[index - 1] in _WHITESPACE_AFTER:
            return False
    return True


def _reads_as_string(text: str) -> bool:
    """True unless PyYAML's YAML 1.1 resolvers or another common reader take ``text`` for a non-string."""
    if _OTHER_READERS_NON_STRING.fullmatch(text) is not None:
        return False
    resolvers = yaml.resolver.Resolver.yaml_implicit_resolvers
    candidates = [*resolvers.get(text[0] if text else "", ()), *resolvers.get(None, ())]
    return not any(pattern.match(text) for _tag, pattern in candidates)


def _double_quoted(text: str) -> str:
    return '"' + _DOUBLE_QUOTE_ESCAPE.sub(_escape, text) + '"'


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED_ESCAPES.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02X}"
    if code <= 0xFFFF:
        return f"\\u{code:04X}"
    return f"\\U{code:08X}"


def _literal_block_allowed(text: str) -> bool:
    """A literal block carries the text exactly: '\\n' is its only line break and nothing needs escaping."""
    if _SPECIAL_IN_BLOCK.search(text) is not None:
        return False
    return "\r" not in text and "\x85" not in text and "\u2028" not in text and "\u2029" not in text


def _literal_block(text: str, indent: str) -> str:
    """``|`` header and lines at ``indent``, ending with a newline; chomping keeps the text's line ends."""
    header = "|2" if text[0] in " \t\n" else "|"
    if text[-1] != "\n":
        header += "-"
        lines = text.split("\n")
    else:
        if len(text) == 1 or text[-2] == "\n":
            header += "+"
        lines = text[:-1].split("\n")
    body = "".join(f"{indent}{line}\n" if line else "\n" for line in lines)
    return f"{header}\n{body}"
