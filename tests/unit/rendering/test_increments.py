"""Rendering only what changed (``rendering.increments``) gives the bytes a full render gives.

Behaviours covered:
- property: for any two plans, the render of the second as a delta of the first names exactly the files
  (and blob ids) of a full render of the second, holds the bytes of every file that differs from the first,
  and leaves the same index a render from nothing would;
- property: the decisions a change makes, read from the files that changed (a few group files and the
  index), are those read from every placement file of both renders;
- property: the same after edits of replicas and overrides only, without rendering any cluster whole;
- a change to one object's source re-emits only that group's files, its group's file and its policy's
  page, and the root's three small files; nothing else is written;
- an object whose source file has no digest is re-emitted every time; an index made with another salt, or
  another index format, is not used;
- an override that fails in a changed group is the same InputError a full render raises;
- the index survives its wire form; an index whose group files are damaged, or whose wire form has the
  wrong shape, is not used (a full render, same bytes);
- property: the changes a delta reports (written, deleted, the old and new blob ids it looked at) turn the
  previous tree into the new one, and hold every old file of each cluster that loses one (what the
  mass-delete guard counts);
- property: the policy pages built from the previous render's rows equal a full render's.
"""

from __future__ import annotations

import marshal
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops import errors
from nova_gitops.publishing import guard
from nova_gitops.rendering import diffs, increments, layout, renders, reports
from nova_gitops.rendering.increments import GroupFiles, RenderIndex
from nova_gitops.scheduling.planparts import ClusterCopy, ObjectPlan
from nova_gitops.scheduling.plans import Plan
from tests.unit.rendering.test_renders import (
    SOURCE,
    deployment,
    make_group,
    manifest,
    override,
    plans,
    two_groups_for_one_placement_file,
    usages,
)

DIGESTS = {"src/objects.yaml": "d1"}  # the generator's bodies follow from identity and line
SALT = "code-1"


def blobs_of(plan: Plan) -> dict[str, str]:
    return {path: increments.blob_id(data) for path, data in renders.render(plan, SOURCE).files.items()}


def delta(
    plan: Plan, previous: RenderIndex | None, digests: dict[str, str] = DIGESTS
) -> increments.RenderDelta:
    return increments.render_delta(plan, SOURCE, previous, digests=digests, salt=SALT)


@settings(max_examples=80, deadline=None)
@given(before=plans(), after=plans())
def test_a_delta_render_equals_a_full_render(before: Plan, after: Plan) -> None:
    first = delta(before, None)
    assert dict(first.blobs) == blobs_of(before)
    second = delta(after, first.index)
    full = renders.render(after, SOURCE).files
    assert dict(second.blobs) == {path: increments.blob_id(data) for path, data in full.items()}
    for path, blob in second.blobs.items():
        if first.blobs.get(path) != blob:
            assert second.files[path] == full[path]
    assert second.index == delta(after, None).index
    if before.settings != after.settings:  # other settings: the index is not used
        assert second.changes is None


@settings(max_examples=80, deadline=None)
@given(before=plans(), after=plans())
def test_the_changes_of_a_delta_turn_the_previous_tree_into_the_new_one(before: Plan, after: Plan) -> None:
    after = replace(after, settings=before.settings)  # the index is used
    first = delta(before, None)
    second = delta(after, first.index)
    assert_changes_turn(first.blobs, second)
    full = renders.render(after, SOURCE).files
    assert second.files["PLACEMENT.md"] == full["PLACEMENT.md"]
    for path in second.files:
        if layout.is_page(path):
            assert second.files[path] == full[path]


@settings(max_examples=80, deadline=None)
@given(before=plans(), after=plans(), revision=st.sampled_from([None, "abc123"]))
def test_decisions_read_from_the_changed_files_equal_those_of_every_file(
    before: Plan, after: Plan, revision: str | None
) -> None:
    """What a publish says about placement (groups moved, replicas, newly unscheduled, new warnings,
    whether only bookkeeping changed) comes from the placement files that differ alone: the same as from
    every group file and the index of both renders, changed or not."""
    old = renders.render(before, SOURCE).files
    new = renders.render(after, reports.SourceInfo(SOURCE.repo, revision)).files
    changed = diffs.changed_files(old, new)
    outside = [path for path in old.keys() | new.keys() if not path.startswith("clusters/")]
    every = [
        *(change for change in changed if change.path.startswith("clusters/")),
        *(diffs.FileChange(path, old.get(path), new.get(path)) for path in sorted(outside)),
    ]
    from_changed, from_every = diffs.diff_renders(changed), diffs.diff_renders(every)
    assert from_changed.groups == from_every.groups
    assert from_changed.replicas == from_every.replicas
    assert from_changed.newly_unscheduled == from_every.newly_unscheduled
    assert from_changed.newly_scheduled == from_every.newly_scheduled
    assert from_changed.new_warnings == from_every.new_warnings
    assert from_changed.summary_changed == from_every.summary_changed
    if revision is None and before == after:
        assert from_changed.is_empty


def assert_changes_turn(old: dict[str, str], second: increments.RenderDelta) -> None:
    """``second.changes`` applied to the tree ``old`` gives ``second``'s tree, and the guard reaches the same
    verdict on the part of the trees the changes looked at as on the whole trees."""
    changes = second.changes
    assert changes is not None
    new = second.blobs
    assert {path: old[path] for path in changes.before} == dict(changes.before)
    assert {path: new[path] for path in changes.after} == dict(changes.after)
    applied = {path: blob for path, blob in old.items() if path not in changes.deleted}
    applied.update({path: increments.blob_id(data) for path, data in changes.written.items()})
    assert applied == new
    assert all(old.get(path) != increments.blob_id(data) for path, data in changes.written.items())
    for percent in (0, 30, 100):
        whole = guard.mass_deletions(old, new, percent)
        assert guard.mass_deletions(changes.before, changes.after, percent) == whole


@st.composite
def edited(draw: st.DrawFn) -> tuple[Plan, Plan]:
    """A plan and the same plan with some copies' replicas and overrides changed (same layout)."""
    before = draw(plans())
    groups = []
    for group in before.groups:
        objects = []
        for object_plan in group.objects:
            copies = tuple(
                replace(copy, replicas=draw(st.one_of(st.just(copy.replicas), st.integers(0, 5))))
                if draw(st.booleans())
                else replace(copy, overrides=copy.overrides[:1])
                for copy in object_plan.copies
            )
            objects.append(ObjectPlan(object_plan.manifest, copies))
        groups.append(replace(group, objects=tuple(objects)))
    return before, replace(before, groups=tuple(groups))


@settings(max_examples=60, deadline=None)
@given(plans_=edited())
def test_a_delta_of_replica_and_override_edits_equals_a_full_render(plans_: tuple[Plan, Plan]) -> None:
    before, after = plans_
    first = delta(before, None)
    second = delta(after, first.index)
    assert second.rendered_clusters == 0
    full = renders.render(after, SOURCE).files
    assert dict(second.blobs) == {path: increments.blob_id(data) for path, data in full.items()}
    for path, blob in second.blobs.items():
        if first.blobs.get(path) != blob:
            assert second.files[path] == full[path]
    assert_changes_turn(first.blobs, second)


def two_groups(web_replicas: int) -> Plan:
    web = ObjectPlan(manifest(deployment("web"), 1), (ClusterCopy("c1", web_replicas), ClusterCopy("c2", 1)))
    api = ObjectPlan(manifest(deployment("api"), 40), (ClusterCopy("c1", 3),))
    return Plan(
        (make_group("p-web", ("c1", "c2"), web), make_group("p-api", ("c1",), api)),
        (),
        (),
        usages("c1", "c2"),
        (),
    )


def test_a_changed_object_re_emits_only_its_own_files() -> None:
    first = delta(two_groups(2), None)
    second = delta(two_groups(5), first.index, {"src/objects.yaml": "d2"})
    assert second.rendered_clusters == 0
    changed = {path for path, blob in second.blobs.items() if first.blobs[path] != blob}
    assert changed == {  # the plan's capacities did not change: nor did placement.yaml and PLACEMENT.md
        "clusters/c1/shop/deployment-web.yaml",
        "placement/p/p-web.yaml",
        "placement/p/README.md",
    }
    assert set(second.files) == {
        "clusters/c1/shop/deployment-web.yaml",
        "clusters/c2/shop/deployment-web.yaml",
        "clusters/c1/shop/deployment-api.yaml",  # same source file: its digest changed too
        "placement/p/p-web.yaml",
        "placement/p/p-api.yaml",  # its content key changed with the digest; its bytes did not
        "placement/p/README.md",
        "placement.yaml",
        "PLACEMENT.md",
        ".gitattributes",
    }
    assert dict(second.blobs) == blobs_of(two_groups(5))


def test_objects_without_a_digest_are_always_re_emitted() -> None:
    first = delta(two_groups(2), None, {})
    again = delta(two_groups(2), first.index, {})
    assert "clusters/c1/shop/deployment-api.yaml" in again.files
    assert dict(again.blobs) == dict(first.blobs)


def test_an_index_made_with_another_salt_or_format_is_not_used() -> None:
    first = delta(two_groups(2), None)
    other = increments.render_delta(two_groups(2), SOURCE, first.index, digests=DIGESTS, salt="code-2")
    assert other.rendered_clusters == 2
    wire = first.index.to_wire()
    assert RenderIndex.from_wire(wire) == first.index
    assert RenderIndex.from_wire(b"garbage") is None
    assert RenderIndex.from_wire(rewired(wire, 0, increments.FORMAT + 1)) is None
    assert RenderIndex.from_wire(rewired(wire, 10, ("placement.yaml",))) is None  # damaged root files


def rewired(wire: bytes, field: int, value: object) -> bytes:
    """``wire`` with one field of its header replaced."""
    size = int.from_bytes(wire[:8], "little")
    header = list(marshal.loads(wire[8 : 8 + size]))
    header[field] = value
    changed = marshal.dumps(tuple(header))
    return len(changed).to_bytes(8, "little") + changed + wire[8 + size :]


def test_an_override_failing_in_a_changed_group_is_the_full_renders_error() -> None:
    first = delta(two_groups(2), None)
    broken = two_groups(2)
    web = broken.groups[0].objects[0]
    bad = ObjectPlan(
        web.manifest, (ClusterCopy("c1", 2, (override("spec.replicas.deep", 1),)), web.copies[1])
    )
    broken = replace(broken, groups=(replace(broken.groups[0], objects=(bad,)), broken.groups[1]))
    with pytest.raises(errors.InputError) as full:
        renders.render(broken, SOURCE)
    with pytest.raises(errors.InputError) as incremental:
        delta(broken, first.index, {"src/objects.yaml": "d2"})
    assert incremental.value.problems == full.value.problems


def test_two_groups_for_one_placement_file_are_the_full_renders_error() -> None:
    plan = two_groups_for_one_placement_file()
    with pytest.raises(errors.InputError) as full:
        renders.render(plan, SOURCE)
    with pytest.raises(errors.InputError) as incremental:
        delta(plan, None)
    assert incremental.value.problems == full.value.problems
    with pytest.raises(errors.InputError) as after_a_render:
        delta(plan, delta(two_groups(2), None).index)
    assert after_a_render.value.problems == full.value.problems


def test_an_index_with_damaged_group_files_is_not_used() -> None:
    first = delta(two_groups(2), None)
    damaged = replace(
        first.index,
        groups={
            name: GroupFiles(g.layout, b"not marshal" + g.packed, b"\x00")
            for name, g in first.index.groups.items()
        },
    )
    second = delta(two_groups(5), damaged, {"src/objects.yaml": "d2"})
    assert second.changes is None  # rendered as from nothing
    assert second.rendered_clusters == 2
    assert dict(second.blobs) == blobs_of(two_groups(5))
    wire = first.index.to_wire()
    assert RenderIndex.from_wire(wire[:-1]) is None  # truncated
    assert RenderIndex.from_wire(rewired(wire, 1, 42)) is None  # a salt that is not text
    lengths = marshal.loads(wire[8 : 8 + int.from_bytes(wire[:8], "little")])[5]
    assert RenderIndex.from_wire(rewired(wire, 5, [*lengths[:-1], lengths[-1] + 1])) is None
    assert RenderIndex.from_wire(rewired(wire, 7, ["not", "a", "dict"])) is None
    assert RenderIndex.from_wire(marshal.dumps((increments.FORMAT, 1, 2))) is None


def test_group_files_pack_the_same_whatever_order_they_were_gathered_in() -> None:
    files = {"c2": (("clusters/c2/a.yaml", "1" * 40),), "c1": (("clusters/c1/a.yaml", "2" * 40),)}
    assert increments.pack_files(files) == increments.pack_files(dict(reversed(files.items())))
    assert increments.unpack_files(increments.pack_files(files)) == files
    with pytest.raises(increments.UnreadableIndex):
        increments.unpack_files(marshal.dumps(["a list"]))
