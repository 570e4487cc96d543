"""Renders in the single-file layout nova-gitops wrote before the per-group one (issue 24), for tests of what
reads them: the previous render of the first publish after an upgrade, ``diff`` across the upgrade,
``render --previous`` of an old render.

The layout is rebuilt here from a plan, as the old ``reports.placement_document`` wrote it: every group's
entry in one ``placement.yaml`` (``groups``, then ``unscheduled``, ``warnings`` and ``clusters``), and no
``placement/`` folder. Cluster directories are the same in both layouts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nova_gitops.api import labels, quantities
from nova_gitops.api.objects import ObjectKey
from nova_gitops.rendering import emitting, layout, schedulegroups
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.scheduling.planparts import GroupPlan, ObjectPlan
from nova_gitops.scheduling.plans import Plan

OLD_GITATTRIBUTES = b"placement.yaml linguist-generated=true\nPLACEMENT.md linguist-generated=true\n"


def _key(item: ObjectPlan) -> ObjectKey:
    return item.manifest.key


def group_entry(group: GroupPlan) -> dict[str, Any]:
    """A group's entry in the single-file placement.yaml."""
    entry: dict[str, Any] = {
        "name": group.name,
        "policy": group.policy,
        "groupBy": {"key": group.group_by[0], "value": group.group_by[1]} if group.group_by else None,
        "mode": group.mode,
        "status": group.status,
        "clusters": sorted(group.clusters),
        "reason": group.reason,
        "objects": [
            schedulegroups.object_ref(item)
            for item in sorted(group.objects, key=lambda item: item.manifest.key)
        ],
    }
    if group.requests:
        entry["requests"] = {
            resource: quantities.format_quantity(resource, amount)
            for resource, amount in sorted(group.requests.items())
        }
    if group.warnings:
        entry["warnings"] = list(group.warnings)
    return entry


def placement_yaml(plan: Plan, source: SourceInfo) -> bytes:
    """The single-file placement.yaml of ``plan``."""
    unscheduled = []
    for item in sorted(plan.unscheduled, key=lambda item: item.key):
        entry: dict[str, Any] = {"apiVersion": item.api_version, "kind": item.key.kind}
        if item.key.namespace:
            entry["namespace"] = item.key.namespace
        entry.update({"name": item.key.name, "policy": item.policy, "reason": item.reason})
        unscheduled.append(entry)
    document = {
        "apiVersion": labels.PLACEMENT_API_VERSION,
        "kind": "Placement",
        "source": {"repo": source.repo, "revision": source.revision},
        "groups": [group_entry(group) for group in sorted(plan.groups, key=lambda group: group.name)],
        "unscheduled": unscheduled,
        "warnings": list(plan.warnings),
        "clusters": [
            {"name": usage.cluster, "allocatable": {}, "available": {}, "placed": {}}
            for usage in sorted(plan.clusters, key=lambda usage: usage.cluster)
        ],
    }
    return emitting.dump(document).encode()


def old_layout(files: Mapping[str, bytes], plan: Plan, source: SourceInfo) -> dict[str, bytes]:
    """A render's files as the single-file layout had them: no ``placement/``, one placement.yaml."""
    old = {path: data for path, data in files.items() if not path.startswith(f"{layout.PLACEMENT_DIR}/")}
    old["placement.yaml"] = placement_yaml(plan, source)
    old[".gitattributes"] = OLD_GITATTRIBUTES
    old["PLACEMENT.md"] = b"# Placement\n\n(the single-file layout's summary)\n"
    return old
