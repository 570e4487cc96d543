"""The data a rollout step reads and decides: the situation in git, ref moves, wave statuses.

``stepping.step`` takes a ``Situation`` and returns a ``Decision``; the controller builds the one from git
and applies the other to git (docs/rollouts.md, "Entry points").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from nova_gitops.rollouts.health import ClusterFacts, WorkloadKey
from nova_gitops.rollouts.records import Record, Requests

Change = Literal["unchanged", "remedial", "gated"]
"""How a cluster's directory differs between the commit released to it and the target: not at all; only
by commits a reschedule made (``Nova-Remedial: true``); or by anything else. The caller computes it
from git."""

MoveKind = Literal["release", "unchanged", "remedial", "rollback"]
WaveState = Literal[
    "pending", "releasing", "waiting", "baking", "passed", "held", "paused", "rolled-back", "aborted"
]
"""``held``: the wave passed, and is not healthy now; the later waves wait for it (``stepping``)."""


@dataclass(frozen=True, slots=True)
class Situation:
    """What git says now. ``released``: each cluster's ``nova/clusters/<cluster>`` commit (None: no branch
    yet). ``changes``: each cluster's ``Change`` (absent: gated). ``continues``: every commit after the
    record's target up to ``target`` is remedial, so this is the same rollout, not a newer render."""

    target: str
    released: Mapping[str, str | None]
    changes: Mapping[str, Change] = field(default_factory=dict)
    reports: Mapping[str, ClusterFacts] = field(default_factory=dict)
    record: Record = field(default_factory=Record)
    requests: Requests = field(default_factory=Requests)
    continues: bool = False
    unreported: frozenset[str] = frozenset()
    """Clusters kept in their wave from the record (``Record.members``) though no usable report names them
    now (missing, or refused): never released to, and their wave waits for them."""
    rendered: Mapping[tuple[str, str], frozenset[WorkloadKey]] = field(default_factory=dict)
    """(cluster, commit) → the workloads rendered into ``clusters/<cluster>/`` at that commit, of the kinds
    the agent reports (``health.RENDERED_WORKLOAD_KINDS``): a report must account for each of them. A pair
    not given is not known, and a cluster judged at it is never healthy."""

    observed: Record | None = None
    """The record this controller decided last and git took, as read back (None: it has decided nothing
    since it started). What of ``record`` a step believes is judged against it (``rollouts.trust``)."""

    untouched: frozenset[str] = frozenset()
    """Clusters that run ``target`` and whose directory the rollout's change did not touch: the latest commit
    up to ``target`` that changed some cluster's directory other than by a reschedule left theirs as it was
    (the caller recomputes it from ``main``'s history, never from the record). They were advanced at once
    (unchanged, or remedial moves), not released through a gate, so a step that cannot rely on its own
    memory of the record (``rollouts.trust``) does not judge them: their health is not this change's."""

    def rendered_at(self, cluster: str, commit: str) -> frozenset[WorkloadKey] | None:
        return self.rendered.get((cluster, commit))


@dataclass(frozen=True, slots=True)
class Move:
    """Point ``nova/clusters/<cluster>`` at ``commit`` (None: delete the branch, which rolls back a
    cluster's first release; its agent then holds what it runs)."""

    cluster: str
    commit: str | None
    kind: MoveKind


@dataclass(frozen=True, slots=True)
class WaveStatus:
    name: str
    state: WaveState
    reason: str


@dataclass(frozen=True, slots=True)
class Decision:
    moves: tuple[Move, ...]
    record: Record
    waves: tuple[WaveStatus, ...]
    clusters: Mapping[str, str]  # cluster → why it is where it is
    requests_problem: str = ""
    """Why ``rollout/requests.yaml`` did not read ("" when it did): the rollout is paused for it."""
    notes: tuple[str, ...] = ()
    """What the controller logs as a warning: inputs it did not trust, and why (the requests that did not
    read; claims of the record it did not observe)."""

    @property
    def current_wave(self) -> str | None:
        """The first wave that has not passed, or passed and holds the rollout (``held``); None: the
        rollout is complete."""
        return next((wave.name for wave in self.waves if wave.state != "passed"), None)

    @property
    def paused(self) -> bool:
        return self.record.outcome == "paused"
