"""Where a field of a YAML document is written: its line and column (``spec.percentageSplit[1].percentage``),
found only on the error path, by composing the file again and walking its nodes."""

from __future__ import annotations

import re

import yaml

from nova_gitops.api.yamlconstructing import Node, mapping_value

_TOKEN = re.compile(r"""\[(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|([^\]]*))\]|([^.\[]+)|(\.)""")


def locate_field(file_text: str, document_line: int, field: str) -> int:
    """The 1-based line of ``field`` (``spec.groupBy.labelKey``, ``spec.percentageSplit[1].percentage``,
    ``metadata.labels['a.io/b']``) in the document that starts at ``document_line``.

    A field that is absent resolves to its deepest present parent; an unknown document to ``document_line``.
    Composes the whole file, so it belongs on the error path only; use ``FieldLocator`` for many lookups.
    """
    return FieldLocator(file_text).line_of(document_line, field)


class FieldLocator:
    """Finds field lines in one file, composing it once (with the C loader) for any number of lookups."""

    def __init__(self, file_text: str) -> None:
        self._roots: dict[int, Node] = {}
        loader = yaml.CSafeLoader(file_text)
        try:
            while loader.check_node():
                node = loader.get_node()
                if node is None:
                    continue
                self._roots.setdefault(node.start_mark.line + 1, node)
                items = mapping_value(node, "items")
                if isinstance(items, yaml.SequenceNode):
                    for item in items.value:
                        self._roots.setdefault(item.start_mark.line + 1, item)
        except yaml.YAMLError:
            pass  # keep the documents before the error
        finally:
            loader.dispose()

    def line_of(self, document_line: int, field: str) -> int:
        return self.position_of(document_line, field)[0]

    def position_of(self, document_line: int, field: str) -> tuple[int, int | None]:
        """(line, 1-based column) of ``field``'s key (of its item, in a list); no column when the field
        resolves to no node of the document (an unknown document)."""
        node = self._roots.get(document_line)
        if node is None:
            return document_line, None
        mark = node.start_mark
        tokens = _tokens(field)
        index = 0
        while index < len(tokens):
            found = _step(node, tokens, index)
            if found is None:
                break
            node, mark, index = found
        return mark.line + 1, mark.column + 1


def _tokens(field: str) -> list[tuple[str | int, bool]]:
    """``(key or index, is_dotted_word)``; dotted words may be rejoined to match keys that contain dots."""
    tokens: list[tuple[str | int, bool]] = []
    for match in _TOKEN.finditer(field):
        single, double, bare, word, _dot = match.groups()
        if word is not None:
            tokens.append((word, True))
        elif single is not None or double is not None:
            quoted = single if single is not None else double
            tokens.append((re.sub(r"\\(.)", r"\1", quoted or ""), False))
        elif bare is not None:
            tokens.append((int(bare) if bare.isdigit() else bare, False))
    return tokens


def _step(node: Node, tokens: list[tuple[str | int, bool]], index: int) -> tuple[Node, yaml.Mark, int] | None:
    """Follow ``tokens[index]`` (or dotted words joined) from ``node``: (child, where its key or item starts,
    next index)."""
    token, dotted = tokens[index]
    if isinstance(node, yaml.SequenceNode):
        if isinstance(token, int) and 0 <= token < len(node.value):
            child = node.value[token]
            return child, child.start_mark, index + 1
        return None
    if not isinstance(node, yaml.MappingNode):
        return None
    candidates = [(str(token), index + 1)]
    if dotted:
        joined = str(token)
        end = index + 1
        while end < len(tokens) and tokens[end][1]:
            joined = f"{joined}.{tokens[end][0]}"
            end += 1
            candidates.append((joined, end))
    for key, next_index in candidates:
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
                return value_node, key_node.start_mark, next_index
    return None
