"""Cluster validation (``api.clusters.parse_cluster``).

Behaviours covered:
- a Nova Cluster with per-node capacity: nodes sorted by name, exact milli-unit quantities, node labels and
  taints, available defaulting to allocatable (per node and per resource), negative available read as 0;
- labels: metadata.labels + the implied kubernetes.io/metadata.name + nova.elotl.co/cluster.* derived from
  spec when absent (an explicit label wins);
- conditions: Ready True/False/Unknown → True/False/None, absent → None; Standby True → standby; Idle
  True/False/Unknown → idle True/False/None (shown by ``get clusters``, not used to place);
- what a Nova export carries besides (spec.kubernetescluster, spec.novacreated, status.nodeGroupsConfigs,
  every condition field, lastUpdateTime) is known: no warning;
- every problem names the cluster (``Cluster wlc-1: ...``);
- cluster totals become one pseudo-node named after the cluster;
- no status: no nodes and a warning; an agent's status report (extra fields) parses without warnings;
- a cluster name that is a label value but not a DNS-1123 subdomain (``onprem-cluster-oregon-A``, as in
  Nova's examples) is used as is with a warning, and becomes the metadata.name label; empty names, '/',
  '..', over 63 characters or other characters are errors;
- one table row per rule, with the exact ``file:line: field: message`` text, and all problems at once;
- node names (in every per-node map) are DNS-1123 subdomains, taint keys qualified names and taint values
  label values, as the API server checks a Node: anything else (an ESC sequence, a bidi override) is an
  error at its field and the cluster is not used; any text is accepted exactly when Kubernetes would.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.api import clusters, names, selectors
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import Problem, SourceLocation

NOVA_CLUSTER = """
apiVersion: cluster.elotl.co/v1alpha1
kind: Cluster
metadata:
  name: wlc-1
  labels:
    env: prod
    nova.elotl.co/cluster.zone: custom-zone
spec:
  name: wlc-1
  provider: aws
  region: us-east-1
  zone: us-east-1a
  kubernetesversion: v1.28.3
status:
  conditions:
  - {type: Ready, status: "True"}
  - {type: Standby, status: "False"}
  autoscaled: true
  capacityResources:
    node-b: {cpu: "4", memory: 16Gi, nvidia.com/gpu: 1}
    node-a: {cpu: 2, memory: 8Gi}
  availableResources:
    node-b: {cpu: 1500m}
    node-a: {cpu: "-1", memory: 4Gi}
  nodeLabels:
    node-a: {kubernetes.io/arch: amd64}
  nodeTaints:
    node-b:
    - {key: nvidia.com/gpu, value: present, effect: NoSchedule}
    - {key: dedicated, effect: NoExecute, timeAdded: "2024-01-01T00:00:00Z"}
"""

GI = 1024**3 * 1000


def parse(body: Any) -> tuple[clusters.Cluster | None, list[Problem]]:
    problems: list[Problem] = []
    cluster = clusters.parse_cluster(Document(body, SourceLocation("c.yaml", 2)), problems)
    return cluster, problems


def cluster_body(
    status: Any = None, name: Any = "wlc-1", spec: Any = None, **metadata: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "cluster.elotl.co/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name, **metadata},
        "spec": spec or {},
    }
    if status is not None:
        body["status"] = status
    return body


def test_a_nova_cluster_with_per_node_capacity() -> None:
    cluster, problems = parse(yaml.load(NOVA_CLUSTER, Loader=yaml.CSafeLoader))
    assert problems == []
    assert cluster is not None
    assert cluster.name == "wlc-1"
    assert dict(cluster.labels) == {
        "env": "prod",
        "nova.elotl.co/cluster.zone": "custom-zone",
        "nova.elotl.co/cluster.provider": "aws",
        "nova.elotl.co/cluster.region": "us-east-1",
        "nova.elotl.co/cluster.version": "v1.28.3",
        "kubernetes.io/metadata.name": "wlc-1",
    }
    assert (cluster.ready, cluster.standby, cluster.autoscaled, cluster.is_candidate) == (
        True,
        False,
        True,
        True,
    )
    node_a, node_b = cluster.nodes
    assert node_a == clusters.Node(
        name="node-a",
        allocatable={"cpu": 2000, "memory": 8 * GI},
        available={"cpu": 0, "memory": 4 * GI},
        labels={"kubernetes.io/arch": "amd64"},
        taints=(),
    )
    assert node_b.name == "node-b"
    assert node_b.allocatable == {"cpu": 4000, "memory": 16 * GI, "nvidia.com/gpu": 1000}
    assert node_b.available == {"cpu": 1500, "memory": 16 * GI, "nvidia.com/gpu": 1000}
    assert node_b.taints == (
        clusters.Taint("nvidia.com/gpu", "present", "NoSchedule"),
        clusters.Taint("dedicated", "", "NoExecute"),
    )


def test_cluster_totals_become_one_pseudo_node() -> None:
    cluster, problems = parse(cluster_body({"capacityResources": {"cpu": "8", "memory": "32Gi"}}))
    assert problems == []
    assert cluster is not None
    (node,) = cluster.nodes
    assert (node.name, node.allocatable, node.available) == (
        "wlc-1",
        {"cpu": 8000, "memory": 32 * GI},
        {"cpu": 8000, "memory": 32 * GI},
    )


@pytest.mark.parametrize(
    ("conditions", "ready", "standby"),
    [
        ([], None, False),
        ([{"type": "Ready", "status": "True"}], True, False),
        ([{"type": "Ready", "status": "False"}], False, False),
        ([{"type": "Ready", "status": "Unknown"}], None, False),
        ([{"type": "Standby", "status": "True"}, {"type": "Idle", "status": "True"}], None, True),
    ],
)
def test_conditions(conditions: list[dict[str, str]], ready: bool | None, standby: bool) -> None:
    cluster, _ = parse(cluster_body({"conditions": conditions, "capacityResources": {"cpu": 1}}))
    assert cluster is not None
    assert (cluster.ready, cluster.standby, cluster.is_candidate) == (ready, standby, ready is not False)


@pytest.mark.parametrize(
    ("status", "idle"), [("True", True), ("False", False), ("Unknown", None), (None, None)]
)
def test_novas_idle_condition_is_read(status: str | None, idle: bool | None) -> None:
    conditions = [] if status is None else [{"type": "Idle", "status": status}]
    cluster, problems = parse(cluster_body({"conditions": conditions, "capacityResources": {"cpu": 1}}))
    assert problems == [] and cluster is not None and cluster.idle is idle


def test_what_a_nova_export_carries_besides_is_known() -> None:
    body = cluster_body(
        {
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "ClusterReady",
                    "message": "",
                    "lastHeartbeatTime": "2026-11-20T10:00:00Z",
                    "lastTransitionTime": "2026-11-20T09:00:00Z",
                    "observedGeneration": 1,
                }
            ],
            "lastUpdateTime": "2026-11-20T10:00:00Z",
            "capacityResources": {"cpu": 1},
            "nodeGroupsConfigs": {"ng-1": {"instanceType": "m5.large", "minSize": 0, "maxSize": 3}},
        }
    )
    body["spec"] = {"name": "wlc-1", "kubernetescluster": "kind-wlc-1", "novacreated": True}
    cluster, problems = parse(body)
    assert problems == []
    assert cluster is not None and cluster.kubernetes_cluster == "kind-wlc-1" and cluster.ready is True


def test_no_status_means_no_nodes_and_a_warning() -> None:
    cluster, problems = parse(cluster_body())
    assert cluster is not None and cluster.nodes == () and cluster.ready is None
    assert [str(p) for p in problems] == [
        "c.yaml:2: warning: Cluster wlc-1: status: has no capacity in status; "
        "only objects without resource requests can be placed there"
    ]


def test_an_agent_status_report_parses_without_warnings() -> None:
    body = cluster_body(
        {
            "conditions": [{"type": "Ready", "status": "True", "reason": "NodesReady", "message": "1/1"}],
            "capacityResources": {"n1": {"cpu": "2"}},
            "availableResources": {"n1": {"cpu": "1"}},
            "nodeLabels": {"n1": {}},
            "nodeTaints": {},
            "autoscaled": False,
            "lastUpdateTime": "2024-01-01T00:00:00Z",
            "syncedRevision": "abc123",
            "workloads": [{"ref": "x"}],
            "rescheduleRequests": [],
            "lastError": None,
            "heartbeat": "2024-01-01T00:00:00Z",
        },
        spec={"name": "wlc-1", "provider": "kind", "region": "", "zone": None},
    )
    cluster, problems = parse(body)
    assert problems == []
    assert cluster is not None and cluster.nodes[0].available == {"cpu": 1000}


STATUS = "status.capacityResources"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (cluster_body({"capacityResources": {"cpu": 1}}, name=None), ["c.yaml:2: metadata.name: required"]),
        (
            cluster_body({"capacityResources": {"n1": {"cpu": "lots"}}}),
            [
                f"c.yaml:2: {STATUS}.n1.cpu: 'lots' is not a Kubernetes quantity: "
                "it does not start with a number "
                "(write a number with an optional suffix, like 500m, 1.5, 2Gi, 128974848 or 1e3)"
            ],
        ),
        (
            cluster_body({"capacityResources": {"ip-10-0-0-1.ec2.internal": {"cpu": "-2"}}}),
            [f"c.yaml:2: {STATUS}[ip-10-0-0-1.ec2.internal].cpu: must not be negative, got '-2'"],
        ),
        (
            cluster_body({"capacityResources": {"cpu": "8", "n1": {"cpu": "1"}}}),
            [f"c.yaml:2: {STATUS}: mixes per-node resource lists with cluster totals; use one form"],
        ),
        (
            cluster_body({"capacityResources": {"n1": {"cpu": 1}}, "availableResources": {"n2": {"cpu": 1}}}),
            ["c.yaml:2: warning: status.availableResources.n2: node has no capacityResources entry; ignored"],
        ),
        (
            cluster_body(
                {
                    "capacityResources": {"n1": {"cpu": 1}},
                    "nodeTaints": {"n1": [{"key": "a", "effect": "Never"}]},
                }
            ),
            [
                "c.yaml:2: status.nodeTaints.n1[0].effect: "
                "must be NoSchedule, PreferNoSchedule or NoExecute, got 'Never'"
            ],
        ),
        (
            cluster_body({"conditions": [{"type": "Ready", "status": "Yes"}], "capacityResources": {}}),
            [
                "c.yaml:2: status.conditions[0].status: must be True, False or Unknown, got 'Yes'",
                f"c.yaml:2: warning: {STATUS}: has no capacity in status; "
                "only objects without resource requests can be placed there",
            ],
        ),
        (
            cluster_body({"autoscaled": "yes", "capacityResources": {"cpu": 1}}),
            ["c.yaml:2: status.autoscaled: must be true or false, got 'yes'"],
        ),
        (
            cluster_body(
                {"capacityResources": {"cpu": 1}}, spec={"name": "other", "kubernetesversion": 1.28}
            ),
            [
                "c.yaml:2: warning: spec.name: "
                "differs from metadata.name 'wlc-1', which names the cluster; ignored",
                'c.yaml:2: spec.kubernetesversion: must be text, got the number 1.28; quote it: "1.28"',
            ],
        ),
        (
            cluster_body({"capacityResources": {"cpu": 1}}, labels={"kubernetes.io/metadata.name": "x"}),
            [
                "c.yaml:2: warning: metadata.labels[kubernetes.io/metadata.name]: "
                "is always the cluster's name 'wlc-1'; 'x' ignored"
            ],
        ),
        (
            cluster_body({"capacityResources": {"cpu": 1}, "capacity": {}}, namespace="nova"),
            [
                "c.yaml:2: warning: metadata.namespace: "
                "a Cluster is cluster-scoped; the namespace is ignored",
                "c.yaml:2: warning: status.capacity: unknown field, ignored; did you mean capacityResources?",
            ],
        ),
    ],
)
def test_each_rule_reports_its_field(body: dict[str, Any], expected: list[str]) -> None:
    cluster, problems = parse(body)
    assert [str(replace(problem, subject=None)) for problem in problems] == expected
    name = body["metadata"].get("name")
    assert {problem.subject for problem in problems} == {f"Cluster {name}" if name else "Cluster"}
    assert (cluster is None) == any(problem.is_error for problem in problems)


NOT_DNS1123 = "is not a valid Kubernetes object name (DNS-1123); it is used as is, as Nova's examples do"


@pytest.mark.parametrize("name", ["onprem-cluster-oregon-A", "Wlc_1", "A", "gpu.Pool-2", "x" * 62 + "Y"])
def test_a_label_value_cluster_name_is_used_with_a_warning(name: str) -> None:
    cluster, problems = parse(cluster_body({"capacityResources": {"cpu": 1}}, name=name))
    assert [str(problem) for problem in problems] == [
        f"c.yaml:2: warning: Cluster {name}: metadata.name: Cluster name {name!r} {NOT_DNS1123}"
    ]
    assert cluster is not None and cluster.name == name
    assert cluster.labels["kubernetes.io/metadata.name"] == name


@pytest.mark.parametrize(
    "name", ["", "a/b", "..", "a..b", "Oregon-", "-Oregon", "_a", "oregon A", "Ä", "x" * 63 + "Y", ".A"]
)
def test_a_cluster_name_that_is_no_label_value_is_an_error(name: str) -> None:
    cluster, problems = parse(cluster_body({"capacityResources": {"cpu": 1}}, name=name))
    assert cluster is None
    assert [problem.field for problem in problems] == ["metadata.name"]
    assert problems[0].is_error and f"{name!r} is not a valid name: " in problems[0].message


NODE_RULE = "is not a valid node name: at most 253 lower-case letters, digits, '-' and '.', starting"


@pytest.mark.parametrize(
    ("status", "field", "message"),
    [
        (
            {"capacityResources": {"node-1\x1b]0;t\x07": {"cpu": 1}}},
            "status.capacityResources['node-1\x1b]0;t\x07']",
            f"'node-1\\x1b]0;t\\x07' {NODE_RULE}",
        ),
        (
            {"capacityResources": {"n1": {"cpu": 1}}, "availableResources": {"N_1": {"cpu": 1}}},
            "status.availableResources.N_1",
            f"'N_1' {NODE_RULE}",
        ),
        (
            {"capacityResources": {"n1": {"cpu": 1}}, "nodeLabels": {"n1\u202e": {"a": "b"}}},
            "status.nodeLabels[n1\u202e]",
            f"'n1\\u202e' {NODE_RULE}",
        ),
        (
            {"capacityResources": {"n1": {"cpu": 1}}, "nodeTaints": {"": []}},
            "status.nodeTaints[]",
            f"'' {NODE_RULE}",
        ),
        (
            {
                "capacityResources": {"n1": {"cpu": 1}},
                "nodeTaints": {"n1": [{"key": "gpu\x1b[2J", "effect": "NoSchedule"}]},
            },
            "status.nodeTaints.n1[0].key",
            "'gpu\\x1b[2J' is not a valid taint key: name part must consist of alphanumeric characters",
        ),
        (
            {
                "capacityResources": {"n1": {"cpu": 1}},
                "nodeTaints": {"n1": [{"key": "a/b/c", "effect": "NoSchedule"}]},
            },
            "status.nodeTaints.n1[0].key",
            "'a/b/c' is not a valid taint key: prefix part must be a lowercase DNS-1123 subdomain",
        ),
        (
            {
                "capacityResources": {"n1": {"cpu": 1}},
                "nodeTaints": {"n1": [{"key": "gpu", "value": "x\u202ey", "effect": "NoSchedule"}]},
            },
            "status.nodeTaints.n1[0].value",
            "'x\\u202ey' is not a valid taint value: a label value must be empty or consist of",
        ),
        (
            {
                "capacityResources": {"n1": {"cpu": 1}},
                "nodeTaints": {"n1": [{"key": "gpu", "value": "v" * 64, "effect": "NoSchedule"}]},
            },
            "status.nodeTaints.n1[0].value",
            "is not a valid taint value: must be no more than 63 characters",
        ),
    ],
)
def test_node_names_and_taints_are_checked_as_kubernetes_checks_a_node(
    status: dict[str, Any], field: str, message: str
) -> None:
    """Issue 21 item 8: what a Cluster says of its nodes reaches reasons, PLACEMENT.md and terminals; text
    the API server would refuse for a Node is an error at its field (the cluster, or the report, is not
    used), never a crash."""
    cluster, problems = parse(cluster_body(status))
    assert cluster is None
    errors = [problem for problem in problems if problem.is_error]
    assert [problem.field for problem in errors] == [field]
    assert message in errors[0].message


def test_what_kubernetes_allows_of_a_node_is_accepted() -> None:
    taints = [
        {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"},
        {"key": "example.com/dedicated", "value": "team_a.v1", "effect": "NoExecute"},
        {"key": "k", "value": "", "effect": "PreferNoSchedule"},
    ]
    status = {
        "capacityResources": {"ip-10-0-0-1.ec2.internal": {"cpu": 1}, "0node": {"cpu": 1}},
        "nodeTaints": {"ip-10-0-0-1.ec2.internal": taints},
    }
    cluster, problems = parse(cluster_body(status))
    assert problems == [] and cluster is not None
    assert [taint.key for taint in cluster.nodes[1].taints] == [taint["key"] for taint in taints]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80), st.text(max_size=80), st.text(max_size=80))
def test_any_node_name_or_taint_is_accepted_exactly_when_kubernetes_would(
    node: str, key: str, value: str
) -> None:
    status = {
        "capacityResources": {node: {"cpu": 1}},
        "nodeTaints": {node: [{"key": key, "value": value, "effect": "NoSchedule"}]},
    }
    cluster, problems = parse(cluster_body(status))
    valid = (
        selectors.is_dns1123_subdomain(node)
        and selectors.is_qualified_name(key)
        and not selectors.label_value_errors(value)
    )
    assert (cluster is not None) is valid, problems
    if cluster is not None:
        assert cluster.nodes[0].taints == (clusters.Taint(key, value, "NoSchedule"),)


def test_the_hint_for_a_misspelt_report_field_does_not_hang_on_field_order() -> None:
    """``last`` is a prefix of both ``lastError`` and ``lastUpdateTime``: the hint is the first in name
    order, whatever order the report model lists its fields in (moving them changed it once)."""
    assert names.suggestion("last", ["lastUpdateTime", "lastError"]) == "; did you mean lastError?"
    assert names.suggestion("last", ["lastError", "lastUpdateTime"]) == "; did you mean lastError?"
