"""One rollout step per reconcile: read the release state from git, ask the pure ``rollouts.stepping.step``,
write the record, move the release refs (docs/rollouts.md).

Everything the step needs is read from git at the step: ``main``'s head and the release refs (one fetch),
which clusters' directories a release would change (tree ids), whether those changes were all remedial
(the ``Nova-Remedial`` trailers of the commits that touch each directory), the agents' reports (already read
by the reconcile), and the record and requests on the ``nova/rollout`` branch of the rendered repository.
The decision is applied record first, refs second, each a compare-and-swap; a lost race is not an error:
the next step reads again and decides again (``step`` is idempotent, so nothing is released twice).

Why the record and requests live on ``nova/rollout`` of the rendered repository and not on the status
branch: every agent may push to the status branch, and a request is trusted to pass gates — a compromised
cluster must not be able to promote a wave. Only the controller and the people who run
``nova-gitops rollout`` write to the rendered repository.

Why the driver remembers the record it wrote: people write ``nova/rollout`` too, so the record there is a
claim, and a pass or a bake start this controller did not observe must not release a wave
(``rollouts.trust``; docs/rollouts.md, "What the record can and cannot do"). For the same reason a rollback
the record asks for moves a branch only back in its history (``_backwards_only``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Final

import yaml

from nova_gitops import errors
from nova_gitops.api import loading
from nova_gitops.api.clusters import Cluster
from nova_gitops.api.rollouts import RolloutStrategy
from nova_gitops.controller.ports import ClusterReport
from nova_gitops.publishing import messages
from nova_gitops.publishing.gitwriting import RenderedRepo
from nova_gitops.publishing.releases import CLUSTERS_DIRECTORY, MoveOutcome, RefMove, Releases
from nova_gitops.publishing.rolloutrecords import RecordTooLarge, RolloutRecords, WriteOutcome
from nova_gitops.rollouts import decisions, health, records, stepping, waves
from nova_gitops.rollouts.decisions import Change, Decision
from nova_gitops.rollouts.health import WorkloadKey

ROLLOUT_BRANCH: Final = "nova/rollout"
RECORD_PATH: Final = "rollout/record.yaml"
REQUESTS_PATH: Final = "rollout/requests.yaml"


@dataclass(frozen=True, slots=True)
class StepResult:
    """What a step did: its decision (None: nothing to roll out yet), and whether git took it."""

    decision: Decision | None
    moved: MoveOutcome = MoveOutcome.NOTHING
    record: WriteOutcome = WriteOutcome.UNCHANGED
    due_at: datetime | None = None
    """When the decision's next timed change falls due (a bake's end, a health timeout): step again then."""
    released: Mapping[str, str | None] = field(default_factory=dict)
    """Each cluster's release branch after the step (its commit; None: none): what the web view shows."""


@dataclass(frozen=True, slots=True)
class Reading:
    """A step's inputs as read from git, and the record's bytes (for its compare-and-set)."""

    waves: tuple[waves.Wave, ...]
    situation: decisions.Situation
    record_bytes: bytes | None


class RolloutDriver:
    """The rollout of one rendered repository's ``branch`` through the publisher's local cache."""

    def __init__(
        self,
        repo: RenderedRepo,
        branch: str = "main",
        *,
        wall_clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        is_leader: Callable[[], bool] = lambda: True,
    ) -> None:
        self.repo = repo
        self.is_leader = is_leader
        self.releases = Releases(repo, branch=branch)
        self.records = RolloutRecords(repo, ROLLOUT_BRANCH, path=RECORD_PATH)
        self.requests = RolloutRecords(repo, ROLLOUT_BRANCH, path=REQUESTS_PATH)
        self.wall_clock = wall_clock
        self._refs_exist: bool | None = None  # without a strategy: whether to keep release refs at all
        self._observed: records.Record | None = None
        """The record this controller decided last and git took, as read back: what of the record on
        ``nova/rollout`` it may believe (``rollouts.trust``). None until its first step."""
        self._bases: dict[tuple[str, tuple[str, ...]], tuple[str | None, str | None]] = {}
        """(target, clusters) → (the latest gating commit up to target, its first parent): ``_untouched``."""

    def step(
        self,
        strategy: RolloutStrategy | None,
        clusters: Sequence[Cluster],
        reports: Mapping[str, ClusterReport],
    ) -> StepResult:
        """One step. Without a strategy the release refs are kept only where some existed when this
        controller first looked (someone set up ``--follow-release``, Flux or Argo CD on them): every cluster
        then follows ``main`` at once. Otherwise a controller without a strategy reads nothing more."""
        if strategy is None and self._refs_exist is False:
            return StepResult(None)
        with self.repo.locked():
            read = self.read(strategy, clusters, reports)
            if read is None:
                return StepResult(None)
            decision = stepping.step(strategy, read.waves, read.situation, self.wall_clock())
            due = stepping.next_deadline(strategy, read.waves, decision)
            written = WriteOutcome.UNCHANGED
            self._still_leading()
            if strategy is not None:
                data = dump_yaml(records.record_to_data(decision.record))
                written = self.records.write_record(data, read.record_bytes, _message(decision))
                if written is WriteOutcome.CHANGED:
                    return StepResult(decision, MoveOutcome.LOST, written)  # re-read at the next poll
                self._observed = records.record_from_data(loading.load_or_none(data))
            self._still_leading()
            released = read.situation.released
            moves, refused = self._backwards_only(decision, released)
            if refused:
                decision = replace(decision, notes=(*decision.notes, *refused))
            moved = self.releases.move(moves)
            after = dict(released)
            if moved is MoveOutcome.MOVED:
                after.update((cluster, move.target) for cluster, move in moves.items())
            return StepResult(decision, moved, written, due, after)

    def _backwards_only(
        self, decision: Decision, released: Mapping[str, str | None]
    ) -> tuple[dict[str, RefMove], list[str]]:
        """The decision's ref moves, less any rollback that would not move a branch back in its history
        (to an ancestor of the commit it holds, or by deleting it): the commit a rollback returns to comes
        from the record, which people can write, and must never release anything new."""
        moves: dict[str, RefMove] = {}
        refused: list[str] = []
        for move in decision.moves:
            current = released.get(move.cluster)
            if move.kind == "rollback" and move.commit is not None and not self._behind(move.commit, current):
                refused.append(
                    f"not rolling {move.cluster} back to {move.commit[:12]}: it is not an earlier commit of "
                    f"its branch (at {(current or 'nothing')[:12]}); the rollout record names it"
                )
                continue
            moves[move.cluster] = RefMove(current, move.commit)
        return moves, refused

    def _behind(self, commit: str, current: str | None) -> bool:
        if current is None or commit == current:
            return False
        found = self.repo.git.run("merge-base", "--is-ancestor", commit, current, check=False)
        return found.status == 0

    def read(
        self,
        strategy: RolloutStrategy | None,
        clusters: Sequence[Cluster],
        reports: Mapping[str, ClusterReport],
    ) -> Reading | None:
        """What a step decides on, read from git (None: nothing published, or no strategy and no release
        branches). ``rollout status`` decides on it without applying."""
        state = self.releases.read_state()
        if strategy is None and self._refs_exist is None:
            self._refs_exist = bool(state.released)
        if state.main is None or (strategy is None and not state.released):
            return None
        target = state.main
        wave_list = waves.waves_for(strategy, clusters)
        recorded = self.records.read_record()
        record = records.record_from_data(loading.load_or_none(recorded))  # unreadable: empty
        unreported: frozenset[str] = frozenset()
        if strategy is not None:
            wave_list, unreported = waves.keep_unreported(strategy, wave_list, record.members, state.released)
        names = [name for wave in wave_list for name in wave.clusters]
        rendered: dict[tuple[str, str], frozenset[WorkloadKey]] = {}
        for commit in {target, *(state.released.get(name) or target for name in names)}:
            at = [name for name in names if commit in (target, state.released.get(name))]
            rendered.update(
                ((name, commit), keys) for name, keys in self.releases.rendered_workloads(commit, at).items()
            )
        situation = decisions.Situation(
            target=target,
            released={name: state.released.get(name) for name in names},
            changes={name: self._change(state.released.get(name), target, name) for name in names},
            reports={name: health.facts_from_status(_status_of(report)) for name, report in reports.items()},
            record=record,
            requests=self._requests(),
            continues=bool(record.target) and self._same_rollout(record.target, target, names),
            unreported=unreported,
            rendered=rendered,
            observed=self._observed,
            untouched=self._untouched(target, names, state.released),
        )
        return Reading(tuple(wave_list), situation, recorded)

    def _requests(self) -> records.Requests:
        """The requests as read; a file over the size limit is one that does not read: a pause."""
        try:
            return records.read_requests(self.requests.read_record())
        except RecordTooLarge as error:
            return records.unreadable_requests(str(error))

    def _still_leading(self) -> None:
        """A replica that lost the Lease during the step must not write: the new leader decides again from
        git (the leases on every push catch the rest). What it observed is forgotten: when it leads again,
        the record is the new leader's, which it did not see being made."""
        if not self.is_leader():
            self._observed = None
            raise errors.TemporaryError(
                f"not moving release branches of {self.repo.url}: this replica lost the leader Lease", 1.0
            )

    def _change(self, released: str | None, target: str, cluster: str) -> Change:
        if released == target or cluster not in self.releases.changed_clusters(released, target, [cluster]):
            return "unchanged"
        if self._all_remedial(released, target, cluster):
            return "remedial"
        return "gated"

    def _same_rollout(self, recorded: str, target: str, clusters: Sequence[str]) -> bool:
        """``target`` goes on with the rollout of ``recorded``: every commit since is remedial, or none of
        them changed a cluster's directory (a render that only rewrote PLACEMENT.md after a capacity change).
        Otherwise a newer render would start over and, after an abort, release the aborted bytes again."""
        if self._all_remedial(recorded, target, None):
            return True
        ancestor = self.repo.git.run("merge-base", "--is-ancestor", recorded, target, check=False)
        return ancestor.status == 0 and not self.releases.changed_clusters(recorded, target, clusters)

    def _untouched(self, target: str, names: Sequence[str], released: Mapping[str, str]) -> frozenset[str]:
        """The clusters running ``target`` whose directory the rollout's change did not touch
        (``Situation.untouched``), from ``main``'s history alone — the record, which people can write, says
        nothing here. The change is the latest commit up to ``target`` that changed some cluster's
        directory without ``Nova-Remedial: true`` (the render that started the rollout, or a later one); a
        cluster it left as it was (or whose directory is again what it was before it) was advanced at once,
        since every commit after it touching a cluster is a reschedule."""
        running = [name for name in names if released.get(name) == target]
        if not running:
            return frozenset()
        gating, before = self._gating_commit(target, tuple(sorted(names)))
        if gating is None:
            return frozenset(running)
        touched = self.releases.changed_clusters(before, gating, running)
        again = self.releases.changed_clusters(before, target, running)
        return frozenset(name for name in running if name not in touched or name not in again)

    def _gating_commit(self, target: str, names: tuple[str, ...]) -> tuple[str | None, str | None]:
        """(the latest first-parent commit up to ``target`` that changed the directory of one of ``names``
        and is not remedial, its first parent); (None, None) when there is none. Cached per target."""
        key = (target, names)
        if key not in self._bases:
            self._bases = {key: self._find_gating(target, names)}  # one target at a time: the newest
        return self._bases[key]

    def _find_gating(self, target: str, names: Sequence[str]) -> tuple[str | None, str | None]:
        page, skipped = 32, 0
        while True:
            listed = self.repo.git.run(
                "log",
                "--first-parent",
                "--format=%H %P%x00%B%x00",
                f"--max-count={page}",
                f"--skip={skipped}",
                target,
                "--",
                f"{CLUSTERS_DIRECTORY}/",
            ).stdout.decode("utf-8", "replace")
            fields = listed.split("\0")
            entries = list(zip(fields[0::2], fields[1::2], strict=False))
            for head, body in entries:
                commit, *parents = head.split()
                if messages.trailers(body).get(messages.REMEDIAL_TRAILER) == "true":
                    continue
                parent = parents[0] if parents else None
                if self.releases.changed_clusters(parent, commit, names):
                    return commit, parent
            if len(entries) < page:
                return None, None
            skipped += page

    def _all_remedial(self, since: str | None, target: str, cluster: str | None) -> bool:
        """Every commit after ``since`` (None: from the first) up to ``target`` (touching
        ``clusters/<cluster>/``, when given) carries ``Nova-Remedial: true``; False when ``since`` is not an
        ancestor of ``target``. A cluster never released whose directory only a reschedule created gets it
        at once: nothing else was ever rendered for it."""
        if since == target:
            return True
        if since is not None:
            ancestor = self.repo.git.run("merge-base", "--is-ancestor", since, target, check=False)
            if ancestor.status != 0:
                return False
        paths = ["--", f"{CLUSTERS_DIRECTORY}/{cluster}/"] if cluster is not None else []
        revisions = f"{since}..{target}" if since is not None else target
        listed = self.repo.git.run("log", "--format=%B%x00", revisions, *paths).stdout.decode()
        bodies = [body for body in listed.split("\0") if body.strip()]
        return bool(bodies) and all(
            messages.trailers(body).get(messages.REMEDIAL_TRAILER) == "true" for body in bodies
        )


def _status_of(report: ClusterReport) -> Mapping[str, Any]:
    status = report.document.body.get("status") if isinstance(report.document.body, dict) else None
    return status if isinstance(status, dict) else {}


def dump_yaml(data: Mapping[str, Any]) -> bytes:
    return yaml.dump(dict(data), Dumper=yaml.CSafeDumper, sort_keys=False).encode()


def _message(decision: Decision) -> str:
    current = decision.current_wave or "complete"
    return f"rollout {decision.record.target[:12]}: {current}\n\n" + "\n".join(
        f"- {wave.name}: {wave.state}{f' ({wave.reason})' if wave.reason else ''}" for wave in decision.waves
    )
