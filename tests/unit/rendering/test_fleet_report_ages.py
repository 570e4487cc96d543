"""A report age from an agent whose clock is ahead (issue 27): its heartbeat is after the reconcile that read
it. The fleet page said "0s" for it, the freshest there is, for as long as the clock was ahead, even after
the agent stopped reporting; it says how far ahead instead, and sorts with the freshest without a negative
sort key (which the page's script compared as text, before every other age)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from nova_gitops.rendering import fleetviews
from nova_gitops.rendering.fleetmodel import FleetFacts, FleetModel
from nova_gitops.scheduling import planning
from nova_gitops.scheduling.plans import PreviousPlacement
from nova_gitops.webui import pages
from tests import builders

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


def test_a_heartbeat_after_now_is_shown_as_ahead_not_as_fresh() -> None:
    source = builders.source_set(builders.cluster("wlc-1"), builders.policy("p", clusterSelector={}))
    plan = planning.plan(source, previous=PreviousPlacement({}))
    ahead = (NOW + timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    agents = {"wlc-1": fleetviews.agent_facts({"status": {"heartbeat": ahead}})}
    model = FleetModel(FleetFacts(plan=plan, source_set=source, agents=agents, now=NOW))
    (row,) = model.clusters
    assert row.report_age == "5m ahead"
    html = pages.fleet_page(model, stamp="", version=1)
    keys = re.findall(r'data-sort="([^"]*)">5m ahead<', html)
    assert keys == ["000000000000"]
