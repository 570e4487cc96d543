"""Status reports are untrusted: whatever one holds, it is used or refused naming its cluster (issue 9 #4).

Behaviours covered:
- fuzz (hypothesis, structure-aware): the agent's own report (nova_agent.reports) with random nodes replaced
  by hostile values — huge ints, NaN, lists and maps where scalars go, None, long strings, YAML tags,
  anchors and alias bombs, recursive aliases, duplicate keys, deep nesting, bad quoting — never makes the
  reader raise; each report is used (and then survives validation, planning, the reschedule rules and the
  write-back sums) or refused with a problem that names its cluster; the good report beside it is used;
- an exception from the Cluster parser itself (simulated: whatever api/ does) refuses that report only,
  for status files and for a control plane's Cluster CRs alike;
- a reconcile over real git with poisoned reports and a good one publishes the source change and names the
  refused clusters; ``controller --once`` exits 0;
- write-back reads agents' replica counts by type.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nova_agent import reportfiles
from nova_agent import reports as agent_reports
from nova_agent.capacity import NodeCapacity
from nova_agent.health import Health
from nova_agent.rescheduling import request_for
from nova_agent.resources import ObjectRef
from nova_gitops.api import clusters, inputs
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import SourceLocation
from nova_gitops.cli.controller import controller_command
from nova_gitops.controller import loading, rescheduling, statusreading, writeback
from nova_gitops.controller.ports import SourceSnapshot
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.scheduling import planning
from nova_gitops.scheduling.plans import PlanSettings, PreviousPlacement
from nova_gitops.workflows.publishing import Outcome
from tests.controller.helpers import Fleet, cluster_report, deployment, dump, git, policy
from tests.fuzzing import node_paths

WEB = ObjectRef("apps/v1", "Deployment", "demo", "web")


def agent_report(name: str) -> dict[str, Any]:
    """A report exactly as nova-agent builds it, with a workload and a reschedule request in it."""
    node = NodeCapacity(
        name=f"{name}-n1",
        allocatable={"cpu": 4000, "memory": 8 * 1024**3 * 1000},
        available={"cpu": 3000, "memory": 6 * 1024**3 * 1000},
        labels={"kubernetes.io/hostname": f"{name}-n1"},
        taints=(),
        ready=True,
    )
    observation = agent_reports.Observation(
        agent_reports.ClusterIdentity(name),
        [node],
        autoscaled=False,
        workloads=[
            agent_reports.WorkloadHealth(WEB, Health(False, "Available", "MinimumReplicas", "1/2 ready"))
        ],
        reschedule_requests=[request_for(WEB, "demo-policy-0011aabb", "pending", "2026-01-01T00:00:00Z")],
    )
    body = agent_reports.build_status_document(observation, datetime(2026, 1, 1, tzinfo=UTC))
    loaded = yaml.safe_load(reportfiles.dump_status(body))
    assert isinstance(loaded, dict)
    return loaded


BASE = agent_report("wlc-1")
PATHS = node_paths(BASE)[1:]  # the root itself is not replaced
GOOD = yaml.safe_dump(agent_report("wlc-2"), sort_keys=False).encode()

BOMB = (
    "["
    + ", ".join(
        [f"&a0 [{', '.join(['x'] * 9)}]"]
        + [f"&a{level} [{', '.join([f'*a{level - 1}'] * 9)}]" for level in range(1, 9)]
    )
    + "]"
)
SNIPPETS = (  # raw YAML put where a value was: what safe_dump cannot produce
    "9" * 5000,
    "-" + "9" * 5000,
    "0x" + "f" * 5000,
    "1" * 4300 + ".5",
    "1e400",
    ".nan",
    "-.inf",
    "!!binary aGk=",
    "!!set {a, b}",
    "!!omap [{a: 1}]",
    "!!python/object/apply:os.system [echo]",
    "!!timestamp 2024-01-01",
    "!custom x",
    "!!str",
    "!!int nope",
    "!!float [1]",
    "=",
    "2024-01-01T00:00:00Z",
    "&x [1, 2]",
    "*undefined",
    "&r [*r]",
    BOMB,
    "{a: 1, a: [2], a: {b: c}}",
    "{? [a, b] : c}",
    "{? {a: b} : c}",
    "{<<: [1, 2]}",
    "{<<: *undefined}",
    "[" * 80 + "]" * 80,
    "[" * 30,
    "'unterminated",
    '"\\ud800"',
    '"\\x00\\u0007"',
    "\t",
    "- a\n- b",
    "|\n  text",
    "{}",
    "[]",
    "~",
    "''",
)


def _scalars() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(10**300), max_value=10**300),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=40),
        st.sampled_from(
            ["", "True", "False", "Unknown", "Ready", "4", "-1", "1e3", "NaN", "wlc-2", "x" * 100_000]
        ),
    )


def _python_values() -> st.SearchStrategy[Any]:
    keys = st.one_of(
        st.text(max_size=10), st.integers(), st.none(), st.booleans(), st.floats(allow_nan=False)
    )
    return st.recursive(
        _scalars(),
        lambda children: st.one_of(
            st.lists(children, max_size=4), st.dictionaries(keys, children, max_size=4)
        ),
        max_leaves=8,
    )


def _holds(node: Any, step: Any) -> bool:
    if isinstance(node, dict):
        return step in node
    return isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node)


def _container(body: Any, path: tuple[Any, ...]) -> Any:
    node = body
    for step in path:
        if not _holds(node, step):
            return None
        node = node[step]
    return node if isinstance(node, dict | list) else None


@st.composite
def hostile_reports(draw: st.DrawFn) -> bytes:
    """The agent's report with 1–4 nodes replaced, by Python values or by raw YAML text."""
    body = yaml.safe_load(yaml.safe_dump(BASE))
    raw: dict[str, str] = {}
    for index in range(draw(st.integers(min_value=1, max_value=4))):
        path = draw(st.sampled_from(PATHS))
        parent = _container(body, path[:-1])
        if parent is None or not _holds(parent, path[-1]):  # an earlier replacement removed it
            continue
        if draw(st.booleans()):
            marker = f"HOSTILE{index}MARK"
            raw[marker] = draw(st.sampled_from(SNIPPETS))
            parent[path[-1]] = marker
        else:
            parent[path[-1]] = draw(_python_values())
    text = yaml.safe_dump(body, sort_keys=False, width=10**9)
    for marker, snippet in raw.items():
        text = text.replace(marker, snippet.replace("\n", " ") if "\n- " not in snippet else snippet, 1)
    return text.encode("utf-8", "surrogatepass")


def _exercise(report: Any) -> None:
    """What the controller does with a used report must not raise either."""
    documents = [
        Document(policy(), SourceLocation("policy.yaml", 1)),
        Document(deployment(), SourceLocation("web.yaml", 1)),
        report.document,
    ]
    source = inputs.build_source_set(documents)
    plan = planning.plan(source, previous=PreviousPlacement(), settings=PlanSettings())
    rescheduling.update(
        rescheduling.RescheduleMemory(),
        report.reschedule_requests,
        {report.name: report.capacity},
        now=0.0,
        cooldown=60.0,
    )
    for group in plan.groups:
        for object_plan in group.objects:
            writeback.summed_status(object_plan, {report.name: report}, None)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_reports())
def test_any_report_is_used_or_refused_naming_its_cluster(data: bytes) -> None:
    snapshot = statusreading.snapshot_of({"status/wlc-1.yaml": data, "status/wlc-2.yaml": GOOD})
    assert "wlc-2" in snapshot.reports
    if "wlc-1" in snapshot.reports:
        _exercise(snapshot.reports["wlc-1"])
    else:
        assert any("wlc-1" in str(problem) for problem in snapshot.problems)


def test_the_unmutated_agent_report_is_used() -> None:
    data = yaml.safe_dump(BASE, sort_keys=False).encode()
    snapshot = statusreading.snapshot_of({"status/wlc-1.yaml": data})
    assert "wlc-1" in snapshot.reports and snapshot.problems == ()
    _exercise(snapshot.reports["wlc-1"])


@pytest.mark.parametrize(
    "tail",
    ["[" * 100_000 + "]" * 100_000, "- " * 60_000 + "x", " " * 300 + "x"],
    ids=["flow", "block", "indent"],
)
def test_deep_nesting_is_refused_before_the_parser_sees_it(tail: str) -> None:
    """200 KB of nesting overflowed libyaml's C recursion (a segfault) or made it quadratic. Refused before
    anything is composed: by the bounds on libyaml's events, or by libyaml's own limit on flow levels,
    which its scanner can meet first ("exceeded maximum nesting depth")."""
    text = (
        "apiVersion: cluster.elotl.co/v1alpha1\nkind: Cluster\nmetadata: {name: wlc-1}\nstatus:\n  x:\n"
        + tail
    )
    report, problems = statusreading.parse_report("status/wlc-1.yaml", text.encode())
    assert report is None and "cluster wlc-1" in str(problems[0]) and "nest" in str(problems[0])


def _exploding_parser(monkeypatch: pytest.MonkeyPatch, victim: str) -> None:
    """Whatever api/ does with a value, an exception out of the Cluster parser must stay one report's."""
    real = clusters.parse_cluster

    def parse(document: Document, problems: list[Any]) -> Any:
        if document.body.get("metadata", {}).get("name") == victim:
            raise TypeError("unhashable type: 'list'")
        return real(document, problems)

    monkeypatch.setattr(clusters, "parse_cluster", parse)


def test_an_exception_in_the_parser_refuses_that_report_only(monkeypatch: pytest.MonkeyPatch) -> None:
    _exploding_parser(monkeypatch, "wlc-1")
    files = {"status/wlc-1.yaml": dump(cluster_report("wlc-1")).encode(), "status/wlc-2.yaml": GOOD}
    snapshot = statusreading.snapshot_of(files)
    assert list(snapshot.reports) == ["wlc-2"]
    (problem,) = snapshot.problems
    assert "cluster wlc-1" in str(problem) and "TypeError" in str(problem)


def test_a_control_plane_cluster_that_crashes_the_parser_is_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    _exploding_parser(monkeypatch, "bad")
    bodies = [policy(), deployment(), cluster_report("good"), cluster_report("bad")]
    snapshot = SourceSnapshot(
        root=None,
        documents=tuple(Document(body, SourceLocation("controlplane", 1)) for body in bodies),
        texts={},
        source=SourceInfo("controlplane:test", None),
    )
    source, reports, refused = loading.source_set(snapshot, {})
    assert [cluster.name for cluster in source.clusters] == ["good"]
    assert list(reports) == ["good"]
    assert len(refused) == 1 and "cluster bad" in str(refused[0])


def test_an_invalid_control_plane_cluster_is_left_out_too() -> None:
    bad = cluster_report("bad", cpu="lots")  # not a quantity: the Cluster validator refuses it
    bodies = [policy(), deployment(), cluster_report("good"), bad]
    snapshot = SourceSnapshot(
        root=None,
        documents=tuple(Document(body, SourceLocation("controlplane", 1)) for body in bodies),
        texts={},
        source=SourceInfo("controlplane:test", None),
    )
    source, reports, refused = loading.source_set(snapshot, {})
    assert [cluster.name for cluster in source.clusters] == ["good"] and list(reports) == ["good"]
    assert refused and any("lots" in str(problem) or "quantity" in str(problem) for problem in refused)


def _poison(fleet: Fleet) -> None:
    """wlc-1: an unhashable condition status; wlc-3: a 5,000-digit integer (the two shapes of issue 9)."""
    bad = cluster_report("wlc-1")
    bad["status"]["conditions"] = [{"type": "Ready", "status": ["x"]}]
    huge = dump(cluster_report("wlc-3")).replace("autoscaled: false", "autoscaled: " + "9" * 5000)
    fleet.report(bad, cluster_report("wlc-2", cpu="8"))
    (fleet.status_work / "status" / "wlc-3.yaml").write_text(huge)
    git(fleet.status_work, "add", "-A")
    git(fleet.status_work, "commit", "--quiet", "-m", "poison")
    git(fleet.status_work, "push", "--quiet", "--force", "origin", "HEAD:nova-status")


@pytest.mark.parametrize("crash", [False, True], ids=["as-api-does", "parser-raises"])
def test_a_poisoned_report_does_not_stop_a_source_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, crash: bool
) -> None:
    fleet = Fleet(tmp_path)
    fleet.write_source("policy.yaml", policy())
    fleet.write_source("web.yaml", deployment())
    fleet.report(cluster_report("wlc-1"), cluster_report("wlc-2", cpu="8"))
    controller = fleet.controller()
    assert controller.reconcile_once().outcome is Outcome.PUBLISHED
    _poison(fleet)
    if crash:
        _exploding_parser(monkeypatch, "wlc-1")
    fleet.write_source("web.yaml", deployment(replicas=3))
    outcome = controller.reconcile_once()
    assert outcome.outcome is Outcome.PUBLISHED
    assert "replicas: 3" in fleet.show("clusters/wlc-2/demo/deployment-web.yaml")
    refused = " ".join(str(problem) for problem in outcome.status_problems)
    assert "wlc-1" in refused and "wlc-3" in refused


def test_controller_once_exits_0_with_a_poisoned_report(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path)
    fleet.write_source("policy.yaml", policy())
    fleet.write_source("web.yaml", deployment())
    _poison(fleet)
    args = ["--source", str(fleet.source), "--repo", fleet.url, "--once", "--cache-dir", str(tmp_path / "c")]
    result = CliRunner().invoke(controller_command, args)
    assert result.exit_code == 0, result.output
    assert fleet.commit_count() == 1


@pytest.mark.parametrize(
    ("value", "expected"),
    [(3, 3), (True, 0), (-4, 0), (2**40, 2**31 - 1), ("3", 0), ([1], 0), (float("nan"), 0)],
)
def test_write_back_reads_counts_by_type(value: object, expected: int) -> None:
    assert writeback.count_of(value) == expected


def test_write_back_ignores_a_count_message_with_huge_numbers() -> None:
    entry = {"healthy": "yes", "message": "9" * 5000 + "/1 ready"}
    assert writeback._copy_counts(entry, 2)["readyReplicas"] == 0
