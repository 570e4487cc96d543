"""Two placement.yaml indexes that differ only in their source revision and the clusters' capacity decide the
same: publish makes no commit, and the commit message reads no decision from the index. The texts are cut
rather than parsed when both are in our emitter's block style (at 500 clusters the index is ~10k YAML nodes,
parsed twice on every publish otherwise); anything else is parsed, and the verdict is the parser's."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.rendering import decisions, emitting

NAMES = st.text(alphabet="abcdefgh-:# '\"\n", min_size=1, max_size=12)
QUANTITIES = st.dictionaries(st.sampled_from(["cpu", "memory", "nvidia.com/gpu"]), NAMES, max_size=3)
CLUSTERS = st.lists(st.fixed_dictionaries({"name": NAMES, "allocatable": QUANTITIES}), max_size=3)
SECTIONS = st.fixed_dictionaries(
    {
        "source": st.dictionaries(st.sampled_from(["repo", "revision"]), NAMES, max_size=2),
        "totals": st.dictionaries(st.sampled_from(["groups", "scheduled"]), st.integers(0, 3)),
        "warnings": st.lists(NAMES, max_size=2),
        "clusters": CLUSTERS,
    }
)


def index(**sections: Any) -> dict[str, Any]:
    document: dict[str, Any] = {
        "apiVersion": "gitops.nova.elotl.co/v1alpha1",
        "kind": "Placement",
        "format": 2,
        "source": {"repo": "shop", "revision": "a" * 40},
        "totals": {"groups": 2, "scheduled": 2},
        "policies": [{"name": "web", "folder": "placement/web", "groups": 2}],
        "unscheduled": [],
        "warnings": [],
        "clusters": [{"name": "c1", "allocatable": {"cpu": "4"}, "available": {"cpu": "3"}}],
    }
    document.update(sections)
    return document


def text(document: dict[str, Any]) -> bytes:
    return emitting.dump(document).encode()


def test_only_the_source_and_capacity_differ_decides_nothing() -> None:
    old = text(index())
    new = text(index(source={"repo": "shop", "revision": "b" * 40}, clusters=[{"name": "c1", "placed": {}}]))
    assert decisions.same_decisive_text(old, new)
    assert decisions.same_apart_from_source(old, new)
    assert decisions.compare((old, new), []) == decisions.Decisions()


def test_a_new_unscheduled_object_is_a_decision() -> None:
    old = text(index())
    gone = {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "shop", "name": "x", "reason": "no room"}
    new = text(index(unscheduled=[gone]))
    assert not decisions.same_decisive_text(old, new)
    assert not decisions.same_apart_from_source(old, new)
    assert decisions.compare((old, new), []).newly_unscheduled == ("ConfigMap shop/x: no room",)


def test_texts_not_in_block_style_are_parsed() -> None:
    block = text(index())
    flow = yaml.safe_dump(index(), default_flow_style=True).encode()
    assert not decisions.same_decisive_text(flow, flow)
    assert decisions.same_apart_from_source(flow, block)  # the parser's verdict: equal data
    marked = b"---\n" + block
    assert not decisions.same_decisive_text(marked, marked)


@settings(max_examples=200, deadline=None)
@given(
    SECTIONS,
    SECTIONS,
)
def test_cutting_the_text_agrees_with_parsing_it(old: dict[str, Any], new: dict[str, Any]) -> None:
    old_text, new_text = text(index(**old)), text(index(**new))
    parsed = [yaml.safe_load(side) for side in (old_text, new_text)]
    for document in parsed:
        for section in decisions.VOLATILE_SECTIONS:
            document.pop(section)
    if decisions.same_decisive_text(old_text, new_text):
        assert parsed[0] == parsed[1]
    assert decisions.same_apart_from_source(old_text, new_text) == (parsed[0] == parsed[1])
