"""Kubernetes objects as the source holds them: a raw body plus where it came from and who it is."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nova_gitops.api.problems import SourceLocation

Body = dict[str, Any]
"""A raw Kubernetes object as YAML loads it. Treated as immutable once loaded: copy-on-write only."""


@dataclass(frozen=True, slots=True)
class Document:
    """One YAML document of a source file, before it is classified. ``body`` is whatever the YAML held."""

    body: Any
    location: SourceLocation


@dataclass(frozen=True, slots=True, order=True)
class ObjectKey:
    """Identity of an object: API group ("" for core), kind, namespace ("" when cluster-scoped), name."""

    group: str
    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        kind = f"{self.kind}.{self.group}" if self.group else self.kind
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{kind}/{where}{self.name}"


def split_api_version(api_version: str) -> tuple[str, str]:
    """``"apps/v1"`` → ``("apps", "v1")``; ``"v1"`` → ``("", "v1")``."""
    group, _, version = api_version.rpartition("/")
    return group, version


@dataclass(frozen=True, slots=True)
class Manifest:
    """A validated workload object of the source.

    ``namespace`` is resolved: "" for cluster-scoped kinds, the source's default namespace (``-n``, else
    ``"default"``) for a namespaced object that names none (as kubectl does).
    ``body`` is the object as loaded and is never mutated.
    """

    body: Body
    location: SourceLocation
    api_version: str
    kind: str
    name: str
    namespace: str
    namespaced: bool
    scope_note: str | None = None  # what was assumed about a kind no CRD of the source describes (explain)

    @property
    def group(self) -> str:
        return split_api_version(self.api_version)[0]

    @property
    def version(self) -> str:
        return split_api_version(self.api_version)[1]

    @property
    def key(self) -> ObjectKey:
        return ObjectKey(self.group, self.kind, self.namespace, self.name)

    @property
    def metadata(self) -> Mapping[str, Any]:
        metadata = self.body.get("metadata")
        return metadata if isinstance(metadata, dict) else {}

    @property
    def labels(self) -> Mapping[str, str]:
        labels = self.metadata.get("labels")
        return labels if isinstance(labels, dict) else {}

    @property
    def annotations(self) -> Mapping[str, str]:
        annotations = self.metadata.get("annotations")
        return annotations if isinstance(annotations, dict) else {}
