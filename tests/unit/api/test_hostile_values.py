"""Regression tests for crashes the loader fuzz (``test_loader_fuzz``) found, and for quoting input safely.

Behaviours covered:
- an integer literal over 4,300 digits (Python's int-conversion limit raises ValueError, not a YAML error) is
  a Problem at its line, as are integers beyond float64 (any base) and ``.nan``/``.inf``; short integers load;
- the agent's loader is the same function, so its rendered-repo reading is covered too;
- a list or mapping where a Cluster condition's status goes (unhashable) is a Problem naming the field, and
  ``1`` is not taken for ``True``;
- problems quote at most a short excerpt of a value: a bare-string document (a file whose whole content is a
  string, such as ``/etc/passwd`` read through a symlink), a long invalid name, a long unknown key.
"""

from __future__ import annotations

from typing import Any

import pytest

from nova_gitops.api import clusters, inputs, loading
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import EXCERPT_CHARS, Problem, SourceLocation, excerpt
from nova_gitops.errors import InputError

HEAD = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: demo}\n"


def messages(text: str) -> list[str]:
    documents, problems = loading.load_documents("f.yaml", text)
    assert not documents or not problems
    return [str(problem) for problem in problems]


@pytest.mark.parametrize(
    "literal",
    ["9" * 5000, "-" + "9" * 4400, "0x" + "f" * 3000, "0" + "7" * 2000, "1" + ":59" * 300, "9" * 401],
)
def test_huge_integers_are_problems_at_their_line(literal: str) -> None:
    [message] = messages(f"{HEAD}data:\n  ok: a\n  n: {literal}\n")
    assert message.startswith("f.yaml:6: integer of ")
    assert "too large for Kubernetes data" in message
    assert len(message) < 200


def test_an_integer_beyond_float64_in_few_characters_is_a_problem() -> None:
    [message] = messages(f"{HEAD}n: 0x{'f' * 300}\n")
    assert message.startswith("f.yaml:4: integer of 362 digits: too large")


@pytest.mark.parametrize("literal", ["0", "-12", "0x1F", "9" * 300, "1_000", "017"])
def test_ordinary_integers_still_load(literal: str) -> None:
    documents, problems = loading.load_documents("f.yaml", f"{HEAD}n: {literal}\n")
    assert problems == []
    assert isinstance(documents[0].body["n"], int)


@pytest.mark.parametrize("literal", [".nan", ".inf", "-.Inf", "1.0e+999"])
def test_nan_and_infinities_are_problems(literal: str) -> None:
    [message] = messages(f"{HEAD}data:\n  x: {literal}\n")
    assert message.startswith("f.yaml:5: NaN and infinities are not JSON numbers")
    assert literal not in message  # never quoted: it could be a Secret's value


def test_the_agent_reads_a_huge_integer_as_a_problem() -> None:
    from nova_agent.desired import load_desired
    from nova_agent.gitrepos import TreeFile

    data = f"{HEAD}n: {'9' * 5000}\n".encode()
    objects, problems = load_desired([TreeFile("clusters/c1/demo/configmap-c.yaml", data)], "c1")
    assert objects == []
    assert len(problems) == 1 and "too large for Kubernetes data" in problems[0]


def parse_cluster(conditions: Any) -> list[str]:
    body = {
        "apiVersion": "cluster.elotl.co/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": "wlc-1"},
        "status": {"conditions": conditions, "capacityResources": {"cpu": "1"}},
    }
    problems: list[Problem] = []
    clusters.parse_cluster(Document(body, SourceLocation("c.yaml", 1)), problems)
    return [str(problem) for problem in problems]


@pytest.mark.parametrize(
    ("status", "shown"),
    [(["True"], "a list"), ({"a": 1}, "a mapping"), (1, "the number 1"), (None, "null")],
)
def test_a_condition_status_of_the_wrong_type_is_a_problem(status: Any, shown: str) -> None:
    assert parse_cluster([{"type": "Ready", "status": status}]) == [
        f"c.yaml:1: Cluster wlc-1: status.conditions[0].status: must be True, False or Unknown, got {shown}"
    ]


def test_a_bare_string_document_is_quoted_as_a_short_excerpt() -> None:
    passwd = "root:x:0:0:root:/root:/bin/bash " * 200
    [message] = messages(f'"{passwd}"\n')
    assert message == f"f.yaml:1: a Kubernetes object must be a mapping, not {excerpt(passwd)}"
    assert passwd[:EXCERPT_CHARS] in message and passwd[: EXCERPT_CHARS + 1] not in message
    assert message.endswith("…")


def test_long_names_and_unknown_keys_are_cut_in_messages() -> None:
    long_name = "x" * 100_000
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": long_name, "namespace": "demo", "y" * 5000: 1},
    }
    with pytest.raises(InputError) as raised:
        inputs.build_source_set([Document(body, SourceLocation("f.yaml", 1))])
    shown = [str(problem) for problem in raised.value.problems]
    assert len(shown) == 2
    assert all(len(line) < 400 for line in shown), shown


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("short", "'short'"),
        ("a" * EXCERPT_CHARS, repr("a" * EXCERPT_CHARS)),
        ("a" * (EXCERPT_CHARS + 1), repr("a" * EXCERPT_CHARS) + "…"),
        (5, "5"),
        pytest.param(10**5000, "an integer of about 5001 digits", id="huge-int"),
    ],
)
def test_excerpt(value: object, expected: str) -> None:
    assert excerpt(value) == expected
