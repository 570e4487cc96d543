"""Loading YAML text into Documents (``api.loading``).

Behaviours covered:
- multi-document files give one Document per object, located at the line its content starts on;
- empty documents are skipped; a ``v1`` ``List`` is unwrapped into its items, each at its own line;
- a document that is not a mapping, or lacks a string apiVersion/kind, is a Problem naming file:line;
- a YAML syntax error is a Problem at the error's line, and the documents before it are still returned;
- unsafe input is refused with a Problem: files over 8 MiB, more than 64 aliases, recursive aliases,
  aliases that expand beyond a million nodes (billion laughs);
- a value JSON cannot hold (``!!binary``, ``!!set``, ``!!omap``, ``!!pairs``, explicit ``!!timestamp``,
  Python and custom tags) is a Problem at its own line, every one in the document, and the document is
  dropped while later documents still load;
- unquoted timestamps, dates and a bare ``=`` stay the exact strings written (as kube's YAML → JSON reads
  them), while explicit ``!!str``/``!!int`` and ordinary ints, floats, bools and nulls keep their types;
- ordinary aliases and merge keys still load;
- ``locate_field`` finds the line of dotted, indexed and quoted field paths, keys containing dots, and falls
  back to the deepest present parent, or the document line;
- property: every generated file's documents come back in order at the lines they were written on.
"""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.api import fieldlines, loading


def messages(text: str) -> list[str]:
    return [str(problem) for problem in loading.load_documents("f.yaml", text)[1]]


def test_documents_carry_the_line_their_content_starts_on() -> None:
    text = (
        "# leading comment\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
        "---\n"
        "---\n"
        "\n"
        "# another\n"
        "apiVersion: v1\nkind: Secret\nmetadata: {name: b}\n"
    )
    documents, problems = loading.load_documents("dir/f.yaml", text)
    assert problems == []
    assert [(d.body["kind"], str(d.location)) for d in documents] == [
        ("ConfigMap", "dir/f.yaml:2"),
        ("Secret", "dir/f.yaml:9"),
    ]


def test_a_v1_list_is_unwrapped_into_its_items() -> None:
    text = (
        "apiVersion: v1\nkind: List\nitems:\n"
        "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n"
        "- apiVersion: v1\n  kind: Secret\n  metadata: {name: b}\n"
    )
    documents, problems = loading.load_documents("f.yaml", text)
    assert problems == []
    assert [(d.body["kind"], d.location.line) for d in documents] == [("ConfigMap", 4), ("Secret", 7)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- a\n- b\n", "f.yaml:1: a Kubernetes object must be a mapping, not a list"),
        ("just text\n", "f.yaml:1: a Kubernetes object must be a mapping, not 'just text'"),
        ("kind: X\n", "f.yaml:1: apiVersion is required (every Kubernetes object has both)"),
        (
            "apiVersion: 1\nkind: [X]\n",
            "f.yaml:1: apiVersion must be a string; kind must be a string (every Kubernetes object has both)",
        ),
        ("a: b\n", "f.yaml:1: apiVersion is required; kind is required (every Kubernetes object has both)"),
        ("apiVersion: v1\nkind: ''\n", "f.yaml:1: kind must be a string (every Kubernetes object has both)"),
    ],
)
def test_documents_that_are_not_objects_are_problems(text: str, expected: str) -> None:
    assert messages(text) == [expected]


def test_a_syntax_error_keeps_the_documents_before_it() -> None:
    text = (
        "apiVersion: v1\nkind: A\n---\napiVersion: v1\nkind: B\n  bad: indent\n---\napiVersion: v1\nkind: C\n"
    )
    documents, problems = loading.load_documents("f.yaml", text)
    assert [d.body["kind"] for d in documents] == ["A"]
    assert [str(p) for p in problems] == [
        "f.yaml:6: invalid YAML: mapping values are not allowed in this context",
    ]


def test_python_tags_are_refused_and_later_documents_still_load() -> None:
    text = "apiVersion: v1\nkind: A\nx: !!python/object/apply:os.system [ls]\n---\napiVersion: v1\nkind: B\n"
    documents, problems = loading.load_documents("f.yaml", text)
    assert [d.body["kind"] for d in documents] == ["B"]
    assert [str(p) for p in problems] == [
        "f.yaml:3: !!python/object/apply:os.system is not Kubernetes data (use a string)"
    ]


CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (
            "binaryData:\n  x: !!binary aGVsbG8=\n",
            ["f.yaml:5: !!binary is not Kubernetes data (use a string)"],
        ),
        ("data:\n  x: !!set {a, b}\n", ["f.yaml:5: !!set is not Kubernetes data (use a string)"]),
        ("data: !!omap [{a: '1'}]\n", ["f.yaml:4: !!omap is not Kubernetes data (use a string)"]),
        ("data: !!pairs [{a: '1'}]\n", ["f.yaml:4: !!pairs is not Kubernetes data (use a string)"]),
        (
            "data:\n  x: !!timestamp 2024-01-01\n",
            ["f.yaml:5: !!timestamp is not Kubernetes data (use a string)"],
        ),
        ("data:\n  x: !vault secret/x\n", ["f.yaml:5: !vault is not Kubernetes data (use a string)"]),
        (
            "data:\n  x: !<tag:example.com,2024:x> {}\n",
            ["f.yaml:5: tag:example.com,2024:x is not Kubernetes data (use a string)"],
        ),
        (
            "binaryData:\n  x: !!binary aGVsbG8=\n  y: !!binary aGVsbG8=\ndata: {z: !!set {a}}\n",
            [
                "f.yaml:5: !!binary is not Kubernetes data (use a string)",
                "f.yaml:6: !!binary is not Kubernetes data (use a string)",
                "f.yaml:7: !!set is not Kubernetes data (use a string)",
            ],
        ),
    ],
)
def test_values_json_cannot_hold_are_problems_at_their_line(values: str, expected: list[str]) -> None:
    text = CONFIG_MAP + values + "---\n" + CONFIG_MAP
    documents, problems = loading.load_documents("f.yaml", text)
    assert [str(p) for p in problems] == expected
    assert [d.location.line for d in documents] == [text[: text.index("---")].count("\n") + 2]


def test_timestamps_dates_and_equals_stay_the_strings_written() -> None:
    text = CONFIG_MAP + (
        "data:\n"
        "  at: 2024-01-01T00:00:00Z\n"
        "  spaced: 2024-01-01 10:00:00.5 +02:00\n"
        "  day: 2024-01-01\n"
        "  equals: =\n"
        "  tagged: !!str 7\n"
        "other: [7, !!int '8', 1.5, true, null, ~, 0x1F]\n"
    )
    documents, problems = loading.load_documents("f.yaml", text)
    assert problems == []
    assert documents[0].body["data"] == {
        "at": "2024-01-01T00:00:00Z",
        "spaced": "2024-01-01 10:00:00.5 +02:00",
        "day": "2024-01-01",
        "equals": "=",
        "tagged": "7",
    }
    assert documents[0].body["other"] == [7, 8, 1.5, True, None, None, 31]


def test_files_over_8_mib_are_refused() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\ndata:\n  big: " + "x" * (8 * 1024 * 1024) + "\n"
    documents, problems = loading.load_documents("big.yaml", text)
    assert documents == []
    assert [str(p) for p in problems] == [
        f"big.yaml:1: file is {len(text)} bytes, over the 8 MiB limit; split it"
    ]


def billion_laughs(levels: int, fan_out: int) -> str:
    lines = ["apiVersion: v1", "kind: ConfigMap", "l0: &l0 [lol]"]
    for level in range(1, levels + 1):
        refs = ", ".join([f"*l{level - 1}"] * fan_out)
        lines.append(f"l{level}: &l{level} [{refs}]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            billion_laughs(9, 9),
            "f.yaml:1: document has more than 64 YAML aliases; refused (alias expansion is bounded)",
        ),
        (
            billion_laughs(30, 2),
            "f.yaml:1: document's YAML aliases expand to more than 1000000 nodes; refused",
        ),
        ("apiVersion: v1\nkind: X\na: &a [*a]\n", "f.yaml:1: document has a recursive YAML alias; refused"),
    ],
)
def test_alias_bombs_are_refused(text: str, expected: str) -> None:
    documents, problems = loading.load_documents("f.yaml", text)
    assert documents == []
    assert [str(p) for p in problems] == [expected]


def test_ordinary_aliases_and_merge_keys_load() -> None:
    text = (
        "apiVersion: v1\nkind: ConfigMap\n"
        "base: &base {a: '1', b: '2'}\n"
        "data:\n  <<: *base\n  c: '3'\n"
        "other: *base\n"
    )
    documents, problems = loading.load_documents("f.yaml", text)
    assert problems == []
    assert documents[0].body["data"] == {"a": "1", "b": "2", "c": "3"}
    assert documents[0].body["other"] == {"a": "1", "b": "2"}


def test_a_star_in_a_quoted_string_is_not_an_alias() -> None:
    text = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nrules:\n- resources: ['*']\n"
    documents, problems = loading.load_documents("f.yaml", text)
    assert problems == []
    assert documents[0].body["rules"] == [{"resources": ["*"]}]


POLICY = """\
apiVersion: v1
kind: ConfigMap
---
# the policy
apiVersion: policy.elotl.co/v1alpha1
kind: SchedulePolicy
metadata:
  name: p
  labels:
    app.kubernetes.io/name: x
spec:
  groupBy:
    labelKey: color
  spreadConstraints:
    percentageSplit:
    - topologyValue: a
      percentage: 20
    - topologyValue: b
      percentage: 90
"""


@pytest.mark.parametrize(
    ("field", "line"),
    [
        ("spec.groupBy.labelKey", 13),
        ("spec.spreadConstraints.percentageSplit[1].percentage", 19),
        ("spec.spreadConstraints.percentageSplit[1]", 18),
        ("spec.spreadConstraints.percentageSplit[0].topologyValue", 16),
        ("metadata.labels['app.kubernetes.io/name']", 10),
        ('metadata.labels["app.kubernetes.io/name"]', 10),
        ("metadata.labels.app.kubernetes.io/name", 10),
        ("metadata.labels[app.kubernetes.io/name]", 10),
        ("spec.spreadConstraints.topologyKey", 14),
        ("spec.spreadConstraints.percentageSplit[7].percentage", 15),
        ("status.conditions", 5),
        ("", 5),
    ],
)
def test_locate_field_finds_the_line_of_a_field(field: str, line: int) -> None:
    assert fieldlines.locate_field(POLICY, 5, field) == line


def test_locate_field_falls_back_to_the_document_line() -> None:
    assert fieldlines.locate_field(POLICY, 3, "spec.groupBy") == 3
    assert fieldlines.locate_field("a: [b\n", 1, "a") == 1


@st.composite
def yaml_files(draw: st.DrawFn) -> tuple[str, list[tuple[str, int]]]:
    """A multi-document file with comments and blank lines, and the (name, line) of each object in it."""
    lines: list[str] = []
    expected: list[tuple[str, int]] = []
    plain_names = st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True).filter(
        lambda name: isinstance(yaml.load(name, Loader=yaml.CSafeLoader), str)  # not YAML 1.1's `no`, `on`
    )
    names = draw(st.lists(plain_names, min_size=1, max_size=6))
    for index, name in enumerate(names):
        if index:
            lines.append("---")
        lines.extend(["# comment"] * draw(st.integers(0, 2)) + [""] * draw(st.integers(0, 2)))
        expected.append((name, len(lines) + 1))
        lines.extend(["apiVersion: v1", "kind: ConfigMap", "metadata:", f"  name: {name}"])
    return "\n".join(lines) + "\n", expected


@settings(max_examples=100)
@given(yaml_files())
def test_property_documents_come_back_in_order_at_their_lines(
    case: tuple[str, list[tuple[str, int]]],
) -> None:
    text, expected = case
    documents, problems = loading.load_documents("f.yaml", text)
    assert problems == []
    assert [(d.body["metadata"]["name"], d.location.line) for d in documents] == expected
    for document in documents:
        assert (
            fieldlines.locate_field(text, document.location.line, "metadata.name")
            == document.location.line + 3
        )


def test_problems_sort_even_when_they_tie_on_file_line_and_message() -> None:
    from nova_gitops.api.problems import Problem, Severity, SourceLocation

    here = SourceLocation("a.yaml", 3)
    tied = [
        Problem(here, "bad", "spec.x", Severity.WARNING),
        Problem(here, "bad", None, Severity.ERROR),
        Problem(here, "bad", "spec.x", Severity.ERROR),
    ]
    assert [(p.field, p.severity) for p in sorted(tied)] == [
        (None, Severity.ERROR),
        ("spec.x", Severity.ERROR),
        ("spec.x", Severity.WARNING),
    ]
