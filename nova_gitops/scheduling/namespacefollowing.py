"""Namespace following (``--namespace-follow``): a cluster that receives a namespaced object receives its
Namespace too, the source's own or a minimal one, named in the annotations after the first group (by name)
that pulled it in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from nova_gitops.api.clusters import Cluster
from nova_gitops.api.inputs import SourceSet
from nova_gitops.api.names import SYSTEM_NAMESPACES
from nova_gitops.api.objects import Manifest
from nova_gitops.api.policies import FieldOverride, SchedulePolicy
from nova_gitops.scheduling import distributing, memory
from nova_gitops.scheduling.planparts import GroupPlan
from nova_gitops.scheduling.plans import FollowedNamespace


def namespace_needs(
    groups: Sequence[GroupPlan], others: memory.NamespaceNeeds | None = None
) -> memory.NamespaceNeeds:
    """Where ``groups`` (sorted by name), and the groups ``others`` holds the needs of, send namespaced
    objects, and which Namespaces they render where."""
    rendered: set[tuple[str, str]] = set()
    wanted: dict[tuple[str, str], str] = {}
    for group in groups:  # sorted by name: the first group that pulls a namespace in names it
        for object_plan in group.objects:
            manifest = object_plan.manifest
            if manifest.kind == "Namespace" and manifest.group == "":
                rendered.update((copy.cluster, manifest.name) for copy in object_plan.copies)
            elif manifest.namespaced:
                for copy in object_plan.copies:
                    wanted.setdefault((copy.cluster, manifest.namespace), group.name)
    if others is not None:  # the first group by name of either
        for where, name in others.wanted.items():
            found = wanted.get(where)
            if found is None or name < found:
                wanted[where] = name
        rendered.update(others.rendered)
    return memory.NamespaceNeeds(wanted, frozenset(rendered))


def follow_namespaces(
    needs: memory.NamespaceNeeds,
    results: Mapping[str, GroupPlan],
    source: SourceSet,
    clusters: Sequence[Cluster],
    policies: Sequence[SchedulePolicy],
) -> list[FollowedNamespace]:
    """Namespaces for every cluster that receives a namespaced object but not its Namespace."""
    defined = {
        manifest.name: manifest
        for manifest in source.workloads
        if manifest.kind == "Namespace" and manifest.group == ""
    }
    by_policy = {policy.name: policy for policy in policies}
    labels_of = {cluster.name: cluster.labels for cluster in clusters}
    followed = []
    for (cluster, namespace), group_name in sorted(needs.wanted.items()):
        if (cluster, namespace) in needs.rendered:
            continue
        found = defined.get(namespace)
        if found is None and namespace in SYSTEM_NAMESPACES:
            continue
        group = results[group_name]
        manifest = found if found is not None else _minimal_namespace(namespace, group)
        policy = by_policy.get(group.policy or "")
        overrides: tuple[FieldOverride, ...] = ()
        if policy is not None and policy.spread is not None:
            overrides = distributing.overrides_for(
                policy.spread.overrides, labels_of[cluster].get(policy.spread.topology_key), manifest
            )
        followed.append(FollowedNamespace(manifest, cluster, group.name, group.policy, overrides))
    return followed


def _minimal_namespace(name: str, group: GroupPlan) -> Manifest:
    location = group.objects[0].manifest.location
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    return Manifest(body, location, "v1", "Namespace", name, "", False)
