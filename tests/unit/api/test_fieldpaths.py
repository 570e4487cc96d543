"""Field paths of SchedulePolicy overrides.

Behaviours covered:
- every valid example of the Nova configuration page parses to the segments a user means;
- every invalid example (and unclosed brackets/quotes, stray ']') is refused with the defect and its position;
- ``get`` follows keys and indexes, bracketed digits are text keys on a mapping, a missing path is an error;
- ``set_value`` is copy-on-write: the input is unchanged, untouched branches are shared, missing mappings are
  created, null parents are replaced, an out-of-range index names the path and the list length;
- properties: ``parse(format_path(s))`` gives ``s`` back; any text parses or is a FieldPathError; set-then-get
  returns the value and leaves the original unchanged, through mappings and lists, sharing every branch off
  the path.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.api import fieldpaths
from nova_gitops.api.fieldpaths import FieldPathError


@pytest.mark.parametrize(
    ("text", "segments"),
    [
        ("metadata.name", ("metadata", "name")),
        ("spec.containers[0].name", ("spec", "containers", 0, "name")),
        ("data[.config.yml]", ("data", ".config.yml")),
        (
            "metadata.annotations['crossplane.io/external-name']",
            ("metadata", "annotations", "crossplane.io/external-name"),
        ),
        ('metadata.labels["topology.istio.io/network"]', ("metadata", "labels", "topology.istio.io/network")),
        ("spec.items[0][8]", ("spec", "items", 0, 8)),
        ("apiVersion", ("apiVersion",)),
        ("[42]", (42,)),
        ("data[007]", ("data", "007")),
        ("data['0']", ("data", "0")),
        ("data['']", ("data", "")),
        ("a[0].b[1].c", ("a", 0, "b", 1, "c")),
        ('metadata.annotations["it\'s"]', ("metadata", "annotations", "it's")),
    ],
)
def test_valid_paths_parse_to_their_segments(text: str, segments: tuple[fieldpaths.Segment, ...]) -> None:
    path = fieldpaths.parse(text)
    assert path.segments == segments
    assert str(path) == text


@pytest.mark.parametrize(
    ("text", "defect"),
    [
        (".metadata.name", "leading period at character 1"),
        ("metadata..name", "double period at character 10"),
        ("metadata.name.", "trailing period at character 14"),
        ("spec.containers[]", "empty brackets at character 16"),
        ("spec.containers.[0].name", "period before '[' at character 16"),
        ("spec.containers[0", "unclosed bracket at character 16"),
        ("metadata.annotations['x/y", "unclosed quote ' at character 22"),
        ("metadata.annotations['x/y'", "unclosed bracket at character 21"),
        ("metadata.annotations['x']y", "expected '.' or '[' after ']' at character 26"),
        ("metadata.annotations['x'y]", "expected ']' after the quoted key at character 25"),
        ("spec]", "']' without a matching '[' at character 5"),
        ("spec[a[0]]", "'[' inside brackets at character 7"),
        ("", "the path is empty"),
    ],
)
def test_invalid_paths_name_the_defect_and_position(text: str, defect: str) -> None:
    with pytest.raises(FieldPathError) as raised:
        fieldpaths.parse(text)
    assert defect in str(raised.value)
    assert repr(text) in str(raised.value)


def test_a_path_that_is_not_text_is_an_error() -> None:
    with pytest.raises(FieldPathError, match="must be text"):
        fieldpaths.parse(3)  # type: ignore[arg-type]


DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "labels": {"app": "web"}, "annotations": None},
    "data": {".config.yml": "a: 1", "0": "zero"},
    "spec": {
        "replicas": 2,
        "template": {"spec": {"containers": [{"name": "app", "image": "nginx"}, {"name": "side"}]}},
    },
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("metadata.name", "web"),
        ("spec.template.spec.containers[1].name", "side"),
        ("data[.config.yml]", "a: 1"),
        ("data[0]", "zero"),
        ("spec.replicas", 2),
        ("metadata.annotations", None),
    ],
)
def test_get_follows_keys_and_indexes(text: str, expected: Any) -> None:
    assert fieldpaths.get(DEPLOYMENT, fieldpaths.parse(text)) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("metadata.namespace", "metadata has no key 'namespace'"),
        (
            "spec.template.spec.containers[2].name",
            "index 2 is out of range, spec.template.spec.containers has 2",
        ),
        ("spec.template.spec.containers.first", "is a list, index it with a number"),
        ("spec.replicas.value", "spec.replicas is a number, not a mapping or list"),
        ("metadata.annotations.x", "metadata.annotations is null"),
    ],
)
def test_get_of_a_missing_path_is_an_error(text: str, message: str) -> None:
    with pytest.raises(FieldPathError, match=r"^" + text.replace("[", r"\[").replace("]", r"\]")) as raised:
        fieldpaths.get(DEPLOYMENT, fieldpaths.parse(text))
    assert message in str(raised.value)


def test_set_value_is_copy_on_write() -> None:
    original = copy.deepcopy(DEPLOYMENT)
    path = fieldpaths.parse("spec.template.spec.containers[0].image")
    updated = fieldpaths.set_value(DEPLOYMENT, path, "nginx:1.27")
    assert original == DEPLOYMENT
    assert fieldpaths.get(updated, path) == "nginx:1.27"
    assert updated["metadata"] is DEPLOYMENT["metadata"]  # untouched branches are shared, not copied
    assert (
        updated["spec"]["template"]["spec"]["containers"][1]
        is DEPLOYMENT["spec"]["template"]["spec"]["containers"][1]
    )


def test_set_value_creates_missing_mappings_and_replaces_null_parents() -> None:
    updated = fieldpaths.set_value(
        DEPLOYMENT, fieldpaths.parse("metadata.annotations['crossplane.io/external-name']"), "ext"
    )
    assert updated["metadata"]["annotations"] == {"crossplane.io/external-name": "ext"}
    deeper = fieldpaths.set_value({}, fieldpaths.parse("spec.a.b"), [1, 2])
    assert deeper == {"spec": {"a": {"b": [1, 2]}}}


def test_set_value_keeps_the_yaml_type_of_the_value_and_does_not_share_it() -> None:
    value = {"limits": {"cpu": "1"}}
    updated = fieldpaths.set_value(DEPLOYMENT, fieldpaths.parse("spec.resources"), value)
    assert updated["spec"]["resources"] == value
    assert updated["spec"]["resources"] is not value
    assert fieldpaths.set_value(DEPLOYMENT, fieldpaths.parse("spec.replicas"), 5)["spec"]["replicas"] == 5
    assert fieldpaths.set_value(DEPLOYMENT, fieldpaths.parse("spec.paused"), True)["spec"]["paused"] is True


def test_bracketed_digits_on_a_mapping_are_a_text_key() -> None:
    updated = fieldpaths.set_value(DEPLOYMENT, fieldpaths.parse("data[1]"), "one")
    assert updated["data"]["1"] == "one"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "spec.template.spec.containers[5].image",
            "index 5 is out of range, spec.template.spec.containers has 2 items",
        ),
        ("spec.volumes[0].name", "index 0 is out of range, spec.volumes is absent"),
        ("spec.replicas.x", "spec.replicas is a number, not a mapping or list"),
        ("spec.template.spec.containers.image", "is a list, index it with a number, not 'image'"),
    ],
)
def test_set_value_errors_name_the_path(text: str, message: str) -> None:
    with pytest.raises(FieldPathError) as raised:
        fieldpaths.set_value(DEPLOYMENT, fieldpaths.parse(text), "x")
    assert str(raised.value).startswith(text + ": ")
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("segments", "text"),
    [
        (("metadata", "name"), "metadata.name"),
        (("spec", "containers", 0, "name"), "spec.containers[0].name"),
        (("data", ".config.yml"), "data[.config.yml]"),
        (("metadata", "annotations", "a[b]"), "metadata.annotations['a[b]']"),
        (("data", "it's.x"), "data[it's.x]"),
        (("data", "'q.x"), 'data["\'q.x"]'),
        ((42,), "[42]"),
    ],
)
def test_format_path_writes_the_usual_spelling(segments: tuple[fieldpaths.Segment, ...], text: str) -> None:
    assert fieldpaths.format_path(segments) == text


@pytest.mark.parametrize("segments", [(), (-1,), ("a'\"[",), (True,)])
def test_format_path_refuses_what_cannot_be_written(segments: tuple[Any, ...]) -> None:
    with pytest.raises(FieldPathError):
        fieldpaths.format_path(segments)


KEYS = st.text(alphabet="ab0./[]'\"- _x", max_size=8).filter(lambda key: not ("'" in key and '"' in key))
SEGMENTS = st.lists(st.one_of(st.integers(min_value=0, max_value=10**6), KEYS), min_size=1, max_size=6).map(
    tuple
)


@settings(max_examples=200)
@given(SEGMENTS)
def test_parse_reads_back_what_format_path_writes(segments: tuple[fieldpaths.Segment, ...]) -> None:
    assert fieldpaths.parse(fieldpaths.format_path(segments)).segments == segments


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=10,
)
OBJECTS = st.dictionaries(st.sampled_from(["a", "b", "0"]), JSON_VALUES, max_size=3)
STRING_PATHS = st.lists(st.sampled_from(["a", "b", "c", "0"]), min_size=1, max_size=4).map(tuple)


@settings(max_examples=200)
@given(OBJECTS, STRING_PATHS, JSON_VALUES)
def test_set_then_get_returns_the_value_and_keeps_the_original(
    obj: dict[str, Any], segments: tuple[str, ...], value: Any
) -> None:
    original = copy.deepcopy(obj)
    path = fieldpaths.parse(fieldpaths.format_path(segments))
    try:
        updated = fieldpaths.set_value(obj, path, value)
    except FieldPathError:
        assert obj == original  # only when a scalar or list sits on the way
        return
    assert fieldpaths.get(updated, path) == value
    assert obj == original


@settings(max_examples=200)
@given(st.text(alphabet=".[]'\"a0 ", max_size=12))
def test_any_text_parses_or_is_a_field_path_error(text: str) -> None:
    try:
        path = fieldpaths.parse(text)
    except FieldPathError as error:
        assert repr(text) in str(error)
        return
    assert fieldpaths.parse(fieldpaths.format_path(path.segments)).segments == path.segments


def _existing_paths(
    node: Any, prefix: tuple[fieldpaths.Segment, ...]
) -> list[tuple[fieldpaths.Segment, ...]]:
    """Every path that already exists in ``node``, lists included."""
    paths: list[tuple[fieldpaths.Segment, ...]] = []
    children: list[tuple[fieldpaths.Segment, Any]] = []
    if isinstance(node, dict):
        children = list(node.items())
    elif isinstance(node, list):
        children = list(enumerate(node))
    for segment, child in children:
        paths.append((*prefix, segment))
        paths.extend(_existing_paths(child, (*prefix, segment)))
    return paths


NESTED = st.dictionaries(st.sampled_from(["a", "b"]), JSON_VALUES, min_size=1, max_size=3)


@settings(max_examples=200)
@given(NESTED, JSON_VALUES, st.data())
def test_set_then_get_through_lists_shares_everything_off_the_path(
    obj: dict[str, Any], value: Any, data: st.DataObject
) -> None:
    original = copy.deepcopy(obj)
    segments = data.draw(st.sampled_from(_existing_paths(obj, ())))
    path = fieldpaths.FieldPath(repr(segments), segments)
    updated = fieldpaths.set_value(obj, path, value)
    assert fieldpaths.get(updated, path) == value
    assert obj == original
    for key in obj:
        if key != segments[0]:
            assert updated[key] is obj[key]
