"""One source object becomes the object a cluster receives: stripped, labelled, scaled and overridden.

This is the hot path of a render (~100,000 rendered objects from ~6,000 source objects), so every step is
copy-on-write: only the dicts on a path that changes are copied (about a microsecond; ``copy.deepcopy`` of a
manifest costs about 40), and ``manifest.body`` is never mutated because every copy of an object shares it.

The steps, in order (docs/design.md §3–§4):

1. strip what the API server owns (``status``, ``metadata.uid`` …, the last-applied annotation) and what
   ties the object to one cluster (``ownerReferences``, ``finalizers``: ``objects.CLUSTER_RELATION_FIELDS``,
   which the source's load warns about once), and write
   the resolved namespace of a namespaced object that names none, so the file means the same wherever it is
   applied;
2. label ``nova.elotl.co/target-cluster`` (and ``nova.elotl.co/schedule: "true"`` in delegated mode) and
   annotate ``nova.elotl.co/matching-policy`` and ``nova.elotl.co/schedule-group``;
3. with Luna management, label pod templates ``elotl-luna: "true"`` (an existing value is kept: a user who
   wrote another value meant it);
4. set the cluster's replicas (Jobs: parallelism, and completions as the planner split them);
5. apply the policy's overrides in order, last, so an override can change anything above.

Steps 1–3 depend on the cluster only through the target-cluster label, so ``renders`` prepares each object
once with ``SENTINEL_CLUSTER`` and splices real cluster names into the emitted text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeGuard

from nova_gitops.api import fieldpaths, labels, objects
from nova_gitops.api.objects import Body, Manifest
from nova_gitops.api.policies import FieldOverride
from nova_gitops.scheduling.planparts import ClusterCopy, GroupPlan, ObjectPlan
from nova_gitops.scheduling.plans import PlanSettings

SENTINEL_CLUSTER: Final = "nova-gitops-render-sentinel-cluster-3f9c2e7a"
"""Stands for the cluster name while an object shared by many clusters is emitted once (see ``renders``)."""

_WORKLOAD_GROUPS: Final = ("apps", "extensions")  # extensions: pre-1.16 manifests still found in repos
REPLICATED_KINDS: Final = frozenset(
    {(group, kind) for group in _WORKLOAD_GROUPS for kind in ("Deployment", "ReplicaSet", "StatefulSet")}
    | {("", "ReplicationController")}
)
JOB: Final = ("batch", "Job")
CRON_JOB: Final = ("batch", "CronJob")
_TEMPLATE_LABELS: Final = ("spec", "template", "metadata", "labels")
POD_TEMPLATE_LABEL_PATHS: Final[Mapping[tuple[str, str], tuple[str, ...]]] = {
    **{kind: _TEMPLATE_LABELS for kind in REPLICATED_KINDS},
    **{(group, "DaemonSet"): _TEMPLATE_LABELS for group in _WORKLOAD_GROUPS},
    JOB: _TEMPLATE_LABELS,
    CRON_JOB: ("spec", "jobTemplate", "spec", "template", "metadata", "labels"),
    ("", "Pod"): ("metadata", "labels"),
}
_JOB_SPEC: Final[Mapping[tuple[str, str], tuple[str, ...]]] = {
    JOB: ("spec",),
    CRON_JOB: ("spec", "jobTemplate", "spec"),
}


@dataclass(frozen=True, slots=True)
class RenderFailure:
    """One reason an object cannot be rendered for a cluster; ``field`` is the field path involved."""

    field: str | None
    message: str


class ObjectRenderError(ValueError):
    """An object cannot be rendered for a cluster. Carries every failure, not only the first."""

    def __init__(self, failures: Sequence[RenderFailure]) -> None:
        self.failures = tuple(failures)
        super().__init__(
            "; ".join(f"{f.field}: {f.message}" if f.field else f.message for f in self.failures)
        )


class _NotAMapping(ValueError):
    def __init__(self, path: tuple[str, ...]) -> None:
        self.path = ".".join(path)
        super().__init__(f"{self.path} is not a mapping")


def placed_by(group: GroupPlan) -> str:
    """The ``matching-policy`` annotation value: the policy, or for an annotation-placed group (no policy)
    the annotation that placed it, ``nova.elotl.co/cluster`` or ``nova.elotl.co/spread-onto``."""
    if group.policy is not None:
        return group.policy
    for object_plan in group.objects:
        annotations = object_plan.manifest.annotations
        if labels.CLUSTER_PIN in annotations:
            return labels.CLUSTER_PIN
        if labels.SPREAD_ONTO in annotations:
            return labels.SPREAD_ONTO
    return labels.CLUSTER_PIN


def prepare(
    manifest: Manifest, cluster: str, group_name: str | None, policy: str | None, settings: PlanSettings
) -> Body:
    """Steps 1–3: the object for ``cluster`` before replicas and overrides. Raises ObjectRenderError."""
    body = objects.strip_server_fields(manifest.body)
    try:
        body = _updated(
            body, ("metadata",), lambda metadata: _identify(metadata, manifest, cluster, settings)
        )
        if group_name is not None and policy is not None:
            body = _updated(body, ("metadata", "annotations"), lambda ann: _annotate(ann, group_name, policy))
        template_labels = POD_TEMPLATE_LABEL_PATHS.get((manifest.group, manifest.kind))
        if settings.luna_management and template_labels is not None:
            body = _updated(
                body, template_labels, lambda found: found.setdefault(labels.LUNA_MANAGED, "true")
            )
    except _NotAMapping as error:
        raise ObjectRenderError([RenderFailure(error.path, "is not a mapping; cannot add labels")]) from None
    return body


def customize(
    manifest: Manifest,
    body: Body,
    replicas: int | None,
    completions: int | None,
    overrides: Sequence[FieldOverride],
) -> Body:
    """Steps 4–5: a copy of ``body`` with its replicas and overrides. Raises ObjectRenderError listing every
    override that cannot be applied."""
    failures: list[RenderFailure] = []
    if replicas is not None:
        try:
            body = _with_replicas(manifest, body, replicas, completions)
        except _NotAMapping as error:
            failures.append(RenderFailure(error.path, f"is not a mapping; cannot set replicas to {replicas}"))
    for override in overrides:
        try:
            body = fieldpaths.set_value(body, override.path, override.value)
        except (ValueError, TypeError, KeyError, IndexError) as error:
            failures.append(RenderFailure(override.path.text, f"cannot apply override: {error}"))
    if overrides:
        failures += _relations_set_by_overrides(body)
    if failures:
        raise ObjectRenderError(failures)
    return body


def _relations_set_by_overrides(body: Body) -> list[RenderFailure]:
    """Step 1 stripped ``objects.CLUSTER_RELATION_FIELDS``, so any found now an override set (its path, or a
    whole ``metadata``): a failure each, as for an override that cannot be applied."""
    metadata = body.get("metadata")
    if not isinstance(metadata, dict):
        return []
    return [
        RenderFailure(
            f"metadata.{name}",
            "cannot apply override: a relation of one cluster's objects is never rendered (the garbage "
            "collector deletes an object whose owner is absent; a finalizer holds its deletion)",
        )
        for name in objects.CLUSTER_RELATION_FIELDS[::-1]  # ownerReferences first
        if name in metadata
    ]


def render_object(
    manifest: Manifest,
    copy: ClusterCopy,
    group: GroupPlan | None,
    settings: PlanSettings,
    *,
    completions: int | None = None,
) -> Body:
    """The object ``copy.cluster`` receives (all five steps). ``group`` None omits the two annotations.
    ``completions`` is this copy's share of a Job's completions (see ``completions_by_cluster``)."""
    group_name = group.name if group is not None else None
    policy = placed_by(group) if group is not None else None
    prepared = prepare(manifest, copy.cluster, group_name, policy, settings)
    return customize(manifest, prepared, copy.replicas, completions, copy.overrides)


def replica_field(manifest: Manifest) -> tuple[str, ...] | None:
    """Where the object keeps its replicas: ``spec.replicas``, a Job's ``spec.parallelism``, a CronJob's
    ``spec.jobTemplate.spec.parallelism``; for another kind ``spec.replicas`` when the source sets it."""
    key = (manifest.group, manifest.kind)
    if key in REPLICATED_KINDS:
        return ("spec", "replicas")
    job_spec = _JOB_SPEC.get(key)
    if job_spec is not None:
        return (*job_spec, "parallelism")
    return ("spec", "replicas") if _is_count(_lookup(manifest.body, ("spec", "replicas"))) else None


def source_replicas(manifest: Manifest) -> int | None:
    """The replicas the source asks for (default 1, as Kubernetes does), or None for kinds without them."""
    field = replica_field(manifest)
    if field is None:
        return None
    value = _lookup(manifest.body, field)
    return value if _is_count(value) else 1


def completions_by_cluster(object_plan: ObjectPlan) -> dict[str, int]:
    """Each copy's share of a Job's (or CronJob's) ``completions``, for copies whose replicas are set.

    The planner's split when it made one (a Divide splits completions over domains like parallelism,
    docs/design.md §3). Otherwise the total is split in proportion to the copies' parallelism by largest
    remainder
    (ties: larger parallelism, then cluster name), so the parts sum exactly to the source's completions;
    with a total parallelism of 0 it is split equally. Empty for other kinds and Jobs without completions.
    """
    planned = {copy.cluster: copy.completions for copy in object_plan.copies if copy.completions is not None}
    if planned:
        return planned
    manifest = object_plan.manifest
    job_spec = _JOB_SPEC.get((manifest.group, manifest.kind))
    total = _lookup(manifest.body, (*job_spec, "completions")) if job_spec else None
    if not _is_count(total):
        return {}
    weights = {copy.cluster: copy.replicas for copy in object_plan.copies if copy.replicas is not None}
    if not weights:
        return {}
    if sum(weights.values()) <= 0:
        weights = dict.fromkeys(weights, 1)
    weight_sum = sum(weights.values())
    shares = {cluster: divmod(total * weight, weight_sum) for cluster, weight in weights.items()}
    parts = {cluster: quotient for cluster, (quotient, _) in shares.items()}
    left = total - sum(parts.values())
    by_remainder = sorted(weights, key=lambda cluster: (-shares[cluster][1], -weights[cluster], cluster))
    for cluster in by_remainder[:left]:
        parts[cluster] += 1
    return parts


def _identify(metadata: dict[str, Any], manifest: Manifest, cluster: str, settings: PlanSettings) -> None:
    if not manifest.namespaced:
        metadata.pop("namespace", None)  # the source was warned that it is ignored: do not render it either
    elif not metadata.get("namespace"):
        items = list(metadata.items())
        metadata.clear()
        for key, value in items:
            if key != "namespace":
                metadata[key] = value
            if key == "name":
                metadata["namespace"] = manifest.namespace
        metadata.setdefault("namespace", manifest.namespace)
    found = metadata.get("labels")
    if found is not None and not isinstance(found, dict):
        raise _NotAMapping(("metadata", "labels"))
    new_labels = dict(found) if found else {}
    new_labels[labels.TARGET_CLUSTER] = cluster
    if settings.delegated:
        new_labels[labels.SCHEDULE] = "true"
    metadata["labels"] = new_labels


def _annotate(annotations: dict[str, Any], group_name: str, policy: str) -> None:
    annotations[labels.MATCHING_POLICY] = policy
    annotations[labels.SCHEDULE_GROUP] = group_name


def _with_replicas(manifest: Manifest, body: Body, replicas: int, completions: int | None) -> Body:
    key = (manifest.group, manifest.kind)
    job_spec = _JOB_SPEC.get(key)
    if job_spec is not None:

        def scale(spec: dict[str, Any]) -> None:
            spec["parallelism"] = replicas
            if completions is not None and spec.get("completions") is not None:
                spec["completions"] = completions

        return _updated(body, job_spec, scale)
    spec = body.get("spec")
    if key in REPLICATED_KINDS or (isinstance(spec, dict) and "replicas" in spec):
        return _updated(body, ("spec",), lambda found: found.__setitem__("replicas", replicas))
    return body  # a kind without replicas: nothing to scale


def _updated(body: Body, path: tuple[str, ...], update: Callable[[dict[str, Any]], object]) -> Body:
    """A copy of ``body`` whose dicts along ``path`` are copied (missing or null ones created), with
    ``update`` applied to the innermost copy. Raises _NotAMapping when a step is another type."""
    top = dict(body)
    current = top
    for depth, key in enumerate(path):
        child = current.get(key)
        if isinstance(child, dict):
            current[key] = child = dict(child)
        elif child is None:
            child = {}
            if key == "metadata" and key not in current:  # a created pod-template metadata reads best first
                rest = dict(current)
                current.clear()
                current[key] = child
                current.update(rest)
            else:
                current[key] = child
        else:
            raise _NotAMapping(path[: depth + 1])
        current = child
    update(current)
    return top


def _is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _lookup(body: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(body, dict):
            return None
        body = body.get(key)
    return body
