"""What two renders' placement files say changed (``diff``, commit messages, "only bookkeeping changed"),
as a reviewer relies on it:

- a group whose warning is cleared is a change, said as such (``diff`` said "No changes." while publish
  committed);
- a group that stays where it was but is decided anew (its reason, its requests) says so, with the
  fields, instead of "Placement changes: (none)";
- a group file or an index that records no decision is an error naming the render and the file, never
  taken for a group removed or for a render that decides nothing;
- the index lists every unscheduled object, so it can pass the loader's 8 MiB limit: it is then read
  entry by entry, a newly unscheduled object is still seen, and a render without group files whose index
  is that large reads back as no decisions (it records none) rather than failing.
"""

from __future__ import annotations

from typing import Any

import pytest

from nova_gitops.api import loading
from nova_gitops.rendering import diffformats, diffs, emitting, schedulegroups
from nova_gitops.scheduling.plans import PreviousPlacement

GROUP_PATH = "placement/web/web-1a2b3c4d.yaml"


def group_file(reason: str = "Picked cluster c1", warnings: tuple[str, ...] = (), **status: Any) -> bytes:
    document: dict[str, Any] = {
        "apiVersion": "gitops.nova.elotl.co/v1alpha1",
        "kind": schedulegroups.KIND,
        "metadata": {"name": "web-1a2b3c4d"},
        "policy": {"name": "web"},
        "groupBy": None,
        "objectRefs": [
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "namespace": "shop",
                "name": "web",
                "replicas": {"c1": 2},
            }
        ],
        "scheduled": True,
        "status": {"mode": "single", "phase": "scheduled", "clusters": ["c1"], "reason": reason, **status},
    }
    if warnings:
        document["status"]["warnings"] = list(warnings)
    return emitting.dump(document).encode()


def index(unscheduled: list[dict[str, Any]] | None = None) -> bytes:
    document = {
        "apiVersion": "gitops.nova.elotl.co/v1alpha1",
        "kind": "Placement",
        "format": 2,
        "source": {"repo": "shop", "revision": None},
        "totals": {"groups": 1},
        "policies": [{"name": "web", "folder": "placement/web", "groups": 1}],
        "unscheduled": unscheduled or [],
        "warnings": [],
        "clusters": [{"name": "c1", "allocatable": {"cpu": "4"}}],
    }
    return emitting.dump(document).encode()


def diff(old: dict[str, bytes], new: dict[str, bytes]) -> diffs.RenderDiff:
    return diffs.diff_renders(diffs.changed_files(old, new))


def test_a_cleared_warning_is_a_change_and_says_so() -> None:
    warned = {GROUP_PATH: group_file(warnings=("c1 is short of cpu",)), "placement.yaml": index()}
    cleared = {GROUP_PATH: group_file(), "placement.yaml": index()}
    result = diff(warned, cleared)
    assert result.cleared_warnings == ("web-1a2b3c4d: c1 is short of cpu",)
    assert not result.is_empty and not diffs.bookkeeping_only(diffs.changed_files(warned, cleared))
    assert "  warning cleared: web-1a2b3c4d: c1 is short of cpu\n" in diffformats.to_text(result)
    assert "#### Warnings cleared" in diffformats.to_markdown(result)


def test_a_group_decided_anew_in_place_names_what_changed() -> None:
    old = {GROUP_PATH: group_file(), "placement.yaml": index()}
    new = {GROUP_PATH: group_file(reason="Group stays on cluster c1", requests={"cpu": "2"})}
    new["placement.yaml"] = index()
    result = diff(old, new)
    assert [(change.name, change.fields) for change in result.records_changed] == [
        ("web-1a2b3c4d", ("reason", "requests"))
    ]
    line = "group web-1a2b3c4d decided anew, same clusters: reason, requests changed"
    assert f"  {line}\n" in diffformats.to_text(result)
    assert not result.is_empty


@pytest.mark.parametrize(
    ("old", "new", "side", "path"),
    [
        ({GROUP_PATH: group_file()}, {GROUP_PATH: b"{{{"}, "new", GROUP_PATH),
        ({GROUP_PATH: b"kind: ConfigMap\n"}, {GROUP_PATH: group_file()}, "old", GROUP_PATH),
        ({"placement.yaml": b"a: [\n"}, {"placement.yaml": index()}, "old", "placement.yaml"),
    ],
)
def test_a_file_that_records_no_decision_is_an_error_naming_it(
    old: dict[str, bytes], new: dict[str, bytes], side: str, path: str
) -> None:
    with pytest.raises(diffs.UnreadablePlacement) as raised:
        diff(old, new)
    assert (raised.value.side, raised.value.path) == (side, path)


def unscheduled(count: int) -> list[dict[str, Any]]:
    reason = "No cluster matches the policy's clusterSelector (" + "x" * 200 + ")"
    return [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "namespace": "shop",
            "name": f"cm-{n:06d}",
            "reason": reason,
        }
        for n in range(count)
    ]


@pytest.mark.slow
def test_an_index_past_the_loaders_limit_is_read_entry_by_entry() -> None:
    many = unscheduled(31_000)
    big, bigger = index(many), index([*many, *unscheduled(31_001)[-1:]])
    assert len(big) > loading.MAX_FILE_BYTES
    result = diff({"placement.yaml": big}, {"placement.yaml": bigger})
    assert [line.split(":")[0] for line in result.newly_unscheduled] == ["ConfigMap shop/cm-031000"]
    assert not diffs.bookkeeping_only(
        diffs.changed_files({"placement.yaml": big}, {"placement.yaml": bigger})
    )
    assert schedulegroups.previous_from_files({"placement.yaml": big}) == PreviousPlacement.empty()


def test_the_same_decision_in_either_layout_is_no_change() -> None:
    """Across the upgrade the old placement.yaml's entry and the new group file record one decision: the
    converting commit lists no group decided anew."""
    entry = {
        "name": "web-1a2b3c4d",
        "policy": "web",
        "groupBy": None,
        "mode": "single",
        "status": "scheduled",
        "clusters": ["c1"],
        "reason": "Picked cluster c1",
        "objects": [
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "namespace": "shop",
                "name": "web",
                "replicas": {"c1": 2},
            }
        ],
    }
    single = emitting.dump(
        {"apiVersion": "gitops.nova.elotl.co/v1alpha1", "kind": "Placement", "groups": [entry]}
    ).encode()
    result = diff({"placement.yaml": single}, {GROUP_PATH: group_file(), "placement.yaml": index()})
    assert (result.groups, result.replicas, result.records_changed) == ((), (), ())
    moved = {**entry, "reason": "Group stays on cluster c1"}
    single = emitting.dump(
        {"apiVersion": "gitops.nova.elotl.co/v1alpha1", "kind": "Placement", "groups": [moved]}
    ).encode()
    result = diff({"placement.yaml": single}, {GROUP_PATH: group_file(), "placement.yaml": index()})
    assert [(change.name, change.fields) for change in result.records_changed] == [
        ("web-1a2b3c4d", ("reason",))
    ]
