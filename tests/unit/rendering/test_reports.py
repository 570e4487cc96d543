"""placement.yaml, PLACEMENT.md and .gitattributes (DESIGN §4).

Behaviours covered:
- placement.yaml has the documented keys in order; groups, objects, clusters and unscheduled entries are
  sorted whatever the plan order; ``replicas`` appears only for objects that have replicas, as rendered
  (source default, the copy's share, or an override of the replica field);
- cluster-scoped objects carry no namespace key; the clusters section holds quantity strings;
- parse_previous reads back what placement_document wrote (entry by entry past the loader's 8 MiB limit),
  ignores unknown fields and raises ValueError
  with a clear message for anything that is not a Placement;
- PLACEMENT.md has a matrix for few clusters and a compact form for many, stays bounded at 100 clusters ×
  2,000 groups, escapes table cells, and lists warnings and unscheduled objects with reasons;
- .gitattributes marks both reports linguist-generated.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.api import fieldpaths, loading
from nova_gitops.api.objects import Manifest, ObjectKey
from nova_gitops.api.policies import FieldOverride
from nova_gitops.api.problems import SourceLocation
from nova_gitops.rendering import emitting, reports
from nova_gitops.scheduling.plans import (
    ClusterCopy,
    ClusterUsage,
    GroupPlan,
    ObjectPlan,
    Plan,
    Unscheduled,
)

SOURCE = reports.SourceInfo("https://git.example.com/apps.git", "0123456789abcdef")
GIB = 1024**3 * 1000


def manifest(
    kind: str, name: str, namespace: str = "shop", api_version: str = "apps/v1", **spec: Any
) -> Manifest:
    body: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}}
    if namespace:
        body["metadata"]["namespace"] = namespace
    if spec:
        body["spec"] = spec
    return Manifest(body, SourceLocation("w.yaml", 1), api_version, kind, name, namespace, bool(namespace))


def group(name: str, clusters: tuple[str, ...], *objects: ObjectPlan, **kwargs: Any) -> GroupPlan:
    return GroupPlan(
        name=name,
        policy=kwargs.get("policy", "demo"),
        group_by=kwargs.get("group_by"),
        mode=kwargs.get("mode", "single"),
        status=kwargs.get("status", "scheduled"),
        clusters=clusters,
        reason=kwargs.get("reason", "Picked cluster because it has enough resources;"),
        objects=objects,
        warnings=kwargs.get("warnings", ()),
    )


def sample_plan() -> Plan:
    web = manifest("Deployment", "web", replicas=5)
    config = manifest("ConfigMap", "settings", api_version="v1")
    role = manifest("ClusterRole", "reader", namespace="", api_version="rbac.authorization.k8s.io/v1")
    divided = ObjectPlan(
        web,
        (
            ClusterCopy("wlc-2", 2, (FieldOverride(fieldpaths.parse("spec.replicas"), 4),)),
            ClusterCopy("wlc-1", 3),
        ),
    )
    return Plan(
        groups=(
            group("demo-bbbbbbbb", ("wlc-2", "wlc-1"), divided, ObjectPlan(config, ()), mode="divide"),
            group(
                "demo-aaaaaaaa",
                ("wlc-1",),
                ObjectPlan(role, (ClusterCopy("wlc-1"),)),
                group_by=("color", "blue"),
            ),
        ),
        unscheduled=(
            Unscheduled(ObjectKey("", "Service", "shop", "z"), "v1", None, "no SchedulePolicy matches"),
            Unscheduled(
                ObjectKey("", "Service", "shop", "a"), "v1", "demo", "Cluster wlc-1 skipped | too small"
            ),
        ),
        followed_namespaces=(),
        clusters=(
            ClusterUsage(
                "wlc-2", {"cpu": 4000, "memory": 8 * GIB}, {"cpu": 3000, "memory": 6 * GIB}, {"cpu": 500}
            ),
            ClusterUsage("wlc-1", {"cpu": 2000}, {"cpu": 2000}, {}),
        ),
        warnings=("demo and other both match Deployment.apps/shop/web",),
    )


def test_placement_document_shape_and_order() -> None:
    document = reports.placement_document(sample_plan(), SOURCE)
    assert list(document) == ["apiVersion", "kind", "source", "groups", "unscheduled", "warnings", "clusters"]
    assert document["apiVersion"] == "gitops.nova.elotl.co/v1alpha1"
    assert document["source"] == {"repo": SOURCE.repo, "revision": SOURCE.revision}
    first, second = document["groups"]
    assert first == {
        "name": "demo-aaaaaaaa",
        "policy": "demo",
        "groupBy": {"key": "color", "value": "blue"},
        "mode": "single",
        "status": "scheduled",
        "clusters": ["wlc-1"],
        "reason": "Picked cluster because it has enough resources;",
        "objects": [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": "reader"}],
    }
    assert second["groupBy"] is None
    assert second["clusters"] == ["wlc-1", "wlc-2"]
    assert second["objects"] == [
        {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "shop", "name": "settings"},
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "namespace": "shop",
            "name": "web",
            "replicas": {"wlc-1": 3, "wlc-2": 4},  # wlc-2's override of spec.replicas wins over its share
        },
    ]
    assert [item["name"] for item in document["unscheduled"]] == ["a", "z"]
    assert document["unscheduled"][1] == {
        "apiVersion": "v1",
        "kind": "Service",
        "namespace": "shop",
        "name": "z",
        "policy": None,
        "reason": "no SchedulePolicy matches",
    }
    assert document["clusters"] == [
        {"name": "wlc-1", "allocatable": {"cpu": "2"}, "available": {"cpu": "2"}, "placed": {}},
        {
            "name": "wlc-2",
            "allocatable": {"cpu": "4", "memory": "8Gi"},
            "available": {"cpu": "3", "memory": "6Gi"},
            "placed": {"cpu": "500m"},
        },
    ]


def test_duplicated_objects_report_the_source_replicas() -> None:
    web = manifest("Deployment", "web", replicas=2)
    plan = Plan(
        (group("g", ("a", "b"), ObjectPlan(web, (ClusterCopy("a"), ClusterCopy("b"))), mode="duplicate"),),
        (),
        (),
        (),
        (),
    )
    [entry] = reports.placement_document(plan, SOURCE)["groups"][0]["objects"]
    assert entry["replicas"] == {"a": 2, "b": 2}


def test_parse_previous_reads_back_a_rendered_placement() -> None:
    text = emitting.dump(reports.placement_document(sample_plan(), SOURCE))
    previous = reports.parse_previous(text)
    assert dict(previous.groups) == {"demo-aaaaaaaa": ("wlc-1",), "demo-bbbbbbbb": ("wlc-1", "wlc-2")}


def test_parse_previous_ignores_unknown_fields() -> None:
    text = (
        "apiVersion: gitops.nova.elotl.co/v1beta1\nkind: Placement\nfuture: 1\n"
        "groups:\n- {name: g, clusters: [c1], extra: x}\n- {name: h, status: unschedulable}\n"
    )
    assert dict(reports.parse_previous(text).groups) == {"g": ("c1",), "h": ()}


def test_parse_previous_reads_a_file_over_the_loader_limit_entry_by_entry() -> None:
    """The single-file layout passed the loader's 8 MiB limit at ~160 clusters: a publish from a fresh
    cache, ``diff --base`` and ``render --previous`` refused nova-gitops's own output. It is read entry by
    entry, each entry under the limit."""
    reason = "Cluster wlc-1 skipped, does not have enough resources; " * 60
    groups = tuple(group(f"demo-{index:08x}", ("wlc-1",), reason=reason) for index in range(2600))
    text = emitting.dump(reports.placement_document(Plan(groups, (), (), (), ()), SOURCE))
    assert len(text) > loading.MAX_FILE_BYTES
    previous = reports.parse_previous(text)
    assert len(previous.groups) == 2600 and previous.reasons["demo-00000a27"] == reason
    flow = text.replace("groups:\n", "groups: [{name: x}]\nother:\n", 1)  # not as rendered: loaded whole
    with pytest.raises(ValueError, match="over the 8 MiB limit"):
        reports.parse_previous(flow)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: [", "not valid YAML"),
        ("- 1\n", "must be a mapping"),
        ("kind: Deployment\n", "expected 'Placement'"),
        ("kind: Placement\napiVersion: apps/v1\n", "apiVersion"),
        ("kind: Placement\napiVersion: gitops.nova.elotl.co/v1alpha1\ngroups: {}\n", "groups must be a list"),
        ("kind: Placement\napiVersion: gitops.nova.elotl.co/v1alpha1\ngroups: [3]\n", r"groups\[0\] must be"),
        ("kind: Placement\napiVersion: gitops.nova.elotl.co/v1alpha1\ngroups: [{clusters: []}]\n", "name"),
        (
            "kind: Placement\napiVersion: gitops.nova.elotl.co/v1alpha1\ngroups: [{name: g, clusters: c}]\n",
            "clusters must be a list",
        ),
        (
            "kind: Placement\napiVersion: gitops.nova.elotl.co/v1alpha1\ngroups: [{name: g}, {name: g}]\n",
            "listed twice",
        ),
    ],
)
def test_parse_previous_rejects_malformed_documents(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        reports.parse_previous(text)


_NAMES = st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True)


@settings(max_examples=100)
@given(st.dictionaries(_NAMES, st.lists(_NAMES, max_size=4, unique=True), max_size=6))
def test_parse_previous_round_trips_group_decisions(decisions: dict[str, list[str]]) -> None:
    groups = tuple(group(name, tuple(clusters)) for name, clusters in decisions.items())
    text = emitting.dump(reports.placement_document(Plan(groups, (), (), (), ()), SOURCE))
    parsed = reports.parse_previous(text)
    assert dict(parsed.groups) == {name: tuple(sorted(clusters)) for name, clusters in decisions.items()}


def test_markdown_matrix_for_few_clusters() -> None:
    text = reports.placement_markdown(sample_plan(), SOURCE)
    assert text.startswith("# Placement\n")
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert "`0123456789abcdef`" in text
    assert "| Group | Policy | Mode | Status | `wlc-1` | `wlc-2` |" in text
    assert "| `demo-bbbbbbbb` | demo | divide | scheduled | 3 | 4 |" in text
    assert "| `demo-aaaaaaaa` | demo | single | scheduled | ✓ |  |" in text
    assert "| `wlc-2` | 1 | 1500m / 2500m | 2Gi / 6Gi |" in text
    assert "| `wlc-1` | 2 | 0 / 2 | — |" in text  # no memory reported: a dash, not a zero
    assert "- demo and other both match Deployment.apps/shop/web" in text
    assert "Cluster wlc-1 skipped \\| too small" in text  # a pipe cannot break the table
    assert "no SchedulePolicy matches" in text


def test_markdown_names_the_working_tree_when_there_is_no_revision() -> None:
    text = reports.placement_markdown(Plan((), (), (), (), ()), reports.SourceInfo("./src", None))
    assert "the working tree" in text
    assert "No groups." in text


def test_markdown_stays_compact_at_100_clusters_and_2000_groups() -> None:
    clusters = tuple(f"wlc-{index:03d}" for index in range(100))
    web = manifest("Deployment", "web", replicas=1)
    groups = []
    for index in range(2000):
        if index % 2:
            chosen: tuple[str, ...] = clusters
        else:
            chosen = clusters[index % 100 : index % 100 + 1]
        copies = tuple(ClusterCopy(cluster) for cluster in chosen)
        groups.append(group(f"g-{index:04d}", chosen, ObjectPlan(web, copies), mode="duplicate"))
    usages = tuple(ClusterUsage(cluster, {"cpu": 8000}, {"cpu": 8000}, {"cpu": 10}) for cluster in clusters)
    text = reports.placement_markdown(Plan(tuple(groups), (), (), usages, ()), SOURCE)
    lines = text.splitlines()
    assert len(lines) < 2000 + 100 + 40
    assert max(len(line) for line in lines) < 300
    assert "| `g-0001` | demo | duplicate | scheduled | all 100 clusters |" in text
    assert "| `g-0000` | demo | duplicate | scheduled | wlc-000 (1) |" in text


def test_markdown_compact_form_truncates_long_cluster_lists() -> None:
    clusters = tuple(f"c{index:02d}" for index in range(20))
    config = manifest("ConfigMap", "c", api_version="v1")
    chosen = clusters[:15]
    plan = Plan(
        (group("g", chosen, ObjectPlan(config, tuple(ClusterCopy(c) for c in chosen))),),
        (),
        (),
        tuple(ClusterUsage(c, {}, {}, {}) for c in clusters),
        (),
    )
    text = reports.placement_markdown(plan, SOURCE)
    assert "c00, c01, c02, c03, c04, c05, c06, c07, … and 7 more" in text


def test_markdown_lists_unschedulable_groups_and_group_warnings() -> None:
    plan = Plan(
        (
            group(
                "g",
                (),
                status="unschedulable",
                reason="Cluster c1 skipped",
                warnings=("split redistributed",),
            ),
        ),
        (),
        (),
        (),
        (),
    )
    text = reports.placement_markdown(plan, SOURCE)
    assert "## Unschedulable groups" in text
    assert "| `g` | demo | Cluster c1 skipped |" in text
    assert "- g: split redistributed" in text


def test_gitattributes_marks_reports_generated() -> None:
    assert reports.GITATTRIBUTES.splitlines() == [
        "placement.yaml linguist-generated=true",
        "PLACEMENT.md linguist-generated=true",
    ]


def test_placement_document_loads_back_from_its_yaml() -> None:
    document = reports.placement_document(sample_plan(), SOURCE)
    assert yaml.load(emitting.dump(document), Loader=yaml.CSafeLoader) == document


def test_previous_of_a_plan_equals_parsing_its_placement_yaml() -> None:
    """publish caches previous_of(plan) instead of parsing placement.yaml back: they must agree."""
    from nova_gitops.rendering import renders
    from nova_gitops.rendering.reports import SourceInfo, parse_previous, previous_of
    from nova_gitops.scheduling import planning
    from tests.builders import cluster, deployment, policy, source_set

    documents = (
        cluster("a", cpu="1"),
        cluster("b"),
        policy("p"),
        deployment("web", cpu="2"),
        deployment("x"),
    )
    plan = planning.plan(source_set(*documents))
    text = renders.render(plan, SourceInfo("src", None)).files["placement.yaml"].decode()
    assert parse_previous(text) == previous_of(plan)
