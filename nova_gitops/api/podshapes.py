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

Built-in entries (``BUILTIN_SHAPES``) cover RayCluster (head group: one pod; each ``workerGroupSpecs[*]``:
its replicas × its template) and PyTorchJob (each ``pytorchReplicaSpecs.*``); a source's declaration of
the same group/kind replaces them. Objects so declared are not divided: their counts live in several
places, so Divide copies them whole to every cluster, with a warning (docs/scheduling.md).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from jsonpath_ng import JSONPath
from jsonpath_ng.parser import parse as parse_jsonpath

from nova_gitops.api import names
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import UNKNOWN_FIELD_REJECTED, Problem, SourceLocation

API_GROUP = "gitops.nova.elotl.co"
KIND = "PodControllerShape"

_TOP_FIELDS = ("apiVersion", "kind", "metadata", "spec")
_SPEC_FIELDS = ("group", "kind", "podSets")
_POD_SET_FIELDS = ("name", "each", "replicas", "template")

_UNKNOWN = "unknown field (a PodControllerShape is read strictly: a misspelt path would go unnoticed)"

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
    """The parsed JSONPath (cached: the same few expressions are read for every object of a kind)."""
    return parse_jsonpath(expression)


def pod_templates(
    shape: PodControllerShape, body: Mapping[str, Any]
) -> list[tuple[str, Mapping[str, Any], int]]:
    """Each pod group of ``body``: (where, pod spec, count). Raises ShapeError naming a bad value."""
    found: list[tuple[str, Mapping[str, Any], int]] = []
    for pod_set in shape.pod_sets:
        roots: list[tuple[str, Any]] = [("", body)]
        if pod_set.each is not None:
            roots = [(str(match.full_path), match.value) for match in compiled(pod_set.each).find(body)]
        for where, root in roots:
            at = f"{where}." if where else ""
            templates = compiled(pod_set.template).find(root)
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
                except Exception as error:  # jsonpath-ng raises bare Exceptions for some lexer errors
                    check.error(f"{field}.{key}", f"not a JSONPath expression: {expression!r}: {error}")
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
