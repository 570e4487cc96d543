"""Names, reasons and messages that carry terminal or Markdown attacks, in every report a person reads
(issue 21, item 8): PLACEMENT.md, and diff as text (plain and coloured), Markdown and JSON.

Behaviours covered (hypothesis: arbitrary text, mixed with known attacks, in every data field of a plan, a
render diff and a wave plan):
- no text output holds a control (C0 but the newline, C1, DEL), bidi, zero-width or other invisible
  character; the coloured text holds none besides our own SGR colour codes;
- a field shown inside one of our lines cannot start a line of its own (its newlines are escapes);
- no Markdown output makes a link, an image, HTML (but diff's own ``<details>``), a mention, a reference
  or an autolink of data, as a CommonMark parser (with GitHub's tables) reads it; the table keeps its
  columns whatever the data holds;
- JSON reads back to the very strings of the data;
- PLACEMENT.md, with and without waves, and each policy's page in both its forms (matrix and compact):
  the only links are ours (a page, a group's file, the summary), made of names that are plain file names.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.api import texts
from nova_gitops.api.objects import ObjectKey
from nova_gitops.rendering import diffformats, diffs, policypages, reports, waveplans
from nova_gitops.rollouts import plans, waves
from nova_gitops.scheduling.planparts import ClusterCopy, ClusterUsage, GroupPlan, ObjectPlan
from nova_gitops.scheduling.plans import Plan, Unscheduled
from tests.unit.api.test_texts import ATTACKS
from tests.unit.rendering import markdowncheck
from tests.unit.rendering.test_reports import manifest

SGR = re.compile(r"\x1b\[[0-9;]*m")
attacks = st.sampled_from(ATTACKS)
hostile = st.lists(st.one_of(attacks, st.text(max_size=4)), min_size=1, max_size=4).map("".join)


def clean(text: str, *, keep: str = "\n") -> bool:
    return not texts.has_hidden(text, keep=keep)


def table_rows_keep_their_columns(markdown: str) -> None:
    """Every row of every table has as many cells as its header (a data pipe never adds a cell)."""
    for block in re.split(r"\n\n", markdown):
        rows = [line for line in block.split("\n") if line.startswith("|")]
        if len(rows) < 2:
            continue
        widths = [
            len(
                [
                    token
                    for token in markdowncheck.tokens(f"{rows[0]}\n{rows[1]}\n{row}\n")
                    if token.type == "td_open"
                ]
            )
            for row in rows[2:]
        ]
        header = len(
            [token for token in markdowncheck.tokens(f"{rows[0]}\n{rows[1]}\n") if token.type == "th_open"]
        )
        assert set(widths) <= {header}, block


def hostile_plan(names: list[str], reason: str, warning: str, clusters: int) -> Plan:
    cluster_names = [f"{name}-{index}" for index in range(clusters) for name in names[:1]]
    web = manifest("Deployment", "web", replicas=3)
    groups = tuple(
        GroupPlan(
            name=f"g{index}-{name}",
            policy=name,
            group_by=("app", name),
            mode="single",
            status=status,
            clusters=tuple(cluster_names[: 1 + index % len(cluster_names)]),
            reason=reason,
            objects=(ObjectPlan(web, tuple(ClusterCopy(c, 1) for c in cluster_names[:1])),),
            warnings=(warning,),
        )
        for index, (name, status) in enumerate(zip(names, ["scheduled", "unschedulable"] * 3, strict=False))
    )
    return Plan(
        groups=groups,
        unscheduled=(Unscheduled(ObjectKey("", names[0], names[-1], names[0]), "v1", names[-1], reason),),
        followed_namespaces=(),
        clusters=tuple(
            ClusterUsage(name, {"cpu": 1000}, {"cpu": 500}, {"cpu": 100}) for name in cluster_names
        ),
        warnings=(warning,),
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(hostile, min_size=1, max_size=3), hostile, hostile, st.sampled_from([1, 14]), st.booleans())
def test_placement_md_shows_data_and_does_nothing_of_it(
    names: list[str], reason: str, warning: str, clusters: int, with_waves: bool
) -> None:
    plan = hostile_plan(names, reason, warning, clusters)
    cluster_names = tuple(usage.cluster for usage in plan.clusters)
    shown_waves = (waves.Wave(names[0], cluster_names, None, timedelta(minutes=5)),) if with_waves else ()
    markdown = reports.placement_markdown(plan, reports.SourceInfo(names[0], names[-1]), waves=shown_waves)
    assert clean(markdown), markdown
    assert not_ours(markdowncheck.active_parts(markdown)) == [], markdown
    table_rows_keep_their_columns(markdown)
    assert texts.md_text(reason, table=True) in markdown
    table = policypages.group_table(cluster_names)
    for policy in sorted({group.policy for group in plan.groups}, key=str):
        groups = [group for group in plan.groups if group.policy == policy]
        page = policypages.page(policy, groups, table)
        assert clean(page), page
        assert not_ours(markdowncheck.active_parts(page)) == [], page
        table_rows_keep_their_columns(page)
        assert all(texts.md_text(f"{group.name}: {warning}") in page for group in groups)
        if any(group.status == "unschedulable" for group in groups):
            assert texts.md_text(reason, table=True) in page


OUR_LINKS = re.compile(
    r"link_open (placement/[A-Za-z0-9._-]+/README\.md|[A-Za-z0-9._-]+\.yaml|\.\./\.\./PLACEMENT\.md)"
)


def not_ours(parts: list[str]) -> list[str]:
    """The active parts that are not our own links (a policy's page, a group's file, the summary), which
    are made only of names that are plain file names (``policypages.linkable``)."""
    return [part for part in parts if not OUR_LINKS.fullmatch(part)]


def hostile_diff(name: str, reason: str, patch: str) -> diffs.RenderDiff:
    rollout = plans.ChangePlan(
        waves=(plans.WavePlan(name, (name, f"{name}2", "c"), (name,), 2, timedelta(minutes=1), 2),),
        untouched=(name,),
        earliest=timedelta(minutes=1),
        earliest_last_release=timedelta(0),
    )
    return diffs.RenderDiff(
        objects=(
            diffs.ObjectChange(f"clusters/{name}/{name}.yaml", name, "deleted", f"Kind {name}", patch, 2),
            diffs.ObjectChange(f"clusters/{name}/x.yaml", name, "added", name, f"+{patch}\n"),
        ),
        clusters=(diffs.ClusterCounts(name, 1, 0, 1),),
        groups=(
            diffs.GroupChange(name, (name, "a"), (f"{name}2",)),
            diffs.GroupChange(f"{name}-new", None, (name,)),
        ),
        replicas=(diffs.ReplicaChange(name, f"Deployment {name}", name, 1, 2),),
        newly_unscheduled=(f"{name}: {reason}",),
        newly_scheduled=(name,),
        new_warnings=(reason,),
        other_files=(diffs.FileChange(name, None, b""),),
        rollout=rollout,
    )


@settings(max_examples=80, deadline=None)
@given(hostile, hostile, hostile)
def test_diff_shows_data_and_does_nothing_of_it(name: str, reason: str, patch: str) -> None:
    diff = hostile_diff(name, reason, patch)
    plain = diffformats.to_text(diff)
    assert clean(plain, keep=texts.TERMINAL_KEEPS), plain  # a patch's tabs are the file's, kept
    assert f"  warning: {texts.one_line(reason)}\n" in plain  # one line: a newline in data is an escape
    coloured = diffformats.to_text(diff, colour=True)
    assert clean(SGR.sub("", coloured), keep=texts.TERMINAL_KEEPS), coloured
    markdown = diffformats.to_markdown(diff)
    assert clean(markdown, keep=texts.TERMINAL_KEEPS), markdown
    assert markdowncheck.active_parts(markdown) == [], markdown
    table_rows_keep_their_columns(markdown)
    as_json = diffformats.to_json(diff)
    assert clean(as_json)
    document = json.loads(as_json)
    assert document["newWarnings"] == [reason] and document["groups"][0]["name"] == name
    assert document["files"][0]["patch"] == patch
    assert document["rollout"]["waves"][0]["name"] == name
    for line in waveplans.text_lines(diff.rollout) if diff.rollout else []:
        assert clean(line, keep="")


def test_a_patch_holding_backtick_fences_stays_inside_its_block() -> None:
    patch = "+a: |\n ````\n ```\n+  </details>\n+  ![x](https://t.example/p.png)\n"
    markdown = diffformats.to_markdown(hostile_diff("wlc-1", "why", patch))
    fenced = [token for token in markdowncheck.tokens(markdown) if token.type == "fence"]
    assert [patch in token.content for token in fenced] == [True]
    assert markdowncheck.active_parts(markdown) == []


def test_example_a_taint_in_a_reason() -> None:
    """The shape of the issue's report: a reason naming a taint with a clear-screen and a bidi override."""
    reason = "no node tolerates taint gpu\x1b[2J=x\u202ey:NoSchedule; ask @ops ![p](https://t.example/p)"
    plan = hostile_plan(["shop"], reason, reason, 1)
    markdown = reports.placement_markdown(plan, reports.SourceInfo("source", None))
    assert "gpu\\\\u001b\\[2J=x\\\\u202ey:NoSchedule; ask `@ops` `![p](https://t.example/p)`" in markdown
