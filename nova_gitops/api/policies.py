"""SchedulePolicy (``policy.elotl.co/v1alpha1``) as validated data."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from nova_gitops.api import fieldpaths, labels, names
from nova_gitops.api.objects import Document, Manifest
from nova_gitops.api.problems import Problem, SourceLocation, described, excerpt, name_subject
from nova_gitops.api.selectors import (
    LabelSelector,
    Requirement,
    label_value_errors,
    qualified_name_errors,
)

SpreadMode = Literal["Divide", "Duplicate"]


@dataclass(frozen=True, slots=True)
class GroupVersionKind:
    group: str
    version: str  # "" matches any version
    kind: str


@dataclass(frozen=True, slots=True)
class PercentageSplit:
    topology_value: str
    percentage: int


@dataclass(frozen=True, slots=True)
class FieldOverride:
    path: fieldpaths.FieldPath
    value: Any  # the staticValue, with its YAML type


@dataclass(frozen=True, slots=True)
class ResourceOverride:
    kind: str
    api_version: str
    name: str
    namespace: str | None
    fields: tuple[FieldOverride, ...]


@dataclass(frozen=True, slots=True)
class Override:
    topology_value: str
    resources: tuple[ResourceOverride, ...]


@dataclass(frozen=True, slots=True)
class SpreadConstraints:
    mode: SpreadMode
    topology_key: str
    percentage_split: tuple[PercentageSplit, ...]
    overrides: tuple[Override, ...]


@dataclass(frozen=True, slots=True)
class ResourceSelectors:
    label_selectors: tuple[LabelSelector, ...]  # any one must match; empty tuple matches everything
    kinds: tuple[GroupVersionKind, ...]  # empty: every kind


@dataclass(frozen=True, slots=True)
class SchedulePolicy:
    name: str
    location: SourceLocation
    priority: int
    namespace_selector: LabelSelector | None
    cluster_selector: LabelSelector | None
    ordered_cluster_selector: LabelSelector | None  # tiers follow its first expression's values
    group_by_key: str | None
    spread: SpreadConstraints | None
    resource_selectors: ResourceSelectors


def namespace_labels_of(namespace: str, defined: Mapping[str, Mapping[str, str]]) -> Mapping[str, str]:
    """A Namespace's labels: the source's Namespace object's, or only the implied name label."""
    return defined.get(namespace) or {labels.METADATA_NAME: namespace}


def selects_resource(
    selectors: ResourceSelectors, manifest: Manifest, object_labels: Mapping[str, str] | None = None
) -> bool:
    """Whether ``manifest`` (with ``object_labels`` instead of its own, when given) passes ``kinds`` (when
    given) and any one of ``labelSelectors``."""
    if selectors.kinds and not any(
        kind.kind == manifest.kind
        and kind.group == manifest.group
        and (not kind.version or kind.version == manifest.version)
        for kind in selectors.kinds
    ):
        return False
    if not selectors.label_selectors:
        return True
    found = manifest.labels if object_labels is None else object_labels
    return any(selector.matches(found) for selector in selectors.label_selectors)


def selector_label_keys(found: Iterable[SchedulePolicy]) -> tuple[str, ...]:
    """The label keys any of ``found``'s resource selectors name, sorted."""
    return tuple(
        sorted(
            {
                requirement.key
                for policy in found
                for selector in policy.resource_selectors.label_selectors
                for requirement in selector.requirements
            }
        )
    )


def match_signature(manifest: Manifest, label_keys: Sequence[str]) -> Hashable:
    """What decides whether a policy whose selectors name only ``label_keys`` selects ``manifest``: its kind,
    apiVersion, namespace and its labels at those keys. Objects alike in it are selected alike, so callers
    decide once per signature (hashing raises TypeError for a label value that cannot be hashed)."""
    labels_ = manifest.labels
    return (
        manifest.kind,
        manifest.api_version,
        manifest.namespaced,
        manifest.namespace,
        tuple((key in labels_, labels_.get(key)) for key in label_keys),
    )


def selects(
    policy: SchedulePolicy, manifest: Manifest, namespace_labels: Mapping[str, Mapping[str, str]]
) -> bool:
    """True when ``policy``'s selectors pick ``manifest``: docs/design.md §3 "Matching" (``namespaceSelector``
    on the Namespace's labels, a namespace the source does not define having only its name label; any one of
    ``labelSelectors``; ``kinds`` when given). The one rule: validation uses it to say which policies select
    nothing, the planner (``scheduling.matching``) to place."""
    if (
        manifest.namespaced
        and policy.namespace_selector is not None
        and not policy.namespace_selector.matches(namespace_labels_of(manifest.namespace, namespace_labels))
    ):
        return False
    return selects_resource(policy.resource_selectors, manifest)


def parse_policy(document: Document, problems: list[Problem]) -> SchedulePolicy | None:
    """Validate a SchedulePolicy document. Append a Problem per defect (file:line, the policy's name, the
    field, the message) and return None when the policy cannot be used.

    Strict, as ``kubectl apply`` is against Nova's CRD: an unknown field (``clusterSelecter``) is an error
    with a "did you mean", and so is a null selector, because ignoring either would widen the policy (to
    every cluster, every namespace, every object) without a word."""
    mark = len(problems)
    check = names.Fields(document.location, problems, strict=True)
    body = document.body if isinstance(document.body, dict) else {}
    check.unknown(body, "", _TOP_FIELDS)
    metadata = check.mapping(body.get("metadata"), "metadata", required=True) or {}
    check.unknown(metadata, "metadata", names.OBJECT_META_FIELDS)
    name = check.name(metadata.get("name"), "metadata.name")
    if metadata.get("namespace") not in (None, ""):
        check.warning("metadata.namespace", "a SchedulePolicy is cluster-scoped; the namespace is ignored")
    check.labels(metadata.get("labels"), "metadata.labels")
    check.annotations(metadata.get("annotations"), "metadata.annotations")
    spec = check.mapping(body.get("spec"), "spec", required=True)
    policy = None if spec is None else _parse_spec(document, name, spec, check)
    name_subject(problems, mark, "SchedulePolicy", metadata.get("name"))
    return policy


def _parse_spec(
    document: Document, name: str | None, spec: dict[Any, Any], check: names.Fields
) -> SchedulePolicy | None:
    check.unknown(spec, "spec", _SPEC_FIELDS)
    for key in _SELECTOR_FIELDS:
        _no_null(spec, key, "spec", check)
    priority = _priority(spec.get("priority"), check)
    namespace_selector = check.selector(spec.get("namespaceSelector"), "spec.namespaceSelector")
    cluster_selector = check.selector(spec.get("clusterSelector"), "spec.clusterSelector")
    ordered = _ordered_cluster_selector(spec, check)
    group_by_key = _group_by(spec.get("groupBy"), check)
    spread = _spread(spec.get("spreadConstraints"), check)
    resource_selectors = _resource_selectors(spec.get("resourceSelectors"), check)
    if not check.ok or name is None:
        return None
    return SchedulePolicy(
        name=name,
        location=document.location,
        priority=priority,
        namespace_selector=namespace_selector,
        cluster_selector=cluster_selector,
        ordered_cluster_selector=ordered,
        group_by_key=group_by_key,
        spread=spread,
        resource_selectors=resource_selectors,
    )


def _no_null(raw: dict[Any, Any], key: str, field: str, check: names.Fields) -> None:
    """An error when ``key`` is present with a null value where a selector is expected. Nova's CRD reads a
    null selector as matching nothing and its docs read an absent one as matching everything; a bare
    ``clusterSelector:`` whose body was lost to indentation is a mistake either way."""
    if key in raw and raw[key] is None:
        check.error(
            names.child(field, key),
            "is null: write a selector, {} to select everything, or leave the field out",
        )


_TOP_FIELDS = ("apiVersion", "kind", "metadata", "spec", "status")
_SPEC_FIELDS = (
    "priority",
    "namespaceSelector",
    "clusterSelector",
    "orderedClusterSelector",
    "OrderedClusterSelector",
    "groupBy",
    "spreadConstraints",
    "resourceSelectors",
)
_SELECTOR_FIELDS = (
    "namespaceSelector",
    "clusterSelector",
    "orderedClusterSelector",
    "OrderedClusterSelector",
    "resourceSelectors",
)
_SPREAD_FIELDS = ("spreadMode", "topologyKey", "percentageSplit", "overrides")
_SPREAD_MODES: tuple[SpreadMode, ...] = ("Divide", "Duplicate")


def _priority(raw: object, check: names.Fields) -> int:
    if raw is None:
        return 0
    if isinstance(raw, bool) or not isinstance(raw, int):
        check.error("spec.priority", f"must be an integer, got {described(raw)}")
        return 0
    return raw


def _ordered_cluster_selector(spec: dict[Any, Any], check: names.Fields) -> LabelSelector | None:
    """The tier selector. Its first matchExpression (operator In) gives the tiers in order; the returned
    selector puts that requirement first, so ``requirements[0]`` is always the tier order."""
    keys = [key for key in ("orderedClusterSelector", "OrderedClusterSelector") if spec.get(key) is not None]
    if not keys:
        return None
    if len(keys) == 2:
        check.error(
            "spec.OrderedClusterSelector", "give orderedClusterSelector or OrderedClusterSelector, not both"
        )
        return None
    key = keys[0]
    field = f"spec.{key}"
    selector = check.selector(spec[key], field)
    raw = spec[key]
    expressions = raw.get("matchExpressions") if isinstance(raw, dict) else None
    if not isinstance(raw, dict) or selector is None:
        return None
    if not isinstance(expressions, list) or not expressions:
        check.error(
            f"{field}.matchExpressions",
            "required: the first expression (operator In) lists the cluster tiers in order",
        )
        return None
    first = expressions[0]
    if not isinstance(first, dict):
        return None  # reported by the selector parser
    if first.get("operator") != "In":
        check.error(
            f"{field}.matchExpressions[0].operator",
            f"must be In (its values are the tiers, in order), got {described(first.get('operator'))}",
        )
        return None
    tiers = first.get("values")
    if not isinstance(tiers, list) or not tiers or not all(isinstance(value, str) for value in tiers):
        return None  # reported by the selector parser
    if len(set(tiers)) != len(tiers):
        check.error(f"{field}.matchExpressions[0].values", "lists a tier twice")
    tier = Requirement(str(first.get("key")), "In", tuple(tiers))
    rest = list(selector.requirements)
    if tier in rest:
        rest.remove(tier)
    return LabelSelector((tier, *rest))


def _group_by(raw: object, check: names.Fields) -> str | None:
    group_by = check.mapping(raw, "spec.groupBy")
    if group_by is None:
        return None
    check.unknown(group_by, "spec.groupBy", ("labelKey",))
    key = check.text(group_by.get("labelKey"), "spec.groupBy.labelKey")
    if not key:
        return None  # an empty labelKey means "no grouping", as in Nova
    reasons = qualified_name_errors(key)
    if reasons:
        check.error("spec.groupBy.labelKey", f"invalid label key {excerpt(key)}: {'; '.join(reasons)}")
        return None
    return key


def _spread(raw: object, check: names.Fields) -> SpreadConstraints | None:
    field = "spec.spreadConstraints"
    spread = check.mapping(raw, field)
    if spread is None:
        return None
    check.unknown(spread, field, _SPREAD_FIELDS)
    mode: SpreadMode = "Divide"
    raw_mode = spread.get("spreadMode")
    if raw_mode is not None:
        if raw_mode in _SPREAD_MODES:
            mode = "Duplicate" if raw_mode == "Duplicate" else "Divide"
        else:
            hint = names.suggestion(str(raw_mode), _SPREAD_MODES)
            check.error(
                f"{field}.spreadMode", f"must be Divide or Duplicate, got {described(raw_mode)}{hint}"
            )
    topology_key = check.text(spread.get("topologyKey"), f"{field}.topologyKey")
    if topology_key is not None:
        reasons = qualified_name_errors(topology_key)
        if reasons:
            check.error(
                f"{field}.topologyKey", f"invalid label key {excerpt(topology_key)}: {'; '.join(reasons)}"
            )
    split: tuple[PercentageSplit, ...] = ()
    if spread.get("percentageSplit") is not None:
        if mode == "Duplicate":
            check.warning(f"{field}.percentageSplit", "ignored with spreadMode Duplicate")
        else:
            split = _percentage_split(spread["percentageSplit"], f"{field}.percentageSplit", check)
    overrides = _overrides(spread.get("overrides"), f"{field}.overrides", check)
    return SpreadConstraints(mode, topology_key or labels.METADATA_NAME, split, overrides)


def _percentage_split(raw: object, field: str, check: names.Fields) -> tuple[PercentageSplit, ...]:
    """Nova's two shapes: v0.9's list of ``{topologyValue, percentage}`` and v1.5's map
    ``{<topology value>: <percent>}`` (a cluster's name when ``topologyKey`` is left out)."""
    entries: list[tuple[str, object, object]] = []  # (field of the entry, topology value, percentage)
    complete = True
    if isinstance(raw, dict):
        entries = [(names.child(field, str(key)), key, value) for key, value in raw.items()]
    else:
        for index, entry in enumerate(
            check.sequence(raw, field, "{topologyValue, percentage} or a map of value: percent")
        ):
            where = names.child(field, index)
            item = check.mapping(entry, where, required=True)
            if item is None:
                complete = False
                continue
            check.unknown(item, where, ("topologyValue", "percentage"))
            entries.append((where, item.get("topologyValue"), item.get("percentage")))
    parts: list[PercentageSplit] = []
    first_at: dict[str, str] = {}
    for where, raw_value, percentage in entries:
        value_field = f"{where}.topologyValue" if not isinstance(raw, dict) else where
        percent_field = f"{where}.percentage" if not isinstance(raw, dict) else where
        value = _topology_value(raw_value, value_field, check)
        if percentage is None:
            check.error(percent_field, "required (an integer from 0 to 100)")
            percentage = None
        elif isinstance(percentage, bool) or not isinstance(percentage, int):
            check.error(percent_field, f"must be an integer from 0 to 100, got {described(percentage)}")
            percentage = None
        elif not 0 <= percentage <= 100:
            check.error(percent_field, f"must be from 0 to 100, got {percentage}")
            percentage = None
        if value is not None and value in first_at:
            check.error(value_field, f"{excerpt(value)} is already split at {first_at[value]}")
            value = None
        if value is None or not isinstance(percentage, int):
            complete = False
            continue
        first_at[value] = where
        parts.append(PercentageSplit(value, percentage))
    total = sum(part.percentage for part in parts)
    if complete and parts and total != 100:
        listed = " + ".join(str(part.percentage) for part in parts)
        check.error(field, f"percentages must sum to 100, got {listed} = {total}")
    return tuple(parts)


def _topology_value(raw: object, field: str, check: names.Fields) -> str | None:
    value = check.text(raw, field, required=True)
    if value is None:
        return None
    reasons = label_value_errors(value)
    if reasons or not value:
        check.error(
            field, f"invalid label value {excerpt(value)}: {'; '.join(reasons) or 'must not be empty'}"
        )
        return None
    return value


def _overrides(raw: object, field: str, check: names.Fields) -> tuple[Override, ...]:
    overrides: list[Override] = []
    for index, entry in enumerate(check.sequence(raw, field, "{topologyValue, resources}")):
        where = names.child(field, index)
        item = check.mapping(entry, where, required=True)
        if item is None:
            continue
        check.unknown(item, where, ("topologyValue", "resources"))
        value = _topology_value(item.get("topologyValue"), f"{where}.topologyValue", check)
        entries = check.sequence(
            item.get("resources"), f"{where}.resources", "{kind, apiVersion, name, override}"
        )
        parsed = [
            _resource_override(entry, f"{where}.resources[{at}]", check) for at, entry in enumerate(entries)
        ]
        resources = tuple(resource for resource in parsed if resource is not None)
        if value is not None:
            overrides.append(Override(value, resources))
    return tuple(overrides)


def _resource_override(raw: object, field: str, check: names.Fields) -> ResourceOverride | None:
    item = check.mapping(raw, field, required=True)
    if item is None:
        return None
    check.unknown(item, field, ("kind", "apiVersion", "name", "namespace", "override"))
    kind = check.text(item.get("kind"), f"{field}.kind", required=True)
    api_version = check.text(item.get("apiVersion"), f"{field}.apiVersion", required=True)
    name = check.text(item.get("name"), f"{field}.name", required=True)
    namespace = check.text(item.get("namespace"), f"{field}.namespace")
    fields: list[FieldOverride] = []
    for index, entry in enumerate(
        check.sequence(item.get("override"), f"{field}.override", "{fieldPath, value.staticValue}")
    ):
        parsed = _field_override(entry, f"{field}.override[{index}]", check)
        if parsed is not None:
            fields.append(parsed)
    if kind is None or api_version is None or name is None:
        return None
    return ResourceOverride(kind, api_version, name, namespace or None, tuple(fields))


def _field_override(raw: object, field: str, check: names.Fields) -> FieldOverride | None:
    item = check.mapping(raw, field, required=True)
    if item is None:
        return None
    check.unknown(item, field, ("fieldPath", "value"))
    text = check.text(item.get("fieldPath"), f"{field}.fieldPath", required=True)
    path: fieldpaths.FieldPath | None = None
    if text is not None:
        try:
            path = fieldpaths.parse(text)
        except fieldpaths.FieldPathError as error:
            check.error(f"{field}.fieldPath", str(error))
    value = check.mapping(item.get("value"), f"{field}.value")
    if value is None or "staticValue" not in value:
        if value is not None or "value" not in item or item.get("value") is None:
            check.error(f"{field}.value.staticValue", "required (the value to set, with its YAML type)")
        return None
    check.unknown(value, f"{field}.value", ("staticValue",))
    if path is None:
        return None
    return FieldOverride(path, value["staticValue"])


def _resource_selectors(raw: object, check: names.Fields) -> ResourceSelectors:
    field = "spec.resourceSelectors"
    selectors_raw = check.mapping(raw, field)
    if selectors_raw is None:
        return ResourceSelectors((), ())
    check.unknown(selectors_raw, field, ("labelSelectors", "kinds"))
    _no_null(selectors_raw, "labelSelectors", field, check)
    label_selectors: list[LabelSelector] = []
    for index, entry in enumerate(
        check.sequence(selectors_raw.get("labelSelectors"), f"{field}.labelSelectors", "label selectors")
    ):
        where = f"{field}.labelSelectors[{index}]"
        if entry is None:
            check.error(where, "is null: write a selector, {} to select everything, or leave the entry out")
        label_selectors.append(check.selector(entry, where) or LabelSelector())
    kinds: list[GroupVersionKind] = []
    for index, entry in enumerate(
        check.sequence(selectors_raw.get("kinds"), f"{field}.kinds", "{group, version, kind}")
    ):
        where = f"{field}.kinds[{index}]"
        item = check.mapping(entry, where, required=True)
        if item is None:
            continue
        check.unknown(item, where, ("group", "version", "kind"))
        group = check.text(item.get("group"), f"{where}.group")
        version = check.text(item.get("version"), f"{where}.version")
        kind = check.text(item.get("kind"), f"{where}.kind", required=True)
        if kind is not None:
            kinds.append(GroupVersionKind(group or "", version or "", kind))
    return ResourceSelectors(tuple(label_selectors), tuple(kinds))
