"""The planner's side of its memory (``scheduling.memory``): the key of each part of a plan, made from that
part's inputs, and the parts found and made by one plan.

Every key holds *every* input its part reads — anything less would reuse a part computed for other inputs:
a workload's identity (file, digest, line, what the loader resolved), its group's previous placement,
reason and requests, exclusions and failback hold, the text of every cluster and policy the part reads,
the pod shapes, the status. The property test ``tests/unit/scheduling/test_plan_memory.py`` holds plans
made from memory to plans made afresh; a key missing an input fails it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from nova_gitops.api.clusters import Cluster
from nova_gitops.api.inputs import SourceSet
from nova_gitops.api.objects import Manifest
from nova_gitops.api.policies import SchedulePolicy
from nova_gitops.scheduling import candidates, components, demand, fitting, grouping, intents, memory
from nova_gitops.scheduling.demand import PodDemand
from nova_gitops.scheduling.memory import Key, PlanMemory
from nova_gitops.scheduling.planparts import Status
from nova_gitops.scheduling.plans import PreviousPlacement


@dataclass(frozen=True, slots=True)
class Work:
    """A group to place, with its policy or annotation intent and its pods (measured once per plan)."""

    group: grouping.Group
    policy: SchedulePolicy | None
    intent: intents.Pin | intents.SpreadOnto | None
    demands: tuple[demand.PodDemand, ...]
    need: Mapping[str, int]
    member_demands: tuple[tuple[demand.PodDemand, ...], ...]  # per member: ``demands`` is their concatenation

    @property
    def explicit(self) -> bool:
        return self.intent is not None or (self.policy is not None and self.policy.spread is not None)


class Recall:
    """The memory of earlier plans (``recalled``) and the memory this plan makes (``built``): the keys of
    its parts, as ``scheduling.memory`` describes them."""

    def __init__(self, recalled: PlanMemory, file_digests: Mapping[str, str], source: SourceSet) -> None:
        self.recalled, self.file_digests = recalled, file_digests
        self.measures: dict[Key, memory.Measure] = {}
        self.spreads: dict[Key, memory.Spreads] = {}
        self.components: dict[Key, memory.Placement] = {}
        self.decisions: dict[Key, memory.Decision] = {}
        self.groupings: dict[Key, memory.Grouping] = {}
        self.choices: dict[Key, memory.Choice] = {}
        self.keeps: dict[Key, memory.Kept] = {}
        self.fits: dict[Key, memory.Fitted] = {}
        # the spreads and keeps of the components found whole: kept for when they change, and not read
        self._carried_spreads: list[Key] = []
        self._carried_keeps: list[Key] = []
        self._carried_fits: list[Key] = []  # the fits of the spreads found whole
        self._pod_texts: dict[int, tuple[object, str]] = {}  # id of a pods tuple -> (it, its repr)
        self._clusters: str | None = None  # a digest of every cluster's text, made when first needed
        self._by_name: dict[str, Cluster] = {}
        self.cluster_text = {cluster.name: repr(cluster) for cluster in source.clusters}
        self.policy_text = {policy.name: repr(policy) for policy in source.policies}
        self.shapes = memory.digest(repr(sorted(source.pod_shapes.items())))
        # what a workload's policy depends on besides the workload: every policy and the namespaces' labels
        self.matching = memory.digest(
            repr(
                (
                    sorted(self.policy_text.items()),
                    sorted((name, sorted(found.items())) for name, found in source.namespace_labels.items()),
                )
            )
        )
        self._members: dict[str, Key | None] = {}
        self._identities: dict[int, Key | None] = {}

    def built(self) -> PlanMemory:
        return PlanMemory(
            self.measures,
            _Carried(self.spreads, self.recalled.spreads, self._carried_spreads),
            self.components,
            self.decisions,
            self.groupings,
            self.choices,
            _Carried(self.keeps, self.recalled.keeps, self._carried_keeps),
            _Carried(self.fits, self.recalled.fits, self._carried_fits),
        )

    def candidates(self, policy: SchedulePolicy, clusters: Sequence[Cluster]) -> candidates.Candidates:
        """``candidates.candidates``, from the memory when the policy and every cluster are unchanged."""
        if self._clusters is None:
            self._clusters = memory.digest(repr([self.cluster_text[cluster.name] for cluster in clusters]))
        key = (self._clusters, self.policy_text[policy.name])
        found = _found(self.choices, self.recalled.choices, key)
        if found is None:
            made = candidates.candidates(policy, clusters)
            tiers = tuple(tuple(cluster.name for cluster in tier) for tier in made.tiers)
            self.choices[key] = (tiers, made.not_ready, made.description)
            return made
        by_name = self._by_name = self._by_name or {cluster.name: cluster for cluster in clusters}
        tiers, not_ready, description = found
        return candidates.Candidates(
            tuple(tuple(by_name[name] for name in tier) for tier in tiers), not_ready, description
        )

    def identity(self, manifest: Manifest) -> Key | None:
        found = self._identities.get(id(manifest), False)
        if found is False:
            found = self._identities[id(manifest)] = memory.member_identity(manifest, self.file_digests)
        return found  # type: ignore[return-value]

    def members(self, group: grouping.Group) -> Key | None:
        """The identities of a group's members; None when one has none (its file has no digest)."""
        if group.name not in self._members:
            found = tuple(self.identity(member) for member in group.members)
            self._members[group.name] = None if None in found else found
        return self._members[group.name]

    def decide(self, manifest: Manifest, decide: Callable[[Manifest], memory.Decision]) -> memory.Decision:
        """A workload's intent, policy and overlap warning, from the memory when it and the policies are
        unchanged."""
        identity = self.identity(manifest)
        if identity is None:
            return decide(manifest)
        key = (self.matching, identity)
        found = _found(self.decisions, self.recalled.decisions, key)
        if found is None:
            found = self.decisions[key] = decide(manifest)
        return found

    def groups(
        self, policy: str, label_key: str | None, manifests: Sequence[Manifest]
    ) -> list[grouping.Group]:
        """``grouping.form_groups``, from the memory when the policy's workloads are the same."""
        identities = tuple(self.identity(manifest) for manifest in manifests)
        if None in identities:
            return grouping.form_groups(policy, label_key, manifests)
        key = (policy, label_key, identities)
        found = _found(self.groupings, self.recalled.groupings, key)
        if found is None:
            made = grouping.form_groups(policy, label_key, manifests)
            position = {id(manifest): index for index, manifest in enumerate(manifests)}
            found = tuple(
                (group.name, group.group_by, tuple(position[id(member)] for member in group.members))
                for group in made
            )
            self.groupings[key] = found
            return made
        return [
            grouping.Group(name, policy, group_by, tuple(manifests[index] for index in indices))
            for name, group_by, indices in found
        ]

    def measure(self, key: Key) -> memory.Measure | None:
        return _found(self.measures, self.recalled.measures, key)

    def _group(self, item: Work) -> Key | None:
        members = self.members(item.group)
        if members is None:
            return None
        policy = item.policy.name if item.policy is not None else None
        return (item.group.name, item.group.group_by, members, policy, repr(item.intent))

    def _context(self, work: Sequence[Work], clusters: Sequence[str], status: Status) -> Key:
        """What every group of a part shares: the status, the pod shapes, the clusters, the policies."""
        names = sorted({item.policy.name for item in work if item.policy is not None})
        texts = tuple(self.cluster_text[name] for name in clusters)
        return (status, self.shapes, texts, tuple(self.policy_text[name] for name in names))

    def spreads_key(
        self,
        explicit: Sequence[Work],
        closed: Mapping[str, frozenset[str]],
        clusters: Sequence[Cluster],
        status: Status,
    ) -> Key | None:
        groups = []
        for item in explicit:
            group = self._group(item)
            if group is None:
                return None
            groups.append((*group, tuple(sorted(closed[item.group.name]))))
        context = self._context(explicit, [cluster.name for cluster in clusters], status)
        return _digested("spreads", (*context, tuple(groups)))

    def spread(self, key: Key) -> memory.Spreads | None:
        """The explicit intents' stored placement; the fits of its clusters are kept too, unread."""
        found = _found(self.spreads, self.recalled.spreads, key)
        if found is not None:
            self._carried_fits += found.fits
        return found

    def fits_key(self, cluster: str, shares: Sequence[tuple[Sequence[PodDemand], Mapping[str, int]]]) -> Key:
        """The key of the shares fitted on ``cluster`` (``explicitfitting``): the cluster's text (its nodes'
        room) and each share's pods and requests, in order. Pods compare by ``repr`` (``PodShape`` sorts its
        mappings, so equal pods have equal text); a Duplicate asks every cluster for the same tuple, whose
        text is made once."""
        texts = []
        for pods, need in shares:
            known = self._pod_texts.get(id(pods))
            if known is None or known[0] is not pods:
                known = self._pod_texts[id(pods)] = (pods, repr(pods))
            texts.append((known[1], tuple(sorted(need.items()))))
        return ("fits", cluster, memory.fingerprint((self.cluster_text[cluster], tuple(texts))))

    def fitted(self, key: Key) -> memory.Fitted | None:
        return _found(self.fits, self.recalled.fits, key)

    def keep_fitted(self, key: Key, fitted: memory.Fitted) -> None:
        self.fits[key] = fitted

    def keep_spreads(self, key: Key, spreads: memory.Spreads) -> None:
        self.spreads[key] = spreads

    def component_key(
        self,
        part: components.Component,
        work: Sequence[Work],
        previous: PreviousPlacement,
        avoid: Mapping[str, Mapping[str, str]],
        fails_back: Callable[[str], bool],
        status: Status,
    ) -> Key | None:
        groups = []
        for item in work:
            group = self._group(item)
            if group is None:
                return None
            name = item.group.name
            groups.append(
                (
                    *group,
                    previous.groups.get(name),
                    previous.reasons.get(name),
                    memory.sorted_items(previous.requests.get(name)),
                    memory.sorted_items(avoid.get(name)),
                    fails_back(name),
                )
            )
        return _digested("component", (*self._context(work, part.clusters, status), tuple(groups)))

    def component(self, key: Key) -> memory.Placement | None:
        """A component's stored placement; its spreads, keeps and fits are kept too, unread, for when it
        changes."""
        found = _found(self.components, self.recalled.components, key)
        if found is not None:
            self._carried_spreads += () if found.spreads is None else (found.spreads,)
            self._carried_keeps += found.keeps
            self._carried_fits += found.fits
        return found

    def keeps_key(
        self,
        cluster: str,
        base: tuple[fitting.NodeRoom, ...],
        free: Mapping[str, int],
        placed: Mapping[str, int],
        tried: Sequence[Work],
    ) -> Key | None:
        """The key of the sticky groups kept on ``cluster`` (``placementstages``): the cluster's text, its
        room once the explicit intents took theirs (``base``, ``free``, ``placed``), the pod shapes, and the
        groups tried there in order, by name and members (single groups: their members are their pods). A
        digest of it, with the cluster's name: the groups' members are most of a component's key, kept
        again."""
        groups = []
        for item in tried:
            members = self.members(item.group)
            if members is None:
                return None
            groups.append((item.group.name, members))
        rooms = tuple((room.name, tuple(room.free.items())) for room in base)
        text = (self.cluster_text[cluster], self.shapes, rooms, tuple(free.items()), tuple(placed.items()))
        return ("keeps", cluster, memory.fingerprint((text, tuple(groups))))

    def kept(self, key: Key) -> memory.Kept | None:
        return _found(self.keeps, self.recalled.keeps, key)

    def keep_kept(self, key: Key, kept: memory.Kept) -> None:
        self.keeps[key] = kept

    def keep_component(self, key: Key, placement: memory.Placement) -> None:
        self.components[key] = placement


def _digested(kind: str, key: Key) -> Key:
    """A component's or a spread's key as a digest of its data (``memory.fingerprint``): the data names every
    input of every group of the component (megabytes at a few hundred clusters), and a dict hashes a tuple
    anew on every lookup, walking all of it — finding a component, keeping it and writing it hashed it four
    times. A key that is not plain data is kept whole (``publishing.planmemory`` does not keep its part)."""
    try:
        return (kind, memory.fingerprint(key))
    except ValueError:
        return key


Part = TypeVar("Part")


class _Carried(Mapping[Key, Part]):
    """The parts a plan made or found, and those of an earlier plan it carries unread (a component found
    whole carries its spreads and keeps): one is read from the earlier plan's memory only when asked for, so
    that keeping the memory (``publishing.planmemory.store`` asks only for parts it has not kept yet) does
    not read every cluster's keeps of every component that did not change."""

    def __init__(
        self, made: Mapping[Key, Part], recalled: Mapping[Key, Part], carried: Iterable[Key]
    ) -> None:
        self._made, self._recalled = made, recalled
        self._carried = [key for key in dict.fromkeys(carried) if key not in made]
        self._carried_keys = frozenset(self._carried)

    def __getitem__(self, key: Key) -> Part:
        found = self._made.get(key)
        if found is not None:
            return found
        if key in self._carried_keys:
            return self._recalled[key]
        raise KeyError(key)

    def __iter__(self) -> Iterator[Key]:
        yield from self._made
        yield from self._carried

    def __len__(self) -> int:
        return len(self._made) + len(self._carried)


def _found(made: dict[Key, Part], recalled: Mapping[Key, Part], key: Key) -> Part | None:
    """The part this plan made or found already, else the earlier plans'; one found there is kept in this
    plan's memory (what a plan used is what the next one may reuse)."""
    found = made.get(key)
    if found is None:
        found = recalled.get(key)
        if found is not None:
            made[key] = found
    return found
