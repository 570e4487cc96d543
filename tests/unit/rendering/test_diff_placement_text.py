"""``rendering.oldlayout``: the single-file placement.yaml cut into sections and list items as text, without
parsing it (how a file over the loader's limit is read, entry by entry).

Behaviours covered:
- sections and list items found over the whole text are exactly those found line by line (str.splitlines),
  for any text: with only newlines (the one-pass path) and with other line breaks (the line path) (property);
- two texts' sections compare equal exactly when their lines do (property), so "something outside the
  decisions changed" does not depend on how a section is cut;
- table: an empty list, a scalar, a comment before the first item, a bare ``-`` item, an indented list,
  a ``-x:`` line that is no item, a key given twice, lines before the first key;
- two single-file placement.yaml texts in which one group's replicas changed give that one replica change
  (``decisions``, as ``diff`` across renders made before the per-group layout).
"""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.rendering import decisions, diffs, oldlayout

KEYS = ["groups:", "groups:", "unscheduled:", "groups: []", "groups: x", "a: b", ":", "key", "\tk: v"]
BODY = ["- name: a", "- b", "-", "- - nested", "-x: 1", "  - c", "  name: x", "#k: v", "", "\tk: v", "  "]


def document(stray: list[str], sections: list[tuple[str, list[str]]], separator: str, last: str) -> str:
    lines = [*stray, *(line for key, body in sections for line in (key, *body))]
    return "".join(line + separator for line in lines) + last


def texts(breaks: list[str]) -> st.SearchStrategy[str]:
    """Documents of top-level keys, each followed by lines that are mostly list items or their fields,
    perhaps after stray lines, perhaps ending without a line break."""
    section = st.tuples(st.sampled_from(KEYS), st.lists(st.sampled_from(BODY), max_size=6))
    return st.builds(
        document,
        st.lists(st.sampled_from(BODY), max_size=2),
        st.lists(section, max_size=5),
        st.sampled_from(breaks),
        st.sampled_from(["", "-", "- tail", "groups:"]),
    )


NEWLINES_ONLY = texts(["\n"])
ANY_BREAKS = texts(["\r\n", "\r", "\x85", "\u2028", "\x0c"])


def by_lines(text: str) -> dict[str, str]:
    return {key: "".join(lines) for key, lines in oldlayout.top_section_lines(text).items()}


@settings(max_examples=200)
@given(st.one_of(NEWLINES_ONLY, ANY_BREAKS))
def test_sections_and_items_are_those_found_line_by_line(text: str) -> None:
    sections = oldlayout.top_sections(text)
    assert sections == by_lines(text)
    for section in [*sections.values(), ""]:
        assert oldlayout.list_items(section) == oldlayout.list_item_lines(section.splitlines(keepends=True))


@settings(max_examples=200)
@given(NEWLINES_ONLY, NEWLINES_ONLY)
def test_sections_compare_equal_exactly_when_their_lines_do(old: str, new: str) -> None:
    old_lines, new_lines = oldlayout.top_section_lines(old), oldlayout.top_section_lines(new)
    old_sections, new_sections = oldlayout.top_sections(old), oldlayout.top_sections(new)
    for key in old_lines.keys() | new_lines.keys():
        assert (old_sections.get(key) == new_sections.get(key)) == (old_lines.get(key) == new_lines.get(key))


@pytest.mark.parametrize(
    ("section", "items"),
    [
        ("groups: []\n", []),
        ("groups:\n", []),
        ("groups: x\n- a\n", None),
        ("groups:\n# first\n- a\n", None),
        ("groups:\n- a\n  b: 1\n- c", ["- a\n  b: 1\n", "- c"]),
        ("groups:\n-\n  name: a\n- b\n", ["-\n  name: a\n", "- b\n"]),
        ("groups:\n  - a\n  - b\n", ["- a\n", "- b\n"]),
        ("groups:\n- a\n-x: 1\n", ["- a\n-x: 1\n"]),
        ("groups:\r\n- a\r\n- b\r\n", ["- a\r\n", "- b\r\n"]),
    ],
)
def test_list_items(section: str, items: list[str] | None) -> None:
    assert oldlayout.list_items(section) == items


@pytest.mark.parametrize(
    ("text", "sections"),
    [
        ("a: 1\nb:\n- x\n", {"a": "a: 1\n", "b": "b:\n- x\n"}),
        ("# head\n- stray\na: 1\n", {"a": "a: 1\n"}),
        ("a: 1\nb: 2\na: 3\n", {"a": "a: 1\na: 3\n", "b": "b: 2\n"}),
        ("a:\n  # note\n\tx\n-y\nkey without colon\n", {"a": "a:\n  # note\n\tx\n-y\nkey without colon\n"}),
        (": odd\n", {"": ": odd\n"}),
    ],
)
def test_top_sections(text: str, sections: dict[str, str]) -> None:
    assert oldlayout.top_sections(text) == sections


def rendered(replicas: int) -> bytes:
    """A placement.yaml as rendered: 50 groups of one Deployment on c1 and c2; g17 has ``replicas`` on c2."""
    groups = [
        {
            "name": f"g{index}",
            "clusters": ["c1", "c2"],
            "objects": [
                {
                    "kind": "Deployment",
                    "namespace": "shop",
                    "name": f"w{index}",
                    "replicas": {"c1": 1, "c2": replicas if index == 17 else 1},
                }
            ],
        }
        for index in range(50)
    ]
    document = {"kind": "Placement", "source": {"revision": str(replicas)}, "groups": groups, "warnings": []}
    return yaml.safe_dump(document, sort_keys=False).encode()


def test_one_group_changed_in_a_rendered_placement() -> None:
    """Two single-file placement.yaml texts (a diff across renders made before the per-group layout)."""
    found = decisions.compare((rendered(1), rendered(4)), [])
    assert found.groups == ()
    assert found.replicas == (diffs.ReplicaChange("g17", "Deployment shop/w17", "c2", 1, 4),)
    assert not found.other_sections_changed
