"""An agent's report stays within what the controller reads, by construction (issue 21, follow-up of item 9).

The controller refuses a whole status report of more than 4 MiB, with a list or mapping of more than 20,000
items, or with more than 400,000 values (``loading.REPORT_BOUNDS``). An agent of a cluster with 25,000
workloads, 25,000 nodes, or 6,000 workloads whose messages are 1,000 characters long wrote such a report,
and the controller lost all of it: capacity, health, reschedule requests.

Behaviours covered:
- each such report is read by the controller, through a real status branch (``publish_report`` pushes it,
  ``GitStatusReader`` reads it): within the byte cap and the bounds, its cluster's nodes are there;
- what is cut is what matters least: workloads with a reschedule request, unhealthy ones and ones not at the
  synced revision are all kept (healthy ones at the revision go first), nodes that are ready are kept
  before those that are not; the kept workloads are still in name order;
- the report says so in a ``ReportComplete`` condition (status False): how many of how many were left out;
- an unchanged cluster whose report is cut commits nothing new at the next pass (the note's time is kept);
- an unchanged report within the cap is not written and counted again, but an older agent's report over the
  cap, unchanged, is still cut;
- a report that fits is written as before, with no such condition;
- property: the size bound that lets an ordinary report skip being written and counted each pass is an
  upper bound of what is written, whatever the text in it (quotes, line breaks, controls, bidi, long lines);
- the agent's byte cap is the controller's.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nova_agent import reportcutting, reportfiles, reporting, reports
from nova_agent.capacity import NodeCapacity
from nova_agent.clocks import FakeClock
from nova_agent.gitrepos import RepoCache
from nova_agent.health import Health
from nova_agent.rescheduling import request_for
from nova_agent.resources import ObjectRef
from nova_agent.settings import AgentSettings
from nova_agent.statuspushing import StatusBranch
from nova_gitops.api import loading, statusreports
from nova_gitops.controller import statusreading
from nova_gitops.controller.statusreading import GitStatusReader
from nova_gitops.rollouts import health as gate_health
from tests.controller.helpers import Fleet

T0 = datetime(2026, 1, 1, tzinfo=UTC)
COMMIT = "0123456789abcdef0123456789abcdef01234567"
OLD = "fedcba9876543210fedcba9876543210fedcba98"
HEALTHY = Health(True, "Available", "MinimumReplicasAvailable", "Deployment has minimum availability.")
UNHEALTHY = Health(False, "Available", "MinimumReplicasUnavailable", "0/3 available")
DEGRADED = Health(False, "Progressing", "ProgressDeadlineExceeded", "ReplicaSet has timed out progressing.")


def node(index: int, *, ready: bool = True) -> NodeCapacity:
    name = f"node-{index:05d}"
    return NodeCapacity(
        name,
        {"cpu": 16000, "memory": 64 * 1024**4, "pods": 110000},
        {"cpu": 8000, "memory": 32 * 1024**4, "pods": 50000},
        {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"},
        (),
        ready,
    )


def ref(index: int, prefix: str = "app") -> ObjectRef:
    return ObjectRef("apps/v1", "Deployment", f"ns-{index % 50:02d}", f"{prefix}-{index:06d}")


def big_cluster(workloads: int = 25_000, nodes: int = 3, message: str = "") -> reports.Observation:
    """``workloads`` healthy Deployments at ``COMMIT``, but a few that matter more, named to sort last:
    pending (a reschedule request), degraded, unhealthy, and healthy at an older revision."""
    health = HEALTHY if not message else Health(True, "Available", "MinimumReplicasAvailable", message)
    entries = [reports.WorkloadHealth(ref(index), health, COMMIT) for index in range(workloads)]
    entries += [reports.WorkloadHealth(ref(index, "zz-pending"), UNHEALTHY, COMMIT) for index in range(5)]
    entries += [reports.WorkloadHealth(ref(index, "zz-degraded"), DEGRADED, COMMIT) for index in range(5)]
    entries += [reports.WorkloadHealth(ref(index, "zz-unhealthy"), UNHEALTHY, COMMIT) for index in range(5)]
    entries += [reports.WorkloadHealth(ref(index, "zz-stale"), HEALTHY, OLD) for index in range(5)]
    requests = [
        request_for(ref(index, "zz-pending"), "g-1", "not enough replicas", "2025-12-31T23:55:00Z")
        for index in range(5)
    ]
    return reports.Observation(
        reports.ClusterIdentity("wlc-1", provider="aws"),
        [node(index) for index in range(nodes)],
        autoscaled=False,
        workloads=entries,
        reschedule_requests=requests,
        synced_revision=COMMIT,
    )


def publish_and_read(tmp_path: Path, observation: reports.Observation) -> tuple[Any, bytes]:
    """Push the agent's report through a real status branch; what the controller reads of it."""
    fleet = Fleet(tmp_path)
    branch = StatusBranch(RepoCache(fleet.url, tmp_path / "agent-cache"), "nova-status", FakeClock())
    settings = AgentSettings(cluster="wlc-1", repo=fleet.url, cache_dir=tmp_path / "agent-cache")
    assert reporting.publish_report(branch, settings, observation, T0)
    data = branch.read(settings.status_path).current
    assert data is not None
    snapshot = GitStatusReader(fleet.url, "nova-status", cache_dir=tmp_path / "controller-cache").read()
    assert not snapshot.problems, [str(problem) for problem in snapshot.problems]
    return snapshot.reports["wlc-1"], data


def note_of(document: dict[str, Any]) -> dict[str, Any] | None:
    found = [c for c in document["status"]["conditions"] if c["type"] == statusreports.REPORT_COMPLETE]
    assert len(found) <= 1
    return found[0] if found else None


def names(entries: Any) -> set[str]:
    return {entry["name"] if isinstance(entry, dict) else entry.ref.name for entry in entries}


def test_a_cluster_of_20_100_workloads_is_read_with_the_workloads_that_matter(tmp_path: Path) -> None:
    observation = big_cluster(workloads=20_100)
    report, data = publish_and_read(tmp_path, observation)
    assert len(data) <= statusreading.MAX_REPORT_BYTES
    assert loading.bounds_problem(data.decode(), loading.REPORT_BOUNDS) is None
    listed = report.workloads
    assert 10_000 < len(listed) <= loading.REPORT_BOUNDS.items
    kept = {workload["name"] for workload in listed}
    for prefix in ("zz-pending", "zz-degraded", "zz-unhealthy", "zz-stale"):
        assert {f"{prefix}-{index:06d}" for index in range(5)} <= kept
    document = yaml.safe_load(data)
    entries = document["status"]["workloads"]
    assert entries == sorted(entries, key=lambda e: (e["apiVersion"], e["kind"], e["namespace"], e["name"]))
    assert len(document["status"]["rescheduleRequests"]) == 5 and len(report.cluster.nodes) == 3
    note = note_of(document)
    assert note is not None and note["status"] == "False"
    omitted = 20_120 - len(listed)
    assert f"not reported: {omitted:,} of 20,120 workloads;" in note["message"]
    # a rollout gate still sees what fails it: the pending and the degraded workloads were kept
    status = document["status"]
    facts = gate_health.facts_from_status(status)
    assert gate_health.judge("wlc-1", facts, COMMIT, rendered=[]).state == "failed"
    facts = gate_health.facts_from_status({**status, "rescheduleRequests": []})
    verdict = gate_health.judge("wlc-1", facts, COMMIT, rendered=[])
    assert verdict.state == "failed" and "zz-degraded" in verdict.reason


def test_long_messages_are_cut_to_the_byte_cap(tmp_path: Path) -> None:
    observation = big_cluster(workloads=3_000, message="m" * 1_500)  # 4.7 MB written whole
    report, data = publish_and_read(tmp_path, observation)
    assert statusreading.MAX_REPORT_BYTES - 64 * 1024 < len(data) <= statusreading.MAX_REPORT_BYTES
    assert 2_000 < len(report.workloads) < 3_000
    note = note_of(yaml.safe_load(data))
    assert note is not None and "of 3,020 workloads" in note["message"]


def test_nodes_past_the_bounds_are_cut_ready_ones_first(tmp_path: Path) -> None:
    observation = big_cluster(workloads=10, nodes=0)
    nodes = [node(index, ready=index >= 10) for index in range(20_100)]  # the first ten are not ready
    observation = reports.Observation(**{**_fields(observation), "nodes": nodes})
    report, data = publish_and_read(tmp_path, observation)
    kept = sorted(found.name for found in report.cluster.nodes)
    assert 5_000 < len(kept) <= loading.REPORT_BOUNDS.items
    assert kept == [f"node-{index:05d}" for index in range(10, 10 + len(kept))]  # ready, by name
    document = yaml.safe_load(data)
    assert len(document["status"]["workloads"]) == 30  # the workloads keep their share
    for field in ("capacityResources", "availableResources", "nodeLabels"):
        assert sorted(document["status"][field]) == kept
    note = note_of(document)
    assert note is not None and f"{20_100 - len(kept):,} of 20,100 nodes" in note["message"]


def test_an_unchanged_cut_report_commits_nothing_new() -> None:
    observation = big_cluster(workloads=3_000, message="m" * 1_500)
    first = reports.build_status_report(observation, T0)
    assert note_of(first.document) is not None
    previous = reportfiles.load_status(first.data)
    assert previous is not None
    later = T0 + timedelta(minutes=1)
    second = reports.build_status_report(observation, later, previous)
    assert not reportfiles.report_changed(previous, second.document)
    assert not reportfiles.should_commit(previous, second.document, later, timedelta(minutes=10))
    assert second.document["status"]["lastUpdateTime"] == first.document["status"]["lastUpdateTime"]


def test_an_older_agent_s_report_over_the_cap_is_not_taken_for_one_that_fits() -> None:
    """A report is not written and counted again when nothing but its times changed since the one read
    back (within the cap): that shortcut must not trust an older agent's report written whole."""
    observation = big_cluster(workloads=3_000, message="m" * 1_500)
    cut = reports.build_status_report(observation, T0).document
    whole = {
        **cut,
        "status": {
            **cut["status"],
            "workloads": [entry.as_dict() for entry in sorted(observation.workloads, key=lambda w: w.ref)],
            "conditions": [
                c for c in cut["status"]["conditions"] if c["type"] != statusreports.REPORT_COMPLETE
            ],
        },
    }
    written = reportfiles.dump_status(whole)
    assert len(written) > statusreports.MAX_REPORT_BYTES
    previous = reportfiles.load_status(written)
    assert previous is not None
    again = reports.build_status_report(observation, T0 + timedelta(minutes=1), previous, len(written))
    assert len(again.data) <= statusreports.MAX_REPORT_BYTES and note_of(again.document) is not None
    small = big_cluster(workloads=10)
    first = reports.build_status_report(small, T0)
    previous = reportfiles.load_status(first.data)
    same = reports.build_status_report(small, T0 + timedelta(minutes=1), previous, len(first.data))
    assert same.data.replace(b"00:01:00", b"00:00:00") == first.data  # only the heartbeat moved


def test_a_report_that_fits_is_written_as_before() -> None:
    observation = big_cluster(workloads=100)
    report = reports.build_status_report(observation, T0)
    assert note_of(report.document) is None
    assert len(report.document["status"]["workloads"]) == 120
    assert report.data == reportfiles.dump_status(report.document)


def test_the_controller_reads_within_the_bounds_the_agent_writes_to() -> None:
    assert statusreading.MAX_REPORT_BYTES == statusreports.MAX_REPORT_BYTES
    assert statusreading.REPORT_BOUNDS == statusreports.REPORT_BOUNDS


NASTY = st.lists(
    st.sampled_from(
        [
            "a",
            " ",
            "'",
            '"',
            "\\",
            "\n",
            "\r",
            "\t",
            "\x1b",
            "\x85",
            "\x9b",
            "\u202e",
            "\u2028",
            "\ufeff",
            "\ufffe",
            "#",
            ":",
            "- ",
            "é",
            "\U0001f600",
            "\U000e0041",
        ]
    ),
    max_size=40,
).map(lambda parts: "".join(parts) * (30 if len(parts) > 30 else 1))  # some past the 1,000-column line


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(NASTY, NASTY), min_size=1, max_size=6), NASTY, NASTY)
def test_the_size_bound_is_never_under_what_is_written(
    messages: list[tuple[str, str]], label: str, error: str
) -> None:
    entries = [
        reports.WorkloadHealth(ref(index), Health(index % 2 == 0, condition, reason, message), COMMIT)
        for index, (condition, message) in enumerate(messages)
        for reason in (message[:5],)
    ]
    labelled = NodeCapacity(
        "n1", {"cpu": 1000}, {"cpu": 500}, {"k": label}, ({"key": "k", "value": label},), True
    )
    observation = reports.Observation(
        reports.ClusterIdentity("wlc-1", provider=label), [labelled], False, entries, last_error=error
    )
    document = reports.build_status_report(observation, T0).document
    bound = reportcutting.size_bound(document)
    assert bound is not None and len(reportfiles.dump_status(document)) <= bound


def _fields(observation: reports.Observation) -> dict[str, Any]:
    return {name: getattr(observation, name) for name in observation.__slots__}
