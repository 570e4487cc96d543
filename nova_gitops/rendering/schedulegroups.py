"""One file per ScheduleGroup: ``placement/<policy>/<group>.yaml``, the group's decision (docs/design.md §4).

Why one file per group: the decisions used to be one ``placement.yaml`` for the whole fleet (~5 MB per 100
clusters), which every decision rewrote — git's cost to commit and push it exceeded a one-change publish's
budget, a code host would not show its diff in a pull request, and past ~160 clusters it was over the
loader's 8 MiB limit. A group's file is proportional to the group: a one-workload change rewrites its
group's file, and a reviewer sees that file's diff.

The document has the shape of Nova's ScheduleGroup where Nova has one (``metadata.name``, ``policy.name``,
``objectRefs``, ``scheduled``, and in ``status`` the mode, phase, clusters and reason, as the controller
writes ScheduleGroups to a Nova control plane: ``views.schedule_group``), under our own apiVersion and kind
(``ScheduleGroupPlacement``: a record of the decision, not an object to apply), plus what Nova keeps
elsewhere: ``groupBy`` (Nova puts it in a label), each object's replicas per cluster, what the group's pods
request, and its warnings. Every list is sorted, so equal plans give equal bytes.

The next render reads the files back for stickiness (``previous_from_files``): the clusters, the reason and
the requests of each group. A repository still in the single-file layout is read the old way
(``oldlayout.parse_previous``), so stickiness holds across the upgrade.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from nova_gitops.api import labels, loading, quantities
from nova_gitops.rendering import layout, manifests, oldlayout
from nova_gitops.scheduling.planparts import GroupPlan, ObjectPlan
from nova_gitops.scheduling.plans import PreviousPlacement

KIND: Final = "ScheduleGroupPlacement"
INDEX_FILE: Final = "placement.yaml"
_API_GROUP: Final = labels.PLACEMENT_API_VERSION.split("/")[0]


def document(group: GroupPlan) -> dict[str, Any]:
    """The group's file as data; it depends only on the group plan."""
    status: dict[str, Any] = {
        "mode": group.mode,
        "phase": group.status,
        "clusters": sorted(group.clusters),
        "reason": group.reason,
    }
    if group.requests:
        status["requests"] = {
            resource: quantities.format_quantity(resource, amount)
            for resource, amount in sorted(group.requests.items())
        }
    if group.warnings:
        status["warnings"] = list(group.warnings)
    return {
        "apiVersion": labels.PLACEMENT_API_VERSION,
        "kind": KIND,
        "metadata": {"name": group.name},
        "policy": {"name": group.policy},
        "groupBy": {"key": group.group_by[0], "value": group.group_by[1]} if group.group_by else None,
        "objectRefs": [
            object_ref(item) for item in sorted(group.objects, key=lambda item: item.manifest.key)
        ],
        "scheduled": group.status != "unschedulable",
        "status": status,
    }


def object_ref(object_plan: ObjectPlan) -> dict[str, Any]:
    """apiVersion, kind, namespace (only for namespaced objects), name, and replicas per cluster as
    rendered (only for kinds with replicas)."""
    manifest = object_plan.manifest
    ref: dict[str, Any] = {"apiVersion": manifest.api_version, "kind": manifest.kind}
    if manifest.namespace:
        ref["namespace"] = manifest.namespace
    ref["name"] = manifest.name
    replicas = effective_replicas(object_plan)
    if replicas:
        ref["replicas"] = replicas
    return ref


def effective_replicas(object_plan: ObjectPlan) -> dict[str, int]:
    """Replicas per cluster as rendered (the copy's, else the source's, unless an override sets them);
    empty for kinds without replicas."""
    manifest = object_plan.manifest
    field = manifests.replica_field(manifest)
    if field is None:
        return {}
    default = manifests.source_replicas(manifest)
    replicas: dict[str, int] = {}
    for copy in sorted(object_plan.copies, key=lambda copy: copy.cluster):
        count = copy.replicas if copy.replicas is not None else default
        for override in copy.overrides:
            value = override.value
            if override.path.segments == field and isinstance(value, int) and not isinstance(value, bool):
                count = value
        if count is not None:
            replicas[copy.cluster] = count
    return replicas


class UnreadableFile(ValueError):
    """A file of a previous render that records no decision: which file, and why."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def previous_from_files(files: Mapping[str, bytes]) -> PreviousPlacement:
    """The decisions of a render (path → bytes: its group files, or a single-file ``placement.yaml``); only
    those files are looked at. Group files win: a render that has any is in the per-group layout, and its
    ``placement.yaml`` is an index. ``UnreadableFile`` for anything that is not a decision."""
    group_files = {path: data for path, data in files.items() if layout.is_group_file(path)}
    if not group_files:
        index = files.get(INDEX_FILE)
        if index is None or oldlayout.is_index(index):  # no group: an index decides nothing
            return PreviousPlacement.empty()
        try:
            return oldlayout.parse_previous(index.decode("utf-8"))
        except UnicodeDecodeError as error:
            raise UnreadableFile(INDEX_FILE, f"not UTF-8 text: {error.reason}") from None
        except ValueError as error:
            why = str(error).removeprefix(f"previous {INDEX_FILE}").removeprefix(":").strip()
            raise UnreadableFile(INDEX_FILE, why) from None
    decided: dict[str, tuple[str, ...]] = {}
    reasons: dict[str, str] = {}
    requests: dict[str, dict[str, int]] = {}
    for path in sorted(group_files):
        name, clusters, reason, requested = parse(group_files[path], path)
        if name in decided:
            raise UnreadableFile(path, f"group {name!r} has another file too")
        decided[name] = clusters
        if reason is not None:
            reasons[name] = reason
        if requested is not None:
            requests[name] = requested
    return PreviousPlacement(groups=decided, reasons=reasons, requests=requests)


def parse(data: bytes, path: str) -> tuple[str, tuple[str, ...], str | None, dict[str, int] | None]:
    """A group file's name, clusters, reason and requests; unknown fields are ignored, and anything else
    is an ``UnreadableFile`` naming ``path``."""
    try:
        found = loading.load_one(data)
    except loading.YamlRefused as error:
        raise UnreadableFile(path, f"not valid YAML: {error}") from None
    if not isinstance(found, dict):
        raise UnreadableFile(path, f"must be a mapping with kind: {KIND}")
    if found.get("kind") != KIND:
        raise UnreadableFile(path, f"has kind {found.get('kind')!r}, expected {KIND!r}")
    api_version = found.get("apiVersion")
    if not isinstance(api_version, str) or not api_version.startswith(_API_GROUP + "/"):
        expected = labels.PLACEMENT_API_VERSION
        raise UnreadableFile(path, f"has apiVersion {api_version!r}, expected {expected!r}")
    metadata = found.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    if not isinstance(name, str) or not name:
        raise UnreadableFile(path, "metadata.name must be a non-empty string")
    status = found.get("status")
    status = {} if status is None else status
    if not isinstance(status, dict):
        raise UnreadableFile(path, "status must be a mapping")
    clusters = status.get("clusters")
    clusters = [] if clusters is None else clusters
    if not isinstance(clusters, list) or not all(isinstance(c, str) and c for c in clusters):
        raise UnreadableFile(path, "status.clusters must be a list of cluster names")
    reason = status.get("reason")
    requested = status.get("requests")
    parsed: dict[str, int] | None = None
    if isinstance(requested, dict):
        try:
            parsed = {str(res): quantities.parse_quantity(value) for res, value in requested.items()}
        except quantities.QuantityError as error:
            raise UnreadableFile(path, f"status.requests: {error}") from None
    return name, tuple(clusters), reason if isinstance(reason, str) else None, parsed
