"""Edits of a user's YAML text (``nova_gitops.edits``): only the edited node's lines change.

- property (hypothesis): over files written in many styles (2- or 4-space mappings, indented or flush
  sequences, comments on their own lines and after values, comment lines after the metadata block at
  several columns, every quoting style, ``...`` document ends, other documents before and after or other
  items of a ``kind: List``, LF, CRLF or CR, with or without a final newline), setting or removing an
  annotation or a label changes only lines inside the document's ``metadata`` block, and setting a split
  changes only lines inside its ``percentageSplit`` block; no comment line is added, removed or moved; new
  lines end as the file's; and the result reads as the intended data;
- a value YAML 1.1 would not read as text (``"true"``, ``"0123"``) is written double-quoted; a replaced
  quoted value keeps its quotes;
- a split keeps the shape the policy has (v0.9 list, v1.5 map), and creates a list with a topologyKey and a
  map without;
- items of a ``kind: List`` and flow-style mappings are edited in place;
- a document the text does not hold is an ``EditError``."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.edits import changes
from nova_gitops.edits.splicing import EditError, guessed_indentation

PIN = "nova.elotl.co/cluster"


def _load(text: str) -> list[Any]:
    return list(yaml.load_all(text, Loader=yaml.CSafeLoader))


@dataclass(frozen=True)
class Written:
    """A generated file, the line its target document starts on, and the 0-based line range (end
    exclusive) of the block an edit may touch."""

    text: str
    line: int
    region: tuple[int, int]


quotes = st.sampled_from(["{}", "'{}'", '"{}"'])
comments = st.booleans()


@st.composite
def deployments(draw: st.DrawFn) -> Written:
    """A Deployment among other documents (or other items of a ``kind: List``), written in a drawn style."""
    m = draw(st.sampled_from([2, 4]))
    offset = draw(st.sampled_from([0, 2]))
    pad = " " * m
    web: list[str] = []
    if draw(comments):
        web.append("# the web tier")
    start = len(web)
    web += ["apiVersion: apps/v1", "kind: Deployment", "metadata:"]
    region_start = len(web) - 1
    web.append(f"{pad}name: web" + ("   # its name" if draw(comments) else ""))
    if draw(st.booleans()):
        web.append(f"{pad}namespace: " + draw(quotes).format("shop"))
    if draw(st.booleans()):
        web += [f"{pad}labels:", f"{pad * 2}app: web"]
        if draw(comments):
            web.append(f"{pad * 2}# more labels here")
        web.append(f"{pad * 2}tier: " + draw(quotes).format("front"))
    annotations = draw(st.sampled_from(["none", "other", "pinned"]))
    if annotations != "none":
        web += [f"{pad}annotations:", f"{pad * 2}team: " + draw(quotes).format("shop")]
        if annotations == "pinned":
            web.append(f"{pad * 2}{PIN}: " + draw(quotes).format("old"))
    region_end = len(web)
    # comment lines after the metadata block: of the last entry (deeper), of metadata, or of what follows
    web += draw(
        st.sampled_from(
            [[], ["# the spec follows"], [f"{pad}# end of metadata"], ["", "# after a blank line"], [""]]
        )
    )
    dash = " " * (offset + 3 * m)
    web += ["spec:", f"{pad}replicas: 3", f"{pad}template:", f"{pad * 2}spec:", f"{pad * 3}containers:"]
    web += [f"{dash}- name: main", f"{dash}  image: " + draw(quotes).format("nginx:1.27")]
    config = ["# config {}", "apiVersion: v1", "kind: ConfigMap", "metadata:", f"{pad}name: c{{}}", "data:"]
    config.append(f"{pad}k: v")
    others = [[line.format(index) for line in config] for index in range(draw(st.integers(0, 2)))]
    service = ["apiVersion: v1", "kind: Service", "metadata:", f"{pad}name: web  # after"]
    after = [service] if draw(st.booleans()) else []
    lines: list[str] = []
    if draw(st.booleans()):  # a kind: List, its items at the drawn sequence offset
        lines += ["apiVersion: v1", "kind: List", "items:"]
        for document in [*others, web, *after]:
            if document is web:
                start, region_start, region_end = (len(lines) + n for n in (start, region_start, region_end))
            lines += [
                " " * offset + ("- " if index == 0 else "  ") + line if line else ""
                for index, line in enumerate(document)
            ]
        if draw(st.booleans()):
            lines += ["metadata:", f'{pad}resourceVersion: ""']
    else:
        for document in others:
            lines += [*document, *(["..."] if draw(st.booleans()) else []), "---"]
        start, region_start, region_end = (len(lines) + n for n in (start, region_start, region_end))
        lines += web
        for document in after:
            lines += ["---", *document]
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    text = newline.join(lines) + (newline if draw(st.booleans()) else "")
    return Written(text, start + 1, (region_start, region_end))


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _changed_lines_within(original: str, result: str, region: tuple[int, int]) -> None:
    """Only lines of ``region`` change, comment lines never (none is added, removed or moved), and lines
    end as the file's do."""
    old, new = _lines(original), _lines(result)
    for tag, start, end, new_start, new_end in difflib.SequenceMatcher(
        None, old, new, autojunk=False
    ).get_opcodes():
        if tag == "equal":
            continue
        assert region[0] <= start and end <= region[1], (tag, start, end, region)
        changed = old[start:end] + new[new_start:new_end]
        assert not [line for line in changed if line.lstrip().startswith("#")], (tag, changed)
    assert set(_breaks(result)) == set(_breaks(original))


def _breaks(text: str) -> list[str]:
    found: list[str] = []
    index = 0
    while index < len(text):
        if text.startswith("\r\n", index):
            found.append("\r\n")
            index += 2
            continue
        if text[index] in "\r\n":
            found.append(text[index])
        index += 1
    return found


@settings(max_examples=80, deadline=None)
@given(deployments(), st.sampled_from(["pin", "unpin", "label"]), st.sampled_from(["wlc-1", "true", "0123"]))
def test_only_the_metadata_lines_of_the_edited_document_change(
    written: Written, operation: str, value: str
) -> None:
    target = changes.DocumentRef("Deployment", "web", written.line)
    if operation == "label":
        result = changes.set_metadata_entry(written.text, target, "labels", "nova.elotl.co/cordoned", value)
    else:
        result = changes.set_metadata_entry(
            written.text, target, "annotations", PIN, value if operation == "pin" else None
        )
    _changed_lines_within(written.text, result, written.region)
    expected = _load(written.text)
    objects = [item for doc in expected if doc for item in (doc["items"] if doc["kind"] == "List" else [doc])]
    web = next(item for item in objects if item.get("kind") == "Deployment")
    section = "labels" if operation == "label" else "annotations"
    entries = web["metadata"].setdefault(section, {})
    if operation == "unpin":
        entries.pop(PIN, None)
        if not entries:
            del web["metadata"][section]
    else:
        entries["nova.elotl.co/cordoned" if operation == "label" else PIN] = value
    assert _load(result) == expected


@st.composite
def policies(draw: st.DrawFn) -> Written:
    m = draw(st.sampled_from([2, 4]))
    offset = draw(st.sampled_from([0, 2]))
    pad, dash = " " * m, " " * (2 * m + offset)
    shape = draw(st.sampled_from(["list", "map"]))
    lines = ["# spread the web tier", "apiVersion: policy.elotl.co/v1alpha1", "kind: SchedulePolicy"]
    lines += ["metadata:", f"{pad}name: web-spread", "spec:", f"{pad}spreadConstraints:"]
    lines.append(f"{pad * 2}spreadMode: Divide")
    if shape == "list":
        lines.append(f"{pad * 2}topologyKey: region  # the domains")
    start = len(lines)
    lines.append(f"{pad * 2}percentageSplit:")
    for domain, percent in (("east", 60), ("west", 40)):
        if draw(comments):
            lines.append(f"{dash}# {domain}")
        if shape == "list":
            lines += [
                f"{dash}- topologyValue: " + draw(quotes).format(domain),
                f"{dash}  percentage: {percent}",
            ]
        else:
            lines.append(f"{pad * 3}{domain}: {percent}")
    end = len(lines)
    lines += [
        f"{pad}resourceSelectors:",
        f"{pad * 2}labelSelectors:",
        f"{pad * 2}- matchLabels: {{app: web}}",
    ]
    lines += ["---", "apiVersion: v1", "kind: Namespace", "metadata: {name: web}"]
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    return Written(newline.join(lines) + newline, 2, (start, end))


@settings(max_examples=60, deadline=None)
@given(
    policies(),
    st.sampled_from(
        [[("east", 70), ("west", 30)], [("east", 50), ("west", 25), ("north", 25)], [("west", 100)]]
    ),
)
def test_only_the_split_lines_change_and_the_shape_stays(
    written: Written, split: list[tuple[str, int]]
) -> None:
    target = changes.DocumentRef("SchedulePolicy", "web-spread", written.line)
    result = changes.set_percentage_split(written.text, target, split)
    _changed_lines_within(written.text, result, written.region)
    got = _load(result)[0]["spec"]["spreadConstraints"]["percentageSplit"]
    if isinstance(got, list):
        assert [(entry["topologyValue"], entry["percentage"]) for entry in got] == split
    else:
        assert list(got.items()) == split


def test_values_yaml_would_not_read_as_text_are_double_quoted_and_quotes_are_kept() -> None:
    text = "kind: Cluster\nmetadata:\n  name: c1\n  labels:\n    env: 'prod'\n"
    target = changes.DocumentRef("Cluster", "c1", 1)
    assert 'nova.elotl.co/cordoned: "true"' in changes.set_metadata_entry(
        text, target, "labels", "nova.elotl.co/cordoned", "true"
    )
    assert "env: 'dev'" in changes.set_metadata_entry(text, target, "labels", "env", "dev")
    assert "a: b\n" in changes.set_metadata_entry(text, target, "labels", "a", "b")


def test_a_split_without_one_is_a_list_with_a_topology_key_and_a_map_without() -> None:
    base = "kind: SchedulePolicy\nmetadata:\n  name: p\nspec:\n  spreadConstraints:\n    spreadMode: Divide\n"
    target = changes.DocumentRef("SchedulePolicy", "p", 1)
    as_map = changes.set_percentage_split(base, target, [("c1", 50), ("c2", 50)])
    assert _load(as_map)[0]["spec"]["spreadConstraints"]["percentageSplit"] == {"c1": 50, "c2": 50}
    with_key = base + "    topologyKey: region\n"
    as_list = _load(changes.set_percentage_split(with_key, target, [("a", 100)]))[0]
    assert as_list["spec"]["spreadConstraints"]["percentageSplit"] == [
        {"topologyValue": "a", "percentage": 100}
    ]


def test_list_items_and_flow_mappings_are_edited_in_place() -> None:
    text = (
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n"
        "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: b\n"
    )
    result = changes.set_metadata_entry(
        text, changes.DocumentRef("ConfigMap", "a", 4), "annotations", PIN, "c"
    )
    assert result.splitlines()[5] == "  metadata: {name: a, annotations: {nova.elotl.co/cluster: c}}"
    assert result.splitlines()[:5] == text.splitlines()[:5]
    assert result.splitlines()[6:] == text.splitlines()[6:]


def test_a_document_the_text_does_not_hold_is_an_edit_error() -> None:
    with pytest.raises(EditError, match="no Deployment web"):
        changes.set_metadata_entry(
            "kind: Service\nmetadata: {name: web}\n",
            changes.DocumentRef("Deployment", "web", 1),
            "labels",
            "a",
            "b",
        )


def test_indentation_is_guessed_from_the_text() -> None:
    assert guessed_indentation("a:\n    b:\n        - c\n").mapping == 4
    assert guessed_indentation("a:\n  b:\n    - c\n").offset == 2
    assert guessed_indentation("a:\n  b:\n  - c\n").offset == 0
