"""Spread placement: Duplicate and Divide over topology domains, with per-cluster overrides (DESIGN §3).

Spread is the user's explicit intent, so it is rendered as asked even where a cluster lacks room for its
share; each such cluster gets a warning naming the shortfall. Topology domains are the distinct values of
``topologyKey`` among the candidates. Divide splits pod controllers' replicas over domains by
``percentageSplit`` (equal weights when absent), then equally over a domain's clusters, with the quota method
of ``spreading``; a cluster whose share is 0 still receives the group's objects, with 0 replicas.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from nova_gitops.api import kinds, quantities
from nova_gitops.api.clusters import Cluster
from nova_gitops.api.objects import Manifest
from nova_gitops.api.policies import FieldOverride, Override, SpreadConstraints
from nova_gitops.scheduling import demand, spreading
from nova_gitops.scheduling.placing import Ledger
from nova_gitops.scheduling.plans import ClusterCopy, Mode, ObjectPlan


def completion_count(manifest: Manifest) -> int | None:
    """A Job's (or CronJob's job template's) ``completions`` when set: Divide splits it like parallelism."""
    controller = kinds.POD_CONTROLLERS.get((manifest.group, manifest.kind))
    if controller is None or controller.completions is None:
        return None
    node: object = manifest.body
    for key in controller.completions:
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, int) and not isinstance(node, bool) and node >= 0 else None


def replica_count(manifest: Manifest) -> int | None:
    """The replicas Divide splits: spec.replicas of a replicated controller, a Job's parallelism (a
    CronJob's job template's); None for objects without a count (ConfigMaps, DaemonSets, bare Pods)."""
    controller = kinds.POD_CONTROLLERS.get((manifest.group, manifest.kind))
    if controller is None or controller.replicas is None:
        return None
    return kinds.replica_count(controller, manifest.body)


@dataclass(frozen=True, slots=True)
class Spread:
    mode: Mode
    clusters: tuple[str, ...]
    objects: tuple[ObjectPlan, ...]
    reason: str
    warnings: tuple[str, ...]


def overrides_for(
    overrides: Sequence[Override], topology_value: str | None, manifest: Manifest
) -> tuple[FieldOverride, ...]:
    """The field overrides that apply to ``manifest``'s copy in a cluster of ``topology_value``, in order."""
    if topology_value is None:
        return ()
    return tuple(
        field
        for override in overrides
        if override.topology_value == topology_value
        for resource in override.resources
        if resource.kind == manifest.kind
        and resource.api_version == manifest.api_version
        and resource.name == manifest.name
        and (resource.namespace is None or resource.namespace == manifest.namespace)
        for field in resource.fields
    )


def _domains(
    spread: SpreadConstraints, clusters: Sequence[Cluster], warnings: list[str]
) -> list[tuple[str, int, list[str]]]:
    """Topology domains as (value, weight, cluster names) in tie-break order: policy order, then name."""
    members: dict[str, list[str]] = {}
    for cluster in clusters:
        value = cluster.labels.get(spread.topology_key)
        if value is None:
            warnings.append(
                f"cluster {cluster.name} has no label {spread.topology_key}; it is left out of the spread"
            )
            continue
        members.setdefault(value, []).append(cluster.name)
    if not spread.percentage_split:  # equal weights; ties in the order the clusters were given
        return [(value, 1, names) for value, names in members.items()]
    domains: list[tuple[str, int, list[str]]] = []
    for split in spread.percentage_split:
        if split.topology_value not in members:
            warnings.append(
                f"percentageSplit names {spread.topology_key}={split.topology_value} but no ready candidate "
                f"cluster has it; its {split.percentage}% goes to the other domains"
            )
            continue
        domains.append((split.topology_value, split.percentage, members.pop(split.topology_value)))
    domains += [(value, 0, members[value]) for value in sorted(members)]
    if domains and not any(weight for _, weight, _ in domains):
        warnings.append("no domain of the percentageSplit has a ready candidate; replicas are split equally")
        domains = [(value, 1, names) for value, _, names in domains]
    return domains


def _capacity_warnings(objects: Sequence[ObjectPlan], ledger: Ledger, clusters: Sequence[str]) -> list[str]:
    """Consume each cluster's share of the group's pods; warn where a share does not fit."""
    warnings = []
    cache: dict[tuple[int, int | None], tuple[demand.PodDemand, ...]] = {}

    def pods_of(index: int, replicas: int | None) -> tuple[demand.PodDemand, ...]:
        found = cache.get((index, replicas))
        if found is None:
            found = cache[index, replicas] = demand.pod_demands(objects[index].manifest.body, replicas)
        return found

    copies = [{copy.cluster: copy.replicas for copy in plan.copies} for plan in objects]
    for cluster in clusters:
        pods = [pod for index in range(len(objects)) for pod in pods_of(index, copies[index][cluster])]
        replicas = sum(pod.count for pod in pods)
        need = demand.total_requests(pods)
        free = dict(ledger.free(cluster))
        shortfall = ledger.consume_regardless(cluster, pods, need)
        if not shortfall:
            continue
        short = [resource for resource in sorted(need) if need[resource] > free.get(resource, 0)]
        if short:  # Nova's wording: "wlc-2 needs 2500m cpu for its 5 replicas, has 1000m"
            needs = " and ".join(f"{quantities.in_words(res, need[res])} {res}" for res in short)
            has = " and ".join(quantities.in_words(res, max(free.get(res, 0), 0)) for res in short)
            warnings.append(f"{cluster} needs {needs} for its {replicas} replicas, has {has}")
        else:  # enough in total, but no node can take a pod (selectors, taints, one pod too big)
            warnings.append(f"{cluster} cannot run its {replicas} replicas: {shortfall}")
    return warnings


def _share(shares: Mapping[int, Mapping[str, int]], index: int, cluster: str) -> int | None:
    split = shares.get(index)
    return None if split is None else split.get(cluster, 0)


def spread_group(
    chosen_by: str,
    spread: SpreadConstraints,
    clusters: Sequence[Cluster],
    members: Sequence[Manifest],
    ledger: Ledger,
) -> Spread | None:
    """Spread ``members`` over ``clusters`` (the policy's ready candidates by name, or the clusters an
    annotation names, in its order); ``chosen_by`` says which, for the reason. None: no cluster."""
    warnings: list[str] = []
    topology = {cluster.name: cluster.labels.get(spread.topology_key) for cluster in clusters}
    shares: dict[int, dict[str, int]] = {}
    completion_shares: dict[int, dict[str, int]] = {}
    if spread.mode == "Duplicate":
        names = tuple(cluster.name for cluster in clusters)
        detail = "Duplicate"
    else:
        domains = _domains(spread, clusters, warnings)
        names = tuple(sorted(name for _, _, domain in domains for name in domain))
        for index, manifest in enumerate(members):
            total = replica_count(manifest)
            split_domains = [(value, weight, tuple(domain)) for value, weight, domain in domains]
            if total is not None and names:
                shares[index] = spreading.split_replicas(total, split_domains)
                completions = completion_count(manifest)
                if completions is not None:
                    completion_shares[index] = spreading.split_replicas(completions, split_domains)
        weights = ", ".join(f"{value} {weight}" for value, weight, _ in domains)
        detail = f"Divide by {spread.topology_key}: {weights}"
    if not names:
        return None
    objects = tuple(
        ObjectPlan(
            manifest,
            tuple(
                ClusterCopy(
                    name,
                    _share(shares, index, name),
                    overrides_for(spread.overrides, topology[name], manifest),
                    _share(completion_shares, index, name),
                )
                for name in names
            ),
        )
        for index, manifest in enumerate(members)
    )
    warnings += [
        f"{copy.cluster} gets {copy.completions} completions of {plan.manifest.kind} "
        f"{plan.manifest.namespace}/{plan.manifest.name} but parallelism 0: they will not run there"
        for plan in objects
        for copy in plan.copies
        if copy.completions and not copy.replicas
    ]
    warnings += _capacity_warnings(objects, ledger, names)
    reason = f"Spread over {chosen_by}: {','.join(names)} ({detail});"
    return Spread(
        "duplicate" if spread.mode == "Duplicate" else "divide", names, objects, reason, tuple(warnings)
    )
