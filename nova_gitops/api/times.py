"""Timestamps as Kubernetes writes them (RFC 3339, UTC, whole seconds, ``Z``), for the agent's status report
and the rollout record alike: one format written, and one tolerant reader for text others wrote."""

from __future__ import annotations

from datetime import UTC, datetime


def rfc3339(moment: datetime) -> str:
    """Kubernetes' timestamp format: UTC, seconds, ``Z``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_rfc3339(text: object) -> datetime | None:
    """RFC 3339 text → an aware datetime (naive text read as UTC); None for anything else: the text comes
    from files others write (a status report, a rollout record) and is read, never trusted."""
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
