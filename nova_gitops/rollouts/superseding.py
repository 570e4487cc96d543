"""The record a rollout step starts from: the same rollout's, or a new one when a newer render supersedes it
(docs/rollouts.md, "Gates")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from nova_gitops.rollouts import trust
from nova_gitops.rollouts.decisions import Situation
from nova_gitops.rollouts.records import Record, WaveRecord
from nova_gitops.rollouts.waves import Wave


def starting_record(
    waves: Sequence[Wave], situation: Situation, trusted: trust.Trusted, now: datetime
) -> Record:
    """The record for ``situation.target``: the same rollout, or a new one starting over at wave 1.

    A newer render starts over; clusters released by the superseded rollout whose wave had not passed stay
    gated (their bytes have not been proven healthy) and keep the commit they had before it as the one a
    rollback returns to — every cluster it released, when its passes are only claimed (``trust``). A
    remedial-only newer commit (``continues``) keeps the rollout's progress."""
    record = trusted.record
    if record.target == situation.target:
        return record
    if record.target and situation.continues:
        return replace(record, target=situation.target)
    carried: dict[str, str | None] = {}
    # a cluster that runs the new target before its rollout started was released by one whose record is
    # lost (a record that no longer reads, or another target's): judged, not taken as never released —
    # unless git says the change did not touch its directory (it was advanced at once, ungated)
    verify = {
        cluster
        for wave in waves
        for cluster in wave.clusters
        if situation.released.get(cluster) == situation.target and cluster not in situation.untouched
    }
    if record.outcome not in ("rolled-back", "aborted"):
        for wave in waves:
            if trusted.claimed or record.wave(wave.name).passed_at is None:
                carried.update(
                    (name, base) for name, base in record.released_from.items() if name in wave.clusters
                )
                verify.update(name for name in record.verify if name in wave.clusters)
    return Record(
        situation.target,
        now,
        "progressing",
        tuple(WaveRecord(wave.name) for wave in waves),
        carried,
        verify=tuple(sorted(verify)),
    )
