"""Duplicate keys in a YAML mapping are Problems (``api.loading``), as kubectl refuses them.

Behaviours covered:
- ``replicas: 3`` then ``replicas: 0`` is a Problem at the second key's line naming the key and the first
  line, not a render of 0; the document is dropped, later documents still load;
- at any depth, in block and flow style, in list items, every duplicate reported;
- keys that are equal once read (``1`` and ``0x1``) are duplicates too;
- a ``<<`` merge key's entries may be overridden (YAML's merge-key spec), but keys written twice beside a
  merge are still duplicates;
- a long duplicate key is quoted as a short excerpt.
"""

from __future__ import annotations

from nova_gitops.api import loading


def load(text: str) -> tuple[list[object], list[str]]:
    documents, problems = loading.load_documents("f.yaml", text)
    return [document.body for document in documents], [str(problem) for problem in problems]


DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
spec:
  replicas: 3
  replicas: 0
  template:
    spec:
      containers:
      - name: main
        image: nginx
        image: httpd
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: demo}
"""


def test_duplicate_keys_are_problems_at_their_line_and_the_document_is_dropped() -> None:
    bodies, problems = load(DEPLOYMENT)
    assert problems == [
        "f.yaml:8: duplicate key 'replicas' (first at line 7): a mapping may hold each key once; "
        "kubectl refuses the file",
        "f.yaml:14: duplicate key 'image' (first at line 13): a mapping may hold each key once; "
        "kubectl refuses the file",
    ]
    assert [body["kind"] for body in bodies] == ["ConfigMap"]  # type: ignore[index]


def test_flow_style_and_equal_values_of_different_spelling() -> None:
    _, problems = load("apiVersion: v1\nkind: X\nm: {a: 1, b: 2, a: 3}\nn: {1: a, 0x1: b}\n")
    assert [problem.split(" (")[0] for problem in problems] == [
        "f.yaml:3: duplicate key 'a'",
        "f.yaml:4: duplicate key 1",
    ]


def test_top_level_duplicates() -> None:
    _, problems = load("apiVersion: v1\nkind: X\nkind: Y\n")
    assert problems == [
        "f.yaml:3: duplicate key 'kind' (first at line 2): a mapping may hold each key once; "
        "kubectl refuses the file"
    ]


def test_merge_keys_may_be_overridden_but_not_written_twice() -> None:
    text = "apiVersion: v1\nkind: X\nbase: &b {a: 1, b: 2}\nm:\n  <<: *b\n  a: 3\n"
    bodies, problems = load(text)
    assert problems == []
    assert bodies[0]["m"] == {"a": 3, "b": 2}  # type: ignore[index]
    _, problems = load(text + "  c: 1\n  c: 2\n")
    assert [problem.split(" (")[0] for problem in problems] == ["f.yaml:8: duplicate key 'c'"]


def test_a_long_duplicate_key_is_quoted_short() -> None:
    key = "k" * 10_000
    _, problems = load(f"apiVersion: v1\nkind: X\n{key}: 1\n{key}: 2\n")
    assert len(problems) == 1 and len(problems[0]) < 250
