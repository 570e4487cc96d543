"""Paths a source declares are bounded at load, so nothing recursive meets an unbounded one (issue 21 item 4).

A PodControllerShape whose ``template`` JSONPath had ~1,000 segments parsed, then made jsonpath-ng's
``find`` raise RecursionError in planning (exit 3; the controller retried with back-off and reconciled
nothing). A SchedulePolicy override's ``fieldPath`` of 2,000 segments did the same in rendering
(``fieldpaths._set`` recursed once a segment), and so did a ``staticValue`` nested a few hundred deep
(``copy.deepcopy``).

Behaviours covered:
- a JSONPath longer than ``MAX_JSONPATH_CHARS`` or of more than ``MAX_JSONPATH_STEPS`` steps is an error
  at its line naming the field and the bound; so is an operator whose matches can multiply (``..``, ``|``,
  ``&``, ``where``, ``wherenot``, `` `parent` ``, a name or index repeated in one bracket);
- the other declarations and the rest of the source are still validated: every problem is listed at once,
  and the source is refused as a whole (bad input never produces a partial render);
- a field path of more than ``MAX_SEGMENTS`` segments is refused at parse, naming the bound;
- a deeply nested ``staticValue`` is copied without recursion;
- properties: any text as a pod set's path is a valid shape or an error, never an exception; a valid
  shape's paths, on any object, give pod groups or a ShapeError, never another exception.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nova_gitops.api import fieldpaths, inputs, loading, podshapes
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import Problem, SourceLocation
from nova_gitops.errors import InputError
from tests import builders
from tests.builders import cluster, policy

LONG = ".".join(["spec"] + ["x"] * 1000)


def shape(name: str, kind: str, **pod_set: str) -> dict[str, Any]:
    return {
        "apiVersion": "gitops.nova.elotl.co/v1alpha1",
        "kind": "PodControllerShape",
        "metadata": {"name": name},
        "spec": {"group": "example.com", "kind": kind, "podSets": [{"name": "p", **pod_set}]},
    }


def widget(kind: str = "Widget") -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": kind,
        "metadata": {"name": "w", "namespace": "demo", "labels": {"app": "demo"}},
        "spec": {"x": {"template": {"spec": {"containers": [{"name": "c"}]}}}},
    }


def problems_of(*documents: dict[str, Any]) -> list[str]:
    return problems_and_text(*documents)[0]


def problems_and_text(*documents: dict[str, Any]) -> tuple[list[str], str]:
    text = yaml.safe_dump_all(documents, sort_keys=False, width=10**6)
    loaded, problems = loading.load_documents("source.yaml", text)
    assert not problems
    with pytest.raises(InputError) as raised:
        inputs.build_source_set(loaded, texts={"source.yaml": text})
    return [str(problem) for problem in raised.value.problems if problem.is_error], text


def line_starting(text: str, start: str) -> int:
    (number,) = [
        number for number, line in enumerate(text.splitlines(), 1) if line.lstrip(" -").startswith(start)
    ]
    return number


def test_a_jsonpath_of_a_thousand_segments_is_an_error_at_its_line_and_the_rest_is_validated() -> None:
    deep = ".".join(["x"] * (podshapes.MAX_JSONPATH_STEPS + 1))
    found, text = problems_and_text(
        cluster("c1"),
        policy("p"),
        shape("bad", "Widget", template=LONG),
        shape("good", "Gadget", template="spec.x.template"),
        shape("worse", "Gizmo", each="spec[*]", template="template", replicas=deep),
        widget(),
        widget("Gadget"),
    )
    assert len(found) == 2, found
    chars, steps = found
    bad_at, worse_at = line_starting(text, "template: spec.x.x"), line_starting(text, "replicas: x.x")
    assert chars.startswith(
        f"source.yaml:{bad_at}: PodControllerShape bad: spec.podSets[0].template: "
        f"a JSONPath of more than {podshapes.MAX_JSONPATH_CHARS} characters (2004); refused: 'spec.x.x"
    )
    assert len(chars) < 300  # the path is quoted in part
    assert steps.startswith(
        f"source.yaml:{worse_at}: PodControllerShape worse: spec.podSets[0].replicas: "
        f"a JSONPath of more than {podshapes.MAX_JSONPATH_STEPS} steps; refused"
    )


def test_a_source_with_a_long_path_and_an_object_of_its_kind_is_refused_not_crashed() -> None:
    """What crashed planning for everyone: the declared kind's object made planning find the path."""
    with pytest.raises(InputError):
        builders.source_set(cluster("c1"), policy("p"), shape("bad", "Widget", template=LONG), widget())


@pytest.mark.parametrize(
    ("expression", "operator"),
    [
        ("spec..template", "`..`"),
        ("(spec|spec).template", "`|`"),
        ("spec & spec", "`&`"),
        ("spec.x where template", "`where`"),
        ("spec.x wherenot template", "`wherenot`"),
        ("spec.`parent`.spec", "`parent`"),
        ("spec['x','x'].template", "names one field twice"),
        ("spec.list[0,0]", "names one index twice"),
    ],
)
def test_operators_whose_matches_multiply_are_errors(expression: str, operator: str) -> None:
    (problem,) = problems_of(shape("bad", "Widget", template=expression))
    assert "PodControllerShape bad: spec.podSets[0].template: " in problem
    assert operator in problem


@pytest.mark.parametrize(
    "expression",
    ["spec.template", "$.spec.workerGroupSpecs[*]", "spec.pytorchReplicaSpecs.*", "spec.list[0:2]", "@.a"],
)
def test_plain_paths_stay_valid(expression: str) -> None:
    podshapes.compiled(expression)


def test_a_shape_built_in_code_is_bounded_when_used_too() -> None:
    """Planning meets only validated shapes; one made in code still cannot reach the recursion."""
    deep = ".".join(["x"] * 100)
    bad = podshapes.PodControllerShape("example.com", "Widget", (podshapes.PodSet("p", template=deep),))
    with pytest.raises(podshapes.ShapeError, match="steps"):
        podshapes.pod_templates(bad, widget())


def test_a_field_path_of_too_many_segments_is_refused_at_parse() -> None:
    with pytest.raises(fieldpaths.FieldPathError, match=f"more than {fieldpaths.MAX_SEGMENTS} segments"):
        fieldpaths.parse(".".join(["a"] * 2000))
    deepest = fieldpaths.parse(".".join(["a"] * fieldpaths.MAX_SEGMENTS))
    assert fieldpaths.get(fieldpaths.set_value({}, deepest, 1), deepest) == 1


def test_an_override_with_a_long_field_path_is_an_error_at_its_line() -> None:
    override = {"fieldPath": ".".join(["spec"] * 2000), "value": {"staticValue": 1}}
    spread = {
        "spreadMode": "Duplicate",
        "topologyKey": "kubernetes.io/metadata.name",
        "overrides": [
            {
                "topologyValue": "c1",
                "resources": [
                    {"kind": "Widget", "apiVersion": "example.com/v1", "name": "w", "override": [override]}
                ],
            }
        ],
    }
    documents = (cluster("c1"), policy("p", spreadConstraints=spread), widget())
    (problem,) = problems_of(*documents)
    assert problem.startswith("source.yaml:")
    assert f"more than {fieldpaths.MAX_SEGMENTS} segments" in problem


def test_a_deeply_nested_static_value_is_copied_without_recursion() -> None:
    value: list[Any] = []
    inner = value
    for _ in range(5000):
        inner.append([])
        inner = inner[0]
    inner.append({"leaf": True})
    shared = {"same": 1}
    result = fieldpaths.set_value(
        {"a": 1}, fieldpaths.parse("spec.deep"), {"x": value, "y": shared, "z": shared}
    )
    copy = result["spec"]["deep"]
    assert copy["y"] == shared and copy["y"] is not shared and copy["y"] is copy["z"]  # an alias stays one
    original, copied = value, copy["x"]
    for _ in range(5001):  # == on lists recurses too: compare level by level
        assert copied is not original and len(copied) == len(original) == 1
        original, copied = original[0], copied[0]
    assert copied == {"leaf": True} and copied is not original


PATH_TEXT = st.text(alphabet="$.*[]0123456789:,'\"()|&@` abxw", max_size=1200) | st.builds(
    lambda part, count: ".".join([part] * count),
    st.sampled_from(["a", "[*]", "*", "a[0]"]),
    st.integers(1, 1500),
)


def _deep(depth: int) -> Any:
    node: Any = {"template": {"spec": {"containers": []}}, "replicas": 2}
    for _ in range(depth):
        node = {"a": node, "b": [{"template": {"spec": {}}}, {"replicas": "x"}, 2]}
    return node


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PATH_TEXT, PATH_TEXT, st.integers(0, 30))
def test_any_path_text_is_a_shape_or_an_error_and_a_shape_never_raises_else(
    each: str, template: str, depth: int
) -> None:
    body = {
        "apiVersion": "gitops.nova.elotl.co/v1alpha1",
        "kind": "PodControllerShape",
        "metadata": {"name": "s"},
        "spec": {"group": "example.com", "kind": "Widget", "podSets": [{"each": each, "template": template}]},
    }
    problems: list[Problem] = []
    parsed = podshapes.parse_shape(Document(body, SourceLocation("source.yaml", 1)), problems)
    assert (parsed is None) == any(problem.is_error for problem in problems)
    if parsed is not None:
        with contextlib.suppress(podshapes.ShapeError):  # a bad value found: said, never raised else
            podshapes.pod_templates(
                parsed, {"apiVersion": "example.com/v1", "kind": "Widget", **_deep(depth)}
            )
