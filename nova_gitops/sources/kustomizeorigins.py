"""Where an object kustomize built came from: its original file, and the line its document starts on.

Problems point at the original file: the top kustomization is built from a temporary copy with
``buildMetadata: [originAnnotations]`` added (the user's files are never edited), kustomize then records in
``config.kubernetes.io/origin`` the ``path`` an object came from (relative to the kustomization) or, for a
generated object, the kustomization that ``configuredIn``. The object is found in its file by kind and name
for its line; what cannot be placed more finely points at line 1 of the file named. The annotation is
removed again unless the user asked for it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from typing import Any

from nova_gitops.api import loading
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import SourceLocation
from nova_gitops.sources.reading import Reader, Refused

ORIGIN_ANNOTATION = "config.kubernetes.io/origin"


def origin(body: Any, *, remove: bool) -> dict[str, Any]:
    """The parsed ``config.kubernetes.io/origin`` of ``body`` (empty when absent), removed when asked."""
    metadata = body.get("metadata") if isinstance(body, dict) else None
    if not isinstance(metadata, dict):
        return {}
    annotations = metadata.get("annotations")
    if not isinstance(annotations, dict) or ORIGIN_ANNOTATION not in annotations:
        return {}
    text = annotations[ORIGIN_ANNOTATION]
    if remove:
        del annotations[ORIGIN_ANNOTATION]
        if not annotations:
            del metadata["annotations"]
    try:
        origin = loading.load_one(text) if isinstance(text, str) else None
    except loading.YamlRefused:
        return {}
    return origin if isinstance(origin, dict) else {}


_GENERATOR_KEYS = {"ConfigMapGenerator": "configMapGenerator", "SecretGenerator": "secretGenerator"}


class Locator:
    """Where a built object came from: its original file and the line its document starts on."""

    def __init__(self, reader: Reader, texts: dict[str, str]) -> None:
        self._reader = reader
        self._texts = texts
        self._documents: dict[str, list[Document]] = {}

    def locate(
        self, directory: str, fallback: SourceLocation, origin: Mapping[str, Any], body: Any
    ) -> SourceLocation:
        """Where ``body``, built by the kustomization of ``directory``, came from (its ``origin``);
        ``fallback`` when the origin says nowhere of the source."""
        path = origin.get("path")
        if isinstance(path, str) and not origin.get("repo"):
            name = posixpath.normpath(posixpath.join(directory, path))
            documents = self._documents_of(name)
            if documents is not None:
                return SourceLocation(name, self._line(documents, body))
            return SourceLocation(name, 1)
        configured = origin.get("configuredIn")
        if isinstance(configured, str) and not origin.get("repo"):
            name = posixpath.normpath(posixpath.join(directory, configured))
            text = self._text(name)
            by = origin.get("configuredBy")
            key = _GENERATOR_KEYS.get(by.get("kind", "")) if isinstance(by, dict) else None
            return SourceLocation(name, _key_line(text, key) if text and key else 1)
        return fallback

    def _text(self, name: str) -> str | None:
        if name in self._texts:
            return self._texts[name]
        try:
            text: str = self._reader.read(name).decode("utf-8")
        except (Refused, OSError, UnicodeDecodeError):
            return None
        self._texts[name] = text
        return text

    def _documents_of(self, name: str) -> list[Document] | None:
        if name not in self._documents:
            text = self._text(name)
            self._documents[name] = loading.load_documents(name, text)[0] if text is not None else []
        return self._documents[name] or None

    @staticmethod
    def _line(documents: Sequence[Document], body: Any) -> int:
        """The line of the document with the built object's kind and name; else of the only one of its
        kind; else the file's first document (a prefix or suffix renamed it)."""
        kind = body.get("kind") if isinstance(body, dict) else None
        name = _name(body)
        same_kind = [doc for doc in documents if isinstance(doc.body, dict) and doc.body.get("kind") == kind]
        named = [doc for doc in same_kind if _name(doc.body) == name]
        if named:
            return named[0].location.line
        if len(same_kind) == 1:
            return same_kind[0].location.line
        return documents[0].location.line


def _name(body: Any) -> object:
    metadata = body.get("metadata") if isinstance(body, dict) else None
    return metadata.get("name") if isinstance(metadata, dict) else None


def _key_line(text: str, key: str) -> int:
    match = re.search(rf"^{re.escape(key)}\s*:", text, re.MULTILINE)
    return text.count("\n", 0, match.start()) + 1 if match else 1
