"""A status report's size is bounded while it is read, not after (issue 21 item 9).

An agent's report of 3.9 MB (under the 4 MiB cap) holding 1.3 million empty ``workloads`` entries took
9-11 s to parse, on every reconcile and every ``rollout status``, before the 20,000-entry cap cut the list.

Behaviours covered:
- a list or mapping with more items than the cap is refused at the line of the first item past it, naming
  the field and the cap: nothing after it is read (a YAML error placed after it is never reached);
- a report holding more values in all than the budget is refused the same way;
- nesting is still refused before libyaml's composer sees it, and every refusal names the cluster;
- aliases may not expand a report past the value budget either (an alias is one value where it is
  written, but every reader of the report walks its expansion);
- the agent's own report of a large cluster (200 nodes, 12,000 workloads: 3.4 MB, near the byte cap) is
  within the bounds and read whole;
- over git, a refused report whose blob did not change is not read again at the next commit of the status
  branch (the parsed result is kept by blob id), and a good report beside it is used;
- the agent reads its own last report back under the same bounds: a hostile one is unreadable (and then
  simply rewritten), not composed whole at every pass.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import yaml

from nova_agent import reportfiles
from nova_agent import reports as agent_reports
from nova_agent.capacity import NodeCapacity
from nova_agent.health import Health
from nova_agent.resources import ObjectRef
from nova_gitops.api import loading
from nova_gitops.controller import statusreading
from nova_gitops.controller.statusreading import GitStatusReader, parse_report
from tests.controller.helpers import Fleet, cluster_report, dump

CAP = statusreading.MAX_WORKLOADS_PER_REPORT


def report_text(workload_lines: list[str], tail: str = "") -> str:
    """A report whose ``status.workloads`` is the given block-list lines (each ``  - ...``)."""
    text = dump(cluster_report("wlc-1")).replace(
        "  workloads: []\n", "  workloads:\n" + "".join(workload_lines)
    )
    assert "  workloads:\n" in text
    return text + tail


def line_of(text: str, needle: str, occurrence: int) -> int:
    """The 1-based line of the ``occurrence``-th (1-based) line equal to ``needle``."""
    seen = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if line == needle:
            seen += 1
            if seen == occurrence:
                return number
    raise AssertionError(f"{needle!r} occurs {seen} times")


def test_a_list_past_the_cap_is_refused_at_its_first_extra_item_and_read_no_further() -> None:
    # a YAML error after the list: a parser that reads the whole text before counting reports it instead
    text = report_text(["  - {}\n"] * (CAP + 1), tail="lastError: [unclosed\n")
    report, problems = parse_report("status/wlc-1.yaml", text.encode())
    assert report is None
    (problem,) = problems
    assert problem.location.line == line_of(text, "  - {}", CAP + 1)
    assert "cluster wlc-1" in str(problem)
    assert f"status.workloads: holds more than {CAP} items; refused" in str(problem)


def test_a_mapping_past_the_cap_is_refused_naming_it() -> None:
    text = dump(cluster_report("wlc-1")).replace(
        "  nodeTaints: {}\n", "  nodeTaints:\n" + "".join(f"    n{index}: []\n" for index in range(CAP + 1))
    )
    report, problems = parse_report("status/wlc-1.yaml", text.encode())
    assert report is None
    assert problems[0].location.line == line_of(text, f"    n{CAP}: []", 1)
    assert f"status.nodeTaints: holds more than {CAP} entries" in str(problems[0])


def test_a_report_past_the_value_budget_is_refused_where_it_passes_it() -> None:
    per_entry = "{" + ", ".join(f"k{key}: 1" for key in range(40)) + "}"  # 81 values an entry
    entries = statusreading.MAX_REPORT_VALUES // 81 + 1
    assert entries <= CAP  # the item cap is not what refuses it
    text = report_text([f"  - {per_entry}\n"] * entries, tail="lastError: [unclosed\n")
    report, problems = parse_report("status/wlc-1.yaml", text.encode())
    assert report is None
    (problem,) = problems
    assert f"holds more than {statusreading.MAX_REPORT_VALUES} values" in str(problem)
    assert problem.location.line < line_of(text, "lastError: [unclosed", 1)


def test_nesting_is_still_refused_before_composing() -> None:
    for nested in ("[" * 70 + "]" * 70, "{a: " * 70 + "}" * 70, "- " * 70 + "x"):
        text = dump(cluster_report("wlc-1")).replace("  nodeTaints: {}\n", f"  nodeTaints:\n    {nested}\n")
        report, problems = parse_report("status/wlc-1.yaml", text.encode())
        assert report is None
        assert (
            f"cluster wlc-1: nests collections more than {statusreading.MAX_FLOW_DEPTH} levels deep"
            in str(problems[0])
        )


def test_aliases_may_not_expand_past_the_value_budget() -> None:
    aliased = f"  big: &a [{'{},' * 15_000}{{}}]\n" + "".join(f"  k{index}: *a\n" for index in range(30))
    text = dump(cluster_report("wlc-1")).replace("  workloads: []\n", "  workloads: []\n" + aliased)
    report, problems = parse_report("status/wlc-1.yaml", text.encode())
    assert report is None
    assert f"aliases expand to more than {statusreading.MAX_REPORT_VALUES} nodes" in str(problems[0])


def large_agent_report(nodes: int, workloads: int) -> bytes:
    """The agent's own report of a big cluster: every node labelled as EKS labels them, every workload
    healthy at a commit."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    found = [
        NodeCapacity(
            name=f"node-{index:05d}",
            allocatable={"cpu": 16000, "memory": 64 * 1024**4, "pods": 110000},
            available={"cpu": 8000, "memory": 32 * 1024**4, "pods": 50000},
            labels={
                "kubernetes.io/hostname": f"node-{index:05d}",
                "topology.kubernetes.io/zone": "us-east-1a",
                "topology.kubernetes.io/region": "us-east-1",
                "node.kubernetes.io/instance-type": "m5.4xlarge",
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
            },
            taints=(),
            ready=True,
        )
        for index in range(nodes)
    ]
    health = Health(True, "Available", "MinimumReplicasAvailable", "Deployment has minimum availability.")
    observation = agent_reports.Observation(
        agent_reports.ClusterIdentity("wlc-1"),
        found,
        autoscaled=False,
        workloads=[
            agent_reports.WorkloadHealth(
                ObjectRef("apps/v1", "Deployment", f"ns-{index % 50}", f"app-{index:06d}"), health, commit
            )
            for index in range(workloads)
        ],
        synced_revision=commit,
    )
    return reportfiles.dump_status(
        agent_reports.build_status_document(observation, datetime(2026, 1, 1, tzinfo=UTC))
    )


def test_a_large_clusters_own_report_is_within_the_bounds() -> None:
    data = large_agent_report(200, 12_000)
    assert len(data) > 0.75 * statusreading.MAX_REPORT_BYTES  # near the byte cap: what a real report can be
    report, problems = parse_report("status/wlc-1.yaml", data)
    assert problems == [] and report is not None
    assert len(report.workloads) == 12_000 and len(report.cluster.nodes) == 200


def test_the_bounds_count_what_the_loader_reads() -> None:
    """Documents, aliases and keys count as the loader composes them; under the bounds, a text loads."""
    text = "a: &x [1, 2]\nb: *x\n---\nc: {d: 3}\n"  # values: { a [ 1 2 ] b *x | { c { d 3 } → 12
    assert loading.bounds_problem(text, loading.Bounds(depth=2, items=2, values=12)) is None
    assert "11 values" in str(loading.bounds_problem(text, loading.Bounds(depth=2, items=2, values=11)))
    assert "2 entries" in str(loading.bounds_problem("a: 1\nb: 2\nc: 3\n", loading.Bounds(5, 2, 100)))
    assert "1 levels deep" in str(loading.bounds_problem("a: [1]\n", loading.Bounds(1, 5, 100)))
    assert loading.bounds_problem("a: [1\n", loading.Bounds(2, 5, 100)) is None  # the loader says why
    assert loading.load_one("a: [1, 2]\n", bounds=loading.Bounds(2, 2, 5)) == {"a": [1, 2]}


def test_an_unchanged_refused_report_is_not_read_again(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path)
    hostile = dump(cluster_report("wlc-1")).replace(
        "  workloads: []\n", "  workloads: [" + "{}," * CAP + "{}]\n"
    )
    (fleet.status_work / "status").mkdir()
    (fleet.status_work / "status" / "wlc-1.yaml").write_text(hostile)
    fleet.report(cluster_report("wlc-2"))
    reader = GitStatusReader(fleet.url, "nova-status", cache_dir=tmp_path / "cache")
    first = reader.read()
    assert sorted(first.reports) == ["wlc-2"]
    assert "holds more than" in str(first.problems[0])
    fleet.report(cluster_report("wlc-2", cpu="8"))  # another agent's new report: a new commit
    second = reader.read()
    assert second.revision != first.revision and sorted(second.reports) == ["wlc-2"]
    assert second.problems[0] is first.problems[0]  # the same result, kept by blob id: not parsed again
    assert second.reports["wlc-2"] is not first.reports["wlc-2"]  # the changed one was read again
    assert yaml.safe_load(second.reports["wlc-2"].text)["status"]["capacityResources"]


def test_control_plane_clusters_are_still_cut_to_the_cap() -> None:
    """A control plane's Cluster CR comes parsed (the API server bounds its size): cut, as before."""
    body = cluster_report("wlc-1")
    body["status"]["workloads"] = [{"kind": "Deployment", "name": f"w{index}"} for index in range(CAP + 5)]
    document = loading.load_documents("controlplane", dump(body))[0][0]
    report, problems = statusreading.report_from_document(document)
    assert report is not None and len(report.workloads) == CAP
    assert any("the rest ignored" in str(problem) for problem in problems)


def test_the_agent_reads_its_last_report_back_under_the_same_bounds() -> None:
    hostile = report_text(["  - {}\n"] * (CAP + 1))
    assert reportfiles.load_status(hostile.encode()) is None
    assert reportfiles.load_status(large_agent_report(3, 20)) is not None
