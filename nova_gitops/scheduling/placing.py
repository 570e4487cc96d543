"""Single-cluster placement of a ScheduleGroup: which cluster, and the reason that says why.

Choice (docs/design.md §3 "Choice and stability"): the first tier with a fitting cluster wins; inside it the
group's
previous cluster when it still fits (stickiness), otherwise the cluster left with the most free capacity —
the largest minimum free fraction over the resources the group asks for — then the name. Stickiness never
beats tier order: a group that spilled to a lower tier fails back as soon as a higher tier fits (the
controller may hold it with ``failback=False`` while it waits out ``--failback-after``). Nothing fits: the
first autoscaled candidate, said so; otherwise unschedulable with one reason per cluster.

The room each cluster has left is the ledger's (``ledger``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from nova_gitops.api.clusters import Cluster
from nova_gitops.scheduling.candidates import Candidates
from nova_gitops.scheduling.demand import PodDemand
from nova_gitops.scheduling.ledger import Ledger


def _trial_order(
    candidates: Candidates, sticky: str | None, failback: bool, ledger: Ledger, need: Mapping[str, int]
) -> Iterator[Cluster]:
    """Clusters in the order they are tried: tier by tier, the sticky cluster first in its tier (first of all
    without failback), then the most free capacity left, then the name. Lazy: a sticky group that still fits
    — the common case — never ranks the rest of its tier."""
    sticky_tier = None if sticky is None else candidates.tier_of(sticky)
    if sticky is not None and not failback:
        yield from (cluster for cluster in candidates.clusters if cluster.name == sticky)
    for index, tier in enumerate(candidates.tiers):
        if failback and index == sticky_tier:
            yield from (cluster for cluster in tier if cluster.name == sticky)
        yield from ledger.ranked([cluster for cluster in tier if cluster.name != sticky], need)


@dataclass(frozen=True, slots=True)
class Decision:
    cluster: str | None  # None: unschedulable
    reason: str
    overflows: bool = False  # placed on an autoscaled cluster because it fits nowhere


def header(policy_name: str, candidates: Candidates) -> list[str]:
    """The first lines of a single placement's reason: the clusters the policy selects, those not ready."""
    names = ",".join(candidates.names)
    if not candidates.clusters:
        lines = [f"No cluster matches policy {policy_name} ({candidates.description});"]
    elif len(candidates.clusters) > 1:
        lines = [f"Multiple clusters matching policy {policy_name} ({candidates.description}): {names};"]
    else:
        lines = [f"One cluster matching policy {policy_name} ({candidates.description}): {names};"]
    return lines + [f"Cluster {name} skipped, it is not ready;" for name in candidates.not_ready]


RUNNERS_UP_FITTED = 3  # candidates after the chosen one whose fit is worked out for the reason
NAMED_VERDICTS = 5  # more clusters than this with one verdict are counted, not named


def _not_chosen(
    chosen: str,
    chosen_score: int,
    sticky: str | None,
    rest: Iterable[Cluster],
    candidates: Candidates,
    demands: Sequence[PodDemand],
    need: Mapping[str, int],
    ledger: Ledger,
    avoid: Mapping[str, str],
) -> Iterator[str]:
    """A short verdict for each candidate not tried because ``chosen`` was picked first, in the order they
    would have been tried (docs/design.md §3: every candidate gets a reason). The first ``RUNNERS_UP_FITTED``
    of the
    chosen one's tier are fitted ("fits, not chosen: …" or why not); the others are named with the rule that
    ranked them after it, unfitted: fitting every candidate for every group would cost a 100-cluster fleet's
    plan seconds. Clusters with the same verdict share a line, and more than ``NAMED_VERDICTS`` of them are
    counted (the header names every candidate)."""
    chosen_tier = candidates.tier_of(chosen)
    if chosen == sticky:
        ranked_after = f"the group stays on {chosen}"
    else:
        ranked_after = f"{chosen} has more free capacity, or as much and comes first by name"
    fitted = 0
    verdicts: dict[str, list[str]] = {}
    for cluster in rest:
        name = cluster.name
        if name in avoid:
            verdict = f"skipped, {avoid[name]}"
        elif candidates.tier_of(name) != chosen_tier:
            verdict = f"not chosen: {chosen} is in an earlier tier"
        elif fitted < RUNNERS_UP_FITTED:
            fitted += 1
            fit = ledger.fit(name, demands, need)
            if not fit.ok:
                verdict = f"skipped, does not have enough resources: {fit.shortfall}"
            elif chosen == sticky:
                verdict = f"fits, not chosen: {ranked_after}"
            elif ledger.score(name, need) < chosen_score:
                verdict = f"fits, not chosen: {chosen} has more free capacity"
            else:
                verdict = f"fits, not chosen: {chosen} has as much free capacity and comes first by name"
        else:
            verdict = f"not chosen: {ranked_after}"
        verdicts.setdefault(verdict, []).append(name)
    for verdict, names in verdicts.items():
        if len(names) == 1:
            yield f"Cluster {names[0]} {verdict};"
            continue
        plural = "fit," + verdict.removeprefix("fits,") if verdict.startswith("fits,") else verdict
        if len(names) <= NAMED_VERDICTS:
            yield f"Clusters {','.join(names)} {plural};"
        else:  # the header names them all: a 100-cluster fleet's reason stays one line per verdict
            yield f"{len(names)} other clusters {plural};"


def picked(cluster: str) -> str:
    return f"Picked cluster {cluster} because it has enough resources;"


def place_single(
    policy_name: str,
    candidates: Candidates,
    demands: Sequence[PodDemand],
    need: Mapping[str, int],
    ledger: Ledger,
    *,
    group: str,
    previous: str | None = None,
    avoid: Mapping[str, str] | None = None,
    failback: bool = True,
) -> Decision:
    """Choose one cluster for group ``group``, taking its room in ``ledger``. Reasons use Nova's event
    wording."""
    avoid = avoid or {}
    clusters = candidates.clusters
    lines = header(policy_name, candidates)
    if not clusters:
        return Decision(None, " ".join(lines))

    sticky = previous if previous is not None and candidates.tier_of(previous) is not None else None
    order = _trial_order(candidates, sticky, failback, ledger, need)
    for cluster in order:
        if cluster.name in avoid:
            lines.append(f"Cluster {cluster.name} skipped, {avoid[cluster.name]};")
            continue
        trial = ledger.try_insert(cluster.name, group, demands, need)
        if not trial.ok:
            lines.append(
                f"Cluster {cluster.name} skipped, does not have enough resources: {trial.shortfall};"
            )
            continue
        score = ledger.score(cluster.name, need)
        ledger.accept(trial)
        lines.append(picked(cluster.name))
        lines.extend(
            _not_chosen(cluster.name, score, sticky, order, candidates, demands, need, ledger, avoid)
        )
        return Decision(cluster.name, " ".join(lines))

    for cluster in clusters:
        if cluster.autoscaled and cluster.name not in avoid:
            ledger.accept(ledger.try_insert(cluster.name, group, demands, need, overflow=True))
            lines.append(
                f"Picked cluster {cluster.name} because no cluster has enough resources and it is autoscaled;"
            )
            return Decision(cluster.name, " ".join(lines), overflows=True)
    return Decision(None, " ".join(lines))
