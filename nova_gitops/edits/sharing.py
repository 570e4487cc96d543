"""Pure: the nodes YAML anchors share in a document, so that an edit never writes through an alias.

``labels: &prod {env: prod}`` in one Cluster and ``labels: *prod`` in another are one mapping once read:
ruamel.yaml keeps it one object, and an edit of the first Cluster's labels would change the second's too
(and a policy's ``matchLabels: *prod``), while the edit looked like one line (issue 21). A merge key
(``<<: *base``) shares the same way: a key it brings in belongs to the anchored mapping. So an edit names
every node it writes into or through (``Route``), and is refused when one of them is used at more than one
place of the document, with the anchor's line and the lines that alias it. An anchor nothing aliases is a
node like any other.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from nova_gitops.edits.splicing import EditError, Part

_CACHE_KEY = "sharing"


class Uses:
    """Where each node of some documents is used: its line (0-based, in the part) at every place."""

    def __init__(self, part: Part) -> None:
        self.lines: dict[int, list[int]] = {}
        self._kept: list[Any] = []  # the nodes counted, so that their ids stay theirs
        if not any("&" in line for line in part.lines):
            return  # no anchor: nothing can be used twice
        stack: list[tuple[Any, int]] = [(document, _line(document)) for document in part.documents]
        while stack:
            node, line = stack.pop()
            if not _tracked(node):
                continue
            uses = self.lines.setdefault(id(node), [])
            uses.append(line)
            if len(uses) > 1:
                continue
            self._kept.append(node)
            stack.extend(_children(node, part))

    @staticmethod
    def of(part: Part) -> Uses:
        """The uses of ``part``'s nodes, worked out once per part."""
        found = part.cache.get(_CACHE_KEY)
        if not isinstance(found, Uses):
            found = part.cache[_CACHE_KEY] = Uses(part)
        return found


class Route:
    """The nodes one edit of one object goes through, each checked not to be shared as it is met."""

    def __init__(self, part: Part, subject: str) -> None:
        self.part = part
        self.subject = subject  # "Cluster c1"
        self.uses = Uses.of(part)

    def through(self, node: Any, name: str) -> Any:
        """``node`` (called ``name`` in messages, "metadata.labels"), refused when shared."""
        lines = self.uses.lines.get(id(node), [])
        if len(lines) > 1:
            first, *others = sorted(lines)
            anchor = _anchor(node) or "?"
            numbers = [str(line + self.part.offset + 1) for line in others]
            places = (
                f"line {numbers[0]} also uses"
                if len(numbers) == 1
                else f"lines {', '.join(numbers[:-1])} and {numbers[-1]} also use"
            )
            raise EditError(
                f"its {name} is shared through the YAML anchor &{anchor}, which {places} "
                f"(*{anchor}, or <<: *{anchor}): the edit would change it in every place; write it out in "
                "full where each uses it, then run again",
                line=first + self.part.offset + 1,
                subject=self.subject,
            )
        return node

    def child(self, mapping: CommentedMap, key: str, name: str) -> Any:
        """``mapping[key]`` (None when absent), through the merged mapping that holds it when a merge key
        brings it in; the merged mapping and the value are checked as ``through`` checks."""
        source = _merged_from(mapping, key)
        if source is not None:
            self.through(source, f"{name} (from a merge key <<)")
        value = mapping.get(key)
        return self.through(value, name) if _tracked(value) else value

    def owns(self, mapping: CommentedMap, key: str, name: str) -> None:
        """Refuse to remove ``key`` when a merge key brings it into ``mapping``: removing it there would not
        remove it."""
        if _merged_from(mapping, key) is not None:
            raise EditError(
                f"its {name} comes from a merge key (<<) at line "
                f"{_line(mapping) + self.part.offset + 1}: remove it where the merged mapping is written",
                line=_line(mapping) + self.part.offset + 1,
                subject=self.subject,
            )


def _merged_from(mapping: CommentedMap, key: str) -> CommentedMap | None:
    """The merged mapping ``key`` of ``mapping`` comes from, when a merge key brings it in."""
    merged = getattr(mapping, "merge", None)
    if not merged or key not in mapping or key in dict(mapping.non_merged_items()):
        return None
    for source in merged:
        if key in source:
            return source if isinstance(source, CommentedMap) else None
    return None


def _tracked(node: Any) -> bool:
    """A node that can be used at several places: a collection, or a scalar with an anchor."""
    return isinstance(node, CommentedMap | CommentedSeq) or _anchor(node) is not None


def _anchor(node: Any) -> str | None:
    anchored = getattr(node, "yaml_anchor", None)
    anchor = anchored() if callable(anchored) else None
    value = getattr(anchor, "value", None)
    return value if isinstance(value, str) else None


def _line(node: Any) -> int:
    position = getattr(node, "lc", None)
    line = getattr(position, "line", None)
    return line if isinstance(line, int) else 0


def _children(node: Any, part: Part) -> Iterator[tuple[Any, int]]:
    """Each node ``node`` holds, with the line of the place that holds it."""
    if isinstance(node, CommentedSeq):
        for index, item in enumerate(node):
            yield item, _position(node, index)
        return
    if not isinstance(node, CommentedMap):
        return
    merged = getattr(node, "merge", None)
    items = node.non_merged_items() if merged else node.items()
    for key, value in items:
        yield value, _position(node, key)
    for source in merged or ():
        yield source, _merge_line(node, part)


def _position(node: CommentedMap | CommentedSeq, at: Any) -> int:
    try:
        line = node.lc.item(at)[0] if isinstance(node, CommentedSeq) else node.lc.key(at)[0]
    except (KeyError, IndexError, TypeError):
        return _line(node)
    return line if isinstance(line, int) else _line(node)


def _merge_line(node: CommentedMap, part: Part) -> int:
    """The line of ``node``'s merge key, which ruamel does not record: the ``<<`` line at the mapping's
    column between the keys written before and after it (``merge_pos`` is its place among the keys)."""
    keys = [key for key, _ in node.non_merged_items()]
    place = getattr(node.merge, "merge_pos", 0)
    start = _position(node, keys[place - 1]) if 0 < place <= len(keys) else _line(node)
    end = _position(node, keys[place]) if 0 <= place < len(keys) else len(part.lines) - 1
    column = getattr(node.lc, "col", None)
    for number in range(start, min(end, len(part.lines) - 1) + 1):
        line = part.lines[number]
        stripped = line.lstrip(" -")
        at_column = column is None or len(line) - len(stripped) == column
        if at_column and stripped.startswith("<<") and stripped[2:].lstrip().startswith(":"):
            return number
    return start
