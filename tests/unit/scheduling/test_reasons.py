"""Reasons a user can act on (docs/design.md §3 "Decisions carry reasons in Nova's event wording"; issue 10
item 8):
a single placement's reason gives every candidate a verdict — those tried before the chosen one, and those not
tried because it was picked first — and placing on a Standby cluster says it wakes it. Verdicts are short and
deterministic; more than a handful of clusters with one verdict are counted, not named (the header names
every candidate)."""

from __future__ import annotations

from typing import Any

import pytest

from nova_gitops.scheduling import placing
from tests.builders import cluster, deployment, group_of, plan, policy

ORDERED = {
    "matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["wlc-1", "wlc-9"]}
    ]
}


def reason_of(*documents: dict[str, Any], **options: Any) -> str:
    return group_of(plan(*documents, **options), "web").reason


@pytest.mark.parametrize(
    ("documents", "verdicts"),
    [
        (  # a fitting cluster ranked after the chosen one
            [cluster("wlc-1", cpu="8"), cluster("wlc-3", cpu="4"), policy("p"), deployment("web")],
            [
                "Picked cluster wlc-1 because it has enough resources;",
                "Cluster wlc-3 fits, not chosen: wlc-1 has more free capacity;",
            ],
        ),
        (  # a tie on free capacity goes to the name
            [cluster("wlc-2", cpu="4"), cluster("wlc-1", cpu="4"), policy("p"), deployment("web")],
            ["Cluster wlc-2 fits, not chosen: wlc-1 has as much free capacity and comes first by name;"],
        ),
        (  # a cluster too small, not tried because the chosen one ranked first: why, per node
            [
                cluster("wlc-1", nodes={"n1": {"cpu": "8", "memory": "16Gi"}}),
                cluster(
                    "wlc-2",
                    nodes={"n1": {"cpu": "1", "memory": "16Gi"}, "n2": {"cpu": "1", "memory": "16Gi"}},
                ),
                policy("p"),
                deployment("web", cpu="1500m"),
            ],
            [
                "Cluster wlc-2 skipped, does not have enough resources: needs 1500m cpu on one node, "
                "best node has 1000m;"
            ],
        ),
        (  # a tried cluster that does not fit comes before the pick, as Nova's events do
            [
                cluster("wlc-1", cpu="1"),
                cluster("wlc-2", cpu="900m"),
                cluster("wlc-3", cpu="2"),
                policy("p"),
                deployment("web", cpu="1500m"),
            ],
            [
                "Picked cluster wlc-3 because it has enough resources;",
                "Cluster wlc-1 skipped, does not have enough resources: needs 1500m cpu on one node, "
                "best node has 1000m;",
            ],
        ),
        (  # a lower tier of orderedClusterSelector
            [
                cluster("wlc-1", cpu="2"),
                cluster("wlc-9", cpu="64"),
                policy("p", orderedClusterSelector=ORDERED),
                deployment("web"),
            ],
            [
                "Picked cluster wlc-1 because it has enough resources;",
                "Cluster wlc-9 not chosen: wlc-1 is in an earlier tier;",
            ],
        ),
        (  # placing on a Standby cluster wakes it
            [cluster("wlc-1", standby=True, ready="False"), policy("p"), deployment("web")],
            [
                "Picked cluster wlc-1 because it has enough resources;",
                "Cluster wlc-1 is on Standby: placing there wakes it;",
            ],
        ),
    ],
)
def test_every_candidate_gets_a_verdict(documents: list[dict[str, Any]], verdicts: list[str]) -> None:
    reason = reason_of(*documents)
    for verdict in verdicts:
        assert verdict in reason


def test_a_sticky_group_says_it_stays() -> None:
    documents = (cluster("a", cpu="2"), cluster("b", cpu="8"), policy("p"), deployment("web", cpu="3"))
    name = group_of(plan(*documents), "web").name
    # the previous cluster no longer fits: the group moves, and a is tried first
    reason = reason_of(*documents, previous={name: ("a",)})
    assert "Cluster a skipped, does not have enough resources" in reason
    assert reason.index("Cluster a skipped") < reason.index("Picked cluster b")


def test_an_avoided_cluster_not_tried_still_gets_its_verdict() -> None:
    documents = (
        cluster("a", cpu="8"),
        cluster("b", cpu="2"),
        cluster("c", cpu="1"),
        policy("p"),
        deployment("web"),
    )
    name = group_of(plan(*documents), "web").name
    reason = reason_of(*documents, avoid={name: {"c": "pods stayed Pending"}})
    assert "Cluster c skipped, pods stayed Pending;" in reason


def test_a_large_fleet_counts_clusters_with_one_verdict() -> None:
    fleet = [cluster(f"wlc-{index:03}", cpu=str(4 + index)) for index in range(20)]
    reason = reason_of(*fleet, policy("p"), deployment("web"))
    count = 20 - 1 - placing.RUNNERS_UP_FITTED
    assert (
        f"{count} other clusters not chosen: "
        "wlc-019 has more free capacity, or as much and comes first by name;" in reason
    )
    fitted = ",".join(f"wlc-{index:03}" for index in range(18, 18 - placing.RUNNERS_UP_FITTED, -1))
    assert f"Clusters {fitted} fit, not chosen: wlc-019 has more free capacity;" in reason
    assert reason == reason_of(*reversed(fleet), policy("p"), deployment("web"))  # deterministic


def test_a_few_clusters_with_one_verdict_share_a_line() -> None:
    fleet = [cluster(name, cpu="4") for name in ("c", "b", "a")]
    reason = reason_of(*fleet, policy("p"), deployment("web"))
    assert "Clusters b,c fit, not chosen: a has as much free capacity and comes first by name;" in reason


def test_a_pin_or_a_spread_onto_a_standby_cluster_says_it_wakes_it() -> None:
    pinned = deployment("web", annotations={"nova.elotl.co/cluster": "wlc-1"})
    assert "Cluster wlc-1 is on Standby: placing there wakes it;" in reason_of(
        cluster("wlc-1", standby=True), cluster("wlc-2"), pinned
    )
    spread = policy(
        "p", spreadConstraints={"spreadMode": "Duplicate", "topologyKey": "kubernetes.io/metadata.name"}
    )
    reason = reason_of(cluster("wlc-1", standby=True), cluster("wlc-2"), spread, deployment("web"))
    assert "Cluster wlc-1 is on Standby: placing there wakes it;" in reason
    assert "wlc-2 is on Standby" not in reason


def test_a_spread_gives_every_cluster_its_verdict() -> None:
    """A spread's reason says, for each cluster, whether its share fits, why not, or why it gets nothing:
    the user reads which cluster to grow without adding up the warnings."""
    split = [{"topologyValue": "east", "percentage": 100}, {"topologyValue": "west", "percentage": 0}]
    spread = {"spreadMode": "Divide", "topologyKey": "region", "percentageSplit": split}
    reason = reason_of(
        cluster("wlc-1", cpu="8", labels={"region": "east"}),
        cluster("wlc-2", cpu="1", labels={"region": "east"}),
        cluster("wlc-3", cpu="8", labels={"region": "west"}),
        cluster("wlc-4", cpu="8"),
        policy("p", spreadConstraints=spread),
        deployment("web", replicas=6, cpu="500m"),
    )
    assert reason.endswith(
        "Cluster wlc-1 has enough resources for its share; "
        "Cluster wlc-3 gets no replicas: its share is 0; "
        "Cluster wlc-2 does not have enough resources: needs 1500m cpu for its 3 replicas, has 1000m; "
        "Cluster wlc-4 skipped, has no label region;"
    )


def test_a_spread_that_fits_everywhere_says_so_once() -> None:
    spread = {"spreadMode": "Duplicate", "topologyKey": "kubernetes.io/metadata.name"}
    reason = reason_of(
        cluster("wlc-1"), cluster("wlc-2"), policy("p", spreadConstraints=spread), deployment("web")
    )
    assert reason.endswith("(Duplicate); Each cluster has enough resources for its copy;")
    no_pods = reason_of(
        cluster("wlc-1"),
        cluster("wlc-2"),
        policy("p", spreadConstraints=spread),
        deployment("web", replicas=0),
    )
    assert no_pods.endswith("(Duplicate);")  # nothing to fit, no capacity verdict
