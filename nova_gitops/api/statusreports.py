"""The status report: what an agent writes to ``status/<cluster>.yaml`` and the controller reads back.

A report is a Cluster (``cluster.elotl.co/v1alpha1``; ``api.clusters`` parses it as the source's Clusters)
whose ``status`` carries, after the fields Nova's Cluster has, the agent's own: ``REPORT_FIELDS``, in the
order written. This module is the one definition of that format for both sides: ``nova_agent.reports``
writes it (``AgentFields.as_status``, ``RescheduleRequest.as_entry``) and ``controller.statusreading``
reads it (``read_requests``); both keep to the same bounds (``MAX_REPORT_BYTES``, ``REPORT_BOUNDS``,
``MAX_REQUESTS_PER_REPORT``), so a report an agent writes is never one the controller refuses for its size.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from nova_gitops.api import loading
from nova_gitops.api.problems import Problem, SourceLocation

MAX_REPORT_BYTES: Final = 4 * 1024 * 1024
"""The largest report the controller reads; the agent cuts what it lists to stay within it."""
REPORT_BOUNDS: Final = loading.REPORT_BOUNDS
"""What one report may hold, counted while it is read (``loading.bounds_problem``): no list or mapping of
more than 20,000 items, no more than 400,000 values, nesting at most 64 deep."""
MAX_REQUESTS_PER_REPORT: Final = 1000
"""Reschedule requests the controller reads from one report (the first ones); an agent lists no more."""
MAX_REQUEST_FIELD_CHARS: Final = 1024
"""Longest field of a reschedule request the controller reads (names are at most 253 characters)."""
MAX_REQUEST_REASON_CHARS: Final = 500
"""A request's reason as the controller keeps it: whitespace collapsed, cut here."""
REPORT_COMPLETE: Final = "ReportComplete"
"""The condition that says, status False, what a report left out to stay within what the controller reads."""

LAST_UPDATE_TIME: Final = "lastUpdateTime"
HEARTBEAT: Final = "heartbeat"
RESCHEDULE_REQUESTS: Final = "rescheduleRequests"
REPORT_FIELDS: Final = (
    LAST_UPDATE_TIME,
    "syncedRevision",
    "workloads",
    RESCHEDULE_REQUESTS,
    "lastError",
    "adoptedObjects",
    "driftedObjects",
    HEARTBEAT,
)
"""What an agent adds to its Cluster's ``status``, in the order written (``AgentFields.as_status``). The
Cluster parser accepts them without an unknown-field warning, and reads none of them."""
VOLATILE_FIELDS: Final = (HEARTBEAT, LAST_UPDATE_TIME)
"""Fields that change every pass (``heartbeat``) or on every change (``lastUpdateTime``): a report that
differs only in them says nothing new."""
UNPLANNED_FIELDS: Final = tuple(name for name in REPORT_FIELDS if name != RESCHEDULE_REQUESTS)
"""The agent's fields planning never reads: all of them but ``rescheduleRequests``, which exclusions are
made of."""
REQUEST_FIELDS: Final = ("apiVersion", "kind", "namespace", "name", "group", "reason", "since")
"""The fields of one ``rescheduleRequests`` entry, in the order written; all strings."""


@dataclass(frozen=True, slots=True)
class RescheduleRequest:
    """An agent's request to move ``group`` off its cluster: the workload short of replicas because its
    pods found no node (apiVersion, kind, namespace, name), why (Nova's wording), and ``since`` when its
    pods wait (RFC 3339; with the group and the cluster, the request's identity)."""

    api_version: str
    kind: str
    namespace: str
    name: str
    group: str
    reason: str
    since: str
    cluster: str = ""
    """The cluster whose report holds the request: set as the controller reads it (``read_requests``); an
    entry as written does not repeat it, a report being its cluster's own."""

    def as_entry(self) -> dict[str, str]:
        """The entry of ``status.rescheduleRequests`` (``REQUEST_FIELDS``)."""
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "group": self.group,
            "reason": self.reason,
            "since": self.since,
        }


@dataclass(frozen=True, slots=True)
class AgentFields:
    """What an agent adds to its Cluster's ``status`` (``REPORT_FIELDS``), each list already as its entries:
    workloads with the revision each reflects and its health, objects adopted and drifted."""

    last_update_time: str
    synced_revision: str
    workloads: Sequence[Mapping[str, Any]]
    reschedule_requests: Sequence[RescheduleRequest]
    last_error: str
    adopted_objects: Sequence[Mapping[str, Any]]
    drifted_objects: Sequence[Mapping[str, Any]]
    heartbeat: str

    def as_status(self) -> dict[str, Any]:
        """The fields as written, in ``REPORT_FIELDS`` order."""
        return {
            LAST_UPDATE_TIME: self.last_update_time,
            "syncedRevision": self.synced_revision,
            "workloads": list(self.workloads),
            RESCHEDULE_REQUESTS: [request.as_entry() for request in self.reschedule_requests],
            "lastError": self.last_error,
            "adoptedObjects": list(self.adopted_objects),
            "driftedObjects": list(self.drifted_objects),
            HEARTBEAT: self.heartbeat,
        }


def read_requests(
    cluster: str, raw: object, location: SourceLocation
) -> tuple[tuple[RescheduleRequest, ...], list[Problem]]:
    """The reschedule requests of ``cluster``'s report (its ``status.rescheduleRequests``): the first
    ``MAX_REQUESTS_PER_REPORT`` entries of string fields that name a group; a problem for each other."""
    if raw is None:
        return (), []
    field = f"status.{RESCHEDULE_REQUESTS}"
    if not isinstance(raw, list):
        return (), [Problem(location, "must be a list; ignored", field)]
    problems: list[Problem] = []
    requests: list[RescheduleRequest] = []
    for index, item in enumerate(raw[:MAX_REQUESTS_PER_REPORT]):
        values = {key: item.get(key) for key in REQUEST_FIELDS} if isinstance(item, Mapping) else {}
        if not values or not all(isinstance(value, str) for value in values.values()):
            message = f"needs string fields {', '.join(REQUEST_FIELDS)}; ignored"
            problems.append(Problem(location, message, f"{field}[{index}]"))
            continue
        if any(len(str(value)) > MAX_REQUEST_FIELD_CHARS for value in values.values()):
            message = f"has a field longer than {MAX_REQUEST_FIELD_CHARS} characters; ignored"
            problems.append(Problem(location, message, f"{field}[{index}]"))
            continue
        if not values["group"]:
            problems.append(Problem(location, "names no group; ignored", f"{field}[{index}]"))
            continue
        requests.append(
            RescheduleRequest(
                api_version=str(values["apiVersion"]),
                kind=str(values["kind"]),
                namespace=str(values["namespace"]),
                name=str(values["name"]),
                group=str(values["group"]),
                reason=" ".join(str(values["reason"]).split())[:MAX_REQUEST_REASON_CHARS],
                since=str(values["since"]),
                cluster=cluster,
            )
        )
    if len(raw) > MAX_REQUESTS_PER_REPORT:
        problems.append(
            Problem(location, f"more than {MAX_REQUESTS_PER_REPORT} entries; the rest ignored", field)
        )
    return tuple(requests), problems
