"""Properties of the fake API server's pure parts (no HTTP), checked with Hypothesis.

Behaviours covered:
- managedFields encoding round-trips: the leaf paths of any object survive fieldsV1 encoding and decoding;
- server-side apply is idempotent: the same manager applying the same body twice changes nothing;
- a manager that applies a subset of its earlier data keys leaves exactly that subset (nobody else owns them);
- two managers applying the same values never conflict;
- label selector forms agree: `k in (v)` = `k=v`, `k notin (v)` = `k!=v`, `!k` = not `k`;
- merge patch with an object onto itself is the identity.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fakekube import applying, fields, patching, selecting
from tests.fakekube.resources import BUILTIN_TYPES

CONFIGMAPS = next(t for t in BUILTIN_TYPES if t.plural == "configmaps")
KEYS = st.sampled_from(["a", "b", "c", "name", "image", "x.y"])
SCALARS = st.one_of(st.integers(-5, 5), st.booleans(), st.text("abc", max_size=3))
NAMES = st.sampled_from(["web", "side", "init"])

values = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.dictionaries(KEYS, children, max_size=3),
        st.lists(children, max_size=3),
        st.lists(
            st.fixed_dictionaries({"name": NAMES}, optional={"image": SCALARS, "a": children}),
            max_size=3,
            unique_by=lambda item: item["name"],
        ),
    ),
    max_leaves=12,
)
objects = st.dictionaries(st.sampled_from(["spec", "data", "extra"]), values, max_size=3)
data_maps = st.dictionaries(st.sampled_from(list("abcdef")), st.text("xyz", max_size=2), max_size=6)


def _configmap(data: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "namespace": "ns"},
        "data": data,
    }


def _empty() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "ns"}}


@settings(max_examples=150)
@given(objects)
def test_field_sets_round_trip_through_fields_v1(obj: dict[str, Any]) -> None:
    paths = set(fields.leaf_paths(obj, "all"))
    assert fields.from_fields_v1(fields.to_fields_v1(paths)) == paths


@settings(max_examples=100)
@given(objects)
def test_apply_is_idempotent(body: dict[str, Any]) -> None:
    applied = {**_empty(), **body}
    once = applying.apply(_empty(), applied, CONFIGMAPS, "m", False, "", "t")
    twice = applying.apply(once, applied, CONFIGMAPS, "m", False, "", "t")
    assert twice == once


@settings(max_examples=100)
@given(data_maps, st.data())
def test_reapplying_a_subset_leaves_exactly_the_subset(data: dict[str, str], draw: st.DataObject) -> None:
    subset_keys = draw.draw(st.sets(st.sampled_from(sorted(data)))) if data else set()
    first = applying.apply(_empty(), _configmap(data), CONFIGMAPS, "m", False, "", "t")
    second = applying.apply(
        first, _configmap({k: data[k] for k in subset_keys}), CONFIGMAPS, "m", False, "", "t"
    )
    assert second.get("data", {}) == {k: data[k] for k in subset_keys}


@settings(max_examples=100)
@given(data_maps)
def test_same_values_from_two_managers_never_conflict(data: dict[str, str]) -> None:
    first = applying.apply(_empty(), _configmap(data), CONFIGMAPS, "one", False, "", "t")
    second = applying.apply(first, _configmap(data), CONFIGMAPS, "two", False, "", "t")
    assert second["data"] == first["data"]


@settings(max_examples=150)
@given(st.dictionaries(st.sampled_from(["k", "other"]), st.sampled_from(["v", "w", ""]), max_size=2))
def test_label_selector_forms_agree(labels: dict[str, str]) -> None:
    def matches(selector: str) -> bool:
        return selecting.label_selector(selector)(labels)

    assert matches("k in (v)") == matches("k=v") == matches("k==v")
    assert matches("k notin (v)") == matches("k!=v")
    assert matches("!k") == (not matches("k"))


@settings(max_examples=100)
@given(objects)
def test_merge_patch_with_itself_is_identity(obj: dict[str, Any]) -> None:
    assert patching.merge_patch(obj, obj) == obj
