"""A document nested deeper than ``loading.MAX_DEPTH`` is refused when it is read (issue 21, a follow-up of
item 4): a Widget whose ``spec`` nested ``a:`` 985 levels deep in block style passed the text bounds (512
flow levels, 1,024 columns of line prefix; libyaml itself stops at 1,000) and then crashed ``render`` with
RecursionError (exit 3) in the emitter, in ``repr`` of an override's ``staticValue`` and in pickle, each of
which goes down one level of Python's stack per level of the data.

Behaviours covered:
- a document exactly ``MAX_DEPTH`` levels deep loads; one level more is a problem at the line of the first
  mapping or list past the bound, naming the bound, for every reader of YAML (``load_documents`` and
  ``load_one``), in block style, flow style, and mixed;
- a document whose aliases make it deeper than the bound (each part within it) is refused;
- the other documents of the file are still read;
- property: for any nested data, dumped in any style, and any bound, the loader refuses it exactly when its
  depth passes the bound (the depth is counted, not estimated).
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.api import loading


def block_text(depth: int, *, head: str = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\n") -> str:
    """A document whose ``data`` nests ``a:`` so that the document is ``depth`` collections deep (the root
    mapping is 1), one more space of indentation a level, as the issue's Widget."""
    lines = [head.rstrip("\n"), "data:"]
    lines += [" " * level + "a:" for level in range(1, depth - 1)]
    lines.append(" " * (depth - 1) + "b: 1")
    return "\n".join(lines) + "\n"


FIRST_PAST = 4 + loading.MAX_DEPTH
"""The line of ``block_text``'s first mapping past the bound: line 4 is ``data:``, whose mapping (level 2)
starts on line 5, and each level starts one line further."""


def depth_of(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((depth_of(item) for item in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth_of(item) for item in value), default=0)
    return 0


def test_a_document_at_the_bound_loads_and_one_level_more_is_refused_at_its_line() -> None:
    documents, problems = loading.load_documents("deep.yaml", block_text(loading.MAX_DEPTH))
    assert problems == [] and len(documents) == 1
    assert depth_of(documents[0].body) == loading.MAX_DEPTH

    documents, problems = loading.load_documents("deep.yaml", block_text(loading.MAX_DEPTH + 1))
    assert documents == [] and len(problems) == 1
    problem = problems[0]
    assert (problem.location.file, problem.location.line) == ("deep.yaml", FIRST_PAST)
    assert f"more than {loading.MAX_DEPTH} levels deep" in problem.message and problem.is_error


def test_the_issue_s_985_levels_are_refused_not_read() -> None:
    text = block_text(985)
    assert loading.nesting_problem(text) is None  # within the text bounds, as in the issue
    documents, problems = loading.load_documents("deep.yaml", text)
    assert documents == [] and [problem.location.line for problem in problems] == [FIRST_PAST]


def test_flow_and_mixed_styles_are_bounded_alike() -> None:
    flow = "a: " + "[" * loading.MAX_DEPTH + "]" * loading.MAX_DEPTH + "\n"  # within the 512 flow levels
    documents, problems = loading.load_documents("flow.yaml", "apiVersion: v1\nkind: X\n" + flow)
    assert documents == [] and len(problems) == 1 and problems[0].location.line == 3
    mixed = block_text(200) + " " * 199 + "c: " + "{d: " * 60 + "1" + "}" * 60 + "\n"
    documents, problems = loading.load_documents("mixed.yaml", mixed)
    assert documents == [] and len(problems) == 1
    assert f"more than {loading.MAX_DEPTH} levels deep" in problems[0].message


def test_aliases_that_nest_a_document_past_the_bound_are_refused() -> None:
    half = loading.MAX_DEPTH // 2 + 10
    text = (
        "apiVersion: v1\nkind: X\n"
        + "base: &deep "
        + "[" * half
        + "]" * half
        + "\n"
        + "top: "
        + "[" * half
        + "*deep"
        + "]" * half
        + "\n"
    )
    documents, problems = loading.load_documents("alias.yaml", text)
    assert documents == [] and len(problems) == 1
    assert f"more than {loading.MAX_DEPTH} levels deep" in problems[0].message
    with pytest.raises(loading.YamlRefused, match=f"more than {loading.MAX_DEPTH} levels deep"):
        loading.load_one(text)


def test_the_other_documents_of_the_file_are_still_read() -> None:
    shallow = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\n"
    text = shallow + "---\n" + block_text(loading.MAX_DEPTH + 5) + "---\n" + shallow
    documents, problems = loading.load_documents("deep.yaml", text)
    assert len(documents) == 2 and len(problems) == 1


def test_every_reader_of_yaml_refuses_it() -> None:
    text = block_text(loading.MAX_DEPTH + 1)
    with pytest.raises(loading.YamlRefused, match=f"line {FIRST_PAST}: .*{loading.MAX_DEPTH}"):
        loading.load_one(text)
    assert loading.load_or_none(text) is None
    assert depth_of(loading.load_one(block_text(loading.MAX_DEPTH))) == loading.MAX_DEPTH


def _nested() -> st.SearchStrategy[Any]:
    scalars = st.one_of(st.none(), st.integers(-5, 5), st.text("ab:-[", max_size=3), st.booleans())
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(st.text("abc", min_size=1, max_size=2), inner, max_size=3),
        ),
        max_leaves=30,
    )


@settings(max_examples=300, deadline=None)
@given(_nested(), st.integers(1, 12), st.sampled_from([None, True, False]), st.integers(2, 5))
def test_the_depth_is_counted_exactly_in_any_style(
    data: Any, bound: int, flow_style: bool | None, indent: int
) -> None:
    text = yaml.dump(data, Dumper=yaml.CSafeDumper, default_flow_style=flow_style, indent=indent)
    if depth_of(data) <= bound:
        assert loading.load_one(text, max_depth=bound) == data
    else:
        with pytest.raises(loading.YamlRefused, match=f"more than {bound} levels deep"):
            loading.load_one(text, max_depth=bound)
