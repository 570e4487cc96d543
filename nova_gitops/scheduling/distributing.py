"""Spread placement: Duplicate and Divide over topology domains, with per-cluster overrides
(docs/design.md §3).

Spread is the user's explicit intent, so it is rendered as asked even where a cluster lacks room for its
share; each such cluster gets a warning naming the shortfall. Topology domains are the distinct values of
``topologyKey`` among the candidates. Divide splits pod controllers' replicas over domains by
``percentageSplit`` (equal weights when absent), then equally over a domain's clusters, with the quota method
of ``spreading``; a cluster whose share is 0 still receives the group's objects, with 0 replicas.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from nova_gitops.api import kinds, podshapes, quantities
from nova_gitops.api.clusters import Cluster
from nova_gitops.api.objects import Manifest
from nova_gitops.api.policies import FieldOverride, Override, SpreadConstraints
from nova_gitops.api.problems import Problem
from nova_gitops.scheduling import demand, spreading
from nova_gitops.scheduling.ledger import ExplicitRoom
from nova_gitops.scheduling.planparts import ClusterCopy, Mode, ObjectPlan

MAX_REPLICAS = 2**31 - 1
"""Replicas are an int32 in the Kubernetes API."""
MAX_DIVIDED_REPLICAS = 1_000_000
"""Divide hands out replicas one at a time (the quota method's definition): beyond this it takes seconds."""

_CONTROLLER_KINDS = frozenset(kind for _, kind in kinds.POD_CONTROLLERS)
"""Kinds some pod controller has: any other object (Services, ConfigMaps, most of a source) has no count,
known without splitting its apiVersion."""


def completion_count(manifest: Manifest) -> int | None:
    """A Job's (or CronJob's job template's) ``completions`` when set: Divide splits it like parallelism."""
    if manifest.kind not in _CONTROLLER_KINDS:
        return None
    controller = kinds.POD_CONTROLLERS.get((manifest.group, manifest.kind))
    if controller is None or controller.completions is None:
        return None
    node: object = manifest.body
    for key in controller.completions:
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, int) and not isinstance(node, bool) and node >= 0 else None


def replica_count(manifest: Manifest) -> int | None:
    """The replicas Divide splits: spec.replicas of a replicated controller (or of a custom kind shaped like
    one), a Job's parallelism (a CronJob's job template's); None for objects without a count (ConfigMaps,
    DaemonSets, bare Pods)."""
    if manifest.kind in _CONTROLLER_KINDS:
        controller = kinds.POD_CONTROLLERS.get((manifest.group, manifest.kind))
    else:  # a custom kind shaped like a Deployment (Argo Rollout, OpenKruise CloneSet) is divided like one
        controller = kinds.pod_controller(manifest.group, manifest.kind, manifest.body)
    if controller is None or controller.replicas is None:
        return None
    return kinds.replica_count(controller, manifest.body)


def member_demands(
    members: Sequence[Manifest],
    divides: bool,
    problems: list[Problem],
    shapes: Mapping[kinds.GroupKind, podshapes.PodControllerShape] = podshapes.BUILTIN_SHAPES,
) -> list[tuple[demand.PodDemand, ...]]:
    """Each member's pods (``demand.pod_demands``), in order; a problem in ``problems`` instead for a count
    Kubernetes refuses, one too large to divide when ``divides``, or a body whose pods cannot be read."""
    found: list[tuple[demand.PodDemand, ...]] = []
    for member in members:
        count = replica_count(member)
        if count is not None and count > MAX_REPLICAS:
            problems.append(
                Problem(member.location, f"{count} replicas is more than Kubernetes allows ({MAX_REPLICAS})")
            )
            continue
        largest = max(count or 0, completion_count(member) or 0)
        if divides and largest > MAX_DIVIDED_REPLICAS:
            message = f"{largest} replicas is too many to divide (at most {MAX_DIVIDED_REPLICAS:,})"
            problems.append(Problem(member.location, message))
            continue
        try:
            found.append(demand.pod_demands(member.body, shapes=shapes))
        except demand.DemandError as error:
            problems += [Problem(member.location, defect) for defect in error.problems]
    return found


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


def _capacity_warnings(
    members: Sequence[Manifest],
    member_pods: Sequence[tuple[demand.PodDemand, ...]],
    shares: Mapping[int, Mapping[str, int]],
    ledger: ExplicitRoom,
    clusters: Sequence[str],
    verdicts: dict[str, str],
) -> list[str]:
    """Consume each cluster's share of the group's pods; warn where a share does not fit. ``verdicts`` gets
    each cluster's verdict for the reason: ``fits``, ``no pods`` (a share of 0) or the shortfall in words.

    Clusters with the same replicas of every member (all of them under Duplicate, and under Divide those
    whose shares are equal) ask for the same pods: they are computed once per distinct share, and passed to
    the ledger as the same tuple, which it prepares for fitting only once."""
    warnings = []

    def pods_of(index: int, replicas: int | None) -> tuple[demand.PodDemand, ...]:
        given = member_pods[index]
        if replicas is None:
            return given
        if len(given) == 1:  # pod_demands(body, replicas), without reading the body again: only the count
            return (demand.PodDemand(given[0].shape, replicas),) if replicas > 0 else ()
        return demand.pod_demands(members[index].body, replicas)

    by_share: dict[tuple[int | None, ...], tuple[tuple[demand.PodDemand, ...], int, dict[str, int]]] = {}
    for cluster in clusters:
        share = tuple(_share(shares, index, cluster) for index in range(len(members))) if shares else ()
        found = by_share.get(share)
        if found is None:
            pods = tuple(
                pod
                for index in range(len(members))
                for pod in pods_of(index, share[index] if share else None)
            )
            found = by_share[share] = (pods, sum(pod.count for pod in pods), demand.total_requests(pods))
        pods, replicas, need = found
        free = dict(ledger.free(cluster))
        shortfall = ledger.consume_regardless(cluster, pods, need)
        if not shortfall:
            verdicts[cluster] = _FITS if pods else _NO_PODS
            continue
        short = [resource for resource in sorted(need) if need[resource] > free.get(resource, 0)]
        if short:  # Nova's wording: "wlc-2 needs 2500m cpu for its 5 replicas, has 1000m"
            needs = " and ".join(f"{quantities.in_words(res, need[res])} {res}" for res in short)
            has = " and ".join(quantities.in_words(res, max(free.get(res, 0), 0)) for res in short)
            verdicts[cluster] = f"needs {needs} for its {replicas} replicas, has {has}"
        else:  # enough in total, but no node can take a pod (selectors, taints, one pod too big)
            verdicts[cluster] = f"cannot run its {replicas} replicas: {shortfall}"
        warnings.append(f"{cluster} {verdicts[cluster]}")
    return warnings


_FITS = "fits"
_NO_PODS = "no pods"


def spread_verdicts(verdicts: Mapping[str, str], left_out: Sequence[str], spread: SpreadConstraints) -> str:
    """Every cluster of a spread with its verdict, in Nova's event wording, clusters with the same verdict
    named together: "Clusters wlc-1,wlc-2 have enough resources for their share; Cluster wlc-3 does not have
    enough resources: needs 2500m cpu for its 5 replicas, has 1000m;" ("Each cluster has enough resources"
    when all do: the reason already names them). No capacity verdict when no member has pods (a group of
    ConfigMaps has nothing to fit)."""
    part = "copy" if spread.mode == "Duplicate" else "share"
    parts: list[str] = []
    if any(verdict != _NO_PODS for verdict in verdicts.values()):
        fitting = [cluster for cluster, verdict in verdicts.items() if verdict == _FITS]
        if len(fitting) == len(verdicts):
            parts.append(f"Each cluster has enough resources for its {part};")
        else:
            parts.append(
                _named(
                    fitting,
                    f"has enough resources for its {part}",
                    f"have enough resources for their {part}s",
                )
            )
            empty = [cluster for cluster, verdict in verdicts.items() if verdict == _NO_PODS]
            parts.append(
                _named(empty, "gets no replicas: its share is 0", "get no replicas: their share is 0")
            )
            parts += [
                f"Cluster {cluster} does not have enough resources: {verdict};"
                for cluster, verdict in verdicts.items()
                if verdict not in (_FITS, _NO_PODS)
            ]
    key = spread.topology_key
    parts.append(_named(left_out, f"skipped, has no label {key}", f"skipped, have no label {key}"))
    return " ".join(part for part in parts if part)


def _named(clusters: Sequence[str], one: str, many: str) -> str:
    if not clusters:
        return ""
    if len(clusters) == 1:
        return f"Cluster {clusters[0]} {one};"
    return f"Clusters {','.join(clusters)} {many};"


def _share(shares: Mapping[int, Mapping[str, int]], index: int, cluster: str) -> int | None:
    split = shares.get(index)
    return None if split is None else split.get(cluster, 0)


def spread_group(
    chosen_by: str,
    spread: SpreadConstraints,
    clusters: Sequence[Cluster],
    members: Sequence[Manifest],
    ledger: ExplicitRoom,
    *,
    member_pods: Sequence[tuple[demand.PodDemand, ...]] | None = None,
) -> Spread | None:
    """Spread ``members`` over ``clusters`` (the policy's ready candidates by name, or the clusters an
    annotation names, in its order); ``chosen_by`` says which, for the reason. None: no cluster.
    ``member_pods``: each member's ``demand.pod_demands`` when the caller has them (read here otherwise)."""
    warnings: list[str] = []
    topology = {cluster.name: cluster.labels.get(spread.topology_key) for cluster in clusters}
    shares: dict[int, dict[str, int]] = {}
    completion_shares: dict[int, dict[str, int]] = {}
    if spread.mode == "Duplicate":
        names = tuple(cluster.name for cluster in clusters)
        detail = "Duplicate"
    else:
        names, detail = _divide(spread, clusters, members, shares, completion_shares, warnings)
    if not names:
        return None
    objects = tuple(
        ObjectPlan(
            manifest,
            _copies(spread, topology, names, manifest, shares.get(index), completion_shares.get(index)),
        )
        for index, manifest in enumerate(members)
    )
    warnings += [
        f"{copy.cluster} gets {copy.completions} completions of {plan.manifest.kind} "
        f"{plan.manifest.namespace}/{plan.manifest.name} but parallelism 0: they will not run there"
        for index, plan in enumerate(objects)
        if index in completion_shares  # only a divided completion count sets copy.completions
        for copy in plan.copies
        if copy.completions and not copy.replicas
    ]
    if member_pods is None:
        member_pods = [demand.pod_demands(manifest.body) for manifest in members]
    if spread.mode == "Divide":  # a declared kind (RayCluster, PyTorchJob) keeps its counts in several places
        warnings += [
            f"{manifest.kind} {manifest.namespace}/{manifest.name} is not divided (its pods are declared in "
            "pod sets, not one replica count): every cluster gets it whole"
            for index, manifest in enumerate(members)
            if manifest.kind not in _CONTROLLER_KINDS and member_pods[index] and index not in shares
        ]
    verdicts: dict[str, str] = {}
    warnings += _capacity_warnings(members, member_pods, shares, ledger, names, verdicts)
    left_out = (
        [cluster for cluster, value in topology.items() if value is None] if spread.mode == "Divide" else []
    )
    reason = f"Spread over {chosen_by}: {','.join(names)} ({detail});"
    reason = " ".join(part for part in (reason, spread_verdicts(verdicts, left_out, spread)) if part)
    return Spread(
        "duplicate" if spread.mode == "Duplicate" else "divide", names, objects, reason, tuple(warnings)
    )


def _divide(
    spread: SpreadConstraints,
    clusters: Sequence[Cluster],
    members: Sequence[Manifest],
    shares: dict[int, dict[str, int]],
    completion_shares: dict[int, dict[str, int]],
    warnings: list[str],
) -> tuple[tuple[str, ...], str]:
    """A Divide: each member's replicas (and completions) split over the topology domains, into ``shares``
    (and ``completion_shares``) by the member's index; the clusters spread onto, and the reason's detail."""
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
    return names, f"Divide by {spread.topology_key}: {weights}"


def _copies(
    spread: SpreadConstraints,
    topology: Mapping[str, str | None],
    names: tuple[str, ...],
    manifest: Manifest,
    split: Mapping[str, int] | None,
    completion_split: Mapping[str, int] | None,
) -> tuple[ClusterCopy, ...]:
    """What each cluster of ``names`` receives of ``manifest``: its share of the replicas and completions
    (None: as in the source) and the overrides of its topology value.

    A spread copies every member to every cluster (30,000 copies for 300 groups over 100 clusters), so
    overrides are looked up only for the clusters whose topology value has some, and a member copied as it
    is gets the tuple every such member gets (the values are frozen, so sharing them is safe)."""
    valued = {override.topology_value for override in spread.overrides}
    overrides = {
        name: overrides_for(spread.overrides, topology[name], manifest)
        for name in names
        if topology[name] in valued
    }
    if split is None and completion_split is None and not any(overrides.values()):
        return _plain_copies(names)
    return tuple(
        ClusterCopy(
            name,
            None if split is None else split.get(name, 0),
            overrides.get(name, ()),
            None if completion_split is None else completion_split.get(name, 0),
        )
        for name in names
    )


@functools.lru_cache(maxsize=64)
def _plain_copies(names: tuple[str, ...]) -> tuple[ClusterCopy, ...]:
    """Copies without shares or overrides; cached: the groups of a spread policy share their clusters."""
    return tuple(ClusterCopy(name) for name in names)
