"""Identity of the objects the agent handles, and the digest that says whether one changed.

The agent keeps raw Kubernetes objects as ``dict`` bodies (they come straight from YAML or JSON), and names
them with an :class:`ObjectRef`. Identity (:attr:`ObjectRef.key`) leaves out the API *version*: an object
re-rendered as ``apps/v1`` instead of ``apps/v1beta2`` is the same object and must be updated, not pruned
and re-created.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

Body = dict[str, Any]
"""A raw Kubernetes object."""

ObjectKey = tuple[str, str, str, str]
"""(group, kind, namespace, name): the identity of an object across API versions."""


@dataclass(frozen=True, slots=True, order=True)
class ObjectRef:
    """Which object: apiVersion, kind, namespace ("" when cluster-scoped) and name."""

    api_version: str
    kind: str
    namespace: str
    name: str

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def key(self) -> ObjectKey:
        return (self.group, self.kind, self.namespace, self.name)

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"

    def as_dict(self) -> dict[str, str]:
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
        }


class BodyError(ValueError):
    """A manifest that lacks what every Kubernetes object needs (apiVersion, kind, metadata.name)."""


def ref_of(body: Mapping[str, Any]) -> ObjectRef:
    """The reference of a body as it names itself; raises :class:`BodyError` when it cannot name itself."""
    if not isinstance(body, Mapping):
        raise BodyError("not a Kubernetes object (a mapping with apiVersion, kind and metadata)")
    api_version, kind = body.get("apiVersion"), body.get("kind")
    metadata = body.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    namespace = metadata.get("namespace", "") if isinstance(metadata, Mapping) else ""
    missing = [
        field
        for field, value in (("apiVersion", api_version), ("kind", kind), ("metadata.name", name))
        if not isinstance(value, str) or not value
    ]
    if missing:
        raise BodyError(f"missing {', '.join(missing)}")
    if not isinstance(namespace, str):
        raise BodyError("metadata.namespace is not a string")
    return ObjectRef(str(api_version), str(kind), namespace, str(name))


def labels_of(body: Mapping[str, Any]) -> Mapping[str, str]:
    metadata = body.get("metadata")
    labels = metadata.get("labels") if isinstance(metadata, Mapping) else None
    return labels if isinstance(labels, Mapping) else {}


def annotations_of(body: Mapping[str, Any]) -> Mapping[str, str]:
    metadata = body.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    return annotations if isinstance(annotations, Mapping) else {}


def digest_of(body: Mapping[str, Any]) -> str:
    """A stable digest of a manifest: equal for equal content whatever the key order."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def with_namespace(body: Body, namespace: str) -> Body:
    """A copy of ``body`` whose metadata names ``namespace`` (only the dicts on the path are copied)."""
    metadata = dict(body.get("metadata") or {})
    metadata["namespace"] = namespace
    return {**body, "metadata": metadata}
