"""Where the pods of a custom kind live, declared with JSONPath: the ``PodControllerShape`` document.

Kinds shaped like a Deployment (``spec.replicas`` and ``spec.template``: Argo Rollout, OpenKruise CloneSet)
need no declaration (``kinds.controller_shaped``). Other pod-making kinds keep their pods elsewhere, in
several groups (a RayCluster's head and worker groups, a PyTorchJob's Master and Worker replica specs). A
source declares such a kind with a document that is read, validated like a SchedulePolicy (strict: unknown
fields are errors, JSONPath expressions are parsed at validation time) and never rendered into a cluster::

    apiVersion: gitops.nova.elotl.co/v1alpha1
    kind: PodControllerShape
    metadata: {name: leaderworkerset}
    spec:
      group: leaderworkerset.x-k8s.io      # the API group of the kind it describes ("" for core)
      kind: LeaderWorkerSet
      podSets:
      - name: leaders                      # shown in messages
        each: $.spec                       # optional: one pod group per match (default: the object)
        replicas: replicas                 # optional, relative to each match: absent field or path → 1
        template: leaderWorkerTemplate.leaderTemplate   # required, relative: a pod template ({spec: ...})

Paths are bounded when a declaration is read (issue 21 item 4): at most ``MAX_JSONPATH_CHARS`` characters
and ``MAX_JSONPATH_STEPS`` steps, since jsonpath-ng finds, prints and builds match paths by recursion (a
``template`` of 1,000 segments parsed, then raised RecursionError in planning), and only the steps whose
matches are each a different value of the object: ``$`` (first), ``@``, names, ``*``, indexes and slices.
``..``, ``|``, ``&``, ``where``, ``wherenot``, `` `parent` ``, a later ``$`` and a name or index repeated in
one bracket can reach one value many times, so each such step can multiply the matches (nine ``(*|*)``
steps made 100,000 of a small object): with them refused, finding a path costs at most the object's size
times its steps. A path out of bounds is an error at its line naming the field and the bound; the other
declarations are still read, and the source is refused as a whole like any invalid source.

Built-in entries (``BUILTIN_SHAPES``) cover RayCluster (head group: one pod; each ``workerGroupSpecs[*]``:
its replicas × its template) and PyTorchJob (each ``pytorchReplicaSpecs.*``); a source's declaration of
the same group/kind replaces them. Objects so declared are not divided: their counts live in several
places, so Divide copies them whole to every cluster, with a warning (docs/scheduling.md).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from jsonpath_ng import JSONPath
from jsonpath_ng import jsonpath as steps
from jsonpath_ng.parser import parse as parse_jsonpath

from nova_gitops.api import names
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import (
    UNKNOWN_FIELD_REJECTED,
    Problem,
    SourceLocation,
    excerpt,
    shortened,
)

API_GROUP = "gitops.nova.elotl.co"
KIND = "PodControllerShape"

_TOP_FIELDS = ("apiVersion", "kind", "metadata", "spec")
_SPEC_FIELDS = ("group", "kind", "podSets")
_POD_SET_FIELDS = ("name", "each", "replicas", "template")

_UNKNOWN = "unknown field (a PodControllerShape is read strictly: a misspelt path would go unnoticed)"

MAX_JSONPATH_CHARS = 512
"""Characters of one path (a pod template's is a few dozen)."""
MAX_JSONPATH_STEPS = 32
"""Steps of one path: names, ``*``, indexes, slices (``spec.workerGroupSpecs[*]`` has three)."""
_PLAIN_STEPS = (steps.Fields, steps.Wildcard, steps.Index, steps.Slice, steps.This)
_MULTIPLYING = {
    "Descendants": "`..`",
    "_Union": "`|`",
    "_Intersect": "`&`",
    "WhereNot": "`wherenot`",
    "Where": "`where`",
    "Parent": "`parent`",
    "Root": "`$` after the first step",
}

GroupKind = tuple[str, str]


@dataclass(frozen=True, slots=True)
class PodSet:
    """One group of pods: for each match of ``each`` (JSONPath; None: the object itself), ``replicas``
    (relative JSONPath; None: one pod, as for a RayCluster's head) pods of the template at ``template``."""

    name: str
    template: str
    replicas: str | None = None
    each: str | None = None


@dataclass(frozen=True, slots=True)
class PodControllerShape:
    group: str
    kind: str
    pod_sets: tuple[PodSet, ...]
    name: str = ""
    location: SourceLocation | None = None


BUILTIN_SHAPES: Mapping[GroupKind, PodControllerShape] = {
    ("ray.io", "RayCluster"): PodControllerShape(
        "ray.io",
        "RayCluster",
        (
            PodSet("head", template="spec.headGroupSpec.template"),
            PodSet("workers", each="spec.workerGroupSpecs[*]", replicas="replicas", template="template"),
        ),
        name="builtin RayCluster",
    ),
    ("kubeflow.org", "PyTorchJob"): PodControllerShape(
        "kubeflow.org",
        "PyTorchJob",
        (PodSet("replicas", each="spec.pytorchReplicaSpecs.*", replicas="replicas", template="template"),),
        name="builtin PyTorchJob",
    ),
}
"""Shapes known without a declaration; a source's PodControllerShape for the same kind wins."""


class ShapeError(ValueError):
    """A value found at a declared path that is not what it should be (a count, a pod template)."""


@functools.lru_cache(maxsize=256)
def compiled(expression: str) -> JSONPath:
    """The parsed JSONPath (cached: the same few expressions are read for every object of a kind). Raises
    ShapeError for a path out of bounds (see the module docstring), anything else for one that does not
    parse."""
    if len(expression) > MAX_JSONPATH_CHARS:
        raise ShapeError(
            f"a JSONPath of more than {MAX_JSONPATH_CHARS} characters ({len(expression)}); refused"
        )
    with warnings.catch_warnings():  # `|` and `&` warn of their deprecation: they are refused below
        warnings.simplefilter("ignore", DeprecationWarning)
        parsed = parse_jsonpath(expression)
    _check_steps(parsed)
    return parsed


def _check_steps(parsed: JSONPath) -> None:
    """Raise ShapeError unless ``parsed`` is at most ``MAX_JSONPATH_STEPS`` plain steps, ``$`` only first.
    Walks the tree without recursion: a refused one may be deep."""
    count = 0
    pending: list[tuple[JSONPath, bool]] = [(parsed, True)]  # (node, whether it is the path's first step)
    while pending:
        node, first = pending.pop()
        if isinstance(node, steps.Child):
            pending += [(node.right, False), (node.left, first)]
            continue
        count += 1
        if count > MAX_JSONPATH_STEPS:
            raise ShapeError(f"a JSONPath of more than {MAX_JSONPATH_STEPS} steps; refused")
        if isinstance(node, steps.Root) and first:
            continue
        if not isinstance(node, _PLAIN_STEPS):
            shown = _MULTIPLYING.get(type(node).__name__, f"`{type(node).__name__}`")
            raise ShapeError(f"{shown} is not allowed: it can reach one value many times; refused")
        if isinstance(node, steps.Fields) and len(set(node.fields)) < len(node.fields):
            raise ShapeError("names one field twice in a bracket (each match would be found twice); refused")
        if isinstance(node, steps.Index) and len(set(node.indices)) < len(node.indices):
            raise ShapeError("names one index twice in a bracket (each match would be found twice); refused")


def pod_templates(
    shape: PodControllerShape, body: Mapping[str, Any]
) -> list[tuple[str, Mapping[str, Any], int]]:
    """Each pod group of ``body``: (where, pod spec, count). Raises ShapeError naming a bad value."""
    found: list[tuple[str, Mapping[str, Any], int]] = []
    for pod_set in shape.pod_sets:
        roots: list[tuple[str, Any]] = [("", body)]
        template_path = compiled(pod_set.template)  # a shape not read by parse_shape is bounded here too
        if pod_set.each is not None:
            roots = [(str(match.full_path), match.value) for match in compiled(pod_set.each).find(body)]
        for where, root in roots:
            at = f"{where}." if where else ""
            templates = template_path.find(root)
            if not templates:
                continue
            template = templates[0].value
            pod_spec = template.get("spec") if isinstance(template, dict) else None
            if not isinstance(pod_spec, dict):
                raise ShapeError(f"{at}{pod_set.template}: needs a pod template with a spec mapping")
            count = 1
            if pod_set.replicas is not None:
                counts = compiled(pod_set.replicas).find(root)
                value = counts[0].value if counts else 1
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise ShapeError(
                        f"{at}{pod_set.replicas}: must be a whole number of 0 or more, got {value!r}"
                    )
                count = value
            found.append((f"{at}{pod_set.template}.spec", pod_spec, count))
    return found


def is_shape_document(group: str, kind: str) -> bool:
    return group == API_GROUP and kind == KIND


def parse_shape(document: Document, problems: list[Problem]) -> PodControllerShape | None:
    """Validate a PodControllerShape document, strictly: an unknown field or a JSONPath that does not
    parse is an error naming the field (``build_source_set`` points it at its line)."""
    mark = len(problems)
    head = names.read_own_document(document, problems, _TOP_FIELDS, _SPEC_FIELDS)
    check, name, spec = head.check, head.name, head.spec
    group = spec.get("group", "")
    if not isinstance(group, str):
        check.error("spec.group", f'needs an API group ("" for core), got {group!r}')
    kind = check.text(spec.get("kind"), "spec.kind", required=True)
    pod_sets: list[PodSet] = []
    raw_sets = spec.get("podSets")
    if not isinstance(raw_sets, list) or not raw_sets:
        check.error("spec.podSets", "needs a list of at least one pod set")
        raw_sets = []
    for index, raw in enumerate(raw_sets):
        field = f"spec.podSets[{index}]"
        item = check.mapping(raw, field, required=True)
        if item is None:
            continue
        check.unknown(item, field, _POD_SET_FIELDS)
        set_name = check.text(item.get("name"), f"{field}.name") or f"podSets[{index}]"
        paths: dict[str, str | None] = {}
        for key in ("each", "replicas", "template"):
            expression = check.text(item.get(key), f"{field}.{key}", required=key == "template")
            if expression is not None:
                try:
                    compiled(expression)
                except ShapeError as error:
                    check.error(f"{field}.{key}", f"{error}: {excerpt(expression)}")
                    expression = None
                except Exception as error:  # jsonpath-ng raises bare Exceptions for some lexer errors
                    why = shortened(" ".join(str(error).split()))
                    check.error(f"{field}.{key}", f"not a JSONPath expression: {excerpt(expression)}: {why}")
                    expression = None
            paths[key] = expression
        template = paths["template"]
        if template is not None:
            pod_sets.append(PodSet(set_name, template, paths["replicas"], paths["each"]))
    subject = f"{KIND} {name}" if name else KIND
    problems[mark:] = [  # our own kind: no CRD of Nova's to invoke
        replace(problem, subject=subject, message=problem.message.replace(UNKNOWN_FIELD_REJECTED, _UNKNOWN))
        for problem in problems[mark:]
    ]
    if not check.ok or kind is None or not isinstance(group, str):
        return None
    return PodControllerShape(group, kind, tuple(pod_sets), name or "", document.location)
