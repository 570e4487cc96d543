"""What earlier plans worked out, kept so that a plan pays only for what changed (docs/publishing.md).

A plan is a pure function of its inputs, and most of its work splits into parts whose inputs are known
before the part runs. A ``PlanMemory`` maps the inputs of such a part — as plain, comparable data; what
thousands of parts share (every policy, the pod shapes) by a SHA-256 digest of its text — to what the part
produced; a part whose inputs are found is not computed again, and any input the part reads is in its key,
so what is reused is exactly what computing it would give. These
parts are kept:

- **decisions** and **groupings**: each workload's annotation intent or matching policy, keyed by the
  workload and every policy and namespace; each policy's groups, keyed by its workloads;
- **choices**: each policy's candidate clusters, keyed by the policy and every cluster;
- **measures**: the pods of a group's members (``demand``), keyed by the members' identities and whether the
  group is divided;
- **spreads**: the explicit intents of one component of the fleet (pins, spread-onto, spread policies; they
  are placed first, on the clusters' bare capacity) and each of its clusters' room once they are placed;
- **fits**: the explicit intents' shares fitted on one cluster, in name order, keyed by the cluster's text
  and the shares: when the spreads of a component change (a cluster lost, one Divide changed), the clusters
  whose shares did not are not fitted again — fitting every share on every cluster is most of the cost of
  placing spreads, and a change moves the shares of a few clusters;
- **keeps**: the sticky groups kept on one cluster (each group that was placed there stays when it still
  fits, in name order), keyed by the cluster's room once the explicit intents took theirs and the groups
  tried there, in order;
- **components**: the whole placement of one component: every group's plan and its clusters' usage.

A *component* is a set of clusters and the groups that may touch them (``components``): no placement in one
reads or changes the room of another, so each is planned alone and, when its inputs are those of an earlier
plan, reused whole. A change to one workload thus re-plans its own component; within it, the spreads are
reused when no explicit intent and no cluster changed, and the sticky groups kept on each cluster whose
room and groups did not change (the first stage of placement after the spreads, and most of its cost: each
cluster's keeps read and change that cluster's room alone).

A member's identity is its source file's name and content digest, its position, and what the loader
resolved about it (kind, name, namespace, scope): the same bytes at the same place load to the same object.
Files without a digest (objects a kustomize build made, whose bytes depend on more than one file) make
every part they are in computed afresh. The memory holds only data of the pure core; the caller keeps it
(the controller in memory, ``publish`` in its cache directory, next to the code version it was made by).
"""

from __future__ import annotations

import hashlib
import marshal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nova_gitops.api.objects import Manifest
from nova_gitops.scheduling import fitting
from nova_gitops.scheduling.demand import PodDemand
from nova_gitops.scheduling.intents import Pin, SpreadOnto
from nova_gitops.scheduling.pickling import by_fields
from nova_gitops.scheduling.planparts import ClusterCopy, ClusterUsage, GroupPlan, ObjectPlan

Key = tuple[object, ...]
"""Plain data (strings, numbers, None and tuples of them): compared by value, kept by pickling."""
Decision = tuple[Pin | SpreadOnto | None, str | None, str | None]
"""A workload's annotation intent, else the name of the policy it matches (None: none) and the warning
when it matches several."""
Choice = tuple[tuple[tuple[str, ...], ...], tuple[str, ...], str]
"""A policy's candidates: the names of each tier's clusters, the clusters not ready, the description."""
Measure = tuple[tuple[tuple[PodDemand, ...], ...], tuple[PodDemand, ...], Mapping[str, int]]
"""A group's pods: per member, all of them, and what they request in total."""
Grouping = tuple[tuple[str, tuple[str, str] | None, tuple[int, ...]], ...]
"""A policy's groups: each one's name, ``groupBy`` label and value, and its members' positions among the
policy's workloads."""


@dataclass(frozen=True, slots=True)
class StoredGroup:
    """A group's plan without its members' manifests (they are the caller's, found again by the key), so
    that the memory holds no copy of the source."""

    plan: GroupPlan  # with ``objects`` empty
    copies: tuple[tuple[ClusterCopy, ...], ...]  # per member, in the group's member order

    @classmethod
    def of(cls, plan: GroupPlan) -> StoredGroup:
        return cls(_with_objects(plan, ()), tuple(found.copies for found in plan.objects))

    def attached(self, members: Sequence[Manifest]) -> GroupPlan:
        """The stored plan with the group's members as they are now (the same by the key)."""
        objects = tuple(
            ObjectPlan(member, copies) for member, copies in zip(members, self.copies, strict=True)
        )
        return _with_objects(self.plan, objects)

    __reduce__ = by_fields


def _with_objects(plan: GroupPlan, objects: tuple[ObjectPlan, ...]) -> GroupPlan:
    """``replace(plan, objects=objects)``, made directly: a plan from memory attaches every group of the
    fleet, and ``replace`` costs several times more."""
    return GroupPlan(
        plan.name,
        plan.policy,
        plan.group_by,
        plan.mode,
        plan.status,
        plan.clusters,
        plan.reason,
        objects,
        plan.warnings,
        plan.requests,
    )


@dataclass(frozen=True, slots=True)
class BaseRoom:
    """A cluster's room once the explicit intents took theirs (``ledger.Ledger.base_of``)."""

    rooms: tuple[fitting.NodeRoom, ...]
    free: Mapping[str, int]
    base_free: Mapping[str, int]
    base_placed: Mapping[str, int]
    placed: Mapping[str, int]

    __reduce__ = by_fields


@dataclass(frozen=True, slots=True)
class Kept:
    """A cluster's single placements once the sticky groups that still fit there are kept
    (``ledger.Ledger.kept``): the groups, in name order, whether each packed (False: it overflows an
    autoscaled cluster) and why not, and after them each node's free room, the cluster's free room and the
    requests placed there. Plain data: a plan reads one per cluster."""

    names: tuple[str, ...]
    packed: tuple[bool, ...]
    shortfalls: tuple[str, ...]
    rooms: tuple[Mapping[str, int], ...]  # in node-name order
    free: Mapping[str, int]
    placed: Mapping[str, int]

    __reduce__ = by_fields


@dataclass(frozen=True, slots=True)
class Spreads:
    groups: Mapping[str, StoredGroup]
    rooms: Mapping[str, BaseRoom]
    namespaces: NamespaceNeeds  # of these groups alone: a Duplicate over every cluster is most of the fleet's
    fits: tuple[Key, ...] = ()  # the keys of its clusters' fitted shares, kept with it

    __reduce__ = by_fields


@dataclass(frozen=True, slots=True)
class Fitted:
    """The explicit intents' shares fitted on one cluster, in group-name order (``placementstages``): what
    each one found — the cluster's free room before it, and the shortfall ("" when it fit) — and the
    cluster's room after them all. Each share reads and changes that cluster's room alone."""

    outcomes: tuple[tuple[tuple[tuple[str, int], ...], str], ...]
    room: BaseRoom

    __reduce__ = by_fields


@dataclass(frozen=True, slots=True)
class Placement:
    groups: Mapping[str, StoredGroup]
    usage: Mapping[str, ClusterUsage]
    namespaces: NamespaceNeeds
    spreads: Key | None  # the key of the component's explicit intents (None: it has none), kept with it
    keeps: tuple[Key, ...] = ()  # the keys of its clusters' kept sticky groups, kept with it
    fits: tuple[Key, ...] = ()  # the keys of its clusters' fitted shares (``Spreads.fits``), kept with it

    __reduce__ = by_fields


@dataclass(frozen=True, slots=True)
class NamespaceNeeds:
    """Where a component's groups send namespaced objects and Namespaces (``namespacefollowing``'s namespace
    following): a component's clusters are its own, so the fleet's needs are the union of its components'."""

    wanted: Mapping[tuple[str, str], str]  # (cluster, namespace) -> the first group, by name, sending there
    rendered: frozenset[tuple[str, str]]  # (cluster, Namespace name) rendered by some group

    __reduce__ = by_fields


@dataclass(frozen=True, slots=True)
class PlanMemory:
    """The parts of earlier plans, by their inputs. ``plan`` returns the memory of its own parts; the
    controller, which plans several times per reconcile, keeps the ``merged`` memory of them."""

    measures: Mapping[Key, Measure] = field(default_factory=dict)
    spreads: Mapping[Key, Spreads] = field(default_factory=dict)
    components: Mapping[Key, Placement] = field(default_factory=dict)
    decisions: Mapping[Key, Decision] = field(default_factory=dict)
    groupings: Mapping[Key, Grouping] = field(default_factory=dict)
    choices: Mapping[Key, Choice] = field(default_factory=dict)
    keeps: Mapping[Key, Kept] = field(default_factory=dict)
    fits: Mapping[Key, Fitted] = field(default_factory=dict)

    def merged(self, other: PlanMemory) -> PlanMemory:
        """Both memories' parts (``other``'s where both have one: they are equal)."""
        return PlanMemory(
            {**self.measures, **other.measures},
            {**self.spreads, **other.spreads},
            {**self.components, **other.components},
            {**self.decisions, **other.decisions},
            {**self.groupings, **other.groupings},
            {**self.choices, **other.choices},
            {**self.keeps, **other.keeps},
            {**self.fits, **other.fits},
        )


EMPTY = PlanMemory()


def digest(text: str) -> str:
    """A SHA-256 digest of ``text``, for the context many keys share: comparing it costs nothing, comparing
    the text itself once per workload (every workload's decision names every policy) does not."""
    return hashlib.sha256(text.encode()).hexdigest()


def fingerprint(key: Key) -> str:
    """A digest of a key of plain data, for a key whose parts (every member of a cluster's groups) would be
    compared and kept again in full: its ``marshal`` bytes (format 2, the same for equal data in every
    process) are made at C speed, far faster than ``repr`` of a fleet's members."""
    plain: Any = key  # plain data, as every key is (marshal raises ValueError otherwise)
    return hashlib.blake2b(marshal.dumps(plain, 2), digest_size=20).hexdigest()


def member_identity(manifest: Manifest, file_digests: Mapping[str, str]) -> Key | None:
    """What determines a loaded object (module docstring); None when its file has no digest."""
    digest = file_digests.get(manifest.location.file)
    if digest is None:
        return None
    return (
        manifest.location.file,
        digest,
        manifest.location.line,
        manifest.api_version,
        manifest.kind,
        manifest.name,
        manifest.namespace,
        manifest.namespaced,
        manifest.scope_note,
    )


def sorted_items(mapping: Mapping[str, object] | None) -> Key | None:
    return None if mapping is None else tuple(sorted(mapping.items()))
