"""The rendered repository's placement files (docs/design.md §4): each group's file, each policy's page, the
index placement.yaml, PLACEMENT.md and .gitattributes.

Behaviours covered:
- a group's file has the documented keys in order (Nova's ScheduleGroup shape plus ours); objects are
  sorted whatever the plan order; ``replicas`` appears only for objects that have replicas, as rendered
  (source default, the copy's share, or an override of the replica field); cluster-scoped objects carry
  no namespace key; requests and warnings only when there are some;
- placement.yaml, the index, has the documented keys in order and is O(policies + clusters): one entry per
  policy with its folder and counts, totals, unscheduled objects, the warnings no group has, and the
  clusters' quantities; it does not grow with the groups;
- group files are read back (previous_from_files) as previous_of(plan) gives them, unknown fields ignored,
  and anything else is a ValueError naming the file; a render in the single-file layout is read from its
  placement.yaml (entry by entry past the loader's 8 MiB limit), with the old checks;
- a policy's page has a matrix for few clusters and a compact form for many, stays bounded at 100
  clusters × 2,000 groups, links each group to its file, escapes table cells, and lists its groups'
  warnings and unschedulable groups with reasons; PLACEMENT.md links each policy's page, counts the
  warnings each policy's groups have, and lists the capacity, fleet-wide warnings and unscheduled objects;
- .gitattributes marks the summaries linguist-generated, not the group files.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.api import fieldpaths, loading
from nova_gitops.api.objects import Manifest, ObjectKey
from nova_gitops.api.policies import FieldOverride
from nova_gitops.api.problems import SourceLocation
from nova_gitops.rendering import emitting, oldlayout, placementfiles, policypages, reports, schedulegroups
from nova_gitops.scheduling.planparts import ClusterCopy, ClusterUsage, GroupPlan, ObjectPlan
from nova_gitops.scheduling.plans import Plan, Unscheduled

SOURCE = reports.SourceInfo("https://git.example.com/apps.git", "0123456789abcdef")
HEAD = "apiVersion: gitops.nova.elotl.co/v1alpha1\nkind: ScheduleGroupPlacement\n"
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


def files_of(plan: Plan) -> dict[str, bytes]:
    return placementfiles.files(plan, SOURCE)


def test_group_file_shape_and_order() -> None:
    files = files_of(sample_plan())
    first = yaml.load(files["placement/demo/demo-aaaaaaaa.yaml"], Loader=yaml.CSafeLoader)
    second = yaml.load(files["placement/demo/demo-bbbbbbbb.yaml"], Loader=yaml.CSafeLoader)
    assert first == {
        "apiVersion": "gitops.nova.elotl.co/v1alpha1",
        "kind": "ScheduleGroupPlacement",
        "metadata": {"name": "demo-aaaaaaaa"},
        "policy": {"name": "demo"},
        "groupBy": {"key": "color", "value": "blue"},
        "objectRefs": [
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": "reader"}
        ],
        "scheduled": True,
        "status": {
            "mode": "single",
            "phase": "scheduled",
            "clusters": ["wlc-1"],
            "reason": "Picked cluster because it has enough resources;",
        },
    }
    assert list(first) == list(schedulegroups.document(sample_plan().groups[1]))
    assert second["groupBy"] is None
    assert second["status"]["clusters"] == ["wlc-1", "wlc-2"]
    assert second["objectRefs"] == [
        {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "shop", "name": "settings"},
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "namespace": "shop",
            "name": "web",
            "replicas": {"wlc-1": 3, "wlc-2": 4},  # wlc-2's override of spec.replicas wins over its share
        },
    ]


def test_group_file_requests_warnings_and_annotation_folder() -> None:
    placed = replace(
        group(
            "annotation-0e846ded", ("c1",), policy=None, warnings=("pinned to cluster c1, which is cordoned",)
        ),
        requests={"cpu": 1500, "memory": 2 * GIB},
    )
    files = files_of(Plan((placed,), (), (), (), ()))
    document = yaml.load(files["placement/_annotations/annotation-0e846ded.yaml"], Loader=yaml.CSafeLoader)
    assert document["policy"] == {"name": None}
    assert document["status"]["requests"] == {"cpu": "1500m", "memory": "2Gi"}
    assert document["status"]["warnings"] == ["pinned to cluster c1, which is cordoned"]
    assert "placement/_annotations/README.md" in files


def test_duplicated_objects_report_the_source_replicas() -> None:
    web = manifest("Deployment", "web", replicas=2)
    plan = Plan(
        (group("g", ("a", "b"), ObjectPlan(web, (ClusterCopy("a"), ClusterCopy("b"))), mode="duplicate"),),
        (),
        (),
        (),
        (),
    )
    [entry] = schedulegroups.document(plan.groups[0])["objectRefs"]
    assert entry["replicas"] == {"a": 2, "b": 2}


def test_index_shape_and_order() -> None:
    document = reports.placement_document(sample_plan(), SOURCE)
    assert list(document) == [
        "apiVersion",
        "kind",
        "format",
        "source",
        "totals",
        "policies",
        "unscheduled",
        "warnings",
        "clusters",
    ]
    assert document["apiVersion"] == "gitops.nova.elotl.co/v1alpha1" and document["format"] == 2
    assert document["source"] == {"repo": SOURCE.repo, "revision": SOURCE.revision}
    assert document["totals"] == {
        "groups": 2,
        "scheduled": 2,
        "delegated": 0,
        "unschedulable": 0,
        "unscheduledObjects": 2,
        "clusters": 2,
    }
    assert document["policies"] == [
        {
            "name": "demo",
            "folder": "placement/demo",
            "groups": 2,
            "scheduled": 2,
            "delegated": 0,
            "unschedulable": 0,
        }
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
    assert document["warnings"] == ["demo and other both match Deployment.apps/shop/web"]
    assert document["clusters"] == [
        {"name": "wlc-1", "allocatable": {"cpu": "2"}, "available": {"cpu": "2"}, "placed": {}},
        {
            "name": "wlc-2",
            "allocatable": {"cpu": "4", "memory": "8Gi"},
            "available": {"cpu": "3", "memory": "6Gi"},
            "placed": {"cpu": "500m"},
        },
    ]


def test_the_index_does_not_grow_with_the_groups() -> None:
    """O(policies + clusters): 2,000 groups of one policy make the index no longer than 2."""

    def index(groups: int) -> bytes:
        chosen = tuple(group(f"demo-{index:08x}", ("wlc-1",)) for index in range(groups))
        return placementfiles.files(Plan(chosen, (), (), (), ()), SOURCE)["placement.yaml"]

    assert len(index(2000)) - len(index(2)) == 4 * 3  # four counts, three more digits each


def test_group_warnings_are_the_groups_not_the_index() -> None:
    warned = group("demo-aaaaaaaa", ("c1",), warnings=("split redistributed",))
    plan = Plan((warned,), (), (), (), ("demo-aaaaaaaa: split redistributed", "overlap"))
    assert reports.placement_document(plan, SOURCE)["warnings"] == ["overlap"]


def test_group_files_read_back_as_previous_of_the_plan() -> None:
    """publish caches previous_of(plan) instead of reading the group files back: they must agree."""
    from nova_gitops.rendering import renders
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
    files = renders.render(plan, reports.SourceInfo("src", None)).files
    assert schedulegroups.previous_from_files(files) == reports.previous_of(plan)
    assert reports.previous_of(plan).requests  # the test means something: requests are read back too


def test_group_files_ignore_unknown_fields() -> None:
    text = (
        b"apiVersion: gitops.nova.elotl.co/v1beta1\nkind: ScheduleGroupPlacement\nfuture: 1\n"
        b"metadata: {name: g, labels: {a: b}}\nstatus: {clusters: [c1], extra: x}\n"
    )
    previous = schedulegroups.previous_from_files({"placement/p/g.yaml": text, "placement/p/README.md": b"#"})
    assert dict(previous.groups) == {"g": ("c1",)}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: [", "placement/p/g.yaml: not valid YAML"),
        ("- 1\n", "must be a mapping"),
        ("kind: Placement\n", "expected 'ScheduleGroupPlacement'"),
        ("kind: ScheduleGroupPlacement\napiVersion: apps/v1\n", "apiVersion"),
        (f"{HEAD}metadata: {{}}\n", "metadata.name must be"),
        (f"{HEAD}metadata: {{name: g}}\nstatus: [1]\n", "status must be a mapping"),
        (f"{HEAD}metadata: {{name: g}}\nstatus: {{clusters: c}}\n", "status.clusters must be a list"),
        (f"{HEAD}metadata: {{name: g}}\nstatus: {{requests: {{cpu: lots}}}}\n", "status.requests"),
    ],
)
def test_group_files_reject_malformed_documents(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        schedulegroups.previous_from_files({"placement/p/g.yaml": text.encode()})


def test_a_group_in_two_files_is_refused() -> None:
    text = f"{HEAD}metadata: {{name: g}}\n".encode()
    with pytest.raises(ValueError, match="has another file too"):
        schedulegroups.previous_from_files({"placement/p/g.yaml": text, "placement/q/g.yaml": text})


_NAMES = st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True)


@settings(max_examples=100)
@given(st.dictionaries(_NAMES, st.lists(_NAMES, max_size=4, unique=True), max_size=6))
def test_group_files_round_trip_group_decisions(decisions: dict[str, list[str]]) -> None:
    groups = tuple(group(name, tuple(clusters)) for name, clusters in decisions.items())
    parsed = schedulegroups.previous_from_files(files_of(Plan(groups, (), (), (), ())))
    assert dict(parsed.groups) == {name: tuple(sorted(clusters)) for name, clusters in decisions.items()}


def test_a_single_file_render_is_read_from_its_placement_yaml() -> None:
    """A render made before the per-group layout: every group in placement.yaml (stickiness holds across
    the upgrade)."""
    from tests import oldrenders

    plan = sample_plan()
    old = oldrenders.placement_yaml(plan, SOURCE)
    assert oldlayout.is_single_file(old)
    assert not oldlayout.is_single_file(files_of(plan)["placement.yaml"])
    previous = schedulegroups.previous_from_files({"placement.yaml": old})
    assert previous == reports.previous_of(plan)


def test_single_file_placement_ignores_unknown_fields() -> None:
    text = (
        "apiVersion: gitops.nova.elotl.co/v1beta1\nkind: Placement\nfuture: 1\n"
        "groups:\n- {name: g, clusters: [c1], extra: x}\n- {name: h, status: unschedulable}\n"
    )
    assert dict(oldlayout.parse_previous(text).groups) == {"g": ("c1",), "h": ()}


def test_single_file_placement_over_the_loader_limit_is_read_entry_by_entry() -> None:
    """The single-file layout passed the loader's 8 MiB limit at ~160 clusters: a publish from a fresh
    cache, ``diff --base`` and ``render --previous`` refused nova-gitops's own output. It is read entry by
    entry, each entry under the limit."""
    from tests import oldrenders

    reason = "Cluster wlc-1 skipped, does not have enough resources; " * 60
    groups = tuple(group(f"demo-{index:08x}", ("wlc-1",), reason=reason) for index in range(2600))
    text = oldrenders.placement_yaml(Plan(groups, (), (), (), ()), SOURCE).decode()
    assert len(text) > loading.MAX_FILE_BYTES
    previous = oldlayout.parse_previous(text)
    assert len(previous.groups) == 2600 and previous.reasons["demo-00000a27"] == reason
    flow = "# written by hand\n" + text  # lines before the first key: not as rendered, loaded whole
    with pytest.raises(ValueError, match="over the 8 MiB limit"):
        oldlayout.parse_previous(flow)


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
def test_single_file_placement_rejects_malformed_documents(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        oldlayout.parse_previous(text)


def test_page_matrix_for_few_clusters() -> None:
    files = files_of(sample_plan())
    text = files["placement/demo/README.md"].decode()
    assert text.startswith("# Placement: policy `demo`\n")
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert "| Group | Mode | Status | `wlc-1` | `wlc-2` |" in text
    assert "| [`demo-bbbbbbbb`](demo-bbbbbbbb.yaml) | divide | scheduled | 3 | 4 |" in text
    assert "| [`demo-aaaaaaaa`](demo-aaaaaaaa.yaml) | single | scheduled | ✓ |  |" in text
    assert "[PLACEMENT.md](../../PLACEMENT.md)" in text


def test_placement_md_summarises_the_fleet() -> None:
    text = reports.placement_markdown(sample_plan(), SOURCE)
    assert text.startswith("# Placement\n")
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert "`0123456789abcdef`" in text
    assert "| [`demo`](placement/demo/README.md) | 2 | 2 | 0 | 0 |" in text
    assert "| `wlc-2` | 1 | 1500m / 2500m | 2Gi / 6Gi |" in text
    assert "| `wlc-1` | 2 | 0 / 2 | — |" in text  # no memory reported: a dash, not a zero
    assert "- demo and other both match Deployment.apps/shop/web" in text
    assert "Cluster wlc-1 skipped \\| too small" in text  # a pipe cannot break the table
    assert "no SchedulePolicy matches" in text
    assert "demo-aaaaaaaa" not in text  # groups are the pages'


def test_markdown_names_the_working_tree_when_there_is_no_revision() -> None:
    text = reports.placement_markdown(Plan((), (), (), (), ()), reports.SourceInfo("./src", None))
    assert "the working tree" in text
    assert "No groups." in text


def test_page_stays_compact_at_100_clusters_and_2000_groups() -> None:
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
    files = files_of(Plan(tuple(groups), (), (), usages, ()))
    text = files["placement/demo/README.md"].decode()
    lines = text.splitlines()
    assert len(lines) < 2000 + 40
    assert max(len(line) for line in lines) < 300
    assert "| [`g-0001`](g-0001.yaml) | duplicate | scheduled | all 100 clusters |" in text
    assert "| [`g-0000`](g-0000.yaml) | duplicate | scheduled | wlc-000 (1) |" in text
    assert len(files["PLACEMENT.md"].splitlines()) < 100 + 40  # O(policies + clusters)


def test_page_compact_form_truncates_long_cluster_lists() -> None:
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
    text = files_of(plan)["placement/demo/README.md"].decode()
    assert "c00, c01, c02, c03, c04, c05, c06, c07, … and 7 more" in text


def test_page_lists_unschedulable_groups_and_group_warnings() -> None:
    unschedulable = group(
        "g", (), status="unschedulable", reason="Cluster c1 skipped", warnings=("split redistributed",)
    )
    plan = Plan((unschedulable,), (), (), (), ("g: split redistributed",))
    text = files_of(plan)["placement/demo/README.md"].decode()
    assert "## Unschedulable groups" in text
    assert "| `g` | Cluster c1 skipped |" in text
    assert "- g: split redistributed" in text
    summary = reports.placement_markdown(plan, SOURCE)
    assert "- [`demo`](placement/demo/README.md): 1 warning of its groups, on its page" in summary
    assert "0 objects unscheduled; 1 warning." in summary


def test_a_group_name_that_is_no_plain_file_name_is_not_linked() -> None:
    table = policypages.group_table(("c1",))
    assert policypages.group_row(group("g(x)", ("c1",)), table).startswith("| `g(x)` |")


def test_gitattributes_marks_the_summaries_generated() -> None:
    assert reports.GITATTRIBUTES.splitlines() == [
        "placement.yaml linguist-generated=true",
        "PLACEMENT.md linguist-generated=true",
        "placement/*/README.md linguist-generated=true",
    ]


def test_placement_files_load_back_from_their_yaml() -> None:
    document = reports.placement_document(sample_plan(), SOURCE)
    assert yaml.load(emitting.dump(document), Loader=yaml.CSafeLoader) == document
    for group_plan in sample_plan().groups:
        document = schedulegroups.document(group_plan)
        assert yaml.load(emitting.dump(document), Loader=yaml.CSafeLoader) == document
