"""``nova-gitops headroom``'s table (``rendering.headroomformats``): a loss's row says what would rescue
what it strands."""

from __future__ import annotations

from nova_gitops.rendering import headroomformats
from nova_gitops.scheduling.headroom import Loss
from nova_gitops.scheduling.stranding import Closest, Stranded


def stranded(group: str, lacks: dict[str, int]) -> Stranded:
    closest = (Closest("c2", lacks, "skipped, does not have enough resources: needs 3000m cpu on one node"),)
    return Stranded(group, "p", "single", "no-room", "", {"cpu": 3000}, lacks, closest)


def test_a_group_short_on_one_node_only_is_no_shortfall_of_nothing() -> None:
    # c2 has 4 cpu in total over two nodes of 2: the group of 3 cpu needs a bigger node, not "nothing"
    alone = Loss("c1", ("c1",), stranded=(stranded("g", {}),))
    assert headroomformats.loss_row(alone)[3] == "a bigger node for 1 group"
    both = Loss("c1", ("c1",), stranded=(stranded("g", {}), stranded("h", {"cpu": 1000})))
    assert headroomformats.loss_row(both)[3] == "1000m cpu; a bigger node for 1 group"
    assert headroomformats.loss_row(Loss("c3", ("c3",)))[3] == "–"
