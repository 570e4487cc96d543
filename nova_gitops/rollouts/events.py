"""The Kubernetes Events a rollout step means, for control-plane mode (docs/rollouts.md, "Visible").

Users of a Nova control plane watch ``kubectl get events``, not git: each release, rollback, passed wave,
pause and completed rollout becomes one Event. A release or rollback is told on the Cluster it moved
(``cluster.elotl.co/v1alpha1``); a wave's outcome on the RolloutStrategy. Only what changed is told: ref moves
when git took them, wave outcomes once per rollout (the sender remembers what it said per ``occasion``), so a
rollout baking for an hour sends nothing while it bakes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from nova_gitops.api import labels
from nova_gitops.rollouts.decisions import Decision

STRATEGY_KIND: Final = "RolloutStrategy"
_WAVE_EVENTS: Final[dict[str, tuple[Literal["Normal", "Warning"], str, str]]] = {
    "passed": ("Normal", "WavePassed", "wave {wave} {reason}"),
    "paused": ("Warning", "RolloutPaused", "wave {wave} {reason}"),
    "rolled-back": ("Warning", "WaveRolledBack", "wave {wave} rolled back: {reason}"),
    "aborted": ("Warning", "RolloutAborted", "wave {wave}: {reason}"),
}


@dataclass(frozen=True, slots=True)
class RolloutEvent:
    """One Event about ``kind``/``name`` (cluster-scoped objects: kube files their events in ``default``).
    ``occasion`` tells repeats apart: the same reason and message for the same occasion is sent once."""

    api_version: str
    kind: str
    name: str
    type: Literal["Normal", "Warning"]
    reason: str
    message: str
    occasion: tuple[str, ...]


def rollout_events(
    decision: Decision, strategy: str | None, *, moved: bool, recorded: bool
) -> list[RolloutEvent]:
    """The events of one step's ``decision``. ``moved``: git took its ref moves (a lost race moved nothing,
    and the next step decides again); ``recorded``: the step wrote the rollout record (a wave passed,
    failed, was promoted...): wave outcomes are told only then, so a restarted controller does not tell a
    finished rollout again. ``strategy`` None: no RolloutStrategy, every cluster follows ``main`` at once —
    releases are told, waves are not (there are none to speak of)."""
    target = decision.record.target or (decision.moves[0].commit or "" if decision.moves else "")
    short = target[:7]
    events: list[RolloutEvent] = []
    for move in decision.moves if moved else ():
        if move.kind in ("release", "remedial"):
            why = "a reschedule, released at once" if move.kind == "remedial" else "released"
            message = f"revision {short} {why} to {move.cluster}"
            events.append(_on_cluster(move.cluster, "Normal", "Released", message, target))
        elif move.kind == "rollback":
            back = (
                f"back to {move.commit[:7]}" if move.commit else "back to what it ran (first release undone)"
            )
            message = f"rollout of {short} rolled {move.cluster} {back}"
            events.append(_on_cluster(move.cluster, "Warning", "RolledBack", message, target))
    if strategy is None or not target or not (moved or recorded):
        return events
    for wave in decision.waves:
        told = _WAVE_EVENTS.get(wave.state)
        if told is not None:
            event_type, reason, wording = told
            message = f"rollout of {short}: " + wording.format(wave=wave.name, reason=wave.reason)
            events.append(_on_strategy(strategy, event_type, reason, message, (target, wave.name)))
    if decision.current_wave is None and decision.waves:
        message = f"rollout of {short} complete: every wave passed"
        events.append(_on_strategy(strategy, "Normal", "RolloutComplete", message, (target,)))
    return events


def _on_strategy(
    strategy: str,
    event_type: Literal["Normal", "Warning"],
    reason: str,
    message: str,
    occasion: tuple[str, ...],
) -> RolloutEvent:
    return RolloutEvent(
        labels.PLACEMENT_API_VERSION, STRATEGY_KIND, strategy, event_type, reason, message, occasion
    )


def _on_cluster(
    cluster: str, event_type: Literal["Normal", "Warning"], reason: str, message: str, target: str
) -> RolloutEvent:
    return RolloutEvent(
        labels.CLUSTER_API_VERSION, "Cluster", cluster, event_type, reason, message, (target,)
    )
