"""Failover headroom as the fleet's own files and metrics tell it: each loss reduced to what it strands
(``plans.LossOutcome``), for PLACEMENT.md (``publish --headroom``, the controller's
``--headroom-in-placement``), ``diff --headroom`` and the controller's ``nova_headroom_stranded_groups``.

Pure, like ``headroom``, which does the work: one what-if plan per loss, reusing today's plan memory.
Headroom costs one plan per cluster, so no render computes it unless asked (``PlanSettings.headroom``;
docs/headroom.md, "In operation").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from nova_gitops.api.inputs import SourceSet
from nova_gitops.scheduling import headroom
from nova_gitops.scheduling.headroom import Headroom
from nova_gitops.scheduling.memory import PlanMemory
from nova_gitops.scheduling.plans import LossOutcome, Plan, StrandedGroup
from nova_gitops.scheduling.stranding import Stranded


def outcomes(report: Headroom) -> tuple[LossOutcome, ...]:
    """Each loss of ``report``, worst first, as what it strands and how many groups it moves; accepted
    (``--ignore``d) groups are told as stranded too: the fleet's files hide no risk."""
    return tuple(
        LossOutcome(
            loss.name,
            tuple(stranded_group(item) for item in sorted((*loss.stranded, *loss.accepted), key=_by_name)),
            len(loss.moved),
        )
        for loss in report.losses
    )


def _by_name(item: Stranded) -> str:
    return item.group


def stranded_group(item: Stranded) -> StrandedGroup:
    """A stranded group reduced to what is told of it: why, what it requests, what is scarce elsewhere."""
    free = item.free_elsewhere
    scarce = {name: amount for name, amount in free.items() if amount < item.requests.get(name, 0)}
    return StrandedGroup(item.group, item.why, dict(item.requests), scarce, item.before)


def with_failover(
    source: SourceSet,
    plan: Plan,
    *,
    recalled: PlanMemory | None = None,
    file_digests: Mapping[str, str] | None = None,
) -> Plan:
    """``plan`` with its failover headroom (``plan.failover``): each loss planned against it, with the
    domain its settings name, reusing its memory and ``recalled``. ``headroom.HeadroomError`` for a
    domain no cluster has."""
    try:
        report = headroom.headroom(
            source,
            settings=plan.settings,
            domain=plan.settings.headroom_domain,
            recalled=recalled,
            file_digests=file_digests,
            today=plan,
        )
    except headroom.HeadroomError as error:
        raise as_flag(error) from None
    return dataclasses.replace(plan, failover=outcomes(report))


def as_flag(error: headroom.HeadroomError) -> headroom.HeadroomError:
    """``headroom``'s error for a domain no cluster has, naming the flag these commands take it by
    (``--headroom-domain``, not the ``headroom`` command's ``--domain``)."""
    text = str(error)
    if text.startswith("--domain "):
        text = "--headroom-domain " + text.removeprefix("--domain ")
    return headroom.HeadroomError(text)


def stranded_counts(found: Iterable[LossOutcome]) -> dict[str, int]:
    """Loss name → how many groups it strands (the metric's series)."""
    return {outcome.lost: len(outcome.stranded) for outcome in found}
