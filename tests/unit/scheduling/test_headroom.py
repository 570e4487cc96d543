"""Failover headroom (``scheduling.headroom``): the loss of each cluster, or of each value of a label.

- a loss says which groups move (moved, re-divided; a Duplicate's lost copy is neither) and which it
  strands, with the shortfall per resource that would rescue them; the worst loss comes first;
- ``--domain LABEL`` loses every cluster sharing a value at once; clusters without the label are never lost;
  a label no cluster has is refused;
- ``--ignore`` accepts a group or a policy (a name or a glob); one that names nothing is refused;
- properties (issue 26, item 5), over generated fleets: a group a loss strands is exactly one the what-if
  of that loss (planned afresh, without the memory) leaves unschedulable, or whose share no longer fits;
  losing a cluster that holds nothing moves, strands and re-renders nothing; planning only the components
  a loss reaches (``reach``) finds what planning the whole fleet for it finds.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings

from nova_gitops.rendering import diffs, renders, reports
from nova_gitops.scheduling import headroom, planning, whatif
from nova_gitops.scheduling.planparts import GroupPlan
from tests.builders import cluster, deployment, policy, source_set
from tests.unit.scheduling.test_plan_memory import Documents, fleets, loaded

SOURCE = reports.SourceInfo("fleet", None)


def fleet() -> list[dict[str, Any]]:
    zone = "topology.kubernetes.io/zone"
    return [
        cluster("east-1", cpu="4", labels={zone: "east"}),
        cluster("east-2", cpu="4", labels={zone: "east"}),
        cluster("west-1", cpu="8", labels={zone: "west"}),
        cluster("lab", cpu="2"),
        policy(
            "web",
            clusterSelector={"matchExpressions": [{"key": zone, "operator": "Exists"}]},
            resourceSelectors={"labelSelectors": [{"matchLabels": {"app": "web"}}]},
        ),
        policy(
            "everywhere",
            spreadConstraints={"spreadMode": "Duplicate", "topologyKey": "kubernetes.io/metadata.name"},
            resourceSelectors={"labelSelectors": [{"matchLabels": {"app": "agent"}}]},
        ),
        policy(
            "east-only",
            clusterSelector={"matchLabels": {zone: "east"}},
            resourceSelectors={"labelSelectors": [{"matchLabels": {"app": "east"}}]},
        ),
        deployment("web", cpu="500m", labels={"app": "web"}),
        deployment("agent", cpu="100m", labels={"app": "agent"}),
        deployment("ledger", cpu="3", labels={"app": "east"}),
        deployment("ledger-2", cpu="3", labels={"app": "east"}),
    ]


def test_each_loss_says_what_moves_and_what_is_stranded_worst_first() -> None:
    report = headroom.headroom(source_set(*fleet()))
    assert report.clusters == 4 and report.strands
    names = [loss.name for loss in report.losses]
    assert names == ["east-1", "east-2", "west-1", "lab"]  # two strand a group, one moves one
    west = report.losses[2]
    assert [(move.kind, move.before) for move in west.moved] == [("moved", ("west-1",))]
    worst = report.losses[0]
    (stranded,) = worst.stranded
    assert stranded.policy == "east-only" and stranded.why == "no-room"
    assert [closest.cluster for closest in stranded.closest] == ["east-2"]
    assert worst.shortfall == stranded.lacks == {"cpu": 2100}
    assert not any(loss.stranded for loss in report.losses[2:])
    lab = report.loss_of("lab")
    assert lab is not None and lab.moved == () and lab.stranded == ()  # holds only a Duplicate's copy


def test_a_domain_loses_every_cluster_sharing_a_value() -> None:
    report = headroom.headroom(source_set(*fleet()), domain="topology.kubernetes.io/zone")
    assert [loss.name for loss in report.losses] == [
        "topology.kubernetes.io/zone=east",
        "topology.kubernetes.io/zone=west",
    ]
    east = report.losses[0]
    assert east.clusters == ("east-1", "east-2")
    assert [item.why for item in east.stranded] == ["no-candidate", "no-candidate"]
    assert report.unlabelled == ("lab",)
    with pytest.raises(headroom.HeadroomError, match="--domain rack: no cluster has the label rack"):
        headroom.headroom(source_set(*fleet()), domain="rack")


def test_ignored_groups_are_accepted_and_do_not_fail_the_gate() -> None:
    source = source_set(*fleet())
    report = headroom.headroom(source, ignore=["east-*"])
    assert not report.strands
    assert {item.policy for loss in report.losses for item in loss.accepted} == {"east-only"}
    with pytest.raises(headroom.HeadroomError, match="--ignore nothing-here: no group or policy"):
        headroom.headroom(source, ignore=["nothing-here"])


def test_moves_are_single_groups_landing_elsewhere_and_divides_re_divided() -> None:
    assert headroom.move_kind(("a",), ("b",), "single") == "moved"
    assert headroom.move_kind(("a", "b"), ("b",), "divide") == "re-divided"
    assert headroom.move_kind(("a", "b"), ("b",), "duplicate") is None
    assert headroom.move_kind(("a",), ("a",), "single") is None


SHORT = ("needs ", "cannot run its ", "does not have enough resources for the pinned group")
"""How the planner's warning of a cluster whose share (or pinned group) does not fit begins."""


def short_on(group: GroupPlan) -> set[str]:
    """The clusters the planner warns ``group``'s share does not fit: by cluster, since a share short
    today, whatever the amount after, was Pending before the loss."""
    return {
        cluster
        for warning in group.warnings
        for cluster in group.clusters
        for verdict in SHORT
        if warning.startswith(f"{cluster} {verdict}")
    }


@settings(max_examples=30, deadline=None)
@given(fleets())
def test_stranded_is_exactly_what_the_loss_leaves_unschedulable(documents: Documents) -> None:
    source, digests = loaded(documents)
    today = planning.plan(source, file_digests=digests)
    report = headroom.headroom(source, today=today, file_digests=digests)
    for loss in report.losses:
        (lost,) = loss.clusters
        without = whatif.apply(source, [whatif.Without(lost)]).source
        after = planning.plan(without, previous=whatif.placement_of(today))  # afresh, no memory
        before = {group.name: group for group in today.groups}
        unschedulable = {
            group.name
            for group in after.groups
            if group.status == "unschedulable" and before[group.name].status != "unschedulable"
        }
        # a share or copy of a spread, or a pinned group, rendered where it no longer fits: Pending pods
        # (a pin is placed in group-name order with the spreads, so a lost share re-homed first takes
        # the room of a pinned group on the cluster it lands on)
        shares = {
            group.name
            for group in after.groups
            if group.status != "unschedulable" and short_on(group) - short_on(before[group.name])
        }
        assert {item.group for item in (*loss.stranded, *loss.accepted)} == unschedulable | shares


@settings(max_examples=30, deadline=None)
@given(fleets())
def test_losing_a_cluster_that_holds_nothing_changes_nothing(documents: Documents) -> None:
    source, digests = loaded(documents)
    today = planning.plan(source, file_digests=digests)
    holding = {name for group in today.groups for name in group.clusters}
    holding |= {followed.cluster for followed in today.followed_namespaces}
    idle = [c.name for c in source.clusters if c.name not in holding]
    for name in idle:
        result = whatif.what_if(source, [whatif.Without(name)], today=today)
        loss = headroom.loss_from(name, (name,), result, ())
        assert loss.moved == () and loss.stranded == () and loss.scale_ups == ()
        old, new = renders.render(today, SOURCE).files, renders.render(result.after, SOURCE).files
        changed = diffs.diff_renders(diffs.changed_files(old, new))
        assert changed.objects == () and changed.groups == () and changed.replicas == ()
        assert changed.newly_unscheduled == () and changed.newly_scheduled == ()


@settings(max_examples=30, deadline=None)
@given(fleets())
def test_a_loss_planned_where_it_reaches_is_the_loss_planned_whole(documents: Documents) -> None:
    source, digests = loaded(documents)
    today = planning.plan(source, file_digests=digests)
    parted = headroom.headroom(source, today=today, file_digests=digests)
    whole = headroom.headroom(source, today=today, file_digests=digests, partitioned=False)
    assert parted == whole
    for domain in ("shard", "tier"):
        parted = headroom.headroom(source, today=today, domain=domain)
        assert parted == headroom.headroom(source, today=today, domain=domain, partitioned=False)


def test_what_is_free_elsewhere_counts_the_clusters_a_loss_does_not_reach() -> None:
    documents = [doc for doc in fleet() if doc["metadata"]["name"] != "everywhere"]
    documents.append(cluster("spare", cpu="32"))  # no policy selects it: in no component
    report = headroom.headroom(source_set(*documents))
    (stranded,) = report.losses[0].stranded
    assert stranded.free_elsewhere["cpu"] == 32000
    assert report.loss_of("spare") == headroom.Loss("spare", ("spare",))
