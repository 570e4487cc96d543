"""SchedulePolicy shapes from every documented Nova version, and strictness where a mistake widens scope.

Behaviours covered (inputs written here from the shapes Nova's docs describe, v0.9 to v1.5):
- ``percentageSplit`` as v0.9's list of ``{topologyValue, percentage}`` and as v1.5's map
  ``cluster: percent`` parse to the same split (a table, and a Hypothesis property over generated
  splits); the map form is checked like the list (range, type, sum);
- ``topologyKey`` may be left out: each cluster is its own domain (``kubernetes.io/metadata.name``);
- spread without ``groupBy``; ``orderedClusterSelector`` and ``OrderedClusterSelector`` alike;
- an unknown or misspelled field anywhere in a policy (spec, spread, split entries, selectors, metadata) is an
  error with a "did you mean", and the policy is not used;
- a null selector (namespace, cluster, ordered, resourceSelectors, a labelSelectors entry) is an error, and
  so is a null ``matchLabels``/``matchExpressions`` inside one (its entries commented out or mis-indented);
- every message names the policy (``SchedulePolicy bad-split: ...``) after its ``file:line``;
- validation's ``policies.selects`` and the planner's memoizing ``Matcher`` agree (table), and only a
  policy that selects no object gets the "matches no object" warning;
- policies shaped like Nova's tutorials (Duplicate with overrides, Exists/DoesNotExist, v1.5 map and
  Duplicate without topologyKey) are valid with no warning.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from nova_gitops.api import policies
from nova_gitops.api.objects import Document, Manifest
from nova_gitops.api.problems import UNKNOWN_FIELD_REJECTED, Problem, SourceLocation
from nova_gitops.api.unmatchedpolicies import UNMATCHED_POLICY, unmatched_policy_warnings
from nova_gitops.scheduling import matching


def parse(text: str) -> tuple[policies.SchedulePolicy | None, list[Problem]]:
    problems: list[Problem] = []
    body = yaml.load(text, Loader=yaml.CSafeLoader)
    return policies.parse_policy(Document(body, SourceLocation("policy.yaml", 1)), problems), problems


HEAD = "apiVersion: policy.elotl.co/v1alpha1\nkind: SchedulePolicy\nmetadata:\n  name: bad-split\n"

V09_LIST_SPLIT = """
spec:
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: shop}}
  groupBy: {labelKey: app}
  spreadConstraints:
    spreadMode: Divide
    topologyKey: kubernetes.io/metadata.name
    percentageSplit:
    - {topologyValue: kind-workload-1, percentage: 30}
    - {topologyValue: kind-workload-2, percentage: 70}
  resourceSelectors: {labelSelectors: [{matchLabels: {app: web}}]}
"""
V15_MAP_SPLIT = """
spec:
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: shop}}
  groupBy: {labelKey: app}
  spreadConstraints:
    spreadMode: Divide
    percentageSplit:
      kind-workload-1: 30
      kind-workload-2: 70
  resourceSelectors: {labelSelectors: [{matchLabels: {app: web}}]}
"""
SPLIT_30_70 = (
    policies.PercentageSplit("kind-workload-1", 30),
    policies.PercentageSplit("kind-workload-2", 70),
)


@pytest.mark.parametrize("spec", [V09_LIST_SPLIT, V15_MAP_SPLIT], ids=["v0.9 list", "v1.5 map"])
def test_both_documented_split_shapes_give_the_same_split(spec: str) -> None:
    policy, problems = parse(HEAD + spec)
    assert problems == []
    assert policy is not None and policy.spread is not None
    assert policy.spread.topology_key == "kubernetes.io/metadata.name"
    assert policy.spread.percentage_split == SPLIT_30_70


@pytest.mark.parametrize(
    ("spread", "mode", "key"),
    [
        ("{spreadMode: Duplicate}", "Duplicate", "kubernetes.io/metadata.name"),
        ("{spreadMode: Divide}", "Divide", "kubernetes.io/metadata.name"),
        ("{}", "Divide", "kubernetes.io/metadata.name"),
        ("{topologyKey: nova.elotl.co/cluster.region}", "Divide", "nova.elotl.co/cluster.region"),
    ],
)
def test_spread_without_group_by_or_topology_key(spread: str, mode: str, key: str) -> None:
    policy, problems = parse(
        HEAD + f"spec:\n  spreadConstraints: {spread}\n  resourceSelectors: {{labelSelectors: []}}\n"
    )
    assert problems == []
    assert policy is not None and policy.group_by_key is None and policy.spread is not None
    assert (policy.spread.mode, policy.spread.topology_key) == (mode, key)


@pytest.mark.parametrize("key", ["orderedClusterSelector", "OrderedClusterSelector"])
def test_both_spellings_of_the_ordered_selector(key: str) -> None:
    spec = (
        f"spec:\n  {key}:\n    matchExpressions:\n    - key: kubernetes.io/metadata.name\n"
        "      operator: In\n      values: [onprem-a, eks-us-east-1]\n"
    )
    policy, problems = parse(HEAD + spec)
    assert problems == []
    assert policy is not None and policy.ordered_cluster_selector is not None
    assert policy.ordered_cluster_selector.requirements[0].values == ("onprem-a", "eks-us-east-1")


SPREAD = "spec.spreadConstraints"
NULL = "is null: write a selector, {} to select everything, or leave the field out"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            "spec:\n  clusterSelecter: {matchLabels: {env: prod}}\n",
            [f"spec.clusterSelecter: {UNKNOWN_FIELD_REJECTED}; did you mean clusterSelector?"],
        ),
        (
            "spec:\n  clusterSelector: {matchLabel: {env: prod}}\n",
            [f"spec.clusterSelector.matchLabel: {UNKNOWN_FIELD_REJECTED}; did you mean matchLabels?"],
        ),
        (
            "spec:\n  namespaceselector: {}\n",
            [f"spec.namespaceselector: {UNKNOWN_FIELD_REJECTED}; did you mean namespaceSelector?"],
        ),
        (
            "spec:\n  spreadConstraints: {spreadmode: Divide}\n",
            [f"{SPREAD}.spreadmode: {UNKNOWN_FIELD_REJECTED}; did you mean spreadMode?"],
        ),
        (
            "spec:\n  spreadConstraints:\n    percentageSplit: [{topologyValue: a, percent: 100}]\n",
            [
                f"{SPREAD}.percentageSplit[0].percent: {UNKNOWN_FIELD_REJECTED}; did you mean percentage?",
                f"{SPREAD}.percentageSplit[0].percentage: required (an integer from 0 to 100)",
            ],
        ),
        (
            "spec:\n  resourceSelectors: {labelSelectors: [{matchExpresions: []}]}\n",
            [
                "spec.resourceSelectors.labelSelectors[0].matchExpresions: "
                f"{UNKNOWN_FIELD_REJECTED}; did you mean matchExpressions?"
            ],
        ),
        (
            "spec:\n  groupBy: {labelkey: app}\n",
            [f"spec.groupBy.labelkey: {UNKNOWN_FIELD_REJECTED}; did you mean labelKey?"],
        ),
        ("spec: {}\nextra: 1\n", [f"extra: {UNKNOWN_FIELD_REJECTED}"]),
        (
            "spec:\n  clusterSelector:\n",
            [f"spec.clusterSelector: {NULL}"],
        ),
        (
            "spec:\n  clusterSelector:\n    matchLabels:\n#     env: prod\n",
            [
                "spec.clusterSelector.matchLabels: is null: its entries were lost (to indentation or a "
                "comment?); give them, or leave it out"
            ],
        ),
        (
            "spec:\n  resourceSelectors: {labelSelectors: [{matchExpressions: }]}\n",
            [
                "spec.resourceSelectors.labelSelectors[0].matchExpressions: is null: its entries were lost "
                "(to indentation or a comment?); give them, or leave it out"
            ],
        ),
        (
            "spec:\n  namespaceSelector: null\n",
            [f"spec.namespaceSelector: {NULL}"],
        ),
        (
            "spec:\n  OrderedClusterSelector:\n",
            [f"spec.OrderedClusterSelector: {NULL}"],
        ),
        (
            "spec:\n  resourceSelectors:\n",
            [f"spec.resourceSelectors: {NULL}"],
        ),
        (
            "spec:\n  resourceSelectors: {labelSelectors: }\n",
            [f"spec.resourceSelectors.labelSelectors: {NULL}"],
        ),
        (
            "spec:\n  resourceSelectors:\n    labelSelectors:\n    -\n",
            [
                "spec.resourceSelectors.labelSelectors[0]: "
                "is null: write a selector, {} to select everything, or leave the entry out"
            ],
        ),
        (
            "spec:\n  spreadConstraints:\n    percentageSplit: {a: 20, b: 70}\n",
            [f"{SPREAD}.percentageSplit: percentages must sum to 100, got 20 + 70 = 90"],
        ),
        (
            "spec:\n  spreadConstraints:\n    percentageSplit: {a: '50%', b: 150, 1.5: 0}\n",
            [
                f"{SPREAD}.percentageSplit.a: must be an integer from 0 to 100, got '50%'",
                f"{SPREAD}.percentageSplit.b: must be from 0 to 100, got 150",
                f'{SPREAD}.percentageSplit[1.5]: must be text, got the number 1.5; quote it: "1.5"',
            ],
        ),
        (
            "spec:\n  spreadConstraints:\n    percentageSplit: 50\n",
            [
                f"{SPREAD}.percentageSplit: must be a list of {{topologyValue, percentage}} or a map of "
                "value: percent, got the number 50"
            ],
        ),
    ],
)
def test_mistakes_that_would_widen_a_policy_are_errors(spec: str, expected: list[str]) -> None:
    policy, problems = parse(HEAD + spec)
    assert policy is None
    assert all(problem.is_error for problem in problems)
    assert [str(problem) for problem in problems] == [
        f"policy.yaml:1: SchedulePolicy bad-split: {message}" for message in expected
    ]


def test_a_policy_without_a_usable_name_is_still_named_by_kind() -> None:
    _, problems = parse("apiVersion: policy.elotl.co/v1alpha1\nkind: SchedulePolicy\nspec: {}\n")
    assert [str(problem) for problem in problems] == [
        "policy.yaml:1: SchedulePolicy: metadata: required",
        "policy.yaml:1: SchedulePolicy: metadata.name: required",
    ]


def _problems_of(spec: Any) -> list[str]:
    body = {"apiVersion": "policy.elotl.co/v1alpha1", "kind": "SchedulePolicy", "metadata": {"name": "p"}}
    problems: list[Problem] = []
    policies.parse_policy(Document({**body, "spec": spec}, SourceLocation("p.yaml", 1)), problems)
    return [str(problem) for problem in problems]


@pytest.mark.parametrize(
    "field",
    ["clusterSelector", "namespaceSelector", "priority", "groupBy", "spreadConstraints", "resourceSelectors"],
)
def test_every_near_miss_of_a_spec_field_is_an_error_suggesting_it(field: str) -> None:
    """Each spec field with one letter dropped, doubled or swapped in case is refused, naming the field."""
    variants = {field[:-1], field + field[-1], field[0].swapcase() + field[1:], field.lower()} - {field}
    for variant in sorted(variants):
        assert _problems_of({variant: {}}) == [
            f"p.yaml:1: SchedulePolicy p: spec.{variant}: {UNKNOWN_FIELD_REJECTED}; did you mean {field}?"
        ]


def _manifest(kind: str, api_version: str, namespace: str, labels: dict[str, str]) -> Manifest:
    body = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x", "labels": labels}}
    namespaced = bool(namespace)
    return Manifest(body, SourceLocation("w.yaml", 1), api_version, kind, "x", namespace, namespaced)


SELECTING = [
    "spec: {}\n",
    "spec:\n  namespaceSelector: {matchLabels: {team: web}}\n",
    "spec:\n  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: other}}\n",
    "spec:\n  resourceSelectors: {labelSelectors: [{matchLabels: {app: web}}, {matchLabels: {app: db}}]}\n",
    "spec:\n  resourceSelectors:\n    labelSelectors:\n"
    "    - matchExpressions: [{key: app, operator: NotIn, values: [web]}]\n",
    "spec:\n  resourceSelectors: {labelSelectors: [], kinds: [{group: apps, kind: Deployment}]}\n",
    "spec:\n  resourceSelectors:\n    kinds: [{group: apps, version: v2, kind: Deployment}]\n",
]
OBJECTS = [
    _manifest("Deployment", "apps/v1", "shop", {"app": "web"}),
    _manifest("ConfigMap", "v1", "other", {"app": "db"}),
    _manifest("ClusterRole", "rbac.authorization.k8s.io/v1", "", {}),
    _manifest("Deployment", "apps/v1", "undefined-ns", {}),
]


@pytest.mark.parametrize("spec", SELECTING)
def test_validation_and_the_planners_matcher_agree_on_what_a_policy_selects(spec: str) -> None:
    """One rule (``policies.selects``); the planner's memoizing Matcher must decide as it does."""
    policy, problems = parse(HEAD + spec)
    assert problems == [] and policy is not None
    namespaces = {"shop": {"team": "web", "kubernetes.io/metadata.name": "shop"}}
    matcher = matching.Matcher([policy], namespaces)
    for manifest in OBJECTS:
        chosen = matcher.match(manifest).policy
        assert (chosen is not None) == policies.selects(policy, manifest, namespaces)


def test_only_policies_that_select_nothing_are_warned_about() -> None:
    used, _ = parse(HEAD + SELECTING[1])
    unused, _ = parse(
        HEAD.replace("bad-split", "unused")
        + "spec:\n  resourceSelectors: {labelSelectors: [{matchLabels: {app: nope}}]}\n"
    )
    assert used is not None and unused is not None
    namespaces = {"shop": {"team": "web"}}
    warnings = unmatched_policy_warnings([used, unused], OBJECTS, namespaces)
    assert [str(warning) for warning in warnings] == [
        f"policy.yaml:1: warning: SchedulePolicy unused: {UNMATCHED_POLICY}"
    ]
    assert unmatched_policy_warnings([used], [], namespaces)[0].subject == "SchedulePolicy bad-split"


TUTORIAL_SHAPED = {
    "duplicate with overrides and an empty namespaceSelector": """
spec:
  namespaceSelector: {}
  resourceSelectors:
    labelSelectors:
    - matchLabels: {release: mesh}
  groupBy: {labelKey: release}
  clusterSelector:
    matchExpressions:
    - {key: kubernetes.io/metadata.name, operator: In, values: [kind-workload-1, kind-workload-2]}
  spreadConstraints:
    spreadMode: Duplicate
    topologyKey: kubernetes.io/metadata.name
    overrides:
    - topologyValue: kind-workload-1
      resources:
      - kind: Namespace
        apiVersion: v1
        name: mesh-system
        override:
        - fieldPath: metadata.labels['topology.istio.io/network']
          value: {staticValue: net-a}
""",
    "divide by role with Exists and DoesNotExist": """
spec:
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: default}}
  clusterSelector:
    matchExpressions:
    - {key: kubernetes.io/metadata.name, operator: In, values: [kind-workload-1, kind-workload-2]}
  spreadConstraints: {topologyKey: kubernetes.io/metadata.name, spreadMode: Divide}
  resourceSelectors:
    labelSelectors:
    - matchExpressions:
      - {key: app, operator: In, values: [canary-demo]}
      - {key: role, operator: Exists}
      - {key: base-template, operator: DoesNotExist, values: []}
  groupBy: {labelKey: role}
""",
    "v1.5 duplicate without topologyKey": """
spec:
  resourceSelectors: {labelSelectors: [{matchLabels: {app: shared-service}}]}
  clusterSelector:
    matchExpressions: [{key: kubernetes.io/metadata.name, operator: In, values: [wlc-1, wlc-2]}]
  spreadConstraints: {spreadMode: Duplicate}
""",
    "v1.5 divide with a three-way map": """
spec:
  resourceSelectors: {labelSelectors: [{matchLabels: {app: web}}]}
  spreadConstraints:
    spreadMode: Divide
    percentageSplit: {wlc-1: 30, wlc-2: 30, wlc-3: 40}
""",
}


@pytest.mark.parametrize("spec", TUTORIAL_SHAPED.values(), ids=TUTORIAL_SHAPED.keys())
def test_policies_shaped_like_novas_tutorials_are_valid_with_no_warning(spec: str) -> None:
    policy, problems = parse(HEAD + spec)
    assert problems == [] and policy is not None


_CLUSTER_NAMES = st.from_regex(r"[a-z][a-z0-9-]{0,10}[a-z0-9]", fullmatch=True)


@st.composite
def _splits(draw: st.DrawFn) -> dict[str, int]:
    """Distinct cluster names with percentages from 0 to 100 that sum to 100."""
    names = draw(st.lists(_CLUSTER_NAMES, min_size=1, max_size=6, unique=True))
    cuts = sorted(draw(st.lists(st.integers(0, 100), min_size=len(names) - 1, max_size=len(names) - 1)))
    bounds = [0, *cuts, 100]
    return {name: bounds[index + 1] - bounds[index] for index, name in enumerate(names)}


@given(_splits())
def test_the_map_and_the_list_split_are_the_same_policy(split: dict[str, int]) -> None:
    """Property: v1.5's map and v0.9's list of the same percentages parse to equal policies."""
    as_list = [{"topologyValue": name, "percentage": percent} for name, percent in split.items()]
    parsed = []
    for shape in (split, as_list):
        problems: list[Problem] = []
        body = {
            "apiVersion": "policy.elotl.co/v1alpha1",
            "kind": "SchedulePolicy",
            "metadata": {"name": "p"},
            "spec": {"spreadConstraints": {"percentageSplit": shape}},
        }
        parsed.append(policies.parse_policy(Document(body, SourceLocation("p.yaml", 1)), problems))
        assert problems == []
    assert parsed[0] == parsed[1]
    assert parsed[0] is not None and parsed[0].spread is not None
    assert [part.topology_value for part in parsed[0].spread.percentage_split] == list(split)


def test_the_unmatched_warning_tries_one_object_per_signature_and_decides_as_trying_all() -> None:
    namespaces = {"shop": {"team": "web", "kubernetes.io/metadata.name": "shop"}}
    found = [policy for spec in SELECTING for policy in [parse(HEAD + spec)[0]] if policy is not None]
    for chosen in ([*found], found[:1], found[1:]):
        for objects in (OBJECTS, OBJECTS[:2], OBJECTS[1:] * 3):
            warned = {p.subject for p in unmatched_policy_warnings(chosen, objects, namespaces)}
            expected = {
                f"SchedulePolicy {policy.name}"
                for policy in chosen
                if not any(policies.selects(policy, manifest, namespaces) for manifest in objects)
            }
            assert warned == expected
