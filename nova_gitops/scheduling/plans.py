"""The plan: which cluster gets what, and why. Produced by ``planning.plan``, consumed by rendering. Its
parts (each group's plan, each cluster's usage) are in ``planparts``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from nova_gitops.api.objects import Manifest, ObjectKey
from nova_gitops.api.policies import FieldOverride
from nova_gitops.scheduling.memory import PlanMemory
from nova_gitops.scheduling.planparts import ClusterUsage, GroupPlan


@dataclass(frozen=True, slots=True)
class PlanSettings:
    """Switches of a render (the CLI's flags)."""

    luna_management: bool = True
    namespace_follow: bool = True
    delegated: bool = False  # external-orchestrator mode: status "delegated", objects labelled for pick-up
    namespace: str | None = None  # -n: of namespaced objects that name none (None: "default"), as kubectl
    headroom: bool = False  # --headroom: PLACEMENT.md says what each cluster's loss strands (``failover``)
    headroom_domain: str | None = None  # --headroom-domain LABEL: losses of every cluster with LABEL=VALUE


NO_POLICY = "no SchedulePolicy matches"
"""The reason of an object that no policy selects and no annotation places (``Unscheduled.reason``)."""


@dataclass(frozen=True, slots=True)
class Unscheduled:
    key: ObjectKey
    api_version: str
    policy: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class FollowedNamespace:
    """A Namespace sent to a cluster because objects in it were placed there (``--namespace-follow``).

    ``manifest`` is the source's Namespace, or a minimal synthesized one when the source has none.
    ``group`` names the first (by name) group that pulled it into the cluster, for the annotations.
    """

    manifest: Manifest
    cluster: str
    group: str
    policy: str | None
    overrides: tuple[FieldOverride, ...] = ()


@dataclass(frozen=True, slots=True)
class StrandedGroup:
    """A group a loss would strand, as PLACEMENT.md and ``diff --headroom`` tell it (``scheduling.failover``
    makes it of a ``stranding.Stranded``): why (``stranding.Why``), what its pods request (milli-units) and,
    of the resources no cluster left has enough of, the most any has free."""

    group: str
    why: str
    requests: Mapping[str, int] = field(default_factory=dict)
    scarce: Mapping[str, int] = field(default_factory=dict)
    pinned_to: tuple[str, ...] = ()  # the clusters it is on today (what a pinned group is pinned to)


@dataclass(frozen=True, slots=True)
class LossOutcome:
    """What losing ``lost`` (a cluster, or every cluster with LABEL=VALUE) would do: the groups it strands,
    and how many it moves (``scheduling.headroom.Loss``, reduced to what is told)."""

    lost: str
    stranded: tuple[StrandedGroup, ...] = ()
    moved: int = 0


@dataclass(frozen=True, slots=True)
class Plan:
    groups: tuple[GroupPlan, ...]  # sorted by name
    unscheduled: tuple[Unscheduled, ...]  # sorted by key
    followed_namespaces: tuple[FollowedNamespace, ...]  # sorted by (cluster, name)
    clusters: tuple[ClusterUsage, ...]  # sorted by name
    warnings: tuple[str, ...]
    settings: PlanSettings = field(default_factory=PlanSettings)
    policy_overlaps: tuple[str, ...] = ()  # also in warnings; kept apart for ``validate --strict``
    memory: PlanMemory | None = field(default=None, compare=False, repr=False)
    """What this plan worked out, for the next (``memory.PlanMemory``; None when it was not asked for)."""
    failover: tuple[LossOutcome, ...] | None = None
    """With ``settings.headroom``, what each loss would strand, worst first (``failover.with_failover``);
    PLACEMENT.md tells it. None: not computed (the section is absent). It travels with the plan because the
    root files are rendered from the plan alone, by every path that renders (render, publish, controller)."""


@dataclass(frozen=True, slots=True)
class PreviousPlacement:
    """What the previous render decided, for stickiness: group name → clusters, and the reason given.

    A group that stays where it was keeps the reason of the decision that put it there, so re-rendering
    unchanged inputs gives unchanged bytes (and the controller makes no commit)."""

    groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    reasons: Mapping[str, str] = field(default_factory=dict)
    requests: Mapping[str, Mapping[str, int]] = field(default_factory=dict)  # what each group requested

    @classmethod
    def empty(cls) -> PreviousPlacement:
        return cls()
