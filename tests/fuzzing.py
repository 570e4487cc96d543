"""Helpers the structure-aware fuzz tests share: where in a document a hostile value can go."""

from __future__ import annotations

from typing import Any

NodePath = tuple[Any, ...]
"""Keys and indexes from a document's root to one of its nodes."""


def node_paths(node: Any, prefix: NodePath = ()) -> list[NodePath]:
    """Every node's path (keys and indexes), parents before children, ``prefix`` (the root) included."""
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += node_paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += node_paths(value, (*prefix, index))
    return found
