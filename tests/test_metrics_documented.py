"""The metrics, their documentation and the Grafana dashboard cannot drift apart.

Behaviours covered:
- every metric family a running controller and a running agent serve on ``/metrics`` (scraped over HTTP
  after a real reconcile and a real pass) is documented in docs/metrics.md, with its type;
- every documented metric is served (no documentation of a metric that no longer exists);
- deploy/grafana/nova-gitops-dashboard.json is a Grafana dashboard model with a Prometheus data source
  variable that every panel and query uses, unique panel ids, and panels for reconciles, placement moves,
  unscheduled objects, reschedules, drift, rollout waves/paused/duration and agent sync latency;
- every metric the dashboard queries is documented and appears in a scrape.
"""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from nova_agent.clocks import FakeClock
from nova_agent.kubeclient import ApiClientKube
from nova_agent.metrics import AgentMetrics
from nova_agent.running import Agent
from nova_agent.settings import AgentSettings
from nova_gitops.controller.serving import metrics_server
from nova_gitops.controller.settings import Address
from tests.agent.gitrepos_helpers import RenderedRepo
from tests.agent.manifests import configmap, layout
from tests.controller.helpers import Fleet, cluster_report, deployment, policy
from tests.fakekube.fixtures import KubeTarget

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "metrics.md"
DASHBOARD = ROOT / "deploy" / "grafana" / "nova-gitops-dashboard.json"
SERIES_SUFFIXES = ("_bucket", "_sum", "_count", "_total", "_created")
DOCUMENTED_ROW = re.compile(r"^\| `(nova_[a-z_]+)` \| (counter|gauge|histogram)", re.MULTILINE)


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        return str(answer.read().decode())


def families(text: str) -> dict[str, tuple[str, set[str]]]:
    """Family name as documented (counters with ``_total``) → (type, the series names of its samples)."""
    found: dict[str, tuple[str, set[str]]] = {}
    for family in text_string_to_metric_families(text):
        if family.name.endswith("_created") or not family.name.startswith("nova_"):
            continue
        name = f"{family.name}_total" if family.type == "counter" else family.name
        found[name] = (family.type, {sample.name for sample in family.samples})
    return found


@pytest.fixture
def served(tmp_path: Path, kube: KubeTarget) -> dict[str, tuple[str, set[str]]]:
    """The families of a controller after one reconcile and of an agent after one pass, over HTTP."""
    (tmp_path / "controller").mkdir()
    fleet = Fleet(tmp_path / "controller")
    fleet.write_source("policy.yaml", policy())
    fleet.write_source("web.yaml", deployment())
    fleet.report(cluster_report("wlc-1", cpu="4"))
    controller = fleet.controller()
    server = metrics_server(Address("127.0.0.1", 0), controller.metrics).start()
    try:
        controller.reconcile_once()
        assert controller.headroom is not None and controller.headroom.wait(60)  # computed in its thread
        found = families(scrape(server.port))
    finally:
        server.close()
    rendered = RenderedRepo(tmp_path)
    rendered.commit(layout("c1", configmap("c1", kube.namespace, "settings")))
    settings = AgentSettings(
        cluster="c1",
        repo=rendered.url,
        cache_dir=tmp_path / "agent-cache",
        namespace=kube.namespace,
        report_enabled=False,
    )
    metrics = AgentMetrics()
    port = metrics.serve("127.0.0.1:0")
    Agent(settings, ApiClientKube(kube.api_client), FakeClock(), metrics).pass_once()
    agent = families(scrape(port))
    assert agent and found
    return {**found, **agent}


def documented() -> dict[str, str]:
    return dict(DOCUMENTED_ROW.findall(DOCS.read_text()))


def test_every_served_metric_is_documented_and_every_documented_one_served(
    served: dict[str, tuple[str, set[str]]],
) -> None:
    docs = documented()
    assert {name: kind for name, (kind, _) in served.items()} == docs


def queried_metrics(dashboard: dict[str, Any]) -> set[str]:
    names: set[str] = set()
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            names.update(re.findall(r"\bnova_[a-z_]+\b", target["expr"]))
    for variable in dashboard["templating"]["list"]:
        names.update(re.findall(r"\bnova_[a-z_]+\b", json.dumps(variable.get("query", ""))))
    return names


def test_the_dashboard_is_a_grafana_model_over_a_prometheus_variable() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] and dashboard["title"] and isinstance(dashboard["schemaVersion"], int)
    variables = {variable["name"]: variable for variable in dashboard["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for panel in dashboard["panels"]:
        assert {"h", "w", "x", "y"} <= panel["gridPos"].keys()
        assert panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
        refs = [target["refId"] for target in panel["targets"]]
        assert refs and len(refs) == len(set(refs))
        for target in panel["targets"]:
            assert target["datasource"] == panel["datasource"] and target["expr"]
    for variable in variables.values():
        if variable["type"] == "query":
            assert variable["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
    queried = queried_metrics(dashboard)
    for wanted in (
        "nova_controller_reconciles_total",
        "nova_controller_placement_changes_total",
        "nova_controller_unscheduled_objects",
        "nova_controller_reschedules_total",
        "nova_agent_drifted_objects",
        "nova_rollout_wave",
        "nova_rollout_paused",
        "nova_rollout_duration_seconds",
        "nova_agent_pass_duration_seconds_bucket",
        "nova_headroom_stranded_groups",
        "nova_headroom_computed_timestamp_seconds",
    ):
        assert wanted in queried, wanted


def test_every_metric_the_dashboard_queries_is_documented_and_served(
    served: dict[str, tuple[str, set[str]]],
) -> None:
    series = {name for _, samples in served.values() for name in samples}
    docs = documented()
    for name in sorted(queried_metrics(json.loads(DASHBOARD.read_text()))):
        assert name in series, f"the dashboard queries {name}, which no scrape has"
        family = name
        if family not in docs:
            family = next(
                (family.removesuffix(suffix) for suffix in SERIES_SUFFIXES if family.endswith(suffix)), family
            )
        assert family in docs, f"the dashboard queries {name}, which docs/metrics.md does not document"
