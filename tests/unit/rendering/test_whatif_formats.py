"""The what-if's capacity table (``rendering.whatifformats``): each cluster after the change, with today's
free room beside it where the change altered it."""

from __future__ import annotations

from nova_gitops.rendering import whatifformats
from nova_gitops.scheduling import whatif
from tests.builders import cluster
from tests.unit.scheduling.test_whatif import fleet, parsed_cluster, today_of


def test_a_new_cluster_has_no_free_room_of_today_to_compare_with() -> None:
    # it had none: "8000m free (was 0m)" would read as if it had been full
    source, today = today_of(*fleet())
    added = parsed_cluster(cluster("new", cpu="8"), "added.yaml")
    result = whatif.what_if(source, [whatif.AddCluster(added), whatif.Capacity("a", 50)], today=today)
    rows = {row.cluster: row for row in whatifformats.capacity_rows(result)}
    assert rows["new"].free["cpu"] == 8000 and rows["new"].free_today == {}
    assert rows["a"].free_today["cpu"] > rows["a"].free["cpu"]
    _, body = whatifformats.capacity_table(list(rows.values()))
    (new,) = [line for line in body if line[0] == "new"]
    assert not any("was" in cell for cell in new)
