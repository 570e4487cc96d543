"""A plan's placement, component by component (``components``): each component is placed alone by the
placer's stages (``placementstages``), or taken whole from the memory of an earlier plan (``recalling``)
when its inputs are that plan's."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from nova_gitops.api.clusters import Cluster
from nova_gitops.scheduling import candidates, components, intents, memory
from nova_gitops.scheduling.ledger import Ledger
from nova_gitops.scheduling.memory import Key, StoredGroup
from nova_gitops.scheduling.namespacefollowing import namespace_needs
from nova_gitops.scheduling.placementstages import Placer, fails_back
from nova_gitops.scheduling.planparts import ClusterUsage, GroupPlan, Status
from nova_gitops.scheduling.plans import PreviousPlacement
from nova_gitops.scheduling.recalling import Recall, Work


def place_components(
    work: Sequence[Work],
    clusters: Sequence[Cluster],
    chosen: Mapping[str, candidates.Candidates],
    previous: PreviousPlacement,
    avoid: Mapping[str, Mapping[str, str]],
    failback: bool | Collection[str],
    status: Status,
    recall: Recall | None,
    partitioned: bool,
) -> tuple[dict[str, GroupPlan], dict[str, ClusterUsage], memory.NamespaceNeeds]:
    """Every group's plan and every cluster's usage, component by component (``components``): a component
    whose inputs an earlier plan had is taken from ``recall``'s memory; and the namespaces the groups need."""
    by_name = {cluster.name: cluster for cluster in clusters}
    items = {item.group.name: item for item in work}
    if partitioned:
        touched = {name: (*found.names, *found.not_ready) for name, found in chosen.items()}
        parts = components.partition((name, _touches(item, touched, by_name)) for name, item in items.items())
    else:
        parts = [components.Component(tuple(by_name), tuple(sorted(items)))]
    may_fail_back = fails_back(failback)
    results: dict[str, GroupPlan] = {}
    usage: dict[str, ClusterUsage] = {}
    wanted: dict[tuple[str, str], str] = {}
    rendered: set[tuple[str, str]] = set()
    for part in parts:
        part_work = [items[name] for name in part.groups]
        key = (
            None
            if recall is None
            else recall.component_key(part, part_work, previous, avoid, may_fail_back, status)
        )
        stored = None if recall is None or key is None else recall.component(key)
        if stored is not None:
            found = {
                item.group.name: stored.groups[item.group.name].attached(item.group.members)
                for item in part_work
            }
            part_usage, part_needs = stored.usage, stored.namespaces
        else:
            placer = Placer(
                [by_name[name] for name in part.clusters], chosen, previous, avoid, failback, status, recall
            )
            found, part_usage, part_needs = _placed(placer, part, part_work, recall, key)
        results.update(found)
        usage.update(part_usage)
        wanted.update(part_needs.wanted)
        rendered.update(part_needs.rendered)
    rest = [by_name[name] for name in components.untouched(list(by_name), parts)]
    idle = Ledger(rest)
    usage.update(
        (name, ClusterUsage(name, idle.allocatable[name], idle.available[name], {}))
        for name in (cluster.name for cluster in rest)
    )
    return results, usage, memory.NamespaceNeeds(wanted, frozenset(rendered))


def _placed(
    placer: Placer,
    part: components.Component,
    part_work: Sequence[Work],
    recall: Recall | None,
    key: Key | None,
) -> tuple[dict[str, GroupPlan], dict[str, ClusterUsage], memory.NamespaceNeeds]:
    """A component placed by ``placer``: its groups' plans, its clusters' usage and the namespaces its
    groups need; kept in ``recall``'s memory under ``key``."""
    found = placer.place_all(part_work)
    ledger = placer.ledger
    part_usage = {
        name: ClusterUsage(name, ledger.allocatable[name], ledger.available[name], ledger.placed[name])
        for name in part.clusters
    }
    part_needs = namespace_needs(
        [found[item.group.name] for item in part_work if not item.explicit], placer.explicit_needs
    )
    if recall is not None and key is not None:
        stored_groups = {name: StoredGroup.of(plan) for name, plan in found.items()}
        keeps = tuple(key for key in placer.keeps if key is not None)
        placement = memory.Placement(
            stored_groups, part_usage, part_needs, placer.spreads_key, keeps, placer.fits
        )
        recall.keep_component(key, placement)
    return found, part_usage, part_needs


def _touches(
    item: Work, touched: Mapping[str, tuple[str, ...]], clusters: Mapping[str, Cluster]
) -> tuple[str, ...]:
    """The clusters a group's placement may read or take room on (``components``); ``touched``: those of
    each policy (its candidates, and the clusters it selects that are not ready, which reasons name)."""
    if isinstance(item.intent, intents.Pin):
        return (item.intent.cluster,) if item.intent.cluster in clusters else ()
    if isinstance(item.intent, intents.SpreadOnto):
        return tuple(name for name in item.intent.clusters if name in clusters)
    return () if item.policy is None else touched[item.policy.name]
