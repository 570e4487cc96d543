"""The YAML constructor of ``loading``: libyaml's ``CSafeLoader``, building only what Kubernetes data can be.

- Only Kubernetes data (docs/design.md §9): what the API server sees is JSON, so a value YAML can type but
JSON
  cannot (``!!binary``, ``!!set``, ``!!omap``, ``!!pairs``, an explicit ``!!timestamp``, ``!!python/...``, any
  custom tag) is a Problem at its line rather than bytes or a set that would crash the render later. And an
  unquoted ``2024-01-01T00:00:00Z`` stays that string, as kube's YAML → JSON keeps it; PyYAML would read a
  datetime and write it back as ``2024-01-01 00:00:00+00:00``. So is a bare ``=`` (PyYAML's ``!!value``).
  Numbers JSON cannot carry are Problems too: ``.nan``, ``.inf`` and floats that overflow to them, and
  integers beyond float64's range (kube's JSON decoder refuses them). Integer literals over
  ``MAX_INTEGER_DIGITS`` characters are refused before they are parsed: Python's ``int()`` limits decimal
  conversions to 4,300 digits (it raises ValueError, not a YAML error) because they cost quadratic time.
- Duplicate keys are Problems, at the line of the repeated key, in every mapping at any depth: PyYAML keeps
  the last value silently (``replicas: 3`` then ``replicas: 0`` would render 0), and kubectl refuses such a
  file. Keys that a ``<<`` merge brings in may be overridden, as YAML's merge-key spec says. The check costs
  one length comparison per mapping; the search for the repeated key runs only when the lengths differ.

- Depth is bounded after libyaml composed a document and while it is constructed (``MAX_DEPTH``): the
  renderer's emitter, ``repr``, pickle, ``json`` and ``deepcopy`` go down one or two levels of Python's stack
  per level of the data, and a Widget nested 985 levels in block style (within ``loading``'s text bounds:
  libyaml itself stops at 1,000) crashed ``render`` with RecursionError. PyYAML's constructor builds a
  nested collection empty and fills it in the next round of ``construct_document``'s loop, so counting the
  rounds counts the levels exactly, for one addition a level; aliases, which construct a shared collection
  once, are measured where ``loading`` refuses aliases, so the bound holds for the expanded data.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Hashable
from typing import Any, ClassVar

import yaml

from nova_gitops.api.problems import excerpt

MAX_DEPTH = 256
"""Nested mappings and lists allowed in one document, the root being 1 (generated CRD schemas: ~40-60).
Whatever reads the data recursively must go down this far within Python's default recursion limit of 1,000
frames, on top of the stack of whoever calls it (a render needs ~100 frames before the data, the controller
some more): the emitter, ``repr``, pickle and ``json`` take one frame a level, ``copy.deepcopy`` two, so 256
levels need at most ~512 frames and leave the caller some 400; 512 would leave a one-frame reader that much
and overflow a two-frame one."""
MAX_INTEGER_DIGITS = 400
"""Longer integer literals are refused unparsed: float64 (what kube's JSON holds) ends at 309 digits."""

Node = yaml.Node

YAML_TAG = "tag:yaml.org,2002:"
_JSON_TAGS = tuple(YAML_TAG + name for name in ("str", "int", "float", "bool", "null", "map", "seq"))
_NOT_JSON_RESOLVED = (YAML_TAG + "timestamp", YAML_TAG + "value")


class KubernetesLoader(yaml.CSafeLoader):
    """``CSafeLoader`` that reads only JSON-compatible data: plain scalars never resolve to timestamps
    (they stay strings), and a node with any other tag is recorded in ``foreign_nodes`` and read as None;
    ``load_documents`` turns each into a Problem and drops the document."""

    yaml_implicit_resolvers: dict[Any, Any] = {  # noqa: RUF012 (the stubs declare an instance variable)
        first: [(tag, pattern) for tag, pattern in resolvers if tag not in _NOT_JSON_RESOLVED]
        for first, resolvers in yaml.CSafeLoader.yaml_implicit_resolvers.items()
    }
    yaml_constructors: ClassVar[dict[Any, Any]] = {
        tag: yaml.CSafeLoader.yaml_constructors[tag] for tag in _JSON_TAGS
    }
    yaml_multi_constructors: ClassVar[dict[Any, Any]] = {}

    def __init__(self, stream: str, max_depth: int = MAX_DEPTH) -> None:
        super().__init__(stream)
        self.max_depth = max_depth
        self.foreign_nodes: list[Node] = []
        self.refusals: list[tuple[Node, str]] = []  # (node, why): values that are not Kubernetes data

    def construct_document(self, node: Node) -> Any:
        """``BaseConstructor.construct_document``, refusing a document nested more than ``max_depth`` deep
        (then None, with a refusal at the first collection past it). A collection is built empty where it
        is met and filled by its generator in the next round of this loop, so round N fills the collections
        of level N: the rounds count the depth exactly. Nothing here constructs deep (``deep=True`` would
        fill a collection in the round that met it)."""
        data = self.construct_object(node)
        depth = 0
        while self.state_generators:
            depth += 1
            if depth > self.max_depth:
                self.state_generators = []
                self.refusals.append((past_depth(node, self.max_depth), too_deep(self.max_depth)))
                data = None
                break
            generators, self.state_generators = self.state_generators, []
            for generator in generators:
                for _ in generator:
                    pass
        self.constructed_objects = {}
        self.recursive_objects = {}
        self.deep_construct = False
        return data

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """``SafeConstructor.construct_mapping``, refusing duplicate keys. Fast path: a mapping without merge
        keys (its pair list neither replaced nor shortened by ``flatten_mapping``) has duplicates exactly when
        the dict is shorter than the node's pairs. ``flatten_mapping`` deletes the ``<<`` pairs from the
        node's own list and then assigns a new one (merged + own), so ``pairs`` ends up holding exactly the
        keys written in this mapping: the ones that must be unique."""
        pairs = node.value
        count = len(pairs)
        mapping: dict[Any, Any] = _construct_mapping(self, node, deep)
        if not (node.value is pairs and len(pairs) == count == len(mapping)):
            self._note_duplicates(pairs)
        return mapping

    def _note_duplicates(self, pairs: list[tuple[Node, Node]]) -> None:
        first: dict[Any, Node] = {}
        for key_node, _ in pairs:
            key = self.construct_object(key_node)
            if not isinstance(key, Hashable):
                continue  # construct_mapping has raised "found unhashable key" already
            earlier = first.setdefault(key, key_node)
            if earlier is not key_node:
                why = (
                    f"duplicate key {excerpt(key)} (first at line {earlier.start_mark.line + 1}): "
                    "a mapping may hold each key once; kubectl refuses the file"
                )
                self.refusals.append((key_node, why))

    def construct_json_int(self, node: yaml.ScalarNode) -> int | None:
        """An int, or None with a refusal when it is too long to parse or beyond float64."""
        text = node.value if isinstance(node.value, str) else ""
        if len(text) > MAX_INTEGER_DIGITS:
            self.refusals.append((node, f"integer of {len(text)} characters: {_TOO_LARGE}"))
            return None
        value: int = _construct_int(self, node)
        if abs(value) > sys.float_info.max:
            self.refusals.append((node, f"integer of {len(str(value))} digits: {_TOO_LARGE}"))
            return None
        return value

    def construct_json_float(self, node: yaml.ScalarNode) -> float | None:
        """A float, or None with a refusal for NaN and the infinities."""
        value: float = _construct_float(self, node)
        if not math.isfinite(value):
            why = "NaN and infinities are not JSON numbers (Kubernetes data is JSON); quote it if it is text"
            self.refusals.append((node, why))  # the value is not quoted: it may be a Secret's
            return None
        return value


_construct_mapping = yaml.constructor.SafeConstructor.construct_mapping
_construct_int = yaml.constructor.SafeConstructor.construct_yaml_int
_construct_float = yaml.constructor.SafeConstructor.construct_yaml_float
_TOO_LARGE = "too large for Kubernetes data (a JSON number ends near 1.8e308); quote it if it is text"


def _construct_foreign(loader: KubernetesLoader, node: Node) -> None:
    loader.foreign_nodes.append(node)


KubernetesLoader.yaml_constructors[None] = _construct_foreign
KubernetesLoader.yaml_constructors[YAML_TAG + "int"] = KubernetesLoader.construct_json_int
KubernetesLoader.yaml_constructors[YAML_TAG + "float"] = KubernetesLoader.construct_json_float


def too_deep(max_depth: int) -> str:
    return f"nests mappings and lists more than {max_depth} levels deep; refused"


def past_depth(root: Node, max_depth: int) -> Node:
    """The first collection (in document order) more than ``max_depth`` levels deep under ``root``; the
    error path only (the document was composed, so it is finite; aliases were bounded before)."""
    stack: list[tuple[Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, yaml.CollectionNode):
            continue
        if depth > max_depth:
            return node
        stack.extend((child, depth + 1) for child in reversed(children(node)))
    return root


def short_tag(tag: str) -> str:
    return "!!" + tag[len(YAML_TAG) :] if tag.startswith(YAML_TAG) else tag


def children(node: Node) -> list[Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [child for pair in node.value for child in pair]
    return []


def mapping_value(node: Node, key: str) -> Node | None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
                return value_node  # type: ignore[no-any-return]
    return None
