"""Publishing the report: read our file on the status branch, rebuild it, commit only when it changed or the
heartbeat is due, and push (see :mod:`nova_agent.statuspushing` for the retry)."""

from __future__ import annotations

from datetime import datetime

from nova_agent.reportfiles import load_status, should_commit
from nova_agent.reports import Observation, build_status_report
from nova_agent.resources import Body
from nova_agent.settings import AgentSettings
from nova_agent.statuspushing import StatusBranch


def commit_message(observation: Observation) -> str:
    unhealthy = sum(1 for workload in observation.workloads if not workload.health.healthy)
    revision = observation.synced_revision[:7] or "none"
    summary = f"status {observation.identity.name}: synced {revision}, {len(observation.workloads)} workloads"
    details = [f"{unhealthy} unhealthy"] if unhealthy else []
    if observation.reschedule_requests:
        details.append(f"{len(observation.reschedule_requests)} reschedule requests")
    if observation.last_error:
        details.append("error")
    return summary + (f" ({', '.join(details)})" if details else "")


def build_report(
    status: StatusBranch, settings: AgentSettings, observation: Observation, now: datetime
) -> Body:
    """The document that would be written now (for --dry-run)."""
    head = status.read(settings.status_path)
    previous = load_status(head.current) if head.current is not None else None
    return build_status_report(observation, now, previous, _size(head.current)).document


def publish_report(
    status: StatusBranch, settings: AgentSettings, observation: Observation, now: datetime
) -> bool:
    """Write the report when due; whether a commit was pushed. The report is cut to what the controller
    reads when it would hold more (``reports.build_status_report``), never refused whole."""
    head = status.read(settings.status_path)
    previous = load_status(head.current) if head.current is not None else None
    report = build_status_report(observation, now, previous, _size(head.current))
    if not should_commit(previous, report.document, now, settings.heartbeat_interval):
        return False
    return status.publish(settings.status_path, report.data, commit_message(observation), head)


def _size(data: bytes | None) -> int | None:
    return None if data is None else len(data)
