"""SchedulePolicy validation (``api.policies.parse_policy``).

Behaviours covered:
- the seed's demo policy parses into every field (selectors, groupBy, Divide split, overrides, kinds);
- defaults: priority 0, spreadMode Divide, empty resourceSelectors match everything, empty labelKey = none;
- the seed's capitalised ``OrderedClusterSelector`` is accepted; the tier expression comes first;
- one table row per rule: name, namespace (warning), priority, ordered selector, groupBy, spreadMode,
  topologyKey, percentageSplit (entries, range, duplicates, sum, ignored with Duplicate), overrides
  (fieldPath syntax, staticValue required and typed), kinds, unknown fields (warnings with a suggestion);
- spread without groupBy is accepted;
- every problem of a policy is reported at once, and any error makes the policy unusable (None).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
import yaml

from nova_gitops.api import policies
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import UNKNOWN_FIELD_REJECTED, Problem, SourceLocation

SEED = """
apiVersion: policy.elotl.co/v1alpha1
kind: SchedulePolicy
metadata:
  name: demo-policy
spec:
  namespaceSelector:
    matchLabels:
      kubernetes.io/metadata.name: microsvc-demo
    matchExpressions:
    - key: kubernetes.io/metadata.name
      operator: NotIn
      values: [namespace-2, namespace-3]
  clusterSelector:
    matchLabels:
      nova.elotl.co/cluster.region: "us-east-1"
  groupBy:
    labelKey: color
  spreadConstraints:
    spreadMode: Divide
    topologyKey: kubernetes.io/metadata.name
    percentageSplit:
    - topologyValue: wlc-1
      percentage: 20
    - topologyValue: wlc-2
      percentage: 80
    overrides:
    - topologyValue: wlc-1
      resources:
      - kind: Namespace
        apiVersion: v1
        name: nginx-spread-3
        override:
        - fieldPath: metadata.labels['topology.istio.io/network']
          value:
            staticValue: network-1
        - fieldPath: spec.replicas
          value:
            staticValue: 3
  resourceSelectors:
    labelSelectors:
    - matchLabels:
        microServicesDemo: "yes"
      matchExpressions:
      - key: app.kubernetes.io
        operator: Exists
        values: []
    kinds:
    - {group: apps, version: v1, kind: Deployment}
    - {kind: ConfigMap}
"""


def parse(body: Any) -> tuple[policies.SchedulePolicy | None, list[Problem]]:
    problems: list[Problem] = []
    policy = policies.parse_policy(Document(body, SourceLocation("p.yaml", 3)), problems)
    return policy, problems


def policy_body(spec: Any, name: Any = "p", **metadata: Any) -> dict[str, Any]:
    return {
        "apiVersion": "policy.elotl.co/v1alpha1",
        "kind": "SchedulePolicy",
        "metadata": {"name": name, **metadata},
        "spec": spec,
    }


def test_the_seed_policy_parses_into_every_field() -> None:
    policy, problems = parse(yaml.load(SEED, Loader=yaml.CSafeLoader))
    assert problems == []
    assert policy is not None
    assert policy.name == "demo-policy"
    assert policy.priority == 0
    assert policy.namespace_selector is not None
    assert policy.namespace_selector.matches({"kubernetes.io/metadata.name": "microsvc-demo"})
    assert policy.cluster_selector is not None
    assert policy.cluster_selector.matches({"nova.elotl.co/cluster.region": "us-east-1"})
    assert policy.ordered_cluster_selector is None
    assert policy.group_by_key == "color"
    assert policy.spread is not None
    assert policy.spread.mode == "Divide"
    assert policy.spread.topology_key == "kubernetes.io/metadata.name"
    assert policy.spread.percentage_split == (
        policies.PercentageSplit("wlc-1", 20),
        policies.PercentageSplit("wlc-2", 80),
    )
    (override,) = policy.spread.overrides
    assert override.topology_value == "wlc-1"
    (resource,) = override.resources
    assert (resource.kind, resource.api_version, resource.name, resource.namespace) == (
        "Namespace",
        "v1",
        "nginx-spread-3",
        None,
    )
    assert [(str(f.path), f.value) for f in resource.fields] == [
        ("metadata.labels['topology.istio.io/network']", "network-1"),
        ("spec.replicas", 3),
    ]
    assert len(policy.resource_selectors.label_selectors) == 1
    assert policy.resource_selectors.kinds == (
        policies.GroupVersionKind("apps", "v1", "Deployment"),
        policies.GroupVersionKind("", "", "ConfigMap"),
    )


def test_defaults_of_a_minimal_policy() -> None:
    policy, problems = parse(
        policy_body({"groupBy": {"labelKey": ""}, "spreadConstraints": {"topologyKey": "zone"}})
    )
    assert problems == []
    assert policy is not None
    assert policy.priority == 0
    assert policy.group_by_key is None
    assert policy.spread == policies.SpreadConstraints("Divide", "zone", (), ())
    assert policy.resource_selectors == policies.ResourceSelectors((), ())
    assert (policy.namespace_selector, policy.cluster_selector, policy.ordered_cluster_selector) == (
        None,
        None,
        None,
    )


@pytest.mark.parametrize("key", ["orderedClusterSelector", "OrderedClusterSelector"])
def test_the_ordered_selector_puts_its_tier_expression_first(key: str) -> None:
    spec = {
        key: {
            "matchLabels": {"env": "prod"},
            "matchExpressions": [
                {"key": "nova.elotl.co/cluster.provider", "operator": "In", "values": ["gce", "aws"]},
                {"key": "gpu", "operator": "Exists"},
            ],
        }
    }
    policy, problems = parse(policy_body(spec))
    assert problems == []
    assert policy is not None and policy.ordered_cluster_selector is not None
    tier, *rest = policy.ordered_cluster_selector.requirements
    assert (tier.key, tier.operator, tier.values) == ("nova.elotl.co/cluster.provider", "In", ("gce", "aws"))
    assert len(rest) == 2


def test_priority_and_spread_without_group_by_are_accepted() -> None:
    policy, problems = parse(
        policy_body({"priority": -5, "spreadConstraints": {"spreadMode": "Duplicate", "topologyKey": "zone"}})
    )
    assert problems == []
    assert policy is not None and policy.priority == -5
    assert policy.group_by_key is None and policy.spread is not None and policy.spread.mode == "Duplicate"


SPREAD = "spec.spreadConstraints"
SPLIT = f"{SPREAD}.percentageSplit"


def split(*entries: Any, mode: str = "Divide") -> dict[str, Any]:
    return {
        "spreadConstraints": {"spreadMode": mode, "topologyKey": "zone", "percentageSplit": list(entries)}
    }


def override(*fields: Any) -> dict[str, Any]:
    resource = {"kind": "Deployment", "apiVersion": "apps/v1", "name": "web", "override": list(fields)}
    return {
        "spreadConstraints": {
            "topologyKey": "zone",
            "overrides": [{"topologyValue": "a", "resources": [resource]}],
        }
    }


OVERRIDE = f"{SPREAD}.overrides[0].resources[0].override"
REJECTED = UNKNOWN_FIELD_REJECTED


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (policy_body({}, name=None), ["p.yaml:3: metadata.name: required"]),
        (
            policy_body({}, name="Demo_Policy"),
            [
                "p.yaml:3: metadata.name: 'Demo_Policy' is not a valid name: at most 253 lower-case letters, "
                "digits, '-' and '.', starting and ending with a letter or digit"
            ],
        ),
        (
            {"apiVersion": "policy.elotl.co/v1alpha1", "kind": "SchedulePolicy", "metadata": {"name": "p"}},
            ["p.yaml:3: spec: required"],
        ),
        (
            policy_body({"priority": "high"}),
            ["p.yaml:3: spec.priority: must be an integer, got 'high'"],
        ),
        (
            policy_body({"priority": True}),
            ["p.yaml:3: spec.priority: must be an integer, got the boolean true"],
        ),
        (
            policy_body({"orderedClusterSelector": {"matchLabels": {"a": "b"}}}),
            [
                "p.yaml:3: spec.orderedClusterSelector.matchExpressions: required: the first expression "
                "(operator In) lists the cluster tiers in order"
            ],
        ),
        (
            policy_body(
                {
                    "orderedClusterSelector": {
                        "matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["x"]}]
                    }
                }
            ),
            [
                "p.yaml:3: spec.orderedClusterSelector.matchExpressions[0].operator: must be In "
                "(its values are the tiers, in order), got 'NotIn'"
            ],
        ),
        (
            policy_body(
                {
                    "orderedClusterSelector": {
                        "matchExpressions": [{"key": "a", "operator": "In", "values": ["x", "x"]}]
                    }
                }
            ),
            ["p.yaml:3: spec.orderedClusterSelector.matchExpressions[0].values: lists a tier twice"],
        ),
        (
            policy_body({"orderedClusterSelector": {}, "OrderedClusterSelector": {}}),
            [
                "p.yaml:3: spec.OrderedClusterSelector: "
                "give orderedClusterSelector or OrderedClusterSelector, not both"
            ],
        ),
        (
            policy_body({"groupBy": {"labelKey": "bad key"}}),
            [
                "p.yaml:3: spec.groupBy.labelKey: invalid label key 'bad key': name part must consist of "
                "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
                "character (e.g. 'MyName', 'my.name' or '123-abc')"
            ],
        ),
        (
            policy_body({"groupBy": {"labelKey": 5}}),
            ['p.yaml:3: spec.groupBy.labelKey: must be text, got the number 5; quote it: "5"'],
        ),
        (
            policy_body({"groupBy": "color"}),
            ["p.yaml:3: spec.groupBy: must be a mapping, got 'color'"],
        ),
        (
            policy_body({"spreadConstraints": {"spreadMode": "divide", "topologyKey": "zone"}}),
            [
                f"p.yaml:3: {SPREAD}.spreadMode: "
                "must be Divide or Duplicate, got 'divide'; did you mean Divide?"
            ],
        ),
        (
            policy_body(
                split({"topologyValue": "a", "percentage": 20}, {"topologyValue": "b", "percentage": 70})
            ),
            [f"p.yaml:3: {SPLIT}: percentages must sum to 100, got 20 + 70 = 90"],
        ),
        (
            policy_body(
                split({"topologyValue": "a", "percentage": 120}, {"topologyValue": "b", "percentage": -20})
            ),
            [
                f"p.yaml:3: {SPLIT}[0].percentage: must be from 0 to 100, got 120",
                f"p.yaml:3: {SPLIT}[1].percentage: must be from 0 to 100, got -20",
            ],
        ),
        (
            policy_body(split({"topologyValue": "a", "percentage": "50%"}, {"topologyValue": "b"})),
            [
                f"p.yaml:3: {SPLIT}[0].percentage: must be an integer from 0 to 100, got '50%'",
                f"p.yaml:3: {SPLIT}[1].percentage: required (an integer from 0 to 100)",
            ],
        ),
        (
            policy_body(
                split({"topologyValue": "a", "percentage": 50}, {"topologyValue": "a", "percentage": 50})
            ),
            [f"p.yaml:3: {SPLIT}[1].topologyValue: 'a' is already split at {SPLIT}[0]"],
        ),
        (
            policy_body(split({"topologyValue": 1.22, "percentage": 100})),
            [f'p.yaml:3: {SPLIT}[0].topologyValue: must be text, got the number 1.22; quote it: "1.22"'],
        ),
        (
            policy_body(split({"topologyValue": "a", "percentage": 100}, mode="Duplicate")),
            [f"p.yaml:3: warning: {SPLIT}: ignored with spreadMode Duplicate"],
        ),
        (
            policy_body(override({"fieldPath": "spec.containers[]", "value": {"staticValue": 1}})),
            [
                f"p.yaml:3: {OVERRIDE}[0].fieldPath: invalid field path 'spec.containers[]': "
                "empty brackets at character 16"
            ],
        ),
        (
            policy_body(
                override({"fieldPath": "spec.replicas"}, {"fieldPath": "spec.replicas", "value": {}})
            ),
            [
                f"p.yaml:3: {OVERRIDE}[0].value.staticValue: required (the value to set, with its YAML type)",
                f"p.yaml:3: {OVERRIDE}[1].value.staticValue: required (the value to set, with its YAML type)",
            ],
        ),
        (
            policy_body({"resourceSelectors": {"kinds": [{"group": "apps"}], "labelSelector": []}}),
            [
                f"p.yaml:3: spec.resourceSelectors.labelSelector: {REJECTED}; did you mean labelSelectors?",
                "p.yaml:3: spec.resourceSelectors.kinds[0].kind: required",
            ],
        ),
        (
            policy_body({"spreadConstraint": {}}, namespace="default"),
            [
                "p.yaml:3: warning: metadata.namespace: "
                "a SchedulePolicy is cluster-scoped; the namespace is ignored",
                f"p.yaml:3: spec.spreadConstraint: {REJECTED}; did you mean spreadConstraints?",
            ],
        ),
    ],
)
def test_each_rule_reports_its_field(body: dict[str, Any], expected: list[str]) -> None:
    policy, problems = parse(body)
    assert [str(replace(problem, subject=None)) for problem in problems] == expected
    name = body["metadata"]["name"]
    assert {problem.subject for problem in problems} == {
        f"SchedulePolicy {name}" if name else "SchedulePolicy"
    }
    assert (policy is None) == any(problem.is_error for problem in problems)


def test_every_problem_of_a_policy_is_reported_at_once() -> None:
    spec = {
        "priority": "x",
        "groupBy": {"labelKey": "a b"},
        "spreadConstraints": {
            "spreadMode": "Spread",
            "percentageSplit": [{"topologyValue": "a", "percentage": 5}],
        },
        "resourceSelectors": {"labelSelectors": [{"matchExpressions": [{"key": "a", "operator": "Has"}]}]},
    }
    policy, problems = parse(policy_body(spec, name="UPPER"))
    assert policy is None
    fields = [problem.field for problem in problems]
    assert fields == [
        "metadata.name",
        "spec.priority",
        "spec.groupBy.labelKey",
        f"{SPREAD}.spreadMode",
        SPLIT,
        "spec.resourceSelectors.labelSelectors[0].matchExpressions[0].operator",
    ]
