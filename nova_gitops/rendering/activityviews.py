"""The rollout and reconciles pages' rows (issue 27): waves × clusters with why each is where it is and the
commands a person would run, and the controller's last reconciles.

Pure: the waves come from the strategy and the clusters (``rollouts.waves``), their states from the rollout
step's ``Decision`` when the controller has one (a render alone has none: every wave is shown as the plan
of a rollout, not started). The page changes nothing: the commands are text to copy. Texts from data are one
visible line (``fleetviews.shown``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from nova_gitops.api.clusters import Cluster
from nova_gitops.api.rollouts import RolloutStrategy, format_duration
from nova_gitops.rendering.fleetviews import AgentFacts, age, shown
from nova_gitops.rollouts.decisions import Decision
from nova_gitops.rollouts.waves import waves_for

MAX_RECONCILES: Final = 50
"""Reconciles the page lists, newest first (the controller keeps no more)."""
ACTIONS: Final = ("promote", "pause", "resume", "abort")


@dataclass(frozen=True, slots=True)
class WaveCluster:
    name: str
    synced: str  # the commit its agent runs (short), "-"
    released: str  # the commit released to it (short), "-"
    state: str  # what the step says of it, or "-"


@dataclass(frozen=True, slots=True)
class WaveRow:
    name: str
    state: str
    reason: str
    bake: str  # "2m of 5m", "5m", "-"
    clusters: tuple[WaveCluster, ...]


@dataclass(frozen=True, slots=True)
class RolloutView:
    strategy: str  # its name, "" without a RolloutStrategy (one implicit, ungated wave)
    target: str  # the commit rolled out (short), "" when none is
    outcome: str  # progressing, paused, complete, aborted… or "not started"
    current: str
    paused: bool
    paused_reason: str
    waves: tuple[WaveRow, ...]
    commands: tuple[str, ...]


def _bake(bake_time: str, healthy_since: datetime | None, passed: bool, now: datetime | None) -> str:
    if healthy_since is not None and not passed and now is not None:
        return f"{age(max(0.0, (now - healthy_since).total_seconds()))} of {bake_time}"
    return bake_time


def rollout_view(
    strategy: RolloutStrategy | None,
    clusters: Sequence[Cluster],
    decision: Decision | None,
    agents: Mapping[str, AgentFacts],
    *,
    where: str,
    now: datetime | None,
    released: Mapping[str, str] | None = None,
) -> RolloutView:
    """The rollout page. ``where``: the options that name the rendered repository and the source in the
    commands shown (``--repo URL --source SOURCE``), credentials already masked by the caller."""
    idle = "not started" if strategy is not None else "follows the branch head"  # without a step
    statuses = {status.name: status for status in decision.waves} if decision is not None else {}
    reasons = decision.clusters if decision is not None else {}
    rows = []
    for wave in waves_for(strategy, clusters):
        status = statuses.get(wave.name)
        record = decision.record.wave(wave.name) if decision is not None else None
        members = tuple(
            WaveCluster(
                name=shown(name),
                synced=(agents[name].synced_revision[:7] or "-") if name in agents else "-",
                released=shown((released or {}).get(name) or "-")[:7],
                state=shown(reasons.get(name, "-"), 200),
            )
            for name in wave.clusters
        )
        rows.append(
            WaveRow(
                name=shown(wave.name),
                state=status.state if status is not None else (idle if decision is None else "pending"),
                reason=shown(status.reason if status is not None else ""),
                bake=_bake(
                    format_duration(wave.bake_time),
                    record.healthy_since if record is not None else None,
                    record is not None and record.passed_at is not None,
                    now,
                ),
                clusters=members,
            )
        )
    paused_wave = next((status for status in statuses.values() if status.state == "paused"), None)
    return RolloutView(
        strategy=shown(strategy.name) if strategy is not None else "",
        target=shown(decision.record.target[:12]) if decision is not None else "",
        outcome=(decision.record.outcome or "complete") if decision is not None else idle,
        current=shown(decision.current_wave or "") if decision is not None else "",
        paused=bool(decision and (decision.paused or paused_wave is not None)),
        paused_reason=shown(
            paused_wave.reason if paused_wave else (decision.requests_problem if decision else "")
        ),
        waves=tuple(rows),
        commands=tuple(f"nova-gitops rollout {action} {where}".rstrip() for action in ("status", *ACTIONS)),
    )


@dataclass(frozen=True, slots=True)
class Reconciled:
    """One reconcile as the controller recorded it (the controller builds these from its outcomes)."""

    at: datetime
    outcome: str  # published, unchanged, superseded, failed
    commit: str
    duration: float
    skipped: bool = False
    replanned_because: str = ""
    notes: tuple[str, ...] = ()  # what moved and why (the commit message's lines), or the error's problems
    error: str = ""
    moved: int = 0
    unscheduled: int = 0


@dataclass(frozen=True, slots=True)
class ReconcileRow:
    at: str
    outcome: str
    commit: str
    duration: str
    moved: int
    what: tuple[str, ...]
    error: str


def reconcile_rows(reconciles: Sequence[Reconciled]) -> tuple[ReconcileRow, ...]:
    """The last ``MAX_RECONCILES``, newest first."""
    return tuple(
        ReconcileRow(
            at=entry.at.strftime("%Y-%m-%d %H:%M:%S"),
            outcome=entry.outcome + (" (skipped: nothing changed)" if entry.skipped else ""),
            commit=shown(entry.commit[:12]) if entry.commit else "-",
            duration=f"{entry.duration:.2f} s",
            moved=entry.moved,
            what=tuple(shown(note) for note in entry.notes[:20])
            + ((shown(f"planned because {entry.replanned_because}"),) if entry.replanned_because else ()),
            error=shown(entry.error, 1000),
        )
        for entry in list(reversed(reconciles))[:MAX_RECONCILES]
    )


def moves_of(group: str, reconciles: Sequence[Reconciled]) -> tuple[tuple[str, str, str], ...]:
    """What the reconciles' commits said of ``group`` (placed, moved, rescheduled, failed back), newest
    first, as (when, commit, line): the group's history while this controller ran."""
    found = []
    for entry in reversed(reconciles):
        for note in entry.notes:
            if group in note.replace(":", " ").split():
                found.append((entry.at.strftime("%Y-%m-%d %H:%M:%S"), shown(entry.commit[:12]), shown(note)))
    return tuple(found[:MAX_RECONCILES])
