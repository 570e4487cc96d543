"""Nesting deep enough to overflow libyaml's recursive composer (a segmentation fault no handler catches) is
refused before any YAML reader of ours parses it: sources and rendered directories (``load_documents``), and
the YAML others write that we read back (``load_one``: status reports, a previous render's placement, render
diffs); real manifests nested as deep as generated CRD schemas still load. Each hostile text here crashed the
process before the guard, so a regression fails the run loudly rather than one test."""

from __future__ import annotations

import pytest

from nova_agent import reportfiles
from nova_gitops.api import loading
from nova_gitops.rendering import schedulegroups

HOSTILE = {
    "flow sequences": "a: " + "[" * 40_000 + "]" * 40_000 + "\n",
    "unclosed flow": "a: " + "[" * 40_000 + "\n",
    "flow mappings": "a: " + "{b: " * 30_000 + "1" + "}" * 30_000 + "\n",
    "block sequences": "- " * 60_000 + "x\n",
    "block mappings": "".join(" " * depth + f"k{depth}:\n" for depth in range(1_500)) + " " * 1_500 + "v\n",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_deep_nesting_is_a_problem_at_its_line_not_a_crash(name: str) -> None:
    documents, problems = loading.load_documents("deep.yaml", HOSTILE[name])
    assert documents == [] and len(problems) == 1
    assert problems[0].location.file == "deep.yaml" and "deep; refused" in problems[0].message


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_every_reader_of_others_yaml_refuses_it(name: str) -> None:
    text = HOSTILE[name]
    with pytest.raises(loading.YamlRefused, match="deep; refused"):
        loading.load_one(text)
    assert reportfiles.load_status(text.encode()) is None
    assert loading.load_or_none(text.encode()) is None  # what diff reads renders with
    for path in ("placement.yaml", "placement/p/g.yaml"):  # either layout's previous render
        with pytest.raises(ValueError, match="not valid YAML"):
            schedulegroups.previous_from_files({path: text.encode()})


def schema(depth: int, indent: int) -> str:
    """A CRD-like schema nested ``depth`` properties deep."""
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: deep", "data:"]
    for level in range(depth):
        pad = " " * indent * (level + 1)
        lines += [f"{pad}p{level}:", f"{pad}{' ' * indent}- [a, {{b: [c]}}]" if level == depth - 1 else ""]
    return "\n".join(line for line in lines if line) + "\n"


def test_real_depths_still_load() -> None:
    assert loading.nesting_problem(schema(60, 4)) is None  # 240 columns, as 4-space generated schemas
    documents, problems = loading.load_documents("crd.yaml", schema(60, 4))
    assert problems == [] and len(documents) == 1


def test_load_one_refuses_what_sources_refuse() -> None:
    for text in ("a: 1\na: 2\n", "a: " + "9" * 5_000 + "\n", "a: !!python/name:os.system x\n", "a: .nan\n"):
        with pytest.raises(loading.YamlRefused):
            loading.load_one(text)
    assert loading.load_one("a: [1, {b: c}]\n") == {"a": [1, {"b": "c"}]}
    assert loading.load_one(b"") is None


def test_nesting_limits_are_the_callers() -> None:
    text = "a: " + "[" * 70 + "]" * 70 + "\n"
    assert loading.nesting_problem(text) is None
    found = loading.nesting_problem(text, max_flow_depth=64)
    assert found is not None and found[0] == 1
