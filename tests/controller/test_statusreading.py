"""Agents' status reports read as untrusted input.

Behaviours covered:
- a report in the agent's own shape (built by nova_agent.reports) is read: cluster, capacity fingerprint,
  workloads, reschedule requests;
- each file is only its own cluster's report: a file naming another cluster, a bad path, several documents,
  a non-Cluster, invalid YAML, aliases beyond the limit and oversized files are refused with a problem;
- malformed reschedule requests are dropped one by one, the report is kept;
- the capacity fingerprint changes with node capacity, not with available resources;
- over git: an absent status branch is an empty inventory; oversized blobs are refused before loading.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from nova_agent import reportfiles
from nova_agent import reports as agent_reports
from nova_agent.capacity import NodeCapacity
from nova_gitops.controller import statusreading
from nova_gitops.controller.statusreading import GitStatusReader, parse_report
from tests.controller.helpers import Fleet, cluster_report, dump, reschedule_request


def agent_document() -> bytes:
    node = NodeCapacity(
        name="n1",
        allocatable={"cpu": 4000, "memory": 8 * 1024**3 * 1000},
        available={"cpu": 3000, "memory": 6 * 1024**3 * 1000},
        labels={"kubernetes.io/hostname": "n1"},
        taints=(),
        ready=True,
    )
    observation = agent_reports.Observation(agent_reports.ClusterIdentity("wlc-1"), [node], autoscaled=False)
    return reportfiles.dump_status(
        agent_reports.build_status_document(observation, datetime(2026, 1, 1, tzinfo=UTC))
    )


def test_the_agents_own_report_is_read() -> None:
    report, problems = parse_report("status/wlc-1.yaml", agent_document())
    assert problems == []
    assert report is not None and report.name == "wlc-1"
    assert report.cluster.nodes[0].allocatable["cpu"] == 4000


def test_reschedule_requests_and_workloads_are_read() -> None:
    body = cluster_report("wlc-2", requests=[reschedule_request("g1"), {"group": 3}, reschedule_request("")])
    body["status"]["workloads"] = [
        {"kind": "Deployment", "name": "web", "healthy": False},  # an agent older than `revision`
        {"kind": "Deployment", "name": "api", "healthy": True, "revision": "f00d"},
        {"kind": "Deployment", "name": "odd", "healthy": True, "revision": ["not", "a", "commit"]},
    ]
    report, problems = parse_report("status/wlc-2.yaml", dump(body).encode())
    assert report is not None
    assert [(request.cluster, request.group) for request in report.reschedule_requests] == [("wlc-2", "g1")]
    assert report.reschedule_requests[0].reason.startswith("deployment demo/web")
    assert len(problems) == 2 and all("rescheduleRequests[" in str(problem) for problem in problems)
    assert [(entry["name"], entry.get("revision")) for entry in report.workloads] == [
        ("web", None),
        ("api", "f00d"),
        ("odd", ""),
    ]


@pytest.mark.parametrize(
    ("path", "text", "message"),
    [
        ("status/wlc-1.yaml", dump(cluster_report("wlc-2")), "may only report cluster 'wlc-1'"),
        ("status/WLC_1.yaml", dump(cluster_report("wlc-1")), "not status/<cluster>.yaml"),
        ("status/x/wlc-1.yaml", dump(cluster_report("wlc-1")), "not status/<cluster>.yaml"),
        ("status/wlc-1.yaml", dump(cluster_report("wlc-1"), cluster_report("wlc-1")), "holds 2 documents"),
        ("status/wlc-1.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: wlc-1}\n", "is not a"),
        ("status/wlc-1.yaml", "kind: [\n", ""),
        ("status/wlc-1.yaml", "a: &a [1]\n" + "".join(f"k{i}: *a\n" for i in range(100)), ""),
    ],
    ids=["other-cluster", "bad-name", "nested", "two-documents", "not-a-cluster", "bad-yaml", "aliases"],
)
def test_reports_that_are_refused(path: str, text: str, message: str) -> None:
    report, problems = parse_report(path, text.encode())
    assert report is None
    assert problems and message in str(problems[0])


def test_oversized_reports_are_refused() -> None:
    report, problems = parse_report("status/wlc-1.yaml", b"#" * (statusreading.MAX_REPORT_BYTES + 1))
    assert report is None and "over the" in str(problems[0])


def test_capacity_fingerprint_follows_capacity_not_available() -> None:
    base = cluster_report("wlc-1")["status"]
    busier = cluster_report("wlc-1", available="1")["status"]
    bigger = cluster_report("wlc-1", cpu="8")["status"]
    assert statusreading.capacity_fingerprint(base) == statusreading.capacity_fingerprint(busier)
    assert statusreading.capacity_fingerprint(base) != statusreading.capacity_fingerprint(bigger)


def test_no_status_branch_is_an_empty_inventory(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path)
    reader = GitStatusReader(fleet.url, "nova-status", cache_dir=tmp_path / "cache")
    snapshot = reader.read()
    assert snapshot.reports == {} and snapshot.revision is None


def test_over_git_oversized_blobs_are_refused_and_the_rest_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fleet = Fleet(tmp_path)
    padded = cluster_report("wlc-2")
    padded["metadata"]["annotations"] = {"padding": "x" * 5000}
    fleet.report(cluster_report("wlc-1"), padded)
    monkeypatch.setattr(statusreading, "MAX_REPORT_BYTES", 4000)
    snapshot = GitStatusReader(fleet.url, "nova-status", cache_dir=tmp_path / "cache").read()
    assert sorted(snapshot.reports) == ["wlc-1"]
    assert "status/wlc-2.yaml" in str(snapshot.problems[0])
    assert snapshot.revision == fleet.head("nova-status")
    assert yaml.safe_load(snapshot.reports["wlc-1"].text)["metadata"]["name"] == "wlc-1"
