"""What if the fleet changed? A change applied to a loaded source, planned by the planner's own rules with
today's placement as the previous one (docs/headroom.md).

Pure: a ``SourceSet`` and the changes in, a ``WhatIf`` out; the workflow (``workflows/whatif.py``) loads the
source and reads ``--add-cluster`` files, the CLI prints. Nothing here places anything: each change is made
to the loaded inputs exactly as editing the source's files would make it, and ``planning.plan`` decides —
so a what-if is the render that source would give (the property ``tests/unit/scheduling/test_whatif.py``
holds).

The changes, applied in this order whatever order they are given in (so that ``--without C --add-cluster
FILE`` replaces C):

- ``Without(C)``: C's agent stops reporting, so C leaves the inventory (the groups it held move, pins to it
  fail, a spread loses it);
- ``AddCluster(cluster)``: a Cluster joins the inventory (its name must be new);
- ``Cordon(C)``: C is labelled ``nova.elotl.co/cordoned: "true"`` (``scheduling.cordoning``);
- ``Capacity(C, percent)``: every node of C keeps ``percent`` % of its allocatable and of its available room
  (rounded down, per resource): the share of a node the other pods use shrinks with it, as when that part
  of the cluster is gone with its pods;
- ``Scale(reference, replicas)``: one workload's replica count (``spec.replicas``, a Job's parallelism).

How to call it::

    today = planning.plan(source, previous=previous, settings=settings)
    result = whatif.what_if(source, [whatif.Without("wlc-1")], today=today, settings=settings)
    result.after            # the plan with the change, today's placement as its previous placement
    result.unschedulable    # stranding.Stranded: what becomes unschedulable and what it lacks

``recalled`` and ``file_digests`` (``planning.plan``'s) make the plan reuse the memory of earlier plans: a
scaled workload's file is left out of the digests (``Applied.changed_files``), so nothing of it is recalled.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from nova_gitops.api import kinds, labels
from nova_gitops.api.clusters import Cluster, Node
from nova_gitops.api.inputs import SourceSet
from nova_gitops.api.objects import Manifest
from nova_gitops.errors import UserError
from nova_gitops.scheduling import explaining, planning, stranding
from nova_gitops.scheduling.memory import PlanMemory
from nova_gitops.scheduling.plans import Plan, PlanSettings, PreviousPlacement

MAX_PERCENT = 1000
"""``--capacity C=PERCENT`` takes 0 to this: a cluster may grow tenfold, not to an overflowing number."""
MAX_REPLICAS = 1_000_000


class WhatIfError(UserError):
    """A change that cannot be made: an unknown cluster or workload, a name given twice. Its message names
    the flag, as the user typed it."""


@dataclass(frozen=True, slots=True)
class Without:
    cluster: str

    def __str__(self) -> str:
        return f"--without {self.cluster}"


@dataclass(frozen=True, slots=True)
class AddCluster:
    cluster: Cluster

    def __str__(self) -> str:
        return f"--add-cluster {self.cluster.location.file}"


@dataclass(frozen=True, slots=True)
class Cordon:
    cluster: str

    def __str__(self) -> str:
        return f"--cordon {self.cluster}"


@dataclass(frozen=True, slots=True)
class Capacity:
    cluster: str
    percent: int

    def __str__(self) -> str:
        return f"--capacity {self.cluster}={self.percent}"


@dataclass(frozen=True, slots=True)
class Scale:
    reference: str  # KIND/[NAMESPACE/]NAME, as ``explain`` takes it
    replicas: int

    def __str__(self) -> str:
        return f"--scale {self.reference}={self.replicas}"


Change = Without | AddCluster | Cordon | Capacity | Scale


def parse_capacity(text: str) -> Capacity:
    """``--capacity CLUSTER=PERCENT`` (``50`` or ``50%``, 0 to ``MAX_PERCENT``); ``WhatIfError`` naming the
    flag otherwise."""
    name, sign, value = text.partition("=")
    number = value.strip().removesuffix("%")
    if not sign or not name or not (number.isascii() and number.isdigit()) or int(number) > MAX_PERCENT:
        raise WhatIfError(
            f"--capacity {text}: give CLUSTER=PERCENT, a whole percentage from 0 to {MAX_PERCENT} of every "
            "node's allocatable (e.g. wlc-1=50)"
        )
    return Capacity(name, int(number))


def parse_scale(text: str) -> Scale:
    """``--scale KIND/[NAMESPACE/]NAME=REPLICAS``; ``WhatIfError`` naming the flag otherwise."""
    reference, sign, value = text.rpartition("=")
    if not sign or not reference or not (value.isascii() and value.isdigit()) or int(value) > MAX_REPLICAS:
        raise WhatIfError(
            f"--scale {text}: give KIND/[NAMESPACE/]NAME=REPLICAS, replicas a whole number from 0 to "
            f"{MAX_REPLICAS} (e.g. deployment/shop/web=6)"
        )
    return Scale(reference, int(value))


_ORDER: Mapping[type, int] = {Without: 0, AddCluster: 1, Cordon: 2, Capacity: 3, Scale: 4}


@dataclass(frozen=True, slots=True)
class Applied:
    """The source with the changes made, and the files whose loaded objects changed (a scaled workload's):
    the plan memory must not recall their parts (``digests_after``)."""

    source: SourceSet
    changed_files: frozenset[str] = frozenset()


def apply(source: SourceSet, changes: Sequence[Change]) -> Applied:
    """``source`` with ``changes`` made (the module docstring's order); ``WhatIfError`` for one that names
    a cluster not in the inventory (after the removals and additions), a workload not in the source or
    without a replica count, a new cluster whose name is taken, or the same cluster or workload twice."""
    clusters = {cluster.name: cluster for cluster in source.clusters}
    workloads = list(source.workloads)
    changed_files: set[str] = set()
    seen: dict[tuple[type, str], Change] = {}
    for change in sorted(changes, key=lambda change: _ORDER[type(change)]):
        name = change.reference if isinstance(change, Scale) else _cluster_name(change)
        first = seen.get((type(change), name))
        if first is not None:  # even the same one: --capacity C=50 twice would keep 25 % of C
            raise WhatIfError(_twice(change, first))
        seen[(type(change), name)] = change
        if isinstance(change, Without):
            _known(change, change.cluster, clusters)
            del clusters[change.cluster]
        elif isinstance(change, AddCluster):
            if change.cluster.name in clusters:
                raise WhatIfError(
                    f"{change}: the inventory has a cluster {change.cluster.name} already; give --without "
                    f"{change.cluster.name} as well to replace it"
                )
            clusters[change.cluster.name] = change.cluster
        elif isinstance(change, Cordon):
            _known(change, change.cluster, clusters)
            clusters[change.cluster] = cordoned(clusters[change.cluster])
        elif isinstance(change, Capacity):
            _known(change, change.cluster, clusters)
            clusters[change.cluster] = scaled_capacity(clusters[change.cluster], change.percent)
        else:
            index, manifest = _workload(change, source)
            first = seen.setdefault((Manifest, str(manifest.key)), change)
            if first is not change:  # deploy/web and deployment/shop/web are one workload
                raise WhatIfError(f"{change}: {first} is given too; give each cluster or workload once")
            workloads[index] = scaled(change, manifest)
            changed_files.add(manifest.location.file)
    changed = replace(
        source,
        clusters=tuple(clusters[name] for name in sorted(clusters)),
        workloads=tuple(workloads),
    )
    return Applied(changed, frozenset(changed_files))


def _twice(change: Change, first: Change) -> str:
    """The error for a cluster or workload given twice: a new cluster's with where each document is (two
    documents of one file, or one file given twice, read the same as flags)."""
    if isinstance(change, AddCluster) and isinstance(first, AddCluster):
        name, here, there = change.cluster.name, change.cluster.location, first.cluster.location
        return f"{change}: cluster {name} ({here}) is in {there} too; give each cluster once"
    return f"{change}: {first} is given too; give each cluster or workload once"


def _cluster_name(change: Change) -> str:
    if isinstance(change, AddCluster):
        return change.cluster.name
    assert not isinstance(change, Scale)
    return change.cluster


def _known(change: Change, name: str, clusters: Mapping[str, Cluster]) -> None:
    if name not in clusters:
        known = ", ".join(sorted(clusters)) or "none"
        raise WhatIfError(f"{change}: no cluster {name} in the inventory (clusters: {known})")


def cordoned(cluster: Cluster) -> Cluster:
    """``cluster`` labelled as ``nova-gitops cordon`` labels it."""
    return replace(cluster, labels={**cluster.labels, labels.CORDONED: "true"})


def scaled_capacity(cluster: Cluster, percent: int) -> Cluster:
    """``cluster`` with every node's allocatable and available room at ``percent`` % (rounded down)."""

    def part(resources: Mapping[str, int]) -> dict[str, int]:
        return {resource: amount * percent // 100 for resource, amount in resources.items()}

    nodes = tuple(
        Node(
            node.name,
            part(node.allocatable),
            part(node.available),
            node.labels,
            node.taints,
            node.labels_known,
        )
        for node in cluster.nodes
    )
    return replace(cluster, nodes=nodes)


def _workload(change: Scale, source: SourceSet) -> tuple[int, Manifest]:
    try:
        manifest = explaining.find_object(source, change.reference)
    except UserError as error:
        raise WhatIfError(f"{change}: {error}") from None
    index = next(index for index, found in enumerate(source.workloads) if found is manifest)
    return index, manifest


def replica_path(manifest: Manifest) -> tuple[str, ...] | None:
    """Where ``manifest`` keeps the count the planner reads (``kinds.replica_count``): ``spec.replicas``, a
    Job's ``spec.parallelism``, a CronJob's job template's; None for kinds without one (a DaemonSet, a
    ConfigMap, a kind whose pods a PodControllerShape declares)."""
    controller = kinds.pod_controller(manifest.group, manifest.kind, manifest.body)
    return None if controller is None else controller.replicas


def scaled(change: Scale, manifest: Manifest) -> Manifest:
    """``manifest`` with its replica count set to ``change.replicas``; its body is copied, never changed."""
    path = replica_path(manifest)
    if path is None:
        raise WhatIfError(f"{change}: {manifest.key} has no replica count to scale")
    body: dict[str, Any] = copy.deepcopy(dict(manifest.body))
    node = body
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            raise WhatIfError(f"{change}: {manifest.key} has no {'.'.join(path[:-1])} to scale")
        node = child
    node[path[-1]] = change.replicas
    return replace(manifest, body=body)


def digests_after(file_digests: Mapping[str, str], applied: Applied) -> dict[str, str]:
    """``file_digests`` without the files ``applied`` changed: the plan memory recalls nothing of them."""
    return {name: value for name, value in file_digests.items() if name not in applied.changed_files}


def placement_of(plan: Plan) -> PreviousPlacement:
    """Today's placement as the what-if's previous placement: what reading ``plan``'s group files back gives
    (equal to ``rendering.reports.previous_of``, which the rendering layer has; a test holds them equal)."""
    return PreviousPlacement(
        groups={group.name: tuple(sorted(group.clusters)) for group in plan.groups},
        reasons={group.name: group.reason for group in plan.groups},
        requests={group.name: dict(group.requests) for group in plan.groups if group.requests},
    )


@dataclass(frozen=True, slots=True)
class WhatIf:
    """Today's plan, the plan with the changes, the changed source, and what becomes unschedulable."""

    changes: tuple[Change, ...]
    before: Plan
    after: Plan
    source: SourceSet  # with the changes made
    unschedulable: tuple[stranding.Stranded, ...]


def what_if(
    source: SourceSet,
    changes: Sequence[Change],
    *,
    today: Plan,
    settings: PlanSettings | None = None,
    recalled: PlanMemory | None = None,
    file_digests: Mapping[str, str] | None = None,
    elsewhere: Sequence[Mapping[str, int]] = (),
    previous: PreviousPlacement | None = None,
) -> WhatIf:
    """Plan ``source`` with ``changes`` made and ``today``'s placement as the previous placement (today is
    ``planning.plan(source, previous=..., settings=settings)``: the render as it is). ``recalled`` and
    ``file_digests`` are ``planning.plan``'s (the memory of earlier plans). ``elsewhere``: the free room of
    clusters outside ``source`` (``headroom.Reaches`` plans part of a fleet), for what is free elsewhere.
    ``previous``: ``placement_of(today)``, when the caller made it already (a headroom plans many losses)."""
    applied = apply(source, changes)
    digests = None if file_digests is None else digests_after(file_digests, applied)
    after = planning.plan(
        applied.source,
        previous=previous if previous is not None else placement_of(today),
        settings=settings or today.settings,
        recalled=recalled,
        file_digests=digests,
    )
    found = stranding.stranded(today, after, applied.source, elsewhere)
    return WhatIf(tuple(changes), today, after, applied.source, found)
