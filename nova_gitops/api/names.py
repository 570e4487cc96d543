"""Names of things in problems and in Kubernetes, and the small checker every parser here reports through.

Every Problem names the field it is about with a path a user can read and ``fieldlines.locate_field`` can
follow back to a line: dotted keys, ``[n]`` for list items, and brackets for keys that are not plain words
(``labels[app.kubernetes.io/name]``, quoted only when needed: ``['odd]key']``). This is the Kubernetes
field-path syntax of docs/design.md §3, so one grammar serves overrides and error messages alike.

The DNS-1123 and label-syntax checks live in ``selectors``; here are the two rules of kube-apiserver they do
not cover: DNS-1035 labels (Service names) and path-segment names (RBAC objects, whose names may hold ``:``).

``Fields`` is how policies, clusters and workloads report: one wording for "required", "must be text, got
the number 5; quote it", "unknown field, ignored; did you mean ...?" — the wording ``selectors`` uses too.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from nova_gitops.api import selectors
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import (
    UNKNOWN_FIELD_REJECTED,
    Problem,
    Severity,
    SourceLocation,
    described,
    excerpt,
    quote_hint,
)

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?\Z")


def child(base: str, key: str | int) -> str:
    """The path of ``key`` inside ``base``: ``child("spec", "priority")`` → ``spec.priority``,
    ``child("a", 1)`` → ``a[1]``, ``child("labels", "x.io/y")`` → ``labels[x.io/y]`` (as ``selectors`` names
    label keys), quoted only when the key holds a bracket or a quote."""
    if isinstance(key, int):
        return f"{base}[{key}]"
    if _PLAIN_KEY.match(key):
        return f"{base}.{key}" if base else key
    if "]" not in key and "'" not in key and '"' not in key:
        return f"{base}[{key}]"
    quoted = key.replace("\\", "\\\\").replace("'", "\\'")
    return f"{base}['{quoted}']"


def is_dns1035_label(name: str) -> bool:
    """A DNS-1035 label: what kube-apiserver requires of Service names (starts with a letter)."""
    return len(name) <= 63 and _DNS1035_LABEL.match(name) is not None


def path_segment_problem(name: str) -> str | None:
    """Why ``name`` cannot be a path segment (kube-apiserver's rule for RBAC names), or None when it can."""
    if name in (".", ".."):
        return f"may not be {excerpt(name)}"
    for forbidden in ("/", "%"):
        if forbidden in name:
            return f"may not contain {excerpt(forbidden)}"
    if len(name) > 253:
        return "must be no more than 253 characters"
    return None


def suggestion(unknown: str, known: Iterable[str]) -> str:
    """``"; did you mean spreadConstraints?"`` for a near miss, else ``""``."""
    close = difflib.get_close_matches(unknown, list(known), n=1, cutoff=0.75)
    if not close:
        lowered = unknown.lower()
        close = [name for name in known if name.lower() == lowered]
        # the first in name order, so the hint does not hang on the order a field list happens to have
        prefixed = (name for name in known if len(lowered) >= 4 and name.lower().startswith(lowered))
        close = close or sorted(prefixed)
    return f"; did you mean {close[0]}?" if close else ""


OBJECT_META_FIELDS: Final = frozenset(
    {
        "name", "generateName", "namespace", "labels", "annotations", "uid", "resourceVersion", "generation",
        "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "selfLink",
        "finalizers", "ownerReferences",
    }
)  # fmt: skip
"""The fields of Kubernetes ObjectMeta: never "unknown" in a document's metadata."""

SYSTEM_NAMESPACES: Final = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
"""Namespaces every cluster has and owns. nova-gitops never renders them as Namespace objects to apply,
neither from the source (a Namespace object with one of these names is an error) nor to follow an object
there: an agent would come to own, and could prune, the namespace the cluster itself runs in."""


@dataclass(slots=True)
class Fields:
    """Checks the fields of one document, appending a Problem (at the document's location, naming the field)
    for each defect. ``ok`` turns False at the first error, so a parser can return None for a document it
    could not use while still reporting everything wrong with it.

    ``strict`` makes unknown fields errors, in selectors too: for our own kinds (SchedulePolicy), where
    ``kubectl apply``'s strict field validation would reject them against Nova's CRD and where an ignored
    typo (``clusterSelecter``) would widen a policy to every cluster. Workloads and Clusters are not ours to
    judge: there an unknown field stays a warning."""

    location: SourceLocation
    problems: list[Problem]
    ok: bool = True
    strict: bool = False

    def error(self, field: str, message: str) -> None:
        self.ok = False
        self.problems.append(Problem(self.location, message, field or None))

    def warning(self, field: str, message: str) -> None:
        self.problems.append(Problem(self.location, message, field or None, Severity.WARNING))

    def unknown(self, raw: Mapping[Any, Any], field: str, known: Collection[str]) -> None:
        """A warning (an error when ``strict``) for every key of ``raw`` not in ``known``."""
        for key in raw:
            if key not in known:
                hint = suggestion(str(key), known)
                if self.strict:
                    self.error(child(field, str(key)), f"{UNKNOWN_FIELD_REJECTED}{hint}")
                else:
                    self.warning(child(field, str(key)), f"unknown field, ignored{hint}")

    def mapping(self, raw: object, field: str, *, required: bool = False) -> dict[Any, Any] | None:
        """``raw`` when it is a mapping; None (with an error when required or not a mapping) otherwise."""
        if isinstance(raw, dict):
            return raw
        if raw is None:
            if required:
                self.error(field, "required")
            return None
        self.error(field, f"must be a mapping, got {described(raw)}")
        return None

    def sequence(self, raw: object, field: str, what: str) -> list[Any]:
        """``raw`` when it is a list (an absent field is an empty list); an error otherwise."""
        if raw is None:
            return []
        if isinstance(raw, list):
            return raw
        self.error(field, f"must be a list of {what}, got {described(raw)}")
        return []

    def text(self, raw: object, field: str, *, required: bool = False) -> str | None:
        """``raw`` when it is a string; None (with an error when required or not a string) otherwise."""
        if isinstance(raw, str):
            return raw
        if raw is None:
            if required:
                self.error(field, "required")
            return None
        self.error(field, f"must be text, got {described(raw)}{quote_hint(raw)}")
        return None

    def name(self, raw: object, field: str) -> str | None:
        """A required DNS-1123 subdomain (the name of most objects, and of every cluster and policy)."""
        text = self.text(raw, field, required=True)
        if text is None:
            return None
        if not selectors.is_dns1123_subdomain(text):
            self.error(field, f"{excerpt(text)} is not a valid name: {DNS1123_SUBDOMAIN_RULE}")
            return None
        return text

    def labels(self, raw: object, field: str) -> dict[str, str]:
        """A label map, checked by ``selectors.parse_labels``; the valid entries are returned."""
        if raw is None:
            return {}
        mark = len(self.problems)
        labels = selectors.parse_labels(raw, self.location, field, self.problems)
        self.note_errors_since(mark)
        return labels

    def selector(self, raw: object, field: str) -> selectors.LabelSelector | None:
        """A label selector, checked by ``selectors.parse_selector``; None when absent."""
        if raw is None:
            return None
        mark = len(self.problems)
        selector = selectors.parse_selector(raw, self.location, field, self.problems, strict=self.strict)
        self.note_errors_since(mark)
        return selector

    def note_errors_since(self, mark: int) -> None:
        """Turn ``ok`` False when a helper outside this class appended an error after ``len(problems)`` was
        ``mark`` (looking only at the new problems keeps a 100k-document source linear)."""
        if any(problem.is_error for problem in self.problems[mark:]):
            self.ok = False

    def annotations(self, raw: object, field: str) -> dict[str, str]:
        """An annotation map: qualified-name keys and text values; the valid entries are returned."""
        mapping = self.mapping(raw, field)
        if mapping is None:
            return {}
        valid: dict[str, str] = {}
        for key, value in mapping.items():
            if isinstance(key, str) and isinstance(value, str) and not _key_errors(key):
                valid[key] = value  # the common case, kept cheap: sources hold 100k objects
                continue
            where = child(field, str(key))
            if not isinstance(key, str):
                self.error(where, f"an annotation key must be text, got {described(key)}")
            elif _key_errors(key):
                self.error(where, f"invalid annotation key {excerpt(key)}: {'; '.join(_key_errors(key))}")
            else:
                hint = quote_hint(value)
                self.error(where, f"an annotation value must be text, got {described(value)}{hint}")
        return valid


@functools.lru_cache(maxsize=4096)
def _key_errors(key: str) -> tuple[str, ...]:
    """``selectors.qualified_name_errors``, cached: the same few annotation keys recur on every object."""
    return tuple(selectors.qualified_name_errors(key))


DNS1123_SUBDOMAIN_RULE: Final = (
    "at most 253 lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
)
DNS1035_LABEL_RULE: Final = (
    "at most 63 lower-case letters, digits and '-', starting with a letter and ending with a letter or digit"
)
DNS1123_LABEL_RULE: Final = (
    "at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit"
)


@dataclass(frozen=True, slots=True)
class OwnDocument:
    """The head of a document of one of our strict kinds (PodControllerShape, RolloutStrategy): its checker,
    its validated name and its ``spec`` (empty when missing, which is an error)."""

    check: Fields
    name: str | None
    spec: dict[Any, Any]


def read_own_document(
    document: Document, problems: list[Problem], top_fields: Collection[str], spec_fields: Collection[str]
) -> OwnDocument:
    """Check the fields every one of our kinds has, strictly (unknown fields are errors with a "did you
    mean"): top-level, metadata, the name, and that ``spec`` is a mapping of known fields."""
    check = Fields(document.location, problems, strict=True)
    body = document.body if isinstance(document.body, dict) else {}
    check.unknown(body, "", top_fields)
    metadata = check.mapping(body.get("metadata"), "metadata", required=True) or {}
    check.unknown(metadata, "metadata", OBJECT_META_FIELDS)
    name = check.name(metadata.get("name"), "metadata.name")
    spec = check.mapping(body.get("spec"), "spec", required=True) or {}
    check.unknown(spec, "spec", spec_fields)
    return OwnDocument(check, name, spec)
