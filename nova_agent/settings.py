"""The agent's settings as one frozen value, built by the CLI and passed down (nothing reads the
environment or global state below the CLI)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Final

from nova_agent.drifting import DriftMode

RELEASE_BRANCH_PREFIX = "nova/clusters/"
"""Where the controller releases a cluster's commit under a RolloutStrategy (docs/rollouts.md)."""

SETTLE_WINDOW: Final = timedelta(minutes=10)
"""How long after an apply the agent keeps looking at ``settle_interval``: a Deployment's default
``progressDeadlineSeconds``; past it, a workload still not healthy is reported at the normal interval."""


@dataclass(frozen=True, slots=True)
class AgentSettings:
    cluster: str
    repo: str
    cache_dir: Path
    branch: str = "main"
    path: str = ""
    """Directory of this cluster in the rendered repo; ``clusters/<cluster>`` when empty."""
    namespace: str = "nova-agent"
    """Where the inventory ConfigMap lives (the agent's own namespace)."""
    interval: float = 30.0
    settle_interval: float = 5.0
    """Time between passes while what a pass just applied is not yet healthy (``--settle-interval``; at most
    :data:`SETTLE_WINDOW` after the apply; 0: off; never longer than ``interval``)."""
    orchestration_enabled: bool = True
    rescheduling_enabled: bool = True
    pending_timeout: timedelta = timedelta(minutes=2)
    max_prune_percent: int = 30
    status_repo: str = ""
    """A repository of its own for status; the rendered repo when empty."""
    status_branch: str = "nova-status"
    heartbeat_interval: timedelta = timedelta(minutes=5)
    allowed_signers: Path | None = None
    """When set, only commits signed by a key in this SSH allowed-signers file are applied."""
    dry_run: bool = False
    force_conflicts: bool = True
    autoscaled: bool | None = None
    """None: detect a cluster-autoscaler/Luna/Karpenter deployment."""
    provider: str = ""
    region: str = ""
    zone: str = ""
    cluster_labels: Mapping[str, str] = field(default_factory=dict)
    crd_timeout: float = 60.0
    previous_repositories: tuple[str, ...] = ()
    """Former repository ids of this fleet (its repository or directory moved): owned like the current one."""
    report_enabled: bool = True
    drift: DriftMode = DriftMode.CORRECT
    """What a pass does about live objects that no longer hold git's values (``--drift``)."""

    follow_release: bool = False
    """Apply the commit the controller released to this cluster (branch ``nova/clusters/<cluster>``,
    docs/rollouts.md) instead of the head of ``branch``."""

    @property
    def source_branch(self) -> str:
        """The branch whose head this agent applies."""
        return f"{RELEASE_BRANCH_PREFIX}{self.cluster}" if self.follow_release else self.branch

    @property
    def directory(self) -> str:
        return (self.path or f"clusters/{self.cluster}").strip("/")

    @property
    def status_path(self) -> str:
        return f"status/{self.cluster}.yaml"

    @property
    def status_url(self) -> str:
        return self.status_repo or self.repo
