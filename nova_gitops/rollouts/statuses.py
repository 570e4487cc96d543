"""What ``nova-gitops rollout status`` shows: waves × clusters, as data and as table rows.

Built from a step's inputs (the waves, the ``Situation`` read from git) and the ``Decision`` the step would
take now, so status says what the controller's next step will do, and why. The document (``-o yaml|json``)
has stable keys and full commit ids for scripts; the rows are for a terminal (short ids).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, Final

from nova_gitops.api.problems import Problem
from nova_gitops.api.rollouts import format_duration
from nova_gitops.rollouts import health
from nova_gitops.rollouts.decisions import Decision, Situation
from nova_gitops.rollouts.records import API_VERSION, format_time
from nova_gitops.rollouts.waves import Wave

WAVE_HEADERS: Final = ("WAVE", "STATE", "CLUSTERS", "BAKE", "REASON")
CLUSTER_HEADERS: Final = ("CLUSTER", "WAVE", "RELEASED", "SYNCED", "HEALTH", "REASON")
STATUS_FOLDER: Final = "status"
"""Where agents' reports are on the status branch: ``status/<cluster>.yaml``."""


def document(
    waves: Sequence[Wave],
    situation: Situation,
    decision: Decision,
    now: datetime,
    refused: Sequence[Problem] = (),
) -> dict[str, Any]:
    """The status of the rollout of ``situation.target``; ``paused`` is true for a failure pause and for a
    pause by request (``pausedReason`` says which). ``refused``: the problems of agents' reports the
    controller refused (``status/<cluster>.yaml``): a cluster without a usable report says why."""
    requests = situation.requests
    paused_wave = next((status for status in decision.waves if status.state == "paused"), None)
    return {
        "apiVersion": API_VERSION,
        "kind": "RolloutStatus",
        "target": situation.target,
        "outcome": decision.record.outcome or "complete",
        "currentWave": decision.current_wave,
        "paused": requests.paused or paused_wave is not None,
        "pausedReason": paused_wave.reason if paused_wave else "",
        "startedAt": format_time(decision.record.started_at),
        "waves": _wave_items(waves, decision, now),
        "clusters": _cluster_items(waves, situation, decision, refused),
        "refusedReports": [str(problem) for problem in refused],
        "requestsProblem": requests.unreadable or None,
    }


def _wave_items(waves: Sequence[Wave], decision: Decision, now: datetime) -> list[dict[str, Any]]:
    """Each wave: its state and why, its clusters, its bake and when it passed."""
    statuses = {status.name: status for status in decision.waves}
    wave_items: list[dict[str, Any]] = []
    for wave in waves:
        status = statuses.get(wave.name)
        record = decision.record.wave(wave.name)
        baking = record.healthy_since is not None and record.passed_at is None
        wave_items.append(
            {
                "name": wave.name,
                "state": status.state if status else "pending",
                "reason": status.reason if status else "",
                "clusters": list(wave.clusters),
                "bakeTime": format_duration(wave.bake_time),
                "healthySince": format_time(record.healthy_since),
                "baked": _shown(now - record.healthy_since) if baking and record.healthy_since else None,
                "passedAt": format_time(record.passed_at),
            }
        )
    return wave_items


def _cluster_items(
    waves: Sequence[Wave], situation: Situation, decision: Decision, refused: Sequence[Problem]
) -> list[dict[str, Any]]:
    """Each cluster, wave by wave: what it was released and runs, its health and why, what the next step
    moves it to."""
    moves = {move.cluster: move for move in decision.moves}
    refusals = _refusals(refused)
    cluster_items: list[dict[str, Any]] = []
    for wave in waves:
        for name in wave.clusters:
            released = situation.released.get(name)
            facts = situation.reports.get(name)
            rendered = situation.rendered_at(name, released) if released else None
            verdict = health.judge(name, facts, released, rendered) if released else None
            missing = health.unaccounted(facts, rendered) if facts is not None and rendered else []
            move = moves.get(name)
            reason = decision.clusters.get(name) or (verdict.reason if verdict else "not released")
            if facts is None and name in refusals:
                reason = f"{reason}; its report was refused: {refusals[name]}"
            cluster_items.append(
                {
                    "name": name,
                    "wave": wave.name,
                    "released": released,
                    "synced": (facts.synced_revision or None) if facts else None,
                    "health": verdict.state if verdict else None,
                    "reason": reason,
                    "unaccounted": [health.label_of(key) for key in missing],
                    "next": None if move is None else {"kind": move.kind, "commit": move.commit},
                }
            )
    return cluster_items


def _refusals(refused: Sequence[Problem]) -> dict[str, str]:
    """Cluster → the first problem of its refused report (``status/<cluster>.yaml``)."""
    found: dict[str, str] = {}
    for problem in refused:
        folder, _, file = problem.location.file.rpartition("/")
        if folder.endswith(STATUS_FOLDER) and file.endswith(".yaml"):
            found.setdefault(file.removesuffix(".yaml"), problem.message)
    return found


def headline(status: dict[str, Any]) -> str:
    """``rollout of 9f1c2d3e4a5b: progressing, current wave canary`` (and why it is paused, or what a wave
    that passed and is not healthy now holds and how to go on)."""
    current = f", current wave {status['currentWave']}" if status["currentWave"] else ""
    line = f"rollout of {status['target'][:12]}: {status['outcome']}{current}"
    held = next(
        (
            wave["reason"]
            for wave in status["waves"]
            if wave["name"] == status["currentWave"] and wave["state"] == "held"
        ),
        "",
    )
    why = status["pausedReason"] or held
    return f"{line}\n{why}" if why else line


def wave_rows(status: dict[str, Any]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for wave in status["waves"]:
        bake = f"{wave['baked']} of {wave['bakeTime']}" if wave["baked"] else wave["bakeTime"]
        rows.append(
            (wave["name"], wave["state"], ",".join(wave["clusters"]) or "-", bake, wave["reason"] or "-")
        )
    return rows


def cluster_rows(status: dict[str, Any]) -> list[tuple[str, ...]]:
    return [
        (
            item["name"],
            item["wave"],
            (item["released"] or "-")[:7],
            (item["synced"] or "-")[:7],
            item["health"] or "-",
            item["reason"],
        )
        for item in status["clusters"]
    ]


def _shown(duration: timedelta) -> str:
    return format_duration(timedelta(seconds=int(max(duration, timedelta(0)).total_seconds())))
