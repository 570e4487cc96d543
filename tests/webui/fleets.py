"""Fleets for the web view's tests: a small plan, and the same plan with hostile names everywhere a name,
label, reason or message from data is shown (issue 27: ``<script>``, ``"onmouseover=``, ``javascript:`` URLs,
RTL control characters)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from nova_gitops.api.inputs import SourceSet
from nova_gitops.rendering import fleetviews
from nova_gitops.rendering.activityviews import Reconciled
from nova_gitops.rendering.fleetmodel import FleetFacts, FleetModel
from nova_gitops.scheduling import planning
from nova_gitops.scheduling.plans import Plan, PreviousPlacement
from tests import builders

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
PROBES = (
    "<script>window.__xss=1;alert(1)</script>",
    '"onmouseover="window.__xss=2;alert(2)" data-probe="',
    "javascript:window.__xss=3;alert(3)",
    "\u202egnp.exe\u200f",
    "</title><img src=x onerror=alert(4)>",
)


def documents() -> tuple[dict, ...]:
    return (
        builders.cluster("wlc-1", cpu="8", memory="32Gi", labels={"tier": "canary"}),
        builders.cluster("wlc-2", cpu="2", memory="4Gi"),
        builders.policy("shop", clusterSelector={}, groupBy={"labelKey": "color"}),
        builders.deployment("blue", replicas=2, cpu="1", labels={"app": "demo", "color": "blue"}),
        builders.deployment("green", replicas=2, cpu="1", labels={"app": "demo", "color": "green"}),
    )


def planned() -> tuple[SourceSet, Plan]:
    source = builders.source_set(*documents())
    return source, planning.plan(source, previous=PreviousPlacement({}))


def model() -> FleetModel:
    source, plan = planned()
    return FleetModel(FleetFacts(plan=plan, source_set=source, now=NOW, title="demo", head="a" * 40))


def hostile_model() -> FleetModel:
    """The plan with every group and cluster renamed to a probe, probes as agents' errors, requests and
    drift, and in a reconcile's notes and error."""
    plan = planned()[1]
    names = {
        usage.cluster: PROBES[index % len(PROBES)] + f"-c{index}" for index, usage in enumerate(plan.clusters)
    }
    groups = tuple(
        dataclasses.replace(
            group,
            name=PROBES[index % len(PROBES)] + f"-g{index}",
            clusters=tuple(names[cluster] for cluster in group.clusters),
            reason=group.reason + " " + " ".join(PROBES),
            warnings=PROBES,
        )
        for index, group in enumerate(plan.groups)
    )
    usages = tuple(dataclasses.replace(usage, cluster=names[usage.cluster]) for usage in plan.clusters)
    hostile = dataclasses.replace(plan, groups=groups, clusters=usages, warnings=PROBES)
    status = {
        "heartbeat": (NOW - timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "syncedRevision": PROBES[2],
        "lastError": " ".join(PROBES),
        "driftedObjects": [{"kind": probe, "name": probe} for probe in PROBES],
        "rescheduleRequests": [{"group": probe, "reason": probe} for probe in PROBES],
    }
    agents = {name: fleetviews.agent_facts({"status": status}) for name in names.values()}
    reconciles = [
        Reconciled(at=NOW, outcome="failed", commit="", duration=0.1, error=" ".join(PROBES), notes=PROBES)
    ]
    facts = FleetFacts(
        plan=hostile,
        source_set=None,
        agents=agents,
        reconciles=reconciles,
        now=NOW,
        title=PROBES[0],
        where=f"--repo {PROBES[2]}",
    )
    return FleetModel(facts)
