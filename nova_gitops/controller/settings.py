"""The controller's settings: one frozen value built by the CLI (or a test) and passed down.

Defaults are the documented ones: poll every 30 s, fail back after 10 minutes of room in a higher tier,
keep a rescheduled group off the cluster that could not run it for 10 minutes (or until that cluster's
reported capacity changes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from nova_gitops.publishing import guard
from nova_gitops.scheduling.plans import PlanSettings

DEFAULT_STATUS_BRANCH = "nova-status"


STATUS_WATCH_RATIO = 0.25
"""By default the controller peeks at the status branch four times per poll interval (``git ls-remote``: one
round trip, no fetch) and reconciles when an agent reported: a reschedule request or a healthy canary is
acted on within a quarter interval (plus ``debounce``), not up to a whole one."""


@dataclass(frozen=True, slots=True)
class Address:
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def parse_address(text: str) -> Address:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6); ValueError with a readable message otherwise."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{text!r} is not HOST:PORT (for example 127.0.0.1:9000)")
    return Address(host.strip("[]"), int(port))


@dataclass(frozen=True, slots=True)
class WebhookSecrets:
    """Shared secrets of the webhook receiver; a request must pass one configured check."""

    github: str | None = None  # X-Hub-Signature-256: sha256=HMAC(secret, body)
    gitlab: str | None = None  # X-Gitlab-Token: the token itself
    generic: str | None = None  # X-Nova-Signature-256: sha256=HMAC(secret, body)

    @property
    def any(self) -> bool:
        return bool(self.github or self.gitlab or self.generic)

    def __repr__(self) -> str:  # never show a secret, not even in a traceback
        configured = [name for name in ("github", "gitlab", "generic") if getattr(self, name)]
        return f"WebhookSecrets(configured={configured})"


@dataclass(frozen=True, slots=True)
class ControllerSettings:
    repo_url: str
    cache_dir: Path
    branch: str = "main"
    status_branch: str = DEFAULT_STATUS_BRANCH
    status_repo: str | None = None  # None: the status branch of repo_url
    interval: float = 30.0  # seconds between polls of the source and the status branch
    debounce: float = 0.3  # seconds of quiet after a trigger before reconciling
    status_watch_interval: float | None = None  # seconds between peeks at the status branch; None: interval/4
    failback_after: float = 600.0
    reschedule_cooldown: float = 600.0
    max_backoff: float = 300.0
    webhook_listen: Address | None = None
    webhook_secrets: WebhookSecrets = field(default_factory=WebhookSecrets)
    metrics_listen: Address | None = None
    ui_listen: Address | None = None  # the read-only web view (issue 27); None: off
    delegated: bool = False  # external-orchestrator mode
    luna_management: bool = True
    namespace_follow: bool = True
    namespace: str | None = None  # -n: of namespaced source objects that name none, as kubectl apply -n
    max_delete_percent: int = guard.DEFAULT_MAX_DELETE_PERCENT
    allow_mass_delete: bool = False
    git_timeout: float = 120.0
    attempts: int = 5
    headroom: bool = True  # failover headroom in the background after each change it reads (metrics)
    headroom_domain: str | None = None  # --headroom-domain LABEL: lose every cluster with LABEL=VALUE at once
    headroom_in_placement: bool = False  # compute it in the render, for PLACEMENT.md (as publish --headroom)

    @property
    def plan_settings(self) -> PlanSettings:
        return PlanSettings(
            luna_management=self.luna_management,
            namespace_follow=self.namespace_follow,
            delegated=self.delegated,
            namespace=self.namespace,
            headroom=self.headroom_in_placement,
            headroom_domain=self.headroom_domain if self.headroom_in_placement else None,
        )

    @property
    def status_watch_seconds(self) -> float:
        """Seconds between peeks at the status branch's head (0: no peeking, polls only)."""
        if self.status_watch_interval is None:
            return self.interval * STATUS_WATCH_RATIO
        return self.status_watch_interval

    @property
    def status_url(self) -> str:
        return self.status_repo or self.repo_url
