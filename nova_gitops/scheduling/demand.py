"""What a workload asks of a cluster: the pods it creates, each pod's effective request and where it may run.

The planner decides by per-node fit (``fitting``), so it needs pods, not totals: a Deployment of 3 replicas
of 2 cpu is three 2-cpu pods that must each land on one node. This module turns a raw object into
``PodDemand`` values (a ``PodShape`` and how many pods of it), computing the request exactly as the
Kubernetes scheduler does:

* a container's limit counts where its request is absent (Kubernetes defaults requests to limits), for every
  resource, extended ones (``nvidia.com/gpu``, ``nvidia.com/mig-1g.5gb``, ...) included;
* effective request = max(sum(containers) + sum(sidecars), the largest init step) + ``spec.overhead``, where
  a sidecar is an init container with ``restartPolicy: Always`` that keeps running beside the app, and an
  init step is a plain init container plus the sidecars started before it;
* pod-level ``spec.resources`` (Kubernetes 1.32+, cpu and memory): a pod-level request replaces the
  containers' figure; a pod-level limit stands in only where no container asks for the resource.

Quantities are exact integers of milli-units. Every defect of an object is collected into one
``DemandError`` whose message names the fields, so a user fixes them all at once.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from nova_gitops.api import kinds, podshapes, quantities
from nova_gitops.api.objects import split_api_version
from nova_gitops.scheduling.pickling import by_fields

NodeSelectorOperator = Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
TolerationOperator = Literal["Exists", "Equal"]
TolerationEffect = Literal["", "NoSchedule", "PreferNoSchedule", "NoExecute"]

_NODE_SELECTOR_OPERATORS: tuple[NodeSelectorOperator, ...] = get_args(NodeSelectorOperator)
_TOLERATION_EFFECTS: tuple[TolerationEffect, ...] = get_args(TolerationEffect)
_POD_LEVEL_RESOURCES = ("cpu", "memory")
_REPLICATED_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "ReplicationController")
_BUILTIN_CONTROLLER_KINDS = frozenset(("Pod", "DaemonSet", "Job", "CronJob", *_REPLICATED_KINDS))


class DemandError(ValueError):
    """An object whose pods cannot be computed: every defect, each naming its field."""

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(self.problems))


@dataclass(frozen=True, slots=True)
class NodeSelectorRequirement:
    """One expression of a node selector term; ``Gt``/``Lt`` compare the label as an integer."""

    key: str
    operator: NodeSelectorOperator
    values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """ANDed expressions on node labels (``matchExpressions``) and node fields (``matchFields``: only
    ``metadata.name`` exists). A term with neither matches no node, as in Kubernetes."""

    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[NodeSelectorRequirement, ...] = ()


@dataclass(frozen=True, slots=True)
class Toleration:
    """``operator`` Exists with an empty key tolerates every taint; an empty ``effect`` matches all."""

    key: str = ""
    operator: TolerationOperator = "Equal"
    value: str = ""
    effect: TolerationEffect = ""


@dataclass(frozen=True, slots=True)
class PodShape:
    """One kind of pod a workload creates. Mappings are sorted by key, so equal shapes have equal reprs."""

    requests: Mapping[str, int]  # milli-units per resource, zeros dropped
    node_selector: Mapping[str, str]
    required_affinity: tuple[NodeSelectorTerm, ...]  # ORed terms; () = no constraint
    tolerations: tuple[Toleration, ...]

    __reduce__ = by_fields  # the plan memory's measures hold every group's pods


@dataclass(frozen=True, slots=True)
class PodDemand:
    shape: PodShape
    count: int

    __reduce__ = by_fields


def pod_demands(
    body: Mapping[str, Any],
    replicas: int | None = None,
    shapes: Mapping[kinds.GroupKind, podshapes.PodControllerShape] = podshapes.BUILTIN_SHAPES,
) -> tuple[PodDemand, ...]:
    """The pods ``body`` creates; ``replicas`` overrides their count (a Divide part). () for non-pod kinds.

    Pod → 1; Deployment, ReplicaSet, StatefulSet, ReplicationController → ``spec.replicas`` (default 1);
    Job → ``parallelism`` (default 1), or ``completions`` when smaller; CronJob → one run of its job template;
    DaemonSet → 1 (the pod it places on one node: its per-node cost is what fit can check); any other kind
    shaped like a Deployment (``kinds.controller_shaped``: Argo Rollout, OpenKruise CloneSet) →
    ``spec.replicas``.
    A kind of ``shapes`` (RayCluster, PyTorchJob, a source's PodControllerShape) → the pods of each of its
    declared pod sets; such objects are not divided, so ``replicas`` does not apply to them.
    Raises DemandError naming every bad field.
    """
    declared = declared_shape(body, shapes)
    if declared is not None:
        return _declared_demands(body, declared)
    problems: list[str] = []
    located = _pod_spec_and_count(body, problems)
    if located is None:
        if problems:
            raise DemandError(problems)
        return ()
    spec_field, pod_spec, count = located
    if replicas is not None:
        if replicas < 0:
            problems.append(f"replicas: must not be negative, got {replicas}")
        count = replicas
    shape = _pod_shape(pod_spec, spec_field, problems)
    if problems:
        raise DemandError(problems)
    if count <= 0 or shape is None:
        return ()
    return (PodDemand(shape, count),)


def unknown_reason(
    body: Mapping[str, Any],
    shapes: Mapping[kinds.GroupKind, podshapes.PodControllerShape] = podshapes.BUILTIN_SHAPES,
) -> str | None:
    """Why the pods of ``body`` cannot be known (None when they can, or when it makes none): a pod spec that
    claims devices through DRA ``resourceClaims`` (fit counts no devices of a claim), or a custom kind that
    carries pod specs but is neither shaped like a Deployment nor declared. Walks the whole body: for
    ``explain``, one object at a time."""
    api_version, kind = body.get("apiVersion"), body.get("kind")
    group_kind = (split_api_version(api_version)[0] if isinstance(api_version, str) else "", kind)
    if group_kind in kinds.BUILTIN_SCOPES and group_kind not in kinds.POD_CONTROLLERS:
        return None  # a built-in kind that makes no pods (a PodTemplate)
    pod_specs = list(_pod_like_specs(body.get("spec"), 0))
    if any(pod_spec.get("resourceClaims") for pod_spec in pod_specs):
        return "its pods claim devices through resourceClaims (DRA), which fit cannot count"
    if not pod_specs or kind in _BUILTIN_CONTROLLER_KINDS or kinds.controller_shaped(body):
        return None
    if declared_shape(body, shapes) is not None:
        return None
    return (
        f"{kind} carries pod templates but no spec.replicas beside spec.template; "
        "declare where its pods live with a PodControllerShape"
    )


def _pod_like_specs(node: Any, depth: int) -> Iterable[Mapping[str, Any]]:
    if depth > 20:
        return
    if isinstance(node, Mapping):
        if isinstance(node.get("containers"), list):
            yield node
        for value in node.values():
            yield from _pod_like_specs(value, depth + 1)
    elif isinstance(node, list):
        for value in node:
            yield from _pod_like_specs(value, depth + 1)


def declared_shape(
    body: Mapping[str, Any], shapes: Mapping[kinds.GroupKind, podshapes.PodControllerShape]
) -> podshapes.PodControllerShape | None:
    """The declared shape of ``body``'s kind, if any (the built-in controllers cannot be redeclared)."""
    kind = body.get("kind")
    if not shapes or kind in _BUILTIN_CONTROLLER_KINDS or not isinstance(kind, str):
        return None
    api_version = body.get("apiVersion")
    if not isinstance(api_version, str):
        return None
    return shapes.get((split_api_version(api_version)[0], kind))


def _declared_demands(body: Mapping[str, Any], shape: podshapes.PodControllerShape) -> tuple[PodDemand, ...]:
    problems: list[str] = []
    try:
        groups = podshapes.pod_templates(shape, body)
    except podshapes.ShapeError as error:
        raise DemandError([str(error)]) from None
    found: list[PodDemand] = []
    for field, pod_spec, count in groups:
        pod_shape = _pod_shape(pod_spec, field, problems)
        if pod_shape is not None and count > 0:
            found.append(PodDemand(pod_shape, count))
    if problems:
        raise DemandError(problems)
    return tuple(found)


def total_requests(demands: Iterable[PodDemand]) -> dict[str, int]:
    """Sum of every pod's requests, per resource, sorted by resource name (zeros dropped)."""
    total: Counter[str] = Counter()
    for demand in demands:
        for resource, milli in demand.shape.requests.items():
            total[resource] += milli * demand.count
    return {resource: total[resource] for resource in sorted(total) if total[resource]}


def _pod_spec_and_count(body: Mapping[str, Any], problems: list[str]) -> tuple[str, Any, int] | None:
    kind = body.get("kind")
    spec = body.get("spec")
    if kind not in _BUILTIN_CONTROLLER_KINDS:
        if not isinstance(kind, str) or not kinds.controller_shaped(body):
            return None
        kind = "Deployment"  # Argo Rollout, OpenKruise CloneSet, ...: counted as the Deployment they mimic
    if not isinstance(spec, Mapping):
        problems.append(f"spec: a {kind} needs a mapping, got {_describe(spec)}")
        return None
    if kind == "Pod":
        return "spec", spec, 1
    if kind == "DaemonSet":
        return _template(spec, "spec", 1, problems)
    if kind in _REPLICATED_KINDS:
        count = _count(spec, "replicas", "spec", 1, problems)
        return _template(spec, "spec", count, problems)
    if kind == "CronJob":
        job_template = spec.get("jobTemplate")
        job_spec = job_template.get("spec") if isinstance(job_template, Mapping) else None
        if not isinstance(job_spec, Mapping):
            problems.append(f"spec.jobTemplate.spec: a CronJob needs a mapping, got {_describe(job_spec)}")
            return None
        return _job(job_spec, "spec.jobTemplate.spec", problems)
    return _job(spec, "spec", problems)


def _job(spec: Mapping[str, Any], field: str, problems: list[str]) -> tuple[str, Any, int] | None:
    parallelism = _count(spec, "parallelism", field, 1, problems)
    if spec.get("completions") is not None:
        parallelism = min(parallelism, _count(spec, "completions", field, parallelism, problems))
    return _template(spec, field, parallelism, problems)


def _template(
    spec: Mapping[str, Any], field: str, count: int, problems: list[str]
) -> tuple[str, Any, int] | None:
    template = spec.get("template")
    pod_spec = template.get("spec") if isinstance(template, Mapping) else None
    if not isinstance(pod_spec, Mapping):
        problems.append(f"{field}.template.spec: needs a pod spec mapping, got {_describe(pod_spec)}")
        return None
    return f"{field}.template.spec", pod_spec, count


def _count(spec: Mapping[str, Any], key: str, field: str, default: int, problems: list[str]) -> int:
    value = spec.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        problems.append(f"{field}.{key}: must be a whole number of 0 or more, got {value!r}")
        return default
    return value


def _pod_shape(pod_spec: Mapping[str, Any], field: str, problems: list[str]) -> PodShape | None:
    before = len(problems)
    requests = _effective_requests(pod_spec, field, problems)
    node_selector = _string_map(pod_spec.get("nodeSelector"), f"{field}.nodeSelector", problems)
    affinity = _required_affinity(pod_spec.get("affinity"), f"{field}.affinity", problems)
    tolerations = _tolerations(pod_spec.get("tolerations"), f"{field}.tolerations", problems)
    if len(problems) > before:
        return None
    return PodShape(requests, node_selector, affinity, tolerations)


def _effective_requests(pod_spec: Mapping[str, Any], field: str, problems: list[str]) -> dict[str, int]:
    requests: Counter[str] = Counter()
    declared: set[str] = set()  # resources some container requests (or limits, standing in for requests)
    for index, container in _items(pod_spec.get("containers"), f"{field}.containers", problems):
        own = _container_requests(container, f"{field}.containers[{index}]", problems)
        requests.update(own)
        declared.update(own)
    sidecars: Counter[str] = Counter()
    init_peak: Counter[str] = Counter()
    for index, container in _items(pod_spec.get("initContainers"), f"{field}.initContainers", problems):
        own = _container_requests(container, f"{field}.initContainers[{index}]", problems)
        declared.update(own)
        if container.get("restartPolicy") == "Always":
            requests.update(own)
            sidecars.update(own)
            step = Counter(sidecars)
        else:
            step = Counter(own)
            step.update(sidecars)
        init_peak = init_peak | step
    requests = requests | init_peak
    pod_level = _pod_level_requests(pod_spec.get("resources"), f"{field}.resources", declared, problems)
    for resource, milli in pod_level.items():
        requests[resource] = milli
    requests.update(_quantities(pod_spec.get("overhead"), f"{field}.overhead", problems))
    return {resource: requests[resource] for resource in sorted(requests) if requests[resource] > 0}


def _pod_level_requests(
    resources: Any, field: str, declared: set[str], problems: list[str]
) -> dict[str, int]:
    """Pod-level ``spec.resources`` (cpu, memory), as Kubernetes 1.32+ defaults them: a pod-level request
    replaces the containers' total; a pod-level limit stands in only where no container asks for the
    resource. The caller replaces the containers' figure with it."""
    requests, limits = _requests_and_limits(resources, field, problems)
    chosen = {name: milli for name, milli in limits.items() if name not in declared} | requests
    return {name: milli for name, milli in chosen.items() if name in _POD_LEVEL_RESOURCES}


def _container_requests(container: Mapping[str, Any], field: str, problems: list[str]) -> dict[str, int]:
    """Requests, with limits standing in where a request is absent (Kubernetes API defaulting)."""
    requests, limits = _requests_and_limits(container.get("resources"), f"{field}.resources", problems)
    return limits | requests


def _requests_and_limits(
    resources: Any, field: str, problems: list[str]
) -> tuple[dict[str, int], dict[str, int]]:
    checked = _nested_mapping(resources, (), field, problems) or {}
    requests = _quantities(checked.get("requests"), f"{field}.requests", problems)
    return requests, _quantities(checked.get("limits"), f"{field}.limits", problems)


def _quantities(raw: Any, field: str, problems: list[str]) -> dict[str, int]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        problems.append(f"{field}: needs a mapping of resource to quantity, got {_describe(raw)}")
        return {}
    parsed: dict[str, int] = {}
    for resource, value in raw.items():
        try:
            milli = quantities.parse_quantity(value)
        except quantities.QuantityError as error:
            problems.append(f"{field}.{resource}: {error}")
            continue
        if milli < 0:
            problems.append(f"{field}.{resource}: must not be negative, got {value!r}")
            continue
        parsed[str(resource)] = milli
    return parsed


def _required_affinity(affinity: Any, field: str, problems: list[str]) -> tuple[NodeSelectorTerm, ...]:
    keys = ("nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
    required = _nested_mapping(affinity, keys, field, problems)
    if required is None:
        return ()
    field = ".".join((field, *keys))
    raw_terms = required.get("nodeSelectorTerms")
    if not isinstance(raw_terms, list) or not raw_terms:
        problems.append(f"{field}.nodeSelectorTerms: needs at least one term, got {_describe(raw_terms)}")
        return ()
    terms: list[NodeSelectorTerm] = []
    for index, term in _items(raw_terms, f"{field}.nodeSelectorTerms", problems):
        term_field = f"{field}.nodeSelectorTerms[{index}]"
        expressions = _requirements(term.get("matchExpressions"), f"{term_field}.matchExpressions", problems)
        fields = _requirements(term.get("matchFields"), f"{term_field}.matchFields", problems)
        for position, requirement in enumerate(fields):
            if requirement.key != "metadata.name":
                problems.append(
                    f"{term_field}.matchFields[{position}].key: only metadata.name is supported, "
                    f"got {requirement.key!r}"
                )
        terms.append(NodeSelectorTerm(expressions, fields))
    return tuple(terms)


def _requirements(raw: Any, field: str, problems: list[str]) -> tuple[NodeSelectorRequirement, ...]:
    parsed: list[NodeSelectorRequirement] = []
    for index, item in _items(raw, field, problems):
        where = f"{field}[{index}]"
        key, operator, values = item.get("key"), item.get("operator"), item.get("values") or []
        if not isinstance(key, str) or not key:
            problems.append(f"{where}.key: needs a label key, got {_describe(key)}")
            continue
        if operator not in _NODE_SELECTOR_OPERATORS:
            choices = ", ".join(_NODE_SELECTOR_OPERATORS)
            problems.append(f"{where}.operator: must be one of {choices}, got {operator!r}")
            continue
        if not isinstance(values, list) or not all(isinstance(value, str) for value in values):
            problems.append(f"{where}.values: needs a list of strings, got {values!r}")
            continue
        values_problem = _requirement_values_problem(operator, values)
        if values_problem:
            problems.append(f"{where}.values: {values_problem}")
            continue
        parsed.append(NodeSelectorRequirement(key, operator, tuple(values)))
    return tuple(parsed)


def _requirement_values_problem(operator: NodeSelectorOperator, values: list[str]) -> str:
    if operator in ("In", "NotIn") and not values:
        return f"{operator} needs at least one value"
    if operator in ("Exists", "DoesNotExist") and values:
        return f"{operator} takes no values, got {values!r}"
    if operator in ("Gt", "Lt") and (len(values) != 1 or not re.fullmatch(r"[+-]?[0-9]+", values[0])):
        return f"{operator} needs exactly one integer value, got {values!r}"
    return ""


def _tolerations(raw: Any, field: str, problems: list[str]) -> tuple[Toleration, ...]:
    parsed: list[Toleration] = []
    for index, item in _items(raw, field, problems):
        where = f"{field}[{index}]"
        key, value = item.get("key") or "", item.get("value") or ""
        operator, effect = item.get("operator") or "Equal", item.get("effect") or ""
        if not isinstance(key, str) or not isinstance(value, str):
            problems.append(f"{where}: key and value must be strings, got {key!r} and {value!r}")
        elif operator != "Exists" and operator != "Equal":
            problems.append(f"{where}.operator: must be Exists or Equal, got {operator!r}")
        elif effect not in _TOLERATION_EFFECTS:
            problems.append(
                f"{where}.effect: must be NoSchedule, PreferNoSchedule or NoExecute, got {effect!r}"
            )
        elif operator == "Exists" and value:
            problems.append(f"{where}.value: must be empty when operator is Exists, got {value!r}")
        elif operator == "Equal" and not key:
            problems.append(
                f"{where}.key: an Equal toleration needs a key (use operator Exists to tolerate all)"
            )
        else:
            parsed.append(Toleration(key, "Exists" if operator == "Exists" else "Equal", value, effect))
    return tuple(parsed)


def _string_map(raw: Any, field: str, problems: list[str]) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        problems.append(f"{field}: needs a mapping of label to value, got {_describe(raw)}")
        return {}
    parsed: dict[str, str] = {}
    for key, value in raw.items():
        if not isinstance(key, str) or not isinstance(value, str):
            problems.append(f"{field}.{key}: label values must be strings (quote them), got {value!r}")
            continue
        parsed[key] = value
    return dict(sorted(parsed.items()))


def _nested_mapping(
    raw: Any, keys: Sequence[str], field: str, problems: list[str]
) -> Mapping[str, Any] | None:
    """``raw[keys[0]][keys[1]]...`` when every level is a mapping; None when a level is absent, and a
    problem naming the level when it is something else."""
    for key in ("", *keys):
        if key:
            raw, field = raw.get(key), f"{field}.{key}"
        if raw is None:
            return None
        if not isinstance(raw, Mapping):
            problems.append(f"{field}: needs a mapping, got {_describe(raw)}")
            return None
    mapping: Mapping[str, Any] = raw
    return mapping


def _items(raw: Any, field: str, problems: list[str]) -> list[tuple[int, Mapping[str, Any]]]:
    """The mapping entries of a list field, each with its index; a problem for anything else."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        problems.append(f"{field}: needs a list, got {_describe(raw)}")
        return []
    entries: list[tuple[int, Mapping[str, Any]]] = []
    for index, item in enumerate(raw):
        if isinstance(item, Mapping):
            entries.append((index, item))
        else:
            problems.append(f"{field}[{index}]: needs a mapping, got {_describe(item)}")
    return entries


def _describe(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list" if value else "an empty list"
    return repr(value)
