"""Retry and backoff as data: what to do after a failure is a function of (error, attempt), nothing else.

Three places retry: an object whose apply failed (retried on later passes, not in a tight loop), a pass
that failed as a whole (git or the API server unreachable: the cluster is left as it is and the loop backs
off), and pushing status (several agents push to one branch). All use the back-off the controller uses too,
:class:`nova_gitops.clients.backoff.Backoff`, with the parameters below.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from nova_agent.resources import ObjectKey
from nova_gitops.clients.backoff import Backoff, RandomSource

TYPED_PATCH_FAILURE: Final = "failed to create typed patch object"
"""What a real kube-apiserver answers (500) to a server-side apply whose body does not fit a CRD schema."""


class FailureKind(enum.Enum):
    INVALID = "invalid"
    """The server rejected the object itself: it fails again until the manifest changes."""
    CONFLICT = "conflict"
    """Another field manager owns a field we set (only without --force-conflicts)."""
    TRANSIENT = "transient"
    """The server, the network or a dependency (a namespace, a CRD) may be ready later."""


def classify_api_failure(status: int, message: str) -> FailureKind:
    """How to treat an API error answering a write of one object.

    A 500 whose message says "failed to create typed patch object" is a schema violation, not a server fault
    (kube-apiserver answers a create of the same body with 422): retrying it soon only hammers the server.
    So are 403 (RBAC forbids this kind or namespace: it changes when an admin acts, not in seconds) and 413
    (the object is too large: it changes only with the manifest).
    """
    if status in (400, 403, 413, 422) or (status == 500 and TYPED_PATCH_FAILURE in message):
        return FailureKind.INVALID
    if status == 409:
        return FailureKind.CONFLICT
    return FailureKind.TRANSIENT


OBJECT_BACKOFF_CAP: Final = 300.0
"""An object that keeps failing is still retried every five minutes."""
STATUS_PUSH_BACKOFF: Final = Backoff(base=0.2, cap=5.0)
"""Between pushes of the status file when another agent pushed first: short, the branch moves quickly."""
PASS_JITTER: Final = 0.1
"""Up to 10% longer waits after failed passes, so agents that failed together do not retry in lock-step."""


def pass_backoff(interval: float) -> Backoff:
    """After failed passes: from the sync ``interval``, doubling, at most 10 minutes (or the interval)."""
    return Backoff(base=interval, cap=max(600.0, interval), jitter=PASS_JITTER)


def cluster_jitter(cluster: str) -> RandomSource:
    """A random source seeded by the cluster name: agents of a fleet spread out, while one agent's schedule
    is the same on every run (tests rely on it)."""
    return random.Random(cluster).random


FAILURE_BASE_DELAYS: Final[Mapping[FailureKind, float]] = {
    FailureKind.TRANSIENT: 5.0,
    FailureKind.CONFLICT: 30.0,
    FailureKind.INVALID: 60.0,
}
"""First retry delay per kind of failure: an invalid object waits longest, it needs a new render."""


@dataclass(frozen=True, slots=True)
class ObjectFailure:
    """The last failure to apply one object, and when it may be tried again."""

    digest: str
    kind: FailureKind
    message: str
    attempts: int
    retry_at: float


def record_failure(
    previous: ObjectFailure | None, digest: str, kind: FailureKind, message: str, now: float
) -> ObjectFailure:
    """The failure state after one more failed attempt (a new manifest digest starts the count over)."""
    attempts = previous.attempts + 1 if previous is not None and previous.digest == digest else 1
    backoff = Backoff(base=FAILURE_BASE_DELAYS[kind], cap=OBJECT_BACKOFF_CAP)
    return ObjectFailure(digest, kind, message, attempts, backoff.retry_at(attempts, now))


def may_retry(failure: ObjectFailure | None, digest: str, now: float) -> bool:
    """Whether an object may be sent now: never failed, its manifest changed, or its backoff expired."""
    return failure is None or failure.digest != digest or now >= failure.retry_at


FailureTable = dict[ObjectKey, ObjectFailure]
