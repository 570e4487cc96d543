"""The fleet view model (issue 27): the rows the web view and the HTML report show, from a plan and the
agents' reports — capacity bars, every candidate's verdict as ``explain`` says it, waves, and hostile text
made one visible line."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from nova_gitops.rendering import fleetviews
from nova_gitops.rendering.activityviews import Reconciled
from nova_gitops.rendering.fleetmodel import FleetFacts, FleetModel
from nova_gitops.scheduling import explaining, planning
from nova_gitops.scheduling.plans import PreviousPlacement
from tests import builders

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


def _model(*documents: dict, **facts: object) -> FleetModel:
    source = builders.source_set(*documents)
    plan = planning.plan(source, previous=PreviousPlacement({}))
    return FleetModel(FleetFacts(plan=plan, source_set=source, now=NOW, **facts))  # type: ignore[arg-type]


def _fleet() -> tuple[dict, ...]:
    return (
        builders.cluster("big", cpu="8", memory="32Gi"),
        builders.cluster("small", cpu="1", memory="2Gi"),
        builders.cluster("down", ready="False"),
        builders.policy("web", clusterSelector={}),
        builders.deployment("shop", replicas=2, cpu="2"),
    )


def test_a_cluster_row_shows_its_capacity_bars_what_we_placed_and_its_state() -> None:
    model = _model(*_fleet())
    rows = {row.name: row for row in model.clusters}
    big = rows["big"]
    cpu = next(bar for bar in big.bars if bar.resource == "cpu")
    assert (cpu.ours, cpu.others, cpu.free, cpu.total) == (4000, 0, 4000, 8000)
    assert cpu.text == "cpu 4 of 8 used (ours 4, others 0)"
    assert big.groups == 1 and big.state == "Ready"
    assert rows["down"].state == "NotReady"
    assert rows["small"].groups == 0
    assert model.summary.clusters == 3 and model.summary.ready == 2 and model.summary.groups == 1


def test_every_candidates_verdict_is_what_explain_says() -> None:
    model = _model(*_fleet())
    [row] = model.groups
    page = model.group(row.name)
    assert page is not None
    verdicts = {verdict.cluster: verdict for verdict in page.verdicts}
    assert verdicts["big"].chosen and verdicts["big"].verdict.startswith("picked")
    assert "does not have enough resources" in verdicts["small"].verdict
    assert verdicts["down"].verdict == "skipped, it is not ready"
    explained = explaining.explain(
        builders.source_set(*_fleet()),
        planning.plan(builders.source_set(*_fleet()), previous=PreviousPlacement({})),
        "deployment/demo/shop",
    )
    assert list(page.reason) == explained["decision"]
    assert [(item.kind, item.name, item.copies) for item in page.objects] == [("Deployment", "shop", "big")]
    assert model.group("no-such-group") is None


def test_an_agents_report_gives_the_report_age_synced_commit_drift_and_requests() -> None:
    body = {
        "status": {
            "heartbeat": (NOW - timedelta(seconds=75)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "syncedRevision": "0123456789abcdef",
            "driftedObjects": [{"kind": "Deployment", "namespace": "demo", "name": "shop"}],
            "rescheduleRequests": [{"group": "g1", "reason": "pods Pending"}],
            "lastError": "apply failed",
        }
    }
    facts = fleetviews.agent_facts(body)
    model = _model(*_fleet(), agents={"big": facts}, head="feedfacefeedface")
    big = next(row for row in model.clusters if row.name == "big")
    assert (big.report_age, big.synced, big.released) == ("1m", "0123456", "feedfac")
    assert big.drifted == ("Deployment/demo/shop",) and big.requests == ("g1: pods Pending",)
    assert big.last_error == "apply failed"
    small = next(row for row in model.clusters if row.name == "small")
    assert small.report_age == "-" and small.synced == "-"


def test_a_report_of_the_wrong_shape_gives_no_facts_rather_than_an_error() -> None:
    for body in (None, [], {"status": []}, {"status": {"heartbeat": 5, "driftedObjects": "x"}}):
        assert fleetviews.agent_facts(body) == fleetviews.AgentFacts()


def test_hostile_names_and_reasons_become_one_visible_line() -> None:
    hostile = "evil\u202egnp.exe\n<script>"
    facts = fleetviews.agent_facts(
        {"status": {"lastError": hostile, "rescheduleRequests": [{"group": hostile}]}}
    )
    assert facts.last_error == "evil\\u202egnp.exe\\u000a<script>"
    assert "\u202e" not in facts.requests[0] and "\n" not in facts.requests[0]
    assert fleetviews.shown("x" * 500).endswith("…") and len(fleetviews.shown("x" * 500)) == 300


def test_the_rollout_page_lists_the_waves_and_the_commands_to_copy() -> None:
    strategy = {
        "apiVersion": "gitops.nova.elotl.co/v1alpha1",
        "kind": "RolloutStrategy",
        "metadata": {"name": "waves"},
        "spec": {"waves": [{"name": "canary", "clusterSelector": {"matchLabels": {"tier": "canary"}}}]},
    }
    documents = (builders.cluster("c1", labels={"tier": "canary"}), builders.cluster("c2"), strategy)
    model = _model(*documents, where="--repo file:///r.git --source ./fleet")
    rollout = model.rollout
    assert [(wave.name, [c.name for c in wave.clusters]) for wave in rollout.waves] == [
        ("canary", ["c1"]),
        ("others", ["c2"]),
    ]
    assert rollout.outcome == "not started" and rollout.waves[0].state == "not started"
    assert _model(*_fleet()).rollout.outcome == "follows the branch head", "no RolloutStrategy"
    released = _model(*documents, released={"c1": "abcdef0123456789"})
    assert released.rollout.waves[0].clusters[0].released == "abcdef0"
    assert next(row for row in released.clusters if row.name == "c1").released == "abcdef0"
    assert next(row for row in released.clusters if row.name == "c2").released == "-"
    assert "nova-gitops rollout abort --repo file:///r.git --source ./fleet" in rollout.commands


def test_reconciles_are_listed_newest_first_with_what_moved_and_errors() -> None:
    entries = [
        Reconciled(at=NOW, outcome="published", commit="abcdef1234567890", duration=0.5, notes=("moved g",)),
        Reconciled(at=NOW + timedelta(seconds=5), outcome="failed", commit="", duration=0.1, error="boom"),
    ]
    model = _model(*_fleet(), reconciles=entries)
    assert [row.outcome for row in model.reconciles] == ["failed", "published"]
    assert model.reconciles[1].commit == "abcdef123456" and model.reconciles[1].what == ("moved g",)
    assert model.reconciles[0].error == "boom"


def test_a_groups_page_has_its_moves_from_the_reconciles_newest_first() -> None:
    model = _model(*_fleet())
    [row] = model.groups
    entries = [
        Reconciled(
            at=NOW,
            outcome="published",
            commit="c1" * 8,
            duration=0.1,
            notes=(f"- group {row.name} placed on big (new)",),
        ),
        Reconciled(
            at=NOW,
            outcome="published",
            commit="c2" * 8,
            duration=0.1,
            notes=("- group other placed on small",),
        ),
        Reconciled(
            at=NOW + timedelta(minutes=1),
            outcome="published",
            commit="c3" * 8,
            duration=0.1,
            notes=(f'rescheduled {row.name} from big to small: cluster big reported "full"',),
        ),
    ]
    page = _model(*_fleet(), reconciles=entries).group(row.name)
    assert page is not None
    assert [(commit, what.split()[0]) for _, commit, what in page.history] == [
        ("c3c3c3c3c3c3", "rescheduled"),
        ("c1c1c1c1c1c1", "-"),
    ]
