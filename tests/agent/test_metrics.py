"""``nova-agent run --metrics-address``: Prometheus ``/metrics`` counts passes by outcome, drifted objects by
action, corrections and replacements (issue 11 item 1: "/metrics counts them"), read over HTTP as Prometheus
would; the time of the last in-sync pass comes from the agent's clock."""

from __future__ import annotations

import urllib.request

from kubernetes import client

from nova_agent.metrics import AgentMetrics
from nova_agent.running import Agent
from tests.agent.conftest import AgentFactory
from tests.agent.gitrepos_helpers import RenderedRepo
from tests.agent.manifests import configmap, layout
from tests.fakekube.fixtures import KubeTarget


def scrape(port: int) -> dict[str, float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            samples[name] = float(value)
    return samples


def test_metrics_count_passes_and_drift(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    rendered.commit(layout("c1", configmap("c1", ns, "settings", "1")))
    plain = make_agent(report_enabled=False)
    metrics = AgentMetrics()
    agent = Agent(plain.settings, plain.kube, plain.clock, metrics)
    port = metrics.serve("127.0.0.1:0")
    agent.pass_once()
    api = client.CoreV1Api(kube.api_client)
    live = api.read_namespaced_config_map("settings", ns)
    live.data = {"v": "edited"}
    api.replace_namespaced_config_map("settings", ns, live, field_manager="kubectl-edit")
    agent.pass_once()
    samples = scrape(port)
    assert samples['nova_agent_passes_total{outcome="in_sync"}'] == 2
    assert samples['nova_agent_drifted_objects{action="correct"}'] == 1
    assert samples["nova_agent_drift_corrections_total"] == 1
    assert samples["nova_agent_replacements_total"] == 0
    assert samples["nova_agent_pass_duration_seconds_count"] == 2
    assert samples["nova_agent_last_in_sync_timestamp_seconds"] == plain.clock.now().timestamp()
    agent.pass_once()
    assert scrape(port)['nova_agent_drifted_objects{action="correct"}'] == 0
