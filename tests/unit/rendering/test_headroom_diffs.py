"""The failover headroom of a change (``rendering.headroomdiffs``) and PLACEMENT.md's section
(``rendering.failovers``), on outcomes made by hand and on the bundled example's plan.

Behaviours covered:
- a group a loss strands on the head and not on the base is a change, worse first; one it strands on the
  base only is "no longer strands"; a loss the same on both sides is counted, and named when it strands;
- a group stranded on both sides is no change though the room free elsewhere moved, and is one when its
  request or its reason changed;
- a loss on one side only (a cluster added or removed) is compared with nothing;
- (property, over generated outcomes) every loss is a change or counted unchanged, a change lists exactly
  the groups stranded anew, and a headroom compared with itself changes nothing;
- the words: "needs 4 nvidia.com/gpu, 0 free elsewhere" for one scarce resource, each scarce resource with
  its free room for more, a pinned group's clusters;
- Markdown shows names in code spans and hidden characters as escapes, and stays within a comment's budget
  (losses, groups per loss and characters bounded, the rest counted); text and JSON carry every change;
- PLACEMENT.md has the section only when the plan carries headroom: one line per loss, worst first, on the
  bundled example as ``headroom`` orders it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.rendering import failovers, headroomdiffs, reports
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.scheduling import failover
from nova_gitops.scheduling.plans import LossOutcome, PlanSettings, StrandedGroup
from nova_gitops.workflows import rendering

ROOT = Path(__file__).resolve().parents[3]
GPU = 1000
GPU_GROUP = StrandedGroup(
    "gpu-training-36755b20", "no-room", {"nvidia.com/gpu": 4 * GPU}, {"nvidia.com/gpu": 0}
)


def loss(name: str, *stranded: StrandedGroup, moved: int = 0) -> LossOutcome:
    return LossOutcome(name, stranded, moved)


def test_a_newly_stranded_group_is_a_change_and_comes_first() -> None:
    web = StrandedGroup("web-1", "no-room", {"cpu": 3000}, {"cpu": 2000})
    base = [loss("wlc-1", web), loss("wlc-gpu"), loss("wlc-2")]
    head = [loss("wlc-gpu", GPU_GROUP), loss("wlc-1"), loss("wlc-2")]
    diff = headroomdiffs.compare(base, head)
    assert [change.lost for change in diff.changes] == ["wlc-gpu", "wlc-1"]
    assert diff.worse
    assert headroomdiffs.text_lines(diff) == [
        "after this change, losing wlc-gpu strands gpu-training-36755b20: needs 4 nvidia.com/gpu, "
        "0 free elsewhere",
        "after this change, losing wlc-1 no longer strands web-1",
        "1 other loss unchanged",
    ]


def test_unchanged_losses_are_one_line_naming_those_that_strand() -> None:
    same = [loss("a", GPU_GROUP), loss("b"), loss("c")]
    diff = headroomdiffs.compare(same, same)
    assert not diff.changes
    assert not diff.worse
    assert headroomdiffs.text_lines(diff) == ["3 losses unchanged (1 still strands the same groups: a)"]


def test_free_room_moving_elsewhere_is_no_change_but_a_larger_request_is() -> None:
    roomier = dataclasses.replace(GPU_GROUP, scarce={"nvidia.com/gpu": 1000})
    assert not headroomdiffs.compare([loss("a", GPU_GROUP)], [loss("a", roomier)]).changes
    larger = dataclasses.replace(GPU_GROUP, requests={"nvidia.com/gpu": 8 * GPU})
    [change] = headroomdiffs.compare([loss("a", GPU_GROUP)], [loss("a", larger)]).changes
    assert change.strands == (larger,)
    pinned = dataclasses.replace(GPU_GROUP, why="pinned", pinned_to=("a",))
    assert headroomdiffs.compare([loss("a", GPU_GROUP)], [loss("a", pinned)]).changes


def test_a_loss_on_one_side_only_is_compared_with_nothing() -> None:
    diff = headroomdiffs.compare(
        [loss("old", GPU_GROUP), loss("quiet")], [loss("new", GPU_GROUP), loss("calm")]
    )
    assert [(change.lost, change.side) for change in diff.changes] == [("new", "head"), ("old", "base")]
    assert headroomdiffs.text_lines(diff) == [
        "after this change, losing new (a new cluster) strands gpu-training-36755b20: "
        "needs 4 nvidia.com/gpu, 0 free elsewhere",
        "old is gone with this change: losing it stranded gpu-training-36755b20",
        "1 other loss unchanged",
    ]
    # with --headroom-domain a loss is a label value: new with the change, not "a new cluster"
    region = headroomdiffs.compare([], [loss("region=eu", GPU_GROUP)])
    assert headroomdiffs.text_lines(region)[0].startswith(
        "after this change, losing region=eu (a new value of region) strands "
    )


def test_the_words_of_each_kind_of_stranded_group() -> None:
    assert failovers.needs(GPU_GROUP) == "needs 4 nvidia.com/gpu, 0 free elsewhere"
    two = StrandedGroup("g", "no-room", {"cpu": 16000, "memory": 2**30 * 1000}, {"cpu": 1500, "memory": 0})
    assert failovers.needs(two) == "needs 16000m cpu (1500m free elsewhere), 1Gi memory (0 free elsewhere)"
    fits_no_node = StrandedGroup("g", "no-room", {"cpu": 6000})
    assert failovers.needs(fits_no_node) == "needs 6000m cpu"
    pinned = StrandedGroup("g", "pinned", {"cpu": 100}, pinned_to=("wlc-1",))
    assert failovers.needs(pinned) == "is pinned to wlc-1"
    nowhere = StrandedGroup("g", "no-candidate", {"cpu": 100}, {})
    assert failovers.needs(nowhere) == "no cluster left matches its policy, and it needs 100m cpu"
    assert failovers.strands(loss("a")) == "nothing"
    assert failovers.strands(loss("a", pinned, nowhere)).startswith("2 groups: g: is pinned to wlc-1; g: ")


def test_a_group_the_head_leaves_unschedulable_is_not_a_rescue() -> None:
    # the change removed the cluster that held it: no loss strands it on the head because nothing places
    # it at all, and a green "no longer strands" would tell the reviewer the change helped
    batch = StrandedGroup("batch-1", "no-room", {"cpu": 6000})
    diff = headroomdiffs.compare(
        [loss("burst", batch), loss("onprem", batch)], [loss("onprem")], down=("batch-1",)
    )
    assert diff.worse and [change.worse for change in diff.changes] == [True, True]
    assert headroomdiffs.text_lines(diff) == [
        "burst is gone with this change: losing it stranded batch-1, unschedulable with this change",
        "after this change, losing onprem no longer strands batch-1: unschedulable with this change",
    ]
    markdown = headroomdiffs.markdown(diff)
    assert ":white_check_mark:" not in markdown and markdown.count(":x:") == 2
    assert headroomdiffs.json_data(diff)["changes"][1]["unschedulableNow"] == ["batch-1"]
    helped = headroomdiffs.compare([loss("onprem", batch)], [loss("onprem")], down=("other",))
    assert not helped.worse and helped.changes[0].freed == (batch,)


def test_markdown_puts_names_in_code_and_shows_hidden_characters() -> None:
    hostile = StrandedGroup("web`@team\u202e", "pinned", {"cpu": 100}, pinned_to=("<img src=x>",))
    diff = headroomdiffs.compare([loss("wlc-1")], [loss("wlc-1", hostile)])
    markdown = headroomdiffs.markdown(diff)
    assert markdown.startswith("#### Failover headroom\n\n- :x: after this change, losing `wlc-1` strands ")
    assert "\u202e" not in markdown
    assert "<img" not in markdown.replace("`<img src=x>`", "")
    assert "\\u202e" in markdown


def test_json_carries_each_change() -> None:
    diff = headroomdiffs.compare([loss("a"), loss("b", GPU_GROUP)], [loss("a", GPU_GROUP), loss("b")])
    data = headroomdiffs.json_data(diff)
    assert data["worse"] is True
    assert [change["lost"] for change in data["changes"]] == ["a", "b"]
    assert data["changes"][0]["strands"][0]["requests"] == {"nvidia.com/gpu": "4"}
    assert data["changes"][0]["strands"][0]["freeElsewhere"] == {"nvidia.com/gpu": "0"}
    assert data["changes"][1]["noLongerStrands"] == ["gpu-training-36755b20"]


def test_placement_md_has_the_section_only_when_the_plan_carries_headroom() -> None:
    source_set = rendering.load_source(ROOT / "examples" / "repo-layout" / "source")
    plan = rendering.plan_source(source_set)
    info = SourceInfo("https://example.com/fleet.git", "0" * 40)
    assert "Failover headroom" not in reports.placement_markdown(plan, info)
    with_headroom = rendering.plan_source(source_set, settings=PlanSettings(headroom=True))
    assert with_headroom.groups == plan.groups
    page = reports.placement_markdown(with_headroom, info)
    section = page[page.index("## Failover headroom") :].splitlines()
    told = [line for line in section if line.startswith("- losing")]
    assert [line.split("`")[1] for line in told] == [
        "wlc-gpu",
        "wlc-aws-east-1",
        "wlc-burst",
        "wlc-aws-east-2",
        "wlc-gcp-central",
        "wlc-onprem",
    ]
    assert told[0].startswith("- losing `wlc-gpu` strands 2 groups: `gpu-training-36755b20`: ")
    assert "2 nvidia.com/gpu (0 free elsewhere)" in told[0]
    assert told[-1] == "- losing `wlc-onprem` strands nothing and moves 2 groups"
    assert with_headroom.failover == failover.outcomes(failover.headroom.headroom(source_set, today=plan))


def test_a_comment_stays_within_its_budget_however_many_losses_change() -> None:
    groups = [
        StrandedGroup(f"group-{index:03d}", "no-room", {"cpu": 1000}, {"cpu": 0}) for index in range(50)
    ]
    head = [loss(f"wlc-{index:03d}", *groups) for index in range(100)]
    diff = headroomdiffs.compare([loss(outcome.lost) for outcome in head], head)
    markdown = headroomdiffs.markdown(diff)
    assert len(markdown) < headroomdiffs.MARKDOWN_BUDGET + 1000
    assert "more losses changed: run `nova-gitops diff --headroom`" in markdown
    assert "after this change, losing `wlc-000` strands 45 more groups" in markdown
    assert len(headroomdiffs.text_lines(diff)) == 100 * 50  # a terminal gets everything
    freed = headroomdiffs.compare(head[:1], [loss("wlc-000")])
    assert headroomdiffs.change_lines(freed.changes[0], limit=2) == [
        "after this change, losing wlc-000 no longer strands group-000, group-001 and 48 more"
    ]


NAMES = st.sampled_from(["a", "b", "c", "d"])
GROUPS = st.builds(
    StrandedGroup,
    st.sampled_from(["g1", "g2", "g3"]),
    st.sampled_from(["no-room", "pinned", "no-candidate", "share"]),
    st.fixed_dictionaries({"cpu": st.integers(1, 4000)}),
    st.fixed_dictionaries({"cpu": st.integers(0, 4000)}),
)
OUTCOMES = st.lists(
    st.builds(
        LossOutcome,
        NAMES,
        st.lists(GROUPS, max_size=3, unique_by=lambda item: item.group).map(tuple),
    ),
    max_size=4,
    unique_by=lambda outcome: outcome.lost,
)


@settings(max_examples=200, deadline=None)
@given(OUTCOMES, OUTCOMES)
def test_every_loss_is_either_a_change_or_counted_unchanged(
    base: list[LossOutcome], head: list[LossOutcome]
) -> None:
    diff = headroomdiffs.compare(base, head)
    changed = {change.lost for change in diff.changes}
    assert len(changed) + diff.unchanged == len({o.lost for o in base} | {o.lost for o in head}) - len(
        {o.lost for o in base if not o.stranded} - {o.lost for o in head}
    )
    before = {outcome.lost: outcome for outcome in base}
    for outcome in head:
        was = before.get(outcome.lost)
        old = {item.group: item for item in was.stranded} if was else {}
        newly = {item.group for item in outcome.stranded if not headroomdiffs.same(old.get(item.group), item)}
        change = next((change for change in diff.changes if change.lost == outcome.lost), None)
        assert {item.group for item in change.strands} == newly if change else not newly
    assert diff.worse == any(change.strands for change in diff.changes)
    assert not headroomdiffs.compare(head, head).changes
