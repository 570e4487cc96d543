"""Prune planning: only inventory objects are deleted, in reverse apply order; a render deleting more than
--max-prune-percent of the inventory, or all of it, is refused with a message naming the trailer; the
``Nova-Allow-Mass-Prune: true`` trailer lifts the refusal; the inventory survives an encode/decode round
trip."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nova_agent import inventories, pruning, replacing
from nova_agent.inventories import Inventory, InventoryEntry
from nova_agent.resources import ObjectRef


def inventory_of(*refs: ObjectRef) -> Inventory:
    return Inventory("rev", {ref.key: InventoryEntry(ref, "d") for ref in refs})


def configmaps(count: int) -> list[ObjectRef]:
    return [ObjectRef("v1", "ConfigMap", "ns", f"cm-{i}") for i in range(count)]


@pytest.mark.parametrize(
    ("deletions", "size", "max_percent", "mass"),
    [
        (0, 10, 30, False),
        (3, 10, 30, False),
        (4, 10, 30, True),
        (10, 10, 100, True),  # all of it is always a mass prune
        (1, 1, 30, True),
        (0, 0, 30, False),
        (1, 3, 30, True),  # 33% > 30%
        (1, 4, 30, False),
    ],
)
def test_mass_prune_threshold(deletions: int, size: int, max_percent: int, mass: bool) -> None:
    assert pruning.is_mass_prune(deletions, size, max_percent) is mass


def test_refusal_says_how_many_and_names_the_trailer() -> None:
    refs = configmaps(10)
    plan = pruning.plan_prune(
        inventory_of(*refs),
        {r.key for r in refs[:5]},
        max_percent=30,
        allow_mass_prune=False,
        revision="a" * 40,
    )
    assert plan.refused and plan.deletions == ()
    assert plan.refusal is not None
    assert "5 of the 10" in plan.refusal and "Nova-Allow-Mass-Prune: true" in plan.refusal


def test_trailer_allows_deleting_everything_in_reverse_order() -> None:
    namespace = ObjectRef("v1", "Namespace", "", "ns")
    crd = ObjectRef("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets.example.com")
    deployment = ObjectRef("apps/v1", "Deployment", "ns", "web")
    plan = pruning.plan_prune(
        inventory_of(namespace, crd, deployment), set(), max_percent=30, allow_mass_prune=True, revision="r"
    )
    assert plan.deletions == (deployment, namespace, crd)


@pytest.mark.parametrize(
    ("trailers", "allowed"),
    [
        ({"Nova-Allow-Mass-Prune": ["true"]}, True),
        ({"nova-allow-mass-prune": ["TRUE"]}, True),
        ({"Nova-Allow-Mass-Prune": ["false"]}, False),
        ({"Nova-Source-Revision": ["abc"]}, False),
        ({}, False),
    ],
)
def test_trailer_parsing(trailers: dict[str, list[str]], allowed: bool) -> None:
    assert pruning.allows_mass_prune(trailers) is allowed


names = st.sets(st.sampled_from([f"o{i}" for i in range(12)]), max_size=12)


@settings(max_examples=150)
@given(names, names, st.integers(0, 100), st.booleans())
def test_never_deletes_outside_the_inventory_or_what_is_desired(
    owned: set[str], wanted: set[str], max_percent: int, allowed: bool
) -> None:
    inventory = inventory_of(*(ObjectRef("v1", "ConfigMap", "ns", n) for n in owned))
    desired = {("", "ConfigMap", "ns", n) for n in wanted}
    plan = pruning.plan_prune(
        inventory, desired, max_percent=max_percent, allow_mass_prune=allowed, revision="r"
    )
    deleted = {ref.name for ref in plan.deletions}
    assert deleted <= owned - wanted
    if not plan.refused:
        assert deleted == owned - wanted
    else:
        assert not allowed and deleted == set()


@settings(max_examples=100)
@given(
    st.lists(
        st.tuples(st.sampled_from(["v1", "apps/v1"]), st.text("abc-", min_size=1, max_size=8)), max_size=20
    )
)
def test_inventory_round_trips_through_configmap_data(items: list[tuple[str, str]]) -> None:
    inventory = Inventory(
        "rev",
        {
            ObjectRef(v, "Kind", "ns", n).key: InventoryEntry(ObjectRef(v, "Kind", "ns", n), "dg")
            for v, n in items
        },
    )
    decoded, problems = inventories.decode_inventory(inventories.encode_inventory(inventory))
    assert problems == [] and decoded == inventory


def test_damaged_inventory_lines_are_reported_and_skipped() -> None:
    data = {
        "revision": "r",
        "objects": '{"apiVersion":"v1","kind":"ConfigMap","namespace":"a","name":"b"}\nnot json\n',
    }
    decoded, problems = inventories.decode_inventory(data)
    assert len(decoded) == 1 and len(problems) == 1 and "line 2" in problems[0]


@pytest.mark.parametrize(
    ("size", "deletions", "percent", "budget"),
    [
        (3, 0, 30, 1),  # one object is never a mass: a re-split Job reaches a small cluster
        (100, 0, 30, 30),
        (100, 25, 30, 5),  # deletions and replacements share the budget
        (100, 40, 30, 0),
        (100, 0, 0, 0),  # 0 allows no deletion, so no replacement either
    ],
)
def test_replacements_share_the_mass_prune_budget(
    size: int, deletions: int, percent: int, budget: int
) -> None:
    assert pruning.replacement_budget(size, deletions, percent) == budget


@pytest.mark.parametrize(
    ("status", "message", "immutable"),
    [
        (422, 'Job.batch "j" is invalid: spec.template: Invalid value: ...: field is immutable', True),
        (
            422,
            'Service "s" is invalid: spec.clusterIPs[0]: Invalid value: ...: may not change once set',
            True,
        ),
        (422, "data: Forbidden: field is immutable when `immutable` is set", True),
        (422, "spec: Forbidden: updates to statefulset spec for fields other than 'replicas' ...", True),
        (422, 'Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1', False),
        (409, "field is immutable", False),
    ],
)
def test_immutable_refusals_are_told_from_other_invalid_changes(
    status: int, message: str, immutable: bool
) -> None:
    assert replacing.is_immutable_refusal(status, message) is immutable


@pytest.mark.parametrize(
    ("api_version", "kind"), [("v1", "Namespace"), ("apiextensions.k8s.io/v1", "CustomResourceDefinition")]
)
def test_a_namespace_or_crd_is_never_replaced_whatever_its_annotation(api_version: str, kind: str) -> None:
    """Replacing deletes, and deleting these takes along objects nova-agent did not create."""
    body = {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": "x", "annotations": {replacing.REPLACE_ANNOTATION: "true"}},
    }
    assert replacing.replaceable_by_default(body) is False
