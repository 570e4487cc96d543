"""The placer's stages: a component's groups placed in an order that makes every plan a fixed point.

Order of placement (docs/design.md §3 "Choice and stability"): explicit intents first — pins, spread-onto and
spread policies, which are rendered as asked whatever the room (with a warning where it is short) and do not
depend on the previous render; then sticky groups that still fit beside them (those that did not grow,
then those that grew); then groups that moved or that the previous render could not place, then new groups;
each stage in name order. Last, failing back to a higher tier and placing groups that found no cluster are
repeated until neither changes anything. A new pin is thus never refused for room a policy-placed group
held (the group moves, and its reason says why), and a change to one workload that is not a pin never pushes
an unchanged neighbour off its cluster.

Every plan is a fixed point: ``plan(S, previous=plan(S, previous=P)) == plan(S, previous=P)`` for any P.
Re-planning keeps every single placement (the ledger packs a cluster's groups in name order whatever the
order they arrived in, so each fits exactly as it did, and a group that overflows an autoscaled cluster
stays), finds nothing to fail back and nothing new to place (the last round found none on the same state),
keeps each placed group's reason and works out the rest, and every warning, from that same final state.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace

from nova_gitops.api.clusters import Cluster
from nova_gitops.scheduling import candidates, cordoning, explicitfitting, fitting, memory, placing
from nova_gitops.scheduling.explicitplacing import place_explicit, single_plan
from nova_gitops.scheduling.ledger import Ledger
from nova_gitops.scheduling.memory import Key, StoredGroup
from nova_gitops.scheduling.namespacefollowing import namespace_needs
from nova_gitops.scheduling.placing import place_single
from nova_gitops.scheduling.planparts import GroupPlan, Status
from nova_gitops.scheduling.plans import PreviousPlacement
from nova_gitops.scheduling.recalling import Recall, Work


def fails_back(failback: bool | Collection[str]) -> Callable[[str], bool]:
    """Whether a group (by name) may fail back: ``plan``'s ``failback``, all, none or those named."""
    if isinstance(failback, bool):
        return lambda _: failback
    return lambda name: name in failback


class Placer:
    """Places a plan's groups in the order that makes every plan a fixed point (module docstring)."""

    def __init__(
        self,
        clusters: Sequence[Cluster],
        chosen: Mapping[str, candidates.Candidates],
        previous: PreviousPlacement,
        avoid: Mapping[str, Mapping[str, str]],
        failback: bool | Collection[str],
        status: Status,
        recall: Recall | None = None,
    ) -> None:
        self.clusters, self.chosen, self.previous, self.recall = clusters, chosen, previous, recall
        self.cordoned = cordoning.cordoned(clusters)
        self.avoid, self.status = avoid, status
        self.fails_back = fails_back(failback)
        self.ledger = Ledger(clusters)
        self.autoscaled = {cluster.name for cluster in clusters if cluster.autoscaled}
        self.unknown_labels = {cluster.name for cluster in clusters if not cluster.node_labels_known}
        self.standby = {cluster.name for cluster in clusters if cluster.standby}
        self.results: dict[str, GroupPlan] = {}
        self.placed: dict[str, str] = {}  # single placements: group -> cluster
        self.overflows: set[str] = set()  # placed on an autoscaled cluster because nothing fits
        self.spreads_key: Key | None = None  # the memory's key of the explicit intents placed here
        self.keeps: list[Key | None] = []  # the memory's keys of each cluster's kept sticky groups
        self.fits: tuple[Key, ...] = ()  # the memory's keys of each cluster's fitted explicit shares
        self.explicit_needs = memory.NamespaceNeeds(
            {}, frozenset()
        )  # the explicit intents' (``_namespace_needs``)

    def place_all(self, work: Sequence[Work]) -> dict[str, GroupPlan]:
        ordered = sorted(work, key=lambda item: item.group.name)
        self._place_explicit_all([item for item in ordered if item.explicit])  # 1. on the bare capacity
        unchanged: list[Work] = []
        grown: list[Work] = []
        known: list[Work] = []
        new: list[Work] = []
        sticky: dict[str, str] = {}  # group -> the cluster it stays on if it still fits there
        for item in ordered:
            if item.explicit:
                continue
            name = item.group.name
            before = self.previous.groups.get(name)
            if before is None:
                new.append(item)
            elif (cluster := self._sticky_cluster(item)) is None:
                known.append(item)
            else:
                sticky[name] = cluster
                (grown if self._grown(item) else unchanged).append(item)
        moved = self._keep_all([*unchanged, *grown], sticky)  # 2. sticky groups that fit
        self._fail_back(ordered)
        for item in sorted((*moved, *known), key=lambda item: item.group.name):  # 3. the rest
            self._place(item, self._sticky_cluster(item))
        for item in new:
            self._place(item, None)
        while self._fail_back(ordered) | self._retry(ordered):  # 4. until nothing changes
            pass
        for name, cluster in self.placed.items():  # the warnings of the final state
            shortfall = self.ledger.overflowing(cluster).get(name) if cluster in self.autoscaled else None
            if shortfall:
                found = self.results[name]
                warning = f"cluster {cluster} must scale up for the group: {shortfall}"
                self.results[name] = replace(found, warnings=(*found.warnings, warning))
        if self.standby or self.unknown_labels:  # else no group has a note to add
            for item in ordered:
                self._note(item)
        return self.results

    def _place_explicit_all(self, explicit: Sequence[Work]) -> None:
        """Explicit intents, in name order, on the clusters' bare capacity; taken from the memory when it
        has them placed on the same clusters (and then so is the room they left)."""
        if not explicit:
            return
        closed = {
            item.group.name: cordoning.closed_to_spread(
                self.cordoned, self.previous.groups.get(item.group.name, ())
            )
            for item in explicit
        }
        recall = self.recall
        key = None if recall is None else recall.spreads_key(explicit, closed, self.clusters, self.status)
        self.spreads_key = key
        stored = None if recall is None or key is None else recall.spread(key)
        if stored is not None:
            self.fits = stored.fits
            for item in explicit:
                self.results[item.group.name] = stored.groups[item.group.name].attached(item.group.members)
            for name, room in stored.rooms.items():
                self.ledger.restore_base(name, room)
            self.explicit_needs = stored.namespaces
            return
        if recall is None or key is None:  # no memory: each share fitted as it is placed
            for item in explicit:
                self.results[item.group.name] = place_explicit(
                    item, self.clusters, self.chosen, self.ledger, self.status, closed[item.group.name]
                )
            self.explicit_needs = namespace_needs([self.results[item.group.name] for item in explicit])
            return
        fits = self.fits = self._place_explicit_fitted(explicit, closed, recall)
        self.explicit_needs = namespace_needs([self.results[item.group.name] for item in explicit])
        groups = {item.group.name: StoredGroup.of(self.results[item.group.name]) for item in explicit}
        rooms = {cluster.name: self.ledger.base_of(cluster.name) for cluster in self.clusters}
        recall.keep_spreads(key, memory.Spreads(groups, rooms, self.explicit_needs, fits))

    def _place_explicit_fitted(
        self, explicit: Sequence[Work], closed: Mapping[str, frozenset[str]], recall: Recall
    ) -> tuple[Key, ...]:
        """The explicit intents placed with their shares fitted cluster by cluster, each cluster's taken from
        the memory when its shares are an earlier plan's (``explicitfitting``); the fits' keys."""
        recorder = explicitfitting.Recorder()
        for item in explicit:
            place_explicit(item, self.clusters, self.chosen, recorder, self.status, closed[item.group.name])
        found, fits = explicitfitting.fit_all(recorder.asked, self.ledger, recall)
        replayer = explicitfitting.Replayer(found)
        for item in explicit:
            self.results[item.group.name] = place_explicit(
                item, self.clusters, self.chosen, replayer, self.status, closed[item.group.name]
            )
        return fits

    def _note(self, item: Work) -> None:
        """Say in the reason where the group lands on a Standby cluster (placing there wakes it) and where a
        group with a nodeSelector or required node affinity lands on a cluster that reports no node labels
        (it was assumed to satisfy them, docs/design.md §3 "Capacity and fit"). The reason of a group that
        stays may carry a note already: it is not repeated."""
        found = self.results[item.group.name]
        wanted = []
        if not self.standby.isdisjoint(found.clusters):  # a Duplicate has every cluster: looked at once
            wanted += [
                f"Cluster {cluster} is on Standby: placing there wakes it;"
                for cluster in found.clusters
                if cluster in self.standby
            ]
        if not self.unknown_labels.isdisjoint(found.clusters) and any(
            pod.shape.node_selector or pod.shape.required_affinity for pod in item.demands if pod.count
        ):
            wanted += [
                f"node labels unknown for {cluster}: nodeSelector not checked;"
                for cluster in found.clusters
                if cluster in self.unknown_labels
            ]
        if notes := [note for note in wanted if note not in found.reason]:
            self.results[item.group.name] = replace(found, reason=" ".join([found.reason, *notes]))

    def _sticky_cluster(self, item: Work) -> str | None:
        """The one cluster the previous render placed the group on, while a candidate and not avoided."""
        before = self.previous.groups.get(item.group.name, ())
        assert item.policy is not None
        if len(before) != 1 or self.chosen[item.policy.name].tier_of(before[0]) is None:
            return None
        return None if before[0] in self.avoid.get(item.group.name, {}) else before[0]

    def _grown(self, item: Work) -> bool:
        before = self.previous.requests.get(item.group.name)
        return before is not None and any(
            amount > before.get(resource, 0) for resource, amount in item.need.items()
        )

    def _keep_all(self, items: Sequence[Work], sticky: Mapping[str, str]) -> list[Work]:
        """Keep each group of ``items`` on its ``sticky`` cluster if it still fits there, in the order given;
        the groups that must move. Each cluster's keeps read and change only its own room, so they are worked
        out cluster by cluster, and taken from the memory for a cluster whose room and groups tried are an
        earlier plan's."""
        ledger, recall = self.ledger, self.recall
        tried: dict[str, list[Work]] = {}
        for item in items:
            tried.setdefault(sticky[item.group.name], []).append(item)
        kept: set[str] = set()
        for cluster, on_cluster in tried.items():
            key = None
            if recall is not None:
                key = recall.keeps_key(
                    cluster, ledger.rooms(cluster), ledger.free(cluster), ledger.placed[cluster], on_cluster
                )
                self.keeps.append(key)
            found = None if recall is None or key is None else recall.kept(key)
            if found is not None:
                ledger.restore_kept(
                    cluster, found, {item.group.name: (item.demands, item.need) for item in on_cluster}
                )
                kept.update(found.names)
                continue
            kept.update(item.group.name for item in on_cluster if self._fits_sticky(cluster, item))
            if recall is not None and key is not None:
                recall.keep_kept(key, ledger.kept(cluster))
        moved = []
        for item in items:
            if item.group.name in kept:
                self._keep(item, sticky[item.group.name])
            else:
                moved.append(item)
        return moved

    def _fits_sticky(self, cluster: str, item: Work) -> bool:
        """Place a sticky group on ``cluster`` if it still fits there (on an autoscaled cluster: always,
        which scales up for it); False when it must move."""
        name = item.group.name
        trial = self.ledger.try_insert(cluster, name, item.demands, item.need)
        if not trial.ok and cluster in self.autoscaled:
            trial = self.ledger.try_insert(cluster, name, item.demands, item.need, overflow=True)
        if trial.ok:
            self.ledger.accept(trial)
        return trial.ok

    def _keep(self, item: Work, cluster: str) -> None:
        """Record a sticky group kept where it was, with the reason that put it there."""
        name = item.group.name
        assert item.policy is not None
        reason = self.previous.reasons.get(name)
        if reason is None:
            lines = placing.header(item.policy.name, self.chosen[item.policy.name])
            reason = " ".join([*lines, placing.picked(cluster)])
        self._record(item, cluster, reason)

    def _record(self, item: Work, cluster: str | None, reason: str) -> None:
        name = item.group.name
        self.results[name] = single_plan(item, cluster, reason, (), self.status)
        if cluster is None:
            self.placed.pop(name, None)
        else:
            self.placed[name] = cluster

    def _place(self, item: Work, sticky: str | None, *, failback: bool | None = None) -> bool:
        """Place a group that is not (or no longer) placed; True when it found a cluster."""
        assert item.policy is not None
        name = item.group.name
        decision = place_single(
            item.policy.name,
            self.chosen[item.policy.name],
            item.demands,
            item.need,
            self.ledger,
            group=name,
            previous=sticky,
            avoid=cordoning.avoiding(self.avoid.get(name, {}), self.cordoned),
            failback=self.fails_back(name) if failback is None else failback,
        )
        reason = decision.reason
        if sticky is not None and decision.cluster == sticky and name in self.previous.reasons:
            reason = self.previous.reasons[name]  # it stays: the decision that put it there still holds
        self._record(item, decision.cluster, reason)
        return decision.cluster is not None

    def _fail_back(self, ordered: Sequence[Work]) -> bool:
        """Move single placements on a lower tier up to a higher tier that fits them now; True if any did."""
        moved = False
        for item in ordered:
            name = item.group.name
            cluster = self.placed.get(name)
            if cluster is None or item.policy is None or not self.fails_back(name):
                continue
            chosen = self.chosen[item.policy.name]
            tier = chosen.tier_of(cluster)
            if not tier:
                continue
            avoided = cordoning.avoiding(self.avoid.get(name, {}), self.cordoned)
            higher = [found for rank in chosen.tiers[:tier] for found in rank if found.name not in avoided]
            ledger = self.ledger
            if not any(
                fitting.within(item.need, ledger.free(found.name))  # cheap: most higher tiers are full
                and ledger.try_insert(found.name, name, item.demands, item.need).ok
                for found in higher
            ):
                continue
            removal = self.ledger.try_remove(cluster, name)
            if not removal.ok:
                continue
            self.ledger.accept(removal)
            self._place(item, cluster, failback=True)
            moved = True
        return moved

    def _retry(self, ordered: Sequence[Work]) -> bool:
        """Place again the groups that found no cluster, against the plan as it is now (so that their reasons
        do not depend on the order of placement); True if any found one."""
        found = False
        for item in ordered:
            if not item.explicit and item.group.name not in self.placed:
                found |= self._place(item, None)
        return found
