"""Building the validated source set (``api.inputs.build_source_set``).

Behaviours covered:
- classification: SchedulePolicy and Cluster are inputs; everything else (Namespaces and CRDs included) is
  a workload, sorted by key; ScheduleGroups are ignored with a warning that the SourceSet keeps;
- scope: namespaced objects without a namespace live in ``default``; cluster-scoped kinds have none (a
  namespace given to one is a warning); CRDs in the source decide their kinds' scope;
- namespace_labels: each source Namespace's labels plus the implied ``kubernetes.io/metadata.name``;
- one table row per workload rule, with the exact ``file:line: field: message`` text at the field's line:
  names per kind (DNS-1123 subdomain, Namespace label, Service DNS-1035, RBAC path segment), generateName,
  namespaces, labels, annotations, the pin and spread-onto annotations, duplicates naming both places;
- every problem across many files is reported at once, sorted by file and line;
- ``pinned_cluster`` and ``spread_onto`` read the annotations;
- property: arbitrary YAML values in any field never crash the build: it returns or raises InputError.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.api import inputs, loading, placementannotations
from nova_gitops.api.objects import Document, ObjectKey
from nova_gitops.api.problems import SourceLocation
from nova_gitops.api.unmatchedpolicies import UNMATCHED_POLICY
from nova_gitops.errors import InputError


def build(files: dict[str, str]) -> inputs.SourceSet:
    documents: list[Document] = []
    for name, text in files.items():
        loaded, problems = loading.load_documents(name, text)
        assert problems == []
        documents.extend(loaded)
    return inputs.build_source_set(documents, texts=files)


def problems_of(files: dict[str, str]) -> list[str]:
    with pytest.raises(InputError) as caught:
        build(files)
    return [str(problem) for problem in caught.value.problems]


SOURCE = {
    "policies.yaml": """\
apiVersion: policy.elotl.co/v1alpha1
kind: SchedulePolicy
metadata:
  name: spread
spec:
  resourceSelectors:
    labelSelectors:
    - matchLabels: {app: web}
---
apiVersion: policy.elotl.co/v1alpha1
kind: SchedulePolicy
metadata:
  name: apps
spec: {}
""",
    "clusters.yaml": """\
apiVersion: cluster.elotl.co/v1alpha1
kind: Cluster
metadata:
  name: wlc-2
status:
  capacityResources: {cpu: "4"}
---
apiVersion: cluster.elotl.co/v1alpha1
kind: Cluster
metadata:
  name: wlc-1
status:
  capacityResources: {cpu: "4"}
""",
    "app.yaml": """\
apiVersion: v1
kind: Namespace
metadata:
  name: shop
  labels: {team: web}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Cluster
---
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
  namespace: shop
---
apiVersion: policy.elotl.co/v1alpha1
kind: ScheduleGroup
metadata:
  name: old-group
""",
}


def test_documents_are_classified_scoped_and_sorted() -> None:
    source = build(SOURCE)
    assert [policy.name for policy in source.policies] == ["apps", "spread"]
    assert [cluster.name for cluster in source.clusters] == ["wlc-1", "wlc-2"]
    assert [manifest.key for manifest in source.workloads] == [
        ObjectKey("", "ConfigMap", "default", "settings"),
        ObjectKey("", "Namespace", "", "shop"),
        ObjectKey("apiextensions.k8s.io", "CustomResourceDefinition", "", "widgets.example.com"),
        ObjectKey("apps", "Deployment", "shop", "web"),
        ObjectKey("example.com", "Widget", "", "w"),
    ]
    assert dict(source.namespace_labels) == {"shop": {"team": "web", "kubernetes.io/metadata.name": "shop"}}
    assert [str(warning) for warning in source.warnings] == [
        "app.yaml:31: warning: Widget w: metadata.namespace: "
        "Widget is cluster-scoped; the namespace is ignored",
        "app.yaml:33: warning: "
        "ScheduleGroup objects are made by the scheduler, not read from the source; ignored",
        f"policies.yaml:1: warning: SchedulePolicy spread: {UNMATCHED_POLICY}",
    ]


def workload(metadata: str, api_version: str = "apps/v1", kind: str = "Deployment") -> dict[str, str]:
    return {"w.yaml": f"apiVersion: {api_version}\nkind: {kind}\nmetadata:\n{metadata}"}


PIN = "metadata.annotations[nova.elotl.co/cluster]"
POLICY_HEAD = "apiVersion: policy.elotl.co/v1alpha1\nkind: SchedulePolicy\n"
CLUSTER_HEAD = "apiVersion: cluster.elotl.co/v1alpha1\nkind: Cluster\n"
SPREAD = "metadata.annotations[nova.elotl.co/spread-onto]"


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (workload("  namespace: shop\n"), ["w.yaml:3: metadata.name: required"]),
        (
            workload("  generateName: web-\n"),
            [
                "w.yaml:3: metadata.name: "
                "required: generateName is not supported, a GitOps object needs a stable name"
            ],
        ),
        (
            workload("  name: ../etc\n"),
            [
                "w.yaml:4: Deployment ../etc: metadata.name: '../etc' is not a valid Deployment name: "
                "at most 253 lower-case letters, digits, '-' and '.', "
                "starting and ending with a letter or digit"
            ],
        ),
        (
            workload("  name: a.b\n", "v1", "Namespace"),
            [
                "w.yaml:4: Namespace a.b: metadata.name: 'a.b' is not a valid Namespace name: "
                "at most 63 lower-case letters, "
                "digits and '-', starting and ending with a letter or digit"
            ],
        ),
        (
            workload("  name: 1web\n", "v1", "Service"),
            [
                "w.yaml:4: Service 1web: metadata.name: '1web' is not a valid Service name: at most 63 "
                "lower-case letters, digits and '-', starting with a letter and ending with a letter or digit"
            ],
        ),
        (
            workload("  name: a/b\n", "rbac.authorization.k8s.io/v1", "ClusterRole"),
            [
                "w.yaml:4: ClusterRole a/b: metadata.name: "
                "'a/b' is not a valid ClusterRole name: may not contain '/'"
            ],
        ),
        (
            workload("  name: web\n  namespace: Shop\n"),
            [
                "w.yaml:5: Deployment web: metadata.namespace: 'Shop' is not a valid namespace: "
                "at most 63 lower-case letters, "
                "digits and '-', starting and ending with a letter or digit"
            ],
        ),
        (
            workload("  name: web\n", "apps/v1/x"),
            [
                "w.yaml:1: Deployment web: apiVersion: 'apps/v1/x' is not group/version (apps/v1) "
                "or a core version (v1)"
            ],
        ),
        (
            workload("  name: web\n  labels:\n    app: web\n    replicas: 3\n"),
            [
                "w.yaml:7: Deployment web: metadata.labels.replicas: "
                'a label value must be text, got the number 3; quote it: "3"'
            ],
        ),
        (
            workload("  name: web\n  annotations:\n    bad key: x\n    note: 5\n"),
            [
                "w.yaml:6: Deployment web: metadata.annotations[bad key]: invalid annotation key 'bad key': "
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                "with an alphanumeric character (e.g. 'MyName', 'my.name' or '123-abc')",
                "w.yaml:7: Deployment web: metadata.annotations.note: "
                'an annotation value must be text, got the number 5; quote it: "5"',
            ],
        ),
        (
            workload("  name: web\n  annotations:\n    nova.elotl.co/cluster: wlc/1\n"),
            [
                f"w.yaml:6: Deployment web: {PIN}: 'wlc/1' is not a cluster name: at most 253 lower-case "
                "letters, digits, '-' and '.', starting and ending with a letter or digit"
            ],
        ),
        (
            workload("  name: web\n  annotations:\n    nova.elotl.co/spread-onto: 'a,,b'\n"),
            [
                f"w.yaml:6: Deployment web: {SPREAD}: 'a,,b' has an empty cluster name: "
                "write c1,c2 or c1,c2::Duplicate"
            ],
        ),
        (
            workload("  name: web\n  annotations:\n    nova.elotl.co/spread-onto: 'a,b::duplicate'\n"),
            [
                f"w.yaml:6: Deployment web: {SPREAD}: "
                "unknown mode 'duplicate' after '::': use Divide or Duplicate; did you mean Duplicate?"
            ],
        ),
        (
            {
                "a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
                "b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: default\n",
            },
            ["b.yaml:4: metadata.name: duplicate object ConfigMap/default/c: also defined at a.yaml:1"],
        ),
        (
            {
                "a.yaml": f"{POLICY_HEAD}metadata: {{name: p}}\nspec: {{}}\n---\n"
                f"{POLICY_HEAD}metadata:\n  name: p\nspec: {{}}\n",
            },
            ["a.yaml:9: metadata.name: duplicate SchedulePolicy 'p': also defined at a.yaml:1"],
        ),
        (
            {
                "a.yaml": f"{CLUSTER_HEAD}metadata: {{name: c}}\nstatus: {{}}\n",
                "b.yaml": f"{CLUSTER_HEAD}metadata: {{name: c}}\nstatus: {{}}\n",
            },
            [
                "a.yaml:4: warning: Cluster c: status.capacityResources: has no capacity in status; "
                "only objects without resource requests can be placed there",
                "b.yaml:3: metadata.name: duplicate Cluster 'c': also defined at a.yaml:1",
                "b.yaml:4: warning: Cluster c: status.capacityResources: has no capacity in status; "
                "only objects without resource requests can be placed there",
            ],
        ),
    ],
)
def test_each_workload_rule_points_at_its_line(files: dict[str, str], expected: list[str]) -> None:
    assert problems_of(files) == expected


@pytest.mark.parametrize(
    ("annotations", "pinned", "spread"),
    [
        ({}, None, None),
        ({"nova.elotl.co/cluster": "wlc-1"}, "wlc-1", None),
        ({"nova.elotl.co/spread-onto": "wlc-1, wlc-2"}, None, (("wlc-1", "wlc-2"), "Divide")),
        (
            {"nova.elotl.co/spread-onto": "wlc-2,wlc-1,wlc-2::Duplicate"},
            None,
            (("wlc-2", "wlc-1"), "Duplicate"),
        ),
        ({"nova.elotl.co/spread-onto": "wlc-1::Divide"}, None, (("wlc-1",), "Divide")),
    ],
)
def test_placement_annotations_are_read(annotations: dict[str, str], pinned: str | None, spread: Any) -> None:
    text = yaml.dump(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "annotations": annotations}}
    )
    source = build({"c.yaml": text})
    (manifest,) = source.workloads
    assert placementannotations.pinned_cluster(manifest) == pinned
    assert placementannotations.spread_onto(manifest) == spread


def test_a_repeated_spread_cluster_and_a_pin_beside_a_spread_are_warnings() -> None:
    annotations = "  annotations:\n    nova.elotl.co/cluster: a\n    nova.elotl.co/spread-onto: a,b,a\n"
    source = build(workload("  name: web\n" + annotations))
    assert [str(warning) for warning in source.warnings] == [
        f"w.yaml:7: warning: Deployment web: {SPREAD}: names a more than once; each cluster gets one copy",
        f"w.yaml:7: warning: Deployment web: {SPREAD}: "
        "ignored: nova.elotl.co/cluster is also set, and a pin wins",
    ]


def test_every_problem_across_files_is_reported_at_once() -> None:
    files = {
        "z.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n",
        "a.yaml": (
            "apiVersion: policy.elotl.co/v1alpha1\nkind: SchedulePolicy\nmetadata:\n  name: p\nspec:\n"
            "  priority: high\n  groupBy:\n    labelKey: 'a b'\n"
            "---\n"
            "apiVersion: cluster.elotl.co/v1alpha1\nkind: Cluster\nmetadata:\n  name: c\nstatus:\n"
            "  capacityResources:\n    n1: {cpu: lots}\n"
        ),
        "m.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  namespace: x\n",
    }
    problems = problems_of(files)
    assert [problem.split(": ")[0] for problem in problems] == [
        "a.yaml:6",
        "a.yaml:8",
        "a.yaml:16",
        "m.yaml:3",
        "z.yaml:4",
    ]
    assert problems[0] == "a.yaml:6: SchedulePolicy p: spec.priority: must be an integer, got 'high'"


def test_without_texts_problems_point_at_their_document() -> None:
    document = Document(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "labels": {"a": 1}}},
        SourceLocation("f.yaml", 7),
    )
    with pytest.raises(InputError) as caught:
        inputs.build_source_set([document])
    assert [str(problem) for problem in caught.value.problems] == [
        "f.yaml:7: ConfigMap x: metadata.labels.a: "
        'a label value must be text, got the number 1; quote it: "1"'
    ]


yaml_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 200) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=8,
)
KINDS = [
    ("policy.elotl.co/v1alpha1", "SchedulePolicy"),
    ("cluster.elotl.co/v1alpha1", "Cluster"),
    ("apps/v1", "Deployment"),
    ("v1", "Namespace"),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
]
FIELDS = [
    "metadata",
    "spec",
    "status",
    "name",
    "labels",
    "annotations",
    "spreadConstraints",
    "capacityResources",
]


@st.composite
def messy_documents(draw: st.DrawFn) -> list[Document]:
    documents = []
    for index in range(draw(st.integers(1, 4))):
        api_version, kind = draw(st.sampled_from(KINDS))
        body: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": {"name": f"o{index}"}}
        target: dict[str, Any] = body
        for _ in range(draw(st.integers(0, 3))):
            key = draw(st.sampled_from(FIELDS))
            value = draw(yaml_values | st.just({}))
            target[key] = value
            if isinstance(value, dict):
                target = value
        documents.append(Document(body, SourceLocation("f.yaml", index + 1)))
    return documents


@settings(max_examples=150, deadline=None)
@given(messy_documents())
def test_property_bad_input_never_crashes(documents: list[Document]) -> None:
    try:
        source = inputs.build_source_set(documents)
    except InputError as error:
        assert error.problems and all(problem.location.file == "f.yaml" for problem in error.problems)
    else:
        assert len(source.workloads) + len(source.policies) + len(source.clusters) <= len(documents)
