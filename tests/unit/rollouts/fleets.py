"""A fleet in memory for the rollout tests: release refs, reports, the record and requests, with ``step``
applied the way the controller will apply it (move the refs, keep the record).

Every ``Fleet.step`` also asks again with the decision applied and asserts that nothing more is decided:
the idempotence that makes restarts and a second controller safe is checked in every scenario.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from nova_gitops.api.rollouts import RolloutStrategy
from nova_gitops.rollouts.decisions import Change, Decision, Situation
from nova_gitops.rollouts.health import ClusterFacts, WorkloadFacts, WorkloadKey
from nova_gitops.rollouts.records import Record, Requests
from nova_gitops.rollouts.stepping import step
from nova_gitops.rollouts.waves import Wave

START = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
OLD, NEW, NEWER = "a" * 40, "b" * 40, "c" * 40
FIVE_MINUTES = timedelta(minutes=5)


def wave(name: str, *clusters: str, max_parallel: int | None = None, bake: timedelta = FIVE_MINUTES) -> Wave:
    return Wave(name, clusters, max_parallel, bake)


def strategy(**settings: object) -> RolloutStrategy:
    return RolloutStrategy("fleet", **settings)  # type: ignore[arg-type]


WEB: WorkloadKey = ("apps", "Deployment", "shop", "web")
"""The one workload rendered for every cluster at every commit, unless ``Fleet.rendered`` says otherwise."""


def healthy(revision: str) -> ClusterFacts:
    return ClusterFacts(
        revision, (WorkloadFacts("Deployment", "shop", "web", True, revision, api_version="apps/v1"),)
    )


def unhealthy(
    revision: str, reason: str = "MinimumReplicasUnavailable", condition: str = "Available"
) -> ClusterFacts:
    return ClusterFacts(
        revision,
        (
            WorkloadFacts(
                "Deployment", "shop", "web", False, revision, condition, reason, "1/3 available", "apps/v1"
            ),
        ),
    )


@dataclass
class Fleet:
    waves: tuple[Wave, ...]
    strategy: RolloutStrategy | None = field(default_factory=strategy)
    target: str = NEW
    released: dict[str, str | None] = field(default_factory=dict)
    unchanged: set[str] = field(default_factory=set)  # clusters the target does not change
    remedial: set[str] = field(default_factory=set)
    reports: dict[str, ClusterFacts] = field(default_factory=dict)
    record: Record = field(default_factory=Record)
    requests: Requests = field(default_factory=Requests)
    continues: bool = False
    unreported: set[str] = field(default_factory=set)  # kept in their wave, no usable report now
    rendered: dict[tuple[str, str], frozenset[WorkloadKey]] = field(default_factory=dict)
    """(cluster, commit) → its rendered workloads, where not the one Deployment shop/web of every report."""
    now: datetime = START
    history: list[Decision] = field(default_factory=list)
    observed: Record | None = None
    """The record this controller decided last (None: it decided nothing yet, as after a restart)."""

    def __post_init__(self) -> None:
        for name in self.clusters:
            self.released.setdefault(name, OLD)
            self.reports.setdefault(name, healthy(OLD))

    @property
    def clusters(self) -> list[str]:
        return [name for each in self.waves for name in each.clusters]

    def change(self, name: str) -> Change:
        if self.released[name] == self.target or name in self.unchanged:
            return "unchanged"
        return "remedial" if name in self.remedial else "gated"

    def situation(self) -> Situation:
        changes = {name: self.change(name) for name in self.clusters}
        commits = {self.target, *(commit for commit in self.released.values() if commit is not None)}
        rendered = {
            (name, commit): self.rendered.get((name, commit), frozenset({WEB}))
            for name in self.clusters
            for commit in commits
        }
        return Situation(
            self.target,
            dict(self.released),
            changes,
            dict(self.reports),
            self.record,
            self.requests,
            self.continues,
            frozenset(self.unreported),
            rendered,
            self.observed,
            frozenset(
                name
                for name in self.clusters
                if self.released[name] == self.target and (name in self.unchanged or name in self.remedial)
            ),
        )

    def step(self, after: timedelta = timedelta(0)) -> Decision:
        self.now += after
        decision = step(self.strategy, self.waves, self.situation(), self.now)
        for move in decision.moves:
            self.released[move.cluster] = move.commit
        self.record = self.observed = decision.record
        again = step(self.strategy, self.waves, self.situation(), self.now)
        assert again.moves == (), f"not idempotent: {again.moves}"
        assert again.record == decision.record, "not idempotent: the record changed"
        self.history.append(decision)
        return decision

    def report_healthy(self, *names: str) -> None:
        for name in names or tuple(self.clusters):
            commit = self.released[name]
            assert commit is not None
            self.reports[name] = healthy(commit)

    def render(self, target: str, *, unchanged: set[str] | None = None) -> None:
        self.target = target
        self.unchanged = unchanged or set()

    def request(self, **changes: object) -> None:
        self.requests = replace(self.requests, **changes)  # type: ignore[arg-type]

    def state(self, decision: Decision, name: str) -> str:
        return next(status.state for status in decision.waves if status.name == name)

    def reason(self, decision: Decision, name: str) -> str:
        return next(status.reason for status in decision.waves if status.name == name)
