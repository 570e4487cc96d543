"""YAML text → Documents, safely and fast, with the line each document starts on.

Why this module exists rather than ``yaml.safe_load_all`` everywhere:

- Speed (docs/design.md §11): a source can hold 100k manifests, and PyYAML's pure-Python loader is several
times
  slower than libyaml. Only ``yaml.CSafeLoader`` is used here; there is no fallback to the Python path.
- Safety (docs/design.md §9): files over 8 MiB are refused, and so are documents whose aliases could expand
without
  bound (more than 64 aliases, a recursive alias, or more than a million nodes once expanded: the
  "billion laughs"). The check walks the node tree only when the file contains an alias token at all, so
  ordinary manifests pay nothing for it.
- Problems name a file and line. Each Document records the 1-based line where its content starts; the finer
  line of a field (``spec.percentageSplit[1].percentage``) is found only on the error path, by
  ``locate_field``, which composes the file again and walks its nodes.

- Nesting is bounded before libyaml sees the text (``nesting_problem``): libyaml's composer recurses in C once
  per level, so some 30,000 nested ``[`` (60 KB) or ``- `` overflow the stack and kill the process with a
  segmentation fault that no exception handler can catch (and deep flow nesting parses in quadratic time).
  Flow depth is counted only when the file holds more brackets than the limit, and block depth is bounded by
  the longest run of indentation and ``- ``/``? ``/``: `` indicators a line starts with, found by one regex
  search for lines that start with more than the limit: ordinary manifests pay two ``str.count`` calls and
  one search.

- Only Kubernetes data, no duplicate keys, and depth bounded while a document is constructed: see
  ``yamlconstructing``.

- What another party writes (an agent's status report) is also bounded in how much it holds, while it is
  read (``Bounds``, ``bounds_problem``): libyaml's events are counted before anything is composed, so a
  collection with too many items, a text with too many values, or nesting too deep is refused at the line
  where it passes the bound, after reading no more than the bound allows. Composing and constructing
  a value in Python costs several times what counting its event does: the cost of a hostile text is set by
  the bound, not by its size. Sources are not bounded this way (a
  source's size is its author's choice; its files are bounded by bytes and nesting).

A ``kind: List`` (``v1``) document is unwrapped into its items, as ``kubectl apply -f`` does.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from nova_gitops.api import fieldpaths, placeholders, yamlconstructing
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import (
    Problem,
    SourceLocation,
    described,
    excerpt,
    quotable_lines,
    quoted_line,
    shortened,
)
from nova_gitops.api.yamlconstructing import MAX_DEPTH, Node

MAX_FILE_BYTES = 8 * 1024 * 1024
MAX_ALIASES = 64
MAX_EXPANDED_NODES = 1_000_000
MAX_FLOW_DEPTH = 512
"""Nested ``[``/``{`` levels allowed in a file (generated CRD schemas nest some 40 levels in all)."""
MAX_LINE_PREFIX = 1024
"""Columns of indentation plus leading block indicators allowed on a line (4-space-indented schemas: ~200)."""
_FLOW_BRACKETS = re.compile(r"[\[\]{}]")
_LINE_PREFIX = re.compile(r"[ \t]*(?:[-?:][ \t]+)*")


def nesting_problem(
    text: str, *, max_flow_depth: int = MAX_FLOW_DEPTH, max_line_prefix: int = MAX_LINE_PREFIX
) -> tuple[int, str] | None:
    """(line, message) when ``text`` nests deeper than libyaml may be asked to compose, else None.

    Over-estimates, never under: brackets inside quoted strings count too, and a line's prefix of indentation
    and block indicators bounds the block collections open on it (each needs a column or an indicator)."""
    if text.count("[") + text.count("{") > max_flow_depth:
        depth = 0
        for match in _FLOW_BRACKETS.finditer(text):
            depth = depth + 1 if match.group() in "[{" else max(depth - 1, 0)
            if depth > max_flow_depth:
                line = text.count("\n", 0, match.start()) + 1
                return line, f"nests [ and {{ more than {max_flow_depth} levels deep; refused"
    wide = re.compile(rf"^[ \t\-?:]{{{max_line_prefix + 1}}}", re.MULTILINE)
    for candidate in wide.finditer(text):
        prefix = _LINE_PREFIX.match(text, candidate.start())
        if prefix is not None and prefix.end() - prefix.start() > max_line_prefix:
            line = text.count("\n", 0, candidate.start()) + 1
            return line, f"indents or nests a line more than {max_line_prefix} columns deep; refused"
    return None


@dataclass(frozen=True, slots=True)
class Bounds:
    """How much one YAML text written by another party may hold (``bounds_problem``)."""

    depth: int
    """Nested collections, block and flow alike (the root mapping is 1)."""
    items: int
    """Items of one list, entries of one mapping."""
    values: int
    """Scalars, aliases and collections in the whole text."""
    line_prefix: int = MAX_LINE_PREFIX
    """Columns of indentation and leading block indicators on a line (``nesting_problem``)."""


REPORT_BOUNDS = Bounds(depth=64, items=20_000, values=400_000, line_prefix=256)
"""What an agent's status report may hold: the controller reads every agent's, an agent its own last one
back (the status branch is shared, so either may have been written by anyone). A report is 6 levels deep
and its lines ~12 columns; 20,000 is the cap on ``workloads`` entries; the agent's own report of 200 nodes
and 12,000 workloads (3.4 MB, near the 4 MiB byte cap) holds about 250,000 values, one of 4 MiB written as
agents write it some 310,000."""

_NODE_EVENTS = (yaml.ScalarEvent, yaml.AliasEvent)


def bounds_problem(text: str, bounds: Bounds) -> tuple[int, str] | None:
    """(line, message) when ``text`` holds more than ``bounds`` allow, else None; reads libyaml's events
    only up to the first value past a bound, and composes nothing.

    The event parser keeps its own stack (no C recursion: only the composer recurses), and deep flow nesting
    is cut at ``bounds.depth`` before it costs anything. A text that is not valid YAML is left to the loader
    to report (its prefix up to the error is within the bounds). Messages name where the collection is, as
    a field path (``status.workloads``)."""
    wide = nesting_problem(text, max_flow_depth=sys.maxsize, max_line_prefix=bounds.line_prefix)
    if wide is not None:
        return wide
    parser = yaml.CBaseLoader(text)
    # One frame per open collection: [is a mapping, values in it so far, the last key read (mappings)].
    stack: list[list[Any]] = []
    values = 0
    try:
        while True:
            event: Any = parser.get_event()  # typed as Event | None; only node events are read below
            kind = type(event)
            if kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                stack.pop()
                continue
            opens = kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent
            if not opens and kind not in _NODE_EVENTS:
                if kind is yaml.StreamEndEvent:
                    return None
                continue  # stream and document starts and ends
            values += 1
            line = event.start_mark.line + 1
            if stack:
                frame = stack[-1]
                count = frame[1] = frame[1] + 1
                if frame[0]:
                    if count % 2:  # a key
                        frame[2] = event.value if kind is yaml.ScalarEvent else "?"
                        if count > 2 * bounds.items:
                            where = _bounded_path(stack[:-1])
                            return line, f"{where}holds more than {bounds.items} entries; refused"
                elif count > bounds.items:
                    where = _bounded_path(stack[:-1])
                    return line, f"{where}holds more than {bounds.items} items; refused"
            if values > bounds.values:
                return line, f"holds more than {bounds.values} values (scalars and collections); refused"
            if opens:
                stack.append([kind is yaml.MappingStartEvent, 0, None])
                if len(stack) > bounds.depth:
                    return line, f"nests collections more than {bounds.depth} levels deep; refused"
    except yaml.YAMLError:
        return None  # the loader reports it, with its line
    finally:
        parser.dispose()


def _bounded_path(frames: list[list[Any]]) -> str:
    """``status.workloads: `` for the collection inside the open ``frames`` (empty for the root)."""
    segments = tuple(key if is_mapping else count - 1 for is_mapping, count, key in frames)
    if not segments:
        return ""
    try:
        return f"{shortened(fieldpaths.format_path(segments))}: "
    except fieldpaths.FieldPathError:  # a key holding both quote characters
        return ""


class YamlRefused(ValueError):
    """A YAML text that is not plain, bounded data (see :func:`load_one`)."""


def load_one(
    data: str | bytes,
    *,
    max_flow_depth: int = MAX_FLOW_DEPTH,
    max_line_prefix: int = MAX_LINE_PREFIX,
    max_depth: int = MAX_DEPTH,
    bounds: Bounds | None = None,
) -> Any:
    """One YAML document as plain data, under the bounds sources have (nesting, ``max_depth``, aliases,
    JSON-only values, no duplicate keys); raises :class:`YamlRefused` saying why not, never anything else.
    For the YAML that is not a source but is written by others all the same: status reports, a rendered
    ``placement.yaml``.
    With ``bounds``, those are checked instead of the nesting limits (``bounds_problem``)."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as error:
        raise YamlRefused(f"not UTF-8 text: {error.reason}") from None
    if len(text) > MAX_FILE_BYTES:
        raise YamlRefused(f"{len(text)} characters, over the {MAX_FILE_BYTES // (1024 * 1024)} MiB limit")
    too_deep = (
        bounds_problem(text, bounds)
        if bounds is not None
        else nesting_problem(text, max_flow_depth=max_flow_depth, max_line_prefix=max_line_prefix)
    )
    if too_deep is not None:
        raise YamlRefused(f"line {too_deep[0]}: {too_deep[1]}")
    loader = yamlconstructing.KubernetesLoader(text, max_depth)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        refusal = _alias_refusal(node, _expanded(bounds), max_depth) if "*" in text else None
        if refusal is not None:
            raise YamlRefused(f"line {node.start_mark.line + 1}: {refusal}")
        value = loader.construct_document(node)
        if loader.foreign_nodes or loader.refusals:
            nodes = [(n, f"tag {excerpt(n.tag)} is not Kubernetes data") for n in loader.foreign_nodes]
            first, why = min([*nodes, *loader.refusals], key=lambda item: item[0].start_mark.line)
            raise YamlRefused(f"line {first.start_mark.line + 1}: {why}")
        return value
    except (yaml.YAMLError, ValueError, RecursionError) as error:
        if isinstance(error, YamlRefused):
            raise
        raise YamlRefused(shortened(str(error))) from None
    finally:
        loader.dispose()


def load_or_none(data: str | bytes | None) -> Any:
    """``load_one`` for input that may be missing or unreadable without that being anyone's error (a
    previous render's file, a rollout record): None then, and the caller starts from nothing."""
    if data is None:
        return None
    try:
        return load_one(data)
    except YamlRefused:
        return None


def load_documents(
    file_name: str, text: str, *, bounds: Bounds | None = None, max_depth: int = MAX_DEPTH
) -> tuple[list[Document], list[Problem]]:
    """The Kubernetes objects of one YAML file, and a Problem for every document that is not one.

    Documents before a YAML syntax error are still returned (the caller fails the render on any error).
    Empty documents are skipped. Every returned Document's body is a mapping with string apiVersion and kind.
    A document nested more than ``max_depth`` levels deep is a Problem at the first collection past it.
    With ``bounds`` (a file another party writes), a text holding more than they allow is refused whole,
    before it is composed (``bounds_problem``, which then stands for the nesting check).
    """
    refused = _refused_whole(file_name, text, bounds)
    if refused is not None:
        return [], [refused]
    problems: list[Problem] = []
    documents: list[Document] = []
    may_alias = "*" in text
    loader = yamlconstructing.KubernetesLoader(text, max_depth)
    try:
        while True:
            try:
                if not loader.check_node():
                    break
                node = loader.get_node()
            except yaml.YAMLError as error:
                problems.append(_marked(file_name, text, _error_mark(error), _error_text(error)))
                break
            if node is None:
                continue
            location = SourceLocation(file_name, node.start_mark.line + 1)
            if may_alias:
                refusal = _alias_refusal(node, _expanded(bounds), max_depth)
                if refusal is not None:
                    problems.append(Problem(location, refusal))
                    continue
            body = _constructed(loader, node, location, text, problems)
            if body is _REFUSED:
                continue
            for item_body, item_line in _unwrap_list(body, node):
                _append_document(documents, problems, item_body, SourceLocation(file_name, item_line))
    finally:
        loader.dispose()
    return documents, problems


def _refused_whole(file_name: str, text: str, bounds: Bounds | None) -> Problem | None:
    """The problem of a file refused before it is composed: too large, or nested too deep (or past
    ``bounds``)."""
    size = len(text) if len(text) * 4 <= MAX_FILE_BYTES else len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_FILE_BYTES:
        message = f"file is {size} bytes, over the {MAX_FILE_BYTES // (1024 * 1024)} MiB limit; split it"
        return Problem(SourceLocation(file_name, 1), message)
    too_deep = nesting_problem(text) if bounds is None else bounds_problem(text, bounds)
    if too_deep is not None:
        return Problem(SourceLocation(file_name, too_deep[0]), too_deep[1])
    return None


_REFUSED = object()
"""What ``_constructed`` gives for a document that is not Kubernetes data (its problems said why)."""


def _constructed(
    loader: yamlconstructing.KubernetesLoader,
    node: Node,
    location: SourceLocation,
    text: str,
    problems: list[Problem],
) -> Any:
    """The data of a composed document, or ``_REFUSED`` with a problem at each value that is not
    Kubernetes data."""
    file_name = location.file
    try:
        body = loader.construct_document(node)
    except yaml.YAMLError as error:
        problems.append(_marked(file_name, text, _error_mark(error), _error_text(error), location.line))
        loader.foreign_nodes.clear()  # this document's, not the next one's
        loader.refusals.clear()
        return _REFUSED
    if loader.foreign_nodes or loader.refusals:
        refused = [
            (foreign, f"{yamlconstructing.short_tag(foreign.tag)} is not Kubernetes data (use a string)")
            for foreign in loader.foreign_nodes
        ] + loader.refusals
        problems += [
            _marked(file_name, text, refused_node.start_mark, why)
            for refused_node, why in sorted(refused, key=lambda pair: pair[0].start_mark.index)
        ]
        loader.foreign_nodes.clear()
        loader.refusals.clear()
        return _REFUSED
    return body


def _append_document(
    documents: list[Document], problems: list[Problem], body: Any, location: SourceLocation
) -> None:
    if body is None:
        return
    if not isinstance(body, dict):
        problems.append(Problem(location, f"a Kubernetes object must be a mapping, not {described(body)}"))
        return
    defects = [
        f"{key} is required" if key not in body else f"{key} must be a string"
        for key in ("apiVersion", "kind")
        if not isinstance(body.get(key), str) or not body[key]
    ]
    if defects:
        problems.append(Problem(location, "; ".join(defects) + " (every Kubernetes object has both)"))
        return
    documents.append(Document(body, location))


def _unwrap_list(body: Any, node: Node) -> Iterator[tuple[Any, int]]:
    """``(body, line)`` of each object: the document itself, or each item of a ``v1`` ``List``."""
    line = node.start_mark.line + 1
    items = body.get("items") if isinstance(body, dict) else None
    if not (
        isinstance(body, dict)
        and body.get("apiVersion") == "v1"
        and body.get("kind") == "List"
        and isinstance(items, list)
    ):
        yield body, line
        return
    item_nodes = yamlconstructing.mapping_value(node, "items")
    lines = (
        [item.start_mark.line + 1 for item in item_nodes.value]
        if isinstance(item_nodes, yaml.SequenceNode)
        else []
    )
    for index, item in enumerate(items):
        yield item, lines[index] if index < len(lines) else line


def _expanded(bounds: Bounds | None) -> int:
    """How many nodes a document may expand to through its aliases: with ``bounds``, no more values than
    they allow (an alias counts one value where it is written, and its expansion is what readers walk)."""
    return MAX_EXPANDED_NODES if bounds is None else min(bounds.values, MAX_EXPANDED_NODES)


def _alias_refusal(
    root: Node,
    max_nodes: int = MAX_EXPANDED_NODES,
    max_depth: int = MAX_DEPTH,
) -> str | None:
    """Why a document's aliases are refused, or None. Counts alias references (a node met again), detects
    recursion, and measures the size and the depth the document would have with every alias expanded (the
    constructor, which builds an aliased collection once, counts only the depth where it is written)."""
    sizes: dict[int, int] = {}
    depths: dict[int, int] = {}
    on_path: set[int] = set()
    aliases = 0
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            on_path.discard(key)
            children = yamlconstructing.children(node)
            sizes[key] = min(1 + sum(sizes[id(child)] for child in children), max_nodes + 1)
            if isinstance(node, yaml.CollectionNode):
                depths[key] = 1 + max((depths[id(child)] for child in children), default=0)
            else:
                depths[key] = 0
            continue
        if key in sizes:
            aliases += 1
            if aliases > MAX_ALIASES:
                return (
                    f"document has more than {MAX_ALIASES} YAML aliases; refused (alias expansion is bounded)"
                )
            continue
        if key in on_path:
            return "document has a recursive YAML alias; refused"
        on_path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in yamlconstructing.children(node))
    if sizes[id(root)] > max_nodes:
        return f"document's YAML aliases expand to more than {max_nodes} nodes; refused"
    if depths[id(root)] > max_depth:
        return f"document's YAML aliases nest mappings and lists more than {max_depth} levels deep; refused"
    return None


def _error_mark(error: yaml.YAMLError) -> yaml.Mark | None:
    mark: yaml.Mark | None = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    return mark


def _marked(
    file_name: str, text: str, mark: yaml.Mark | None, message: str, default_line: int = 1
) -> Problem:
    """A problem at ``mark``'s line and column, quoting that line (``Problem.pointed``); at
    ``default_line`` without a column when there is no mark."""
    if mark is None:
        return Problem(SourceLocation(file_name, default_line), message)
    line = mark.line + 1
    quoted = quoted_line(quotable_lines(text), line)  # the error path: a file has few such problems
    problem = Problem(SourceLocation(file_name, line), message, column=mark.column + 1, quoted=quoted)
    return placeholders.noted(problem)  # `values: [${A}]` is not YAML: a template's ${VAR} says so first


def _error_text(error: yaml.YAMLError) -> str:
    if isinstance(error, yaml.MarkedYAMLError):
        parts = [part for part in (error.context, error.problem) if part]
        return "invalid YAML: " + ", ".join(parts) if parts else "invalid YAML"
    return f"invalid YAML: {error}"


# --- error path: find the line of a field -------------------------------------------------------------------
