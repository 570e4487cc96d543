"""Kubernetes label selectors (matchLabels + matchExpressions) with kube-apiserver semantics.

Operators: In, NotIn, Exists, DoesNotExist. NotIn and DoesNotExist match when the key is absent. An empty
selector matches everything. Requirements are ANDed.

Why validate as strictly as the API server: a selector that kube-apiserver would refuse is a policy that Nova
would never have accepted, and a selector that silently matches something else (a YAML ``true`` where the
label is the text ``"true"``) moves workloads to the wrong clusters. Every defect is reported, each with the
field it is in (``spec.clusterSelector.matchExpressions[0].operator``), so one run shows them all.

The name checks (``is_qualified_name`` and friends) follow ``k8s.io/apimachinery/pkg/util/validation`` and
are shared with the other validators of this package.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from nova_gitops.api.problems import (
    UNKNOWN_FIELD_REJECTED,
    Problem,
    Severity,
    SourceLocation,
    described,
    excerpt,
    quote_hint,
)

Operator = Literal["In", "NotIn", "Exists", "DoesNotExist"]
OPERATORS: tuple[Operator, ...] = get_args(Operator)

_DNS1123_LABEL = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL)
_DNS1123_SUBDOMAIN_RE = re.compile(rf"{_DNS1123_LABEL}(?:\.{_DNS1123_LABEL})*")
_NAME_RE = re.compile(r"[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?")
_LABEL_VALUE_RE = re.compile(r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?")


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.operator == "In":
            return self.key in labels and labels[self.key] in self.values
        if self.operator == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if self.operator == "Exists":
            return self.key in labels
        return self.key not in labels  # DoesNotExist


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """matchLabels are folded into In requirements of one value, in source order, before expressions."""

    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(requirement.matches(labels) for requirement in self.requirements)

    @property
    def is_empty(self) -> bool:
        return not self.requirements


# --- names -----


def is_dns1123_label(text: str) -> bool:
    """A DNS-1123 label (a Namespace name): lower-case alphanumerics and '-', at most 63 characters."""
    return len(text) <= 63 and _DNS1123_LABEL_RE.fullmatch(text) is not None


def is_dns1123_subdomain(text: str) -> bool:
    """A DNS-1123 subdomain (most object names): dot-separated DNS-1123 labels, at most 253 characters."""
    return len(text) <= 253 and _DNS1123_SUBDOMAIN_RE.fullmatch(text) is not None


def is_qualified_name(text: str) -> bool:
    """A label or annotation key: ``[prefix/]name``, prefix a DNS-1123 subdomain, name at most 63."""
    return not qualified_name_errors(text)


def qualified_name_errors(text: str) -> list[str]:
    """Why ``text`` is not a qualified name (empty when it is), in the API server's words."""
    prefix, slash, name = text.rpartition("/")
    errors: list[str] = []
    if slash:
        if not prefix:
            errors.append("prefix part must be non-empty")
        elif not is_dns1123_subdomain(prefix):
            errors.append(
                "prefix part must be a lowercase DNS-1123 subdomain of at most 253 characters "
                "(e.g. 'example.com')"
            )
        if "/" in prefix:
            errors.append("a qualified name has at most one '/'")
    if not name:
        errors.append("name part must be non-empty")
        return errors
    if len(name) > 63:
        errors.append("name part must be no more than 63 characters")
    if _NAME_RE.fullmatch(name) is None:
        errors.append(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
            "with an alphanumeric character (e.g. 'MyName', 'my.name' or '123-abc')"
        )
    return errors


def label_value_errors(text: str) -> list[str]:
    """Why ``text`` is not a valid label value (empty when it is), in the API server's words."""
    errors: list[str] = []
    if len(text) > 63:
        errors.append("must be no more than 63 characters")
    if _LABEL_VALUE_RE.fullmatch(text) is None:
        errors.append(
            "a label value must be empty or consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character (e.g. 'MyValue', 'my_value' or '12345')"
        )
    return errors


# --- parsing -----


def _at(field: str, child: str) -> str:
    if not field:
        return child.lstrip(".")
    return f"{field}{child}" if child.startswith("[") else f"{field}.{child}"


class _Checker:
    """Appends problems for one selector, all at the selector's document location."""

    def __init__(self, location: SourceLocation, problems: list[Problem]) -> None:
        self.location = location
        self.problems = problems

    def error(self, field: str, message: str) -> None:
        self.problems.append(Problem(self.location, message, field))

    def warning(self, field: str, message: str) -> None:
        self.problems.append(Problem(self.location, message, field, Severity.WARNING))

    def key(self, field: str, key: object) -> str | None:
        if not isinstance(key, str):
            self.error(field, f"a label key must be text, got {described(key)}")
            return None
        reasons = qualified_name_errors(key)
        if reasons:
            self.error(field, f"invalid label key {excerpt(key)}: {'; '.join(reasons)}")
            return None
        return key

    def value(self, field: str, value: object) -> str | None:
        if not isinstance(value, str):
            self.error(field, f"a label value must be text, got {described(value)}{quote_hint(value)}")
            return None
        reasons = label_value_errors(value)
        if reasons:
            self.error(field, f"invalid label value {excerpt(value)}: {'; '.join(reasons)}")
            return None
        return value


def parse_selector(
    raw: Any, location: SourceLocation, field: str, problems: list[Problem], *, strict: bool = False
) -> LabelSelector:
    """Parse a selector mapping; append a Problem for every defect and return what could be parsed.
    ``strict``: an unknown field (``matchLabel``) is an error, not a warning, and so is a null
    ``matchLabels``/``matchExpressions``, since ignoring either would make the selector match everything."""
    if raw is None:
        return LabelSelector()
    check = _Checker(location, problems)
    if not isinstance(raw, Mapping):
        check.error(
            field,
            f"a label selector must be a mapping (matchLabels, matchExpressions), got {described(raw)}",
        )
        return LabelSelector()
    for name in raw:
        if name not in ("matchLabels", "matchExpressions"):
            hint = _suggest(str(name), ("matchLabels", "matchExpressions"))
            if strict:
                check.error(_at(field, str(name)), f"{UNKNOWN_FIELD_REJECTED}{hint}")
            else:
                check.warning(_at(field, str(name)), f"unknown field, ignored{hint}")
        elif strict and raw[name] is None:
            check.error(
                _at(field, str(name)),
                "is null: its entries were lost (to indentation or a comment?); give them, or leave it out",
            )
    requirements = _parse_match_labels(raw.get("matchLabels"), _at(field, "matchLabels"), check)
    requirements += _parse_match_expressions(
        raw.get("matchExpressions"), _at(field, "matchExpressions"), check
    )
    return LabelSelector(tuple(requirements))


def _parse_match_labels(raw: object, field: str, check: _Checker) -> list[Requirement]:
    if raw is None:
        return []
    if not isinstance(raw, Mapping):
        check.error(field, f"matchLabels must be a mapping of label key to value, got {described(raw)}")
        return []
    return [Requirement(key, "In", (value,)) for key, value in _check_label_map(raw, field, check).items()]


def _key_field(field: str, key: object) -> str:
    """``metadata.labels.app``, or ``metadata.labels[app.kubernetes.io/name]`` when the key has periods."""
    text = str(key)
    return _at(field, f"[{text}]" if "." in text else text)


@functools.lru_cache(maxsize=4096)
def _valid_key(key: str) -> bool:
    return not qualified_name_errors(key)


@functools.lru_cache(maxsize=65536)
def _valid_value(value: str) -> bool:
    return not label_value_errors(value)


def _check_label_map(raw: Mapping[Any, Any], field: str, check: _Checker) -> dict[str, str]:
    labels: dict[str, str] = {}
    for raw_key, raw_value in raw.items():
        if (
            type(raw_key) is str
            and type(raw_value) is str
            and _valid_key(raw_key)
            and _valid_value(raw_value)
        ):
            labels[raw_key] = raw_value  # the common case, checked once per distinct key and value
            continue
        entry = _key_field(field, raw_key)
        key = check.key(entry, raw_key)
        value = check.value(entry, raw_value)
        if key is not None and value is not None:
            labels[key] = value
    return labels


def parse_labels(raw: Any, location: SourceLocation, field: str, problems: list[Problem]) -> dict[str, str]:
    """A ``{key: value}`` label map (``metadata.labels``, a Cluster's node labels), validated as the API
    server does; appends a Problem per bad key or value and keeps the good entries. ``None`` is empty."""
    if raw is None:
        return {}
    check = _Checker(location, problems)
    if not isinstance(raw, Mapping):
        check.error(field, f"labels must be a mapping of label key to value, got {described(raw)}")
        return {}
    return _check_label_map(raw, field, check)


def _parse_match_expressions(raw: object, field: str, check: _Checker) -> list[Requirement]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        check.error(
            field, f"matchExpressions must be a list of {{key, operator, values}}, got {described(raw)}"
        )
        return []
    requirements: list[Requirement] = []
    for index, entry in enumerate(raw):
        requirement = _parse_expression(entry, _at(field, f"[{index}]"), check)
        if requirement is not None:
            requirements.append(requirement)
    return requirements


def _parse_expression(raw: object, field: str, check: _Checker) -> Requirement | None:
    if not isinstance(raw, Mapping):
        check.error(
            field, f"a match expression must be a mapping of key, operator, values, got {described(raw)}"
        )
        return None
    for name in raw:
        if name not in ("key", "operator", "values"):
            hint = _suggest(str(name), ("key", "operator", "values"))
            check.warning(_at(field, str(name)), f"unknown field, ignored{hint}")
    key: str | None = None
    if "key" not in raw:
        check.error(_at(field, "key"), "required")
    else:
        key = check.key(_at(field, "key"), raw["key"])
    operator = _parse_operator(raw, field, check)
    values = _parse_values(raw.get("values"), operator, _at(field, "values"), check)
    if key is None or operator is None or values is None:
        return None
    return Requirement(key, operator, values)


def _parse_operator(raw: Mapping[Any, Any], field: str, check: _Checker) -> Operator | None:
    where = _at(field, "operator")
    if "operator" not in raw:
        check.error(where, f"required, one of {', '.join(OPERATORS)}")
        return None
    operator = raw["operator"]
    for known in OPERATORS:
        if operator == known:
            return known
    hint = _suggest(str(operator), OPERATORS)
    check.error(where, f"unknown operator {excerpt(operator)}: must be one of {', '.join(OPERATORS)}{hint}")
    return None


def _parse_values(
    raw: object, operator: Operator | None, field: str, check: _Checker
) -> tuple[str, ...] | None:
    if raw is not None and not isinstance(raw, list):
        check.error(field, f"values must be a list of text, got {described(raw)}")
        return None
    items = raw or []
    if operator in ("Exists", "DoesNotExist") and items:
        check.error(field, f"must be empty when operator is {operator}")
        return None
    if operator in ("In", "NotIn") and not items:
        check.error(field, f"must be non-empty when operator is {operator}")
        return None
    values = [check.value(_at(field, f"[{index}]"), item) for index, item in enumerate(items)]
    if any(value is None for value in values):
        return None
    return tuple(value for value in values if value is not None)


def _suggest(text: str, choices: tuple[str, ...]) -> str:
    """``"; did you mean In?"`` when ``text`` differs from a choice only in case or a plural ``s``, or is a
    near miss (``matchExpresions``)."""
    for choice in choices:
        if text.lower() == choice.lower() or text.lower().rstrip("s") == choice.lower().rstrip("s"):
            return f"; did you mean {choice}?"
    close = difflib.get_close_matches(text, choices, n=1, cutoff=0.8)
    return f"; did you mean {close[0]}?" if close else ""


# --- text form -----


def format_requirement(requirement: Requirement) -> str:
    """kubectl's text form of one requirement: ``app=web``, ``tier in (a,b)``, ``tier notin (a)``, ``x``,
    ``!x``."""
    key, values = requirement.key, requirement.values
    if requirement.operator == "Exists":
        return key
    if requirement.operator == "DoesNotExist":
        return f"!{key}"
    if requirement.operator == "In" and len(values) == 1:
        return f"{key}={values[0]}"
    operator = "in" if requirement.operator == "In" else "notin"
    return f"{key} {operator} ({','.join(values)})"


def format_selector(selector: LabelSelector) -> str:
    """kubectl's text form, e.g. ``app=web,tier in (a,b),!x``; ``""`` for the empty selector (matches all)."""
    return ",".join(format_requirement(requirement) for requirement in selector.requirements)
