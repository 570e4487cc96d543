"""Label selectors with Kubernetes semantics.

Behaviours covered:
- In / NotIn / Exists / DoesNotExist match as kube-apiserver does; NotIn and DoesNotExist match an absent key;
  requirements are ANDed; the empty selector (and ``None``) matches everything;
- matchLabels fold into one-value In requirements, in source order, before the expressions; values keep their
  order (orderedClusterSelector tiers depend on it);
- Nova's own example (``operator: Exists`` with ``values: []``) is accepted;
- every defect is reported, each with its field: non-text values (YAML booleans and numbers, with a hint to
  quote them), bad keys and values, unknown or missing operators (with a case hint), empty values for
  In/NotIn, values for Exists/DoesNotExist, malformed entries; unknown fields are warnings;
- the name checks accept and refuse what k8s.io/apimachinery's validation does;
- ``format_selector`` writes kubectl's text form;
- property: a selector built from matchLabels matches exactly the label sets that contain it.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.api import selectors
from nova_gitops.api.problems import Problem, Severity, SourceLocation
from nova_gitops.api.selectors import LabelSelector, Requirement

HERE = SourceLocation("policies/p.yaml", 3)
FIELD = "spec.clusterSelector"


def parse(raw: Any) -> tuple[LabelSelector, list[Problem]]:
    problems: list[Problem] = []
    return selectors.parse_selector(raw, HERE, FIELD, problems), problems


@pytest.mark.parametrize(
    ("requirement", "labels", "matches"),
    [
        (Requirement("env", "In", ("prod", "stage")), {"env": "prod"}, True),
        (Requirement("env", "In", ("prod",)), {"env": "dev"}, False),
        (Requirement("env", "In", ("prod",)), {}, False),
        (Requirement("env", "NotIn", ("prod",)), {"env": "dev"}, True),
        (Requirement("env", "NotIn", ("prod",)), {"env": "prod"}, False),
        (Requirement("env", "NotIn", ("prod",)), {}, True),
        (Requirement("env", "Exists"), {"env": ""}, True),
        (Requirement("env", "Exists"), {"other": "x"}, False),
        (Requirement("env", "DoesNotExist"), {}, True),
        (Requirement("env", "DoesNotExist"), {"env": "x"}, False),
    ],
)
def test_operators_match_as_kubernetes_does(
    requirement: Requirement, labels: dict[str, str], matches: bool
) -> None:
    assert requirement.matches(labels) is matches


def test_requirements_are_anded_and_empty_matches_everything() -> None:
    selector, problems = parse(
        {
            "matchLabels": {"nova.elotl.co/cluster.region": "us-east-1"},
            "matchExpressions": [
                {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["wlc-2", "wlc-3"]}
            ],
        }
    )
    assert problems == []
    region = {"nova.elotl.co/cluster.region": "us-east-1"}
    assert selector.matches({**region, "kubernetes.io/metadata.name": "wlc-1"})
    assert not selector.matches({**region, "kubernetes.io/metadata.name": "wlc-2"})
    assert not selector.matches({"kubernetes.io/metadata.name": "wlc-1"})
    empties: list[Any] = [None, {}, {"matchLabels": {}, "matchExpressions": []}, {"matchLabels": None}]
    for empty in empties:
        selector, problems = parse(empty)
        assert problems == []
        assert selector.is_empty
        assert selector.matches({}) and selector.matches({"a": "b"})


def test_match_labels_come_first_in_source_order_and_values_keep_their_order() -> None:
    selector, _ = parse(
        {
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["gold", "silver", "bronze"]}],
            "matchLabels": {"b": "2", "a": "1"},
        }
    )
    assert selector.requirements == (
        Requirement("b", "In", ("2",)),
        Requirement("a", "In", ("1",)),
        Requirement("tier", "In", ("gold", "silver", "bronze")),
    )


def test_novas_own_example_with_empty_values_for_exists_is_accepted() -> None:
    selector, problems = parse(
        {
            "matchLabels": {"microServicesDemo": "yes"},
            "matchExpressions": [{"key": "app.kubernetes.io", "operator": "Exists", "values": []}],
        }
    )
    assert problems == []
    assert selector.requirements[1] == Requirement("app.kubernetes.io", "Exists")
    _, problems = parse({"matchExpressions": [{"key": "x", "operator": "DoesNotExist", "values": None}]})
    assert problems == []


@pytest.mark.parametrize(
    ("raw", "field", "message"),
    [
        ({"matchLabels": {"enabled": True}}, "matchLabels.enabled", 'got the boolean true; quote it: "true"'),
        ({"matchLabels": {"version": 2}}, "matchLabels.version", 'got the number 2; quote it: "2"'),
        ({"matchLabels": {"version": 1.5}}, "matchLabels.version", 'got the number 1.5; quote it: "1.5"'),
        ({"matchLabels": {"app": None}}, "matchLabels.app", "a label value must be text, got null"),
        ({"matchLabels": {"app": "-web"}}, "matchLabels.app", "invalid label value '-web'"),
        ({"matchLabels": {"app": "x" * 64}}, "matchLabels.app", "must be no more than 63 characters"),
        (
            {"matchLabels": {"Bad_Prefix/app": "web"}},
            "matchLabels.Bad_Prefix/app",
            "prefix part must be a lowercase",
        ),
        ({"matchLabels": {"a/b/c": "web"}}, "matchLabels.a/b/c", "at most one '/'"),
        ({"matchLabels": ["app=web"]}, "matchLabels", "must be a mapping of label key to value, got a list"),
        ({"matchExpressions": {"key": "x"}}, "matchExpressions", "must be a list"),
        ({"matchExpressions": ["x"]}, "matchExpressions[0]", "must be a mapping of key, operator, values"),
        (
            {"matchExpressions": [{"key": "x", "operator": "Equals", "values": ["a"]}]},
            "matchExpressions[0].operator",
            "unknown operator 'Equals': must be one of In, NotIn, Exists, DoesNotExist",
        ),
        (
            {"matchExpressions": [{"key": "x", "operator": "in", "values": ["a"]}]},
            "matchExpressions[0].operator",
            "did you mean In?",
        ),
        ({"matchExpressions": [{"key": "x", "values": ["a"]}]}, "matchExpressions[0].operator", "required"),
        ({"matchExpressions": [{"operator": "Exists"}]}, "matchExpressions[0].key", "required"),
        ({"matchExpressions": [{"key": "", "operator": "Exists"}]}, "matchExpressions[0].key", "non-empty"),
        ({"matchExpressions": [{"key": 7, "operator": "Exists"}]}, "matchExpressions[0].key", "must be text"),
        (
            {"matchExpressions": [{"key": "x", "operator": "In", "values": []}]},
            "matchExpressions[0].values",
            "must be non-empty when operator is In",
        ),
        (
            {"matchExpressions": [{"key": "x", "operator": "NotIn"}]},
            "matchExpressions[0].values",
            "must be non-empty when operator is NotIn",
        ),
        (
            {"matchExpressions": [{"key": "x", "operator": "Exists", "values": ["a"]}]},
            "matchExpressions[0].values",
            "must be empty when operator is Exists",
        ),
        (
            {"matchExpressions": [{"key": "x", "operator": "In", "values": "a"}]},
            "matchExpressions[0].values",
            "values must be a list of text",
        ),
        (
            {"matchExpressions": [{"key": "x", "operator": "In", "values": ["a", False]}]},
            "matchExpressions[0].values[1]",
            "got the boolean false",
        ),
        ("app=web", "", "a label selector must be a mapping"),
    ],
)
def test_each_defect_is_a_problem_naming_its_field(raw: Any, field: str, message: str) -> None:
    selector, problems = parse(raw)
    errors = [problem for problem in problems if problem.is_error]
    assert len(errors) == 1, problems
    assert errors[0].field == (f"{FIELD}.{field}" if field else FIELD).replace(".[", "[")
    assert message in errors[0].message
    assert errors[0].location == HERE
    assert selector.requirements == ()


def test_every_problem_is_collected_not_only_the_first() -> None:
    _, problems = parse(
        {
            "matchLabels": {
                "ok": "yes",
                "flag": True,
                "-bad": "x",
                "nova.elotl.co/cluster.region": "us east",
            },
            "matchExpressions": [
                {"key": "a", "operator": "Is", "values": ["x"]},
                {"key": "b", "operator": "Exists", "values": ["y"]},
            ],
        }
    )
    assert [problem.field for problem in problems] == [
        "spec.clusterSelector.matchLabels.flag",
        "spec.clusterSelector.matchLabels.-bad",
        "spec.clusterSelector.matchLabels[nova.elotl.co/cluster.region]",
        "spec.clusterSelector.matchExpressions[0].operator",
        "spec.clusterSelector.matchExpressions[1].values",
    ]


def test_unknown_fields_are_warnings_with_a_hint() -> None:
    selector, problems = parse(
        {"matchLabel": {"app": "web"}, "matchExpressions": [{"key": "x", "operator": "Exists", "value": []}]}
    )
    assert [(problem.severity, problem.field) for problem in problems] == [
        (Severity.WARNING, "spec.clusterSelector.matchLabel"),
        (Severity.WARNING, "spec.clusterSelector.matchExpressions[0].value"),
    ]
    assert "did you mean matchLabels?" in problems[0].message
    assert selector.requirements == (Requirement("x", "Exists"),)


def test_a_selector_at_the_top_of_a_document_has_unprefixed_fields() -> None:
    problems: list[Problem] = []
    selectors.parse_selector({"matchLabels": {"a": 1}}, HERE, "", problems)
    assert problems[0].field == "matchLabels.a"


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("app", True),
        ("app.kubernetes.io/name", True),
        ("kubernetes.io/metadata.name", True),
        ("nova.elotl.co/cluster.region", True),
        ("My_Name.x-1", True),
        ("a" * 63, True),
        ("a" * 64, False),
        (f"{'a' * 253}/name", True),  # k8s checks the subdomain's length, not each label's
        (f"{'a' * 254}/name", False),
        ("/name", False),
        ("example.com/", False),
        ("Example.com/name", False),
        ("-app", False),
        ("app-", False),
        ("a b", False),
        ("", False),
    ],
)
def test_qualified_names(text: str, valid: bool) -> None:
    assert selectors.is_qualified_name(text) is valid


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("", True),
        ("prod", True),
        ("1.2.3", True),
        ("a_b-c", True),
        ("-a", False),
        ("a.", False),
        ("é", False),
    ],
)
def test_label_values(text: str, valid: bool) -> None:
    assert (not selectors.label_value_errors(text)) is valid


@pytest.mark.parametrize(
    ("text", "label", "subdomain"),
    [
        ("wlc-1", True, True),
        ("a.b", False, True),
        ("UPPER", False, False),
        ("-a", False, False),
        ("a" * 63, True, True),
        ("a" * 64, False, True),
        (".".join(["a" * 63] * 4), False, False),
        ("", False, False),
        ("a\n", False, False),
    ],
)
def test_dns1123_names(text: str, label: bool, subdomain: bool) -> None:
    assert selectors.is_dns1123_label(text) is label
    assert selectors.is_dns1123_subdomain(text) is subdomain


def test_format_selector_writes_kubectls_text_form() -> None:
    selector = LabelSelector(
        (
            Requirement("app", "In", ("web",)),
            Requirement("tier", "In", ("a", "b")),
            Requirement("zone", "NotIn", ("z1",)),
            Requirement("gpu", "Exists"),
            Requirement("x", "DoesNotExist"),
        )
    )
    assert selectors.format_selector(selector) == "app=web,tier in (a,b),zone notin (z1),gpu,!x"
    assert selectors.format_selector(LabelSelector()) == ""


KEYS = st.sampled_from(["app", "tier", "example.com/team", "zone"])
VALUES = st.sampled_from(["", "web", "db", "a.b"])
LABELS = st.dictionaries(KEYS, VALUES, max_size=4)


@settings(max_examples=200)
@given(LABELS, LABELS)
def test_match_labels_match_exactly_the_label_sets_containing_them(
    wanted: dict[str, str], labels: dict[str, str]
) -> None:
    selector, problems = parse({"matchLabels": wanted})
    assert problems == []
    assert selector.matches(labels) is all(labels.get(key) == value for key, value in wanted.items())
    negated = LabelSelector(tuple(Requirement(key, "NotIn", (value,)) for key, value in wanted.items()))
    assert negated.matches(labels) is all(labels.get(key) != value for key, value in wanted.items())


def test_parse_labels_validates_a_label_map_and_keeps_the_good_entries() -> None:
    problems: list[Problem] = []
    labels = selectors.parse_labels(
        {"app": "web", "gpu": True, "app.kubernetes.io/name": "-x"}, HERE, "metadata.labels", problems
    )
    assert labels == {"app": "web"}
    assert [problem.field for problem in problems] == [
        "metadata.labels.gpu",
        "metadata.labels[app.kubernetes.io/name]",
    ]
    assert selectors.parse_labels(None, HERE, "metadata.labels", problems) == {}
    selectors.parse_labels(["a"], HERE, "metadata.labels", problems)
    assert problems[-1].message == "labels must be a mapping of label key to value, got a list"


YAML_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.sampled_from(
        [
            "In",
            "NotIn",
            "Exists",
            "DoesNotExist",
            "key",
            "operator",
            "values",
            "matchLabels",
            "matchExpressions",
            "a",
        ]
    ),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(["key", "operator", "values", "matchLabels", "matchExpressions", "a", "b.c/d"]),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=200)
@given(YAML_VALUES)
def test_any_yaml_gives_a_selector_and_problems_never_a_crash(raw: Any) -> None:
    selector, problems = parse(raw)
    assert isinstance(selector, LabelSelector)
    assert all(problem.location == HERE and problem.message for problem in problems)
    if not [problem for problem in problems if problem.is_error]:
        assert selectors.parse_selector(raw, HERE, FIELD, []) == selector
