"""Fingerprints of what a render's bytes depend on, which ``increments`` compares with the previous render's
index to tell what it must emit again.

A group has two: its *layout* (which objects, on which clusters: that decides file paths and every
kustomization.yaml) and its *content* (everything else its bytes depend on: each object's source file and
line, replicas, completions, overrides, the group's name and policy). A cluster has one for the Namespaces
that follow their objects there. Source objects are known by their file's digest (``digests``: file →
digest of its text) and line; an object whose file has no digest has no content fingerprint, so it is
always emitted again.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Any

from nova_gitops.api.objects import Manifest
from nova_gitops.rendering import manifests, placementfiles
from nova_gitops.rendering.renders import overrides_key
from nova_gitops.scheduling.planparts import GroupPlan
from nova_gitops.scheduling.plans import FollowedNamespace, Plan

GroupFingerprints = tuple[bytes, bytes | None, frozenset[str]]
"""(layout, content, the clusters the group has copies on); content is None when a source is unknown."""


def of_group(group: GroupPlan, digests: Mapping[str, str]) -> GroupFingerprints:
    """(layout, content) fingerprints of a group's files (the module doc says what each covers), and the
    clusters it has copies on. This runs for every copy of every object (~100k at the reference size): it
    reads each field of the copies in one C-level pass (``map``) rather than building a tuple per copy.
    Copies are in the plan's order (sorted by cluster, ``ObjectPlan``): another order would only make a
    fingerprint differ, which re-renders, never reuses wrongly."""
    identities = []
    for object_plan in group.objects:
        manifest = object_plan.manifest
        group_name = manifest.api_version.rpartition("/")[0]
        identities.append(((group_name, manifest.kind, manifest.namespace, manifest.name), object_plan))
    identities.sort(key=_first)
    placed: list[tuple[tuple[str, str, str, str], tuple[str, ...]]] = []
    parts: list[object] = []
    where: set[str] = set()
    known = True
    for identity, object_plan in identities:
        copies = object_plan.copies
        on = tuple(map(_cluster_of, copies))
        where.update(on)
        placed.append((identity, on))
        if not known:
            continue
        source = _source_of(object_plan.manifest, digests)
        if source is None:
            known = False
            continue
        overrides: tuple[object, ...] = ()
        if any(map(_overrides_of, copies)):
            overrides = tuple(
                (index, overrides_key(copy.overrides)) for index, copy in enumerate(copies) if copy.overrides
            )
        replicas = tuple(map(_replicas_of, copies))
        parts.append((source, replicas, tuple(map(_completions_of, copies)), overrides))
    layout = placementfiles.fingerprint((group.name, manifests.placed_by(group), tuple(placed)))
    return layout, placementfiles.fingerprint((layout, tuple(parts))) if known else None, frozenset(where)


_first = operator.itemgetter(0)
_cluster_of = operator.attrgetter("cluster")
_replicas_of = operator.attrgetter("replicas")
_completions_of = operator.attrgetter("completions")
_overrides_of = operator.attrgetter("overrides")


def _source_of(manifest: Manifest, digests: Mapping[str, str]) -> tuple[Any, ...] | None:
    """What an object's bytes come from: its file's digest and line, and how the source set read it
    (identity, scope); None when the file has no digest."""
    digest = digests.get(manifest.location.file)
    if digest is None:
        return None
    return (
        digest,
        manifest.location.file,
        manifest.location.line,
        manifest.api_version,
        manifest.kind,
        manifest.namespace,
        manifest.name,
        manifest.namespaced,
    )


def followed(plan: Plan, digests: Mapping[str, str]) -> dict[str, bytes]:
    """Per cluster, a fingerprint of everything its followed Namespaces' bytes depend on."""
    placers = {group.name: manifests.placed_by(group) for group in plan.groups}
    by_cluster: dict[str, list[FollowedNamespace]] = {}
    for item in plan.followed_namespaces:
        by_cluster.setdefault(item.cluster, []).append(item)
    fingerprints: dict[str, bytes] = {}
    for cluster, items in by_cluster.items():
        parts = []
        for item in sorted(items, key=lambda item: (item.manifest.key, item.group)):
            where = _source_of(item.manifest, digests)
            parts.append(
                (
                    where if where is not None else repr(item.manifest.body),
                    item.group,
                    item.policy,
                    placers.get(item.group),
                    overrides_key(item.overrides),
                )
            )
        fingerprints[cluster] = placementfiles.fingerprint(tuple(parts))
    return fingerprints
