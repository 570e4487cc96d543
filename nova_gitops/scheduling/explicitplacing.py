"""A group's plan from one decision: placed on one cluster (``single_plan``) or spread (``spread_plan``);
and the explicit intents (pins, spread-onto annotations, a policy's spread), which are rendered as asked
whatever the room, with a warning where it is short (``place_explicit``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from nova_gitops.api import labels
from nova_gitops.api.clusters import Cluster
from nova_gitops.api.policies import SpreadConstraints
from nova_gitops.scheduling import candidates, cordoning, distributing, intents
from nova_gitops.scheduling.ledger import ExplicitRoom
from nova_gitops.scheduling.planparts import ClusterCopy, GroupPlan, Mode, ObjectPlan, Status
from nova_gitops.scheduling.recalling import Work


def single_plan(
    item: Work, cluster: str | None, reason: str, warnings: Sequence[str], status: Status
) -> GroupPlan:
    """The group placed on ``cluster``, or unschedulable when it is None."""
    copies: tuple[ClusterCopy, ...] = (ClusterCopy(cluster),) if cluster is not None else ()
    return GroupPlan(
        item.group.name,
        item.policy.name if item.policy else None,
        item.group.group_by,
        "single",
        status if cluster is not None else "unschedulable",
        (cluster,) if cluster is not None else (),
        reason,
        tuple(ObjectPlan(member, copies) for member in item.group.members),
        tuple(warnings),
        dict(item.need),
    )


def spread_plan(
    item: Work,
    spread: SpreadConstraints,
    chosen: Sequence[Cluster],
    chosen_by: str,
    ledger: ExplicitRoom,
    status: Status,
    extra_warnings: Sequence[str] = (),
) -> GroupPlan:
    result = distributing.spread_group(
        chosen_by, spread, chosen, item.group.members, ledger, member_pods=item.member_demands
    )
    policy = item.policy.name if item.policy else None
    mode: Mode = "duplicate" if spread.mode == "Duplicate" else "divide"
    if result is None:
        reason = f"No cluster to spread onto among {chosen_by};"
        return GroupPlan(
            item.group.name,
            policy,
            item.group.group_by,
            mode,
            "unschedulable",
            (),
            reason,
            tuple(ObjectPlan(member, ()) for member in item.group.members),
            tuple(extra_warnings),
            dict(item.need),
        )
    return GroupPlan(
        item.group.name,
        policy,
        item.group.group_by,
        result.mode,
        status,
        result.clusters,
        result.reason,
        result.objects,
        (*extra_warnings, *result.warnings),
        dict(item.need),
    )


def place_explicit(
    item: Work,
    clusters: Sequence[Cluster],
    candidates_by_policy: Mapping[str, candidates.Candidates],
    ledger: ExplicitRoom,
    status: Status,
    closed: frozenset[str] = frozenset(),
) -> GroupPlan:
    """A pin, a spread-onto annotation or a policy's spread: rendered as asked, with a warning where it does
    not fit. Nothing here depends on the previous render but ``closed``: the cordoned clusters a policy's
    spread may not newly spread onto (``cordoning``)."""
    if isinstance(item.intent, intents.Pin):
        target = next((cluster for cluster in clusters if cluster.name == item.intent.cluster), None)
        if target is None:
            reason = (
                f"Annotation {labels.CLUSTER_PIN} names cluster {item.intent.cluster}, "
                "which is not in the cluster inventory;"
            )
            return single_plan(item, None, reason, (), status)
        warnings = [] if target.is_candidate else [f"pinned to cluster {target.name}, which is not ready"]
        if target.cordoned:
            warnings.append(f"pinned to cluster {target.name}, which is cordoned")
        shortfall = ledger.consume_regardless(target.name, item.demands, item.need)
        if shortfall:
            warnings.append(f"{target.name} does not have enough resources for the pinned group: {shortfall}")
        reason = f"Picked cluster {target.name} because annotation {labels.CLUSTER_PIN} pins it;"
        return single_plan(item, target.name, reason, warnings, status)
    if isinstance(item.intent, intents.SpreadOnto):
        found, missing = candidates.named(item.intent.clusters, clusters)
        warnings = [
            f"annotation {labels.SPREAD_ONTO} names cluster {name}, which is not in the cluster inventory"
            for name in missing
        ]
        spread = SpreadConstraints(item.intent.mode, labels.METADATA_NAME, (), ())
        return spread_plan(
            item,
            spread,
            found,  # in the annotation's order: ties of an equal split go to the first named
            f"clusters named by annotation {labels.SPREAD_ONTO}",
            ledger,
            status,
            warnings,
        )
    assert item.policy is not None and item.policy.spread is not None
    chosen = candidates_by_policy[item.policy.name]
    shut_out = sorted(closed.intersection(chosen.names))  # named when they would have been candidates
    shut = f"; {', '.join(shut_out)} {cordoning.CORDONED}" if shut_out else ""
    return spread_plan(
        item,
        item.policy.spread,
        sorted((c for c in chosen.clusters if c.name not in closed), key=lambda c: c.name),
        f"clusters matching policy {item.policy.name} ({chosen.description}{shut})",
        ledger,
        status,
    )
