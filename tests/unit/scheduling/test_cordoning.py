"""Cordoned clusters (label ``nova.elotl.co/cordoned: "true"``, ``scheduling.cordoning``):

- a new group never goes to a cordoned cluster, and its reason says ``Cluster c skipped, cordoned;``;
- a group the previous render placed there stays (running groups stay), and the plan is a fixed point;
- a group that must move off its cluster does not move onto a cordoned one, and one that no longer fits
  on its cordoned cluster moves off it for good (its reason says "cordoned" for it);
- a spread policy's new group spreads over the clusters that are not cordoned; one already there keeps it;
- a pin to a cordoned cluster is honoured, with a warning;
- a cluster labelled anything but "true" is not cordoned.
"""

from __future__ import annotations

from typing import Any

from nova_gitops.scheduling.plans import PreviousPlacement
from tests.builders import cluster, deployment, group_of, plan, policy, source_set

CORDON = {"nova.elotl.co/cordoned": "true"}


def _clusters(*, cordoned: str = "c1", value: str = "true") -> list[dict[str, Any]]:
    return [
        cluster("c1", cpu="8", labels={"nova.elotl.co/cordoned": value} if cordoned == "c1" else {}),
        cluster("c2", cpu="2", labels={"nova.elotl.co/cordoned": value} if cordoned == "c2" else {}),
    ]


def test_a_new_group_skips_a_cordoned_cluster_and_says_so() -> None:
    result = plan(*_clusters(), policy("p"), deployment("web"))
    group = group_of(result, "web")
    assert group.clusters == ("c2",)
    assert "Cluster c1 skipped, cordoned;" in group.reason


def test_only_the_label_value_true_cordons() -> None:
    assert group_of(plan(*_clusters(value="false"), policy("p"), deployment("web")), "web").clusters == (
        "c1",
    )


def test_a_group_already_on_a_cordoned_cluster_stays_and_the_plan_is_a_fixed_point() -> None:
    documents = (*_clusters(), policy("p"), deployment("web"))
    name = group_of(plan(*documents), "web").name
    first = plan(*documents, previous={name: ("c1",)})
    assert group_of(first, "web").clusters == ("c1",)
    again = plan(*documents, previous={group.name: group.clusters for group in first.groups})
    assert again.groups == first.groups


def test_a_group_that_must_move_does_not_move_onto_a_cordoned_cluster() -> None:
    documents = (*_clusters(cordoned="c2"), policy("p"), deployment("web", replicas=6, cpu="500m"))
    name = group_of(plan(*documents), "web").name
    # the group was on c2 before; it no longer fits there (3 cpu > 2), c1 is open: it moves to c1
    moved = plan(*documents, previous={name: ("c2",)})
    assert group_of(moved, "web").clusters == ("c1",)
    cordoned_both = (
        cluster("c1", cpu="8", labels=CORDON),
        cluster("c2", cpu="2", labels=CORDON),
        policy("p"),
        deployment("web", replicas=6, cpu="500m"),
    )
    stuck = group_of(plan(*cordoned_both, previous={name: ("c2",)}), "web")
    assert stuck.status == "unschedulable" and "Cluster c1 skipped, cordoned;" in stuck.reason


def test_a_group_that_outgrew_its_cordoned_cluster_moves_off_it_for_good() -> None:
    documents = (*_clusters(cordoned="c2"), policy("p"), deployment("web", replicas=6, cpu="500m"))
    name = group_of(plan(*documents), "web").name
    moved = group_of(plan(*documents, previous={name: ("c2",)}), "web")
    assert moved.clusters == ("c1",) and "Cluster c2 skipped, cordoned;" in moved.reason
    assert group_of(plan(*documents, previous={name: moved.clusters}), "web").clusters == ("c1",)


def test_a_spread_spreads_over_the_clusters_that_are_not_cordoned_and_keeps_those_it_was_on() -> None:
    spread = policy(
        "p", spreadConstraints={"spreadMode": "Duplicate", "topologyKey": "kubernetes.io/metadata.name"}
    )
    documents = (*_clusters(), spread, deployment("web"))
    fresh = group_of(plan(*documents), "web")
    assert fresh.clusters == ("c2",) and "c1 cordoned" in fresh.reason
    kept = group_of(plan(*documents, previous={fresh.name: ("c1", "c2")}), "web")
    assert kept.clusters == ("c1", "c2")


def test_a_pin_to_a_cordoned_cluster_is_honoured_with_a_warning() -> None:
    pinned = deployment("web", annotations={"nova.elotl.co/cluster": "c1"})
    group = group_of(plan(*_clusters(), policy("p"), pinned), "web")
    assert group.clusters == ("c1",)
    assert "pinned to cluster c1, which is cordoned" in group.warnings


def test_the_cluster_reads_cordoned_from_its_label() -> None:
    found = {c.name: c.cordoned for c in source_set(*_clusters()).clusters}
    assert found == {"c1": True, "c2": False}
    assert PreviousPlacement.empty().groups == {}
