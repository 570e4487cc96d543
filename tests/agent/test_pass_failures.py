"""Honest exit codes, and a report whatever fails (fake API server, injected answers; the report goes to the
real status branch):

- the inventory may not be read (403): exit 2 naming the verb, resource, namespace and the Role that grants
  it; the report is pushed with capacity and that ``lastError``; ``run`` waits the normal interval;
- nodes may not be listed: the render is applied, the report is pushed without capacity and says why
  (``capacity not measured``, naming the observe ClusterRole), exit 2;
- an API answer that is neither a refusal nor "unavailable" (422 on the inventory write): exit 3, never 4,
  no back-off, report pushed;
- the API server unavailable (503) for the inventory: exit 4 and the back-off, and still a report;
- an unexpected exception in the pass: exit 3, the report is pushed with it in ``lastError``;
- delegated mode forbidden to list a workload kind: exit 2, report pushed.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from nova_agent.kubeclient import ApiClientKube
from nova_agent.kubeports import Resource
from nova_agent.passerrors import EXIT_UNEXPECTED
from nova_agent.resources import Body
from nova_agent.running import EXIT_REFUSED, EXIT_UNREACHABLE, PassOutcome
from tests.agent.conftest import AgentFactory
from tests.agent.gitrepos_helpers import RenderedRepo
from tests.agent.manifests import configmap, layout
from tests.fakekube.fixtures import KubeTarget

pytestmark = pytest.mark.fake_only("injects 403, 422 and 503 answers and an exception in a pass")

SERVICE_ACCOUNT = "system:serviceaccount:nova-agent:nova-agent"


def forbidden(verb: str, resource: str, namespace: str = "", group: str = "") -> str:
    """kube-apiserver's wording of an RBAC refusal."""
    where = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    return (
        f'{resource} is forbidden: User "{SERVICE_ACCOUNT}" cannot {verb} resource "{resource}" in API group '
        f'"{group}" {where}'
    )


def inventory_path(namespace: str) -> str:
    return rf"^/api/v1/namespaces/{namespace}/configmaps/nova-agent-inventory-c1$"


def status(rendered: RenderedRepo) -> dict[str, Any]:
    document = yaml.safe_load(rendered.show("nova-status", "status/c1.yaml"))
    assert isinstance(document, dict)
    return dict(document["status"])


@pytest.fixture
def cluster(kube: KubeTarget, rendered: RenderedRepo) -> KubeTarget:
    assert kube.fake is not None
    kube.fake.add_node("node-1")
    rendered.commit(layout("c1", configmap("c1", kube.namespace, "a")))
    return kube


def test_an_unreadable_inventory_is_a_refusal_named_with_its_role_and_still_reported(
    cluster: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    assert cluster.fake is not None
    ns = cluster.namespace
    cluster.fake.fail_next("GET", inventory_path(ns), 403, forbidden("get", "configmaps", ns), times=100)
    agent = make_agent(interval=10.0)
    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_REFUSED, outcome.message
    assert outcome.message.startswith(f"nova-agent may not get configmaps in namespace {ns}")
    assert f"Role nova-agent-inventory in namespace {ns} (deploy/agent/base/rbac-inventory.yaml)" in (
        outcome.message
    )
    assert outcome.report_pushed
    report = status(rendered)
    assert report["lastError"] == outcome.message
    assert report["capacityResources"] == {"node-1": {"cpu": "4", "memory": "16Gi", "pods": "110"}}
    assert [agent.next_delay(agent.pass_once()) for _ in range(2)] == [10.0, 10.0]


def test_nodes_that_may_not_be_listed_leave_the_report_without_capacity_saying_why(
    cluster: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    assert cluster.fake is not None
    cluster.fake.fail_next("GET", r"^/api/v1/nodes$", 403, forbidden("list", "nodes"), times=100)
    agent = make_agent(interval=10.0)
    outcome = agent.pass_once()
    assert outcome.sync is not None and [ref.name for ref in outcome.sync.applied] == ["a"]
    assert outcome.exit_code == EXIT_REFUSED and agent.next_delay(outcome) == 10.0
    report = status(rendered)
    assert report["capacityResources"] == {}
    assert report["lastError"].startswith("capacity not measured: nova-agent may not list nodes cluster-wide")
    assert "ClusterRole nova-agent-observe" in report["lastError"]


def test_an_api_error_that_is_not_unavailable_is_not_unreachable(
    cluster: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    assert cluster.fake is not None
    cluster.fake.fail_next("PATCH", inventory_path(cluster.namespace), 422, "the inventory is invalid", 100)
    agent = make_agent(interval=10.0)
    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_UNEXPECTED, outcome.message
    assert "the inventory is invalid" in outcome.message
    assert agent.next_delay(outcome) == 10.0
    assert "the inventory is invalid" in status(rendered)["lastError"]


def test_an_unavailable_api_server_is_unreachable_backs_off_and_is_still_reported(
    cluster: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    assert cluster.fake is not None
    cluster.fake.fail_next("GET", inventory_path(cluster.namespace), 503, "etcd is down", times=100)
    agent = make_agent(interval=10.0)
    outcomes = [agent.pass_once() for _ in range(2)]
    assert [outcome.exit_code for outcome in outcomes] == [EXIT_UNREACHABLE] * 2
    assert agent.next_delay(outcomes[-1]) > 10.0
    assert outcomes[0].report_pushed and "etcd is down" in status(rendered)["lastError"]


class BrokenKube(ApiClientKube):
    """Our own port, failing in a way the agent does not expect."""

    def apply(self, resource: Resource, body: Body, *, force: bool, dry_run: bool = False) -> Body:
        raise RuntimeError("a bug")


def test_an_unexpected_error_is_exit_3_and_still_reported(
    cluster: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    agent = make_agent(interval=10.0)
    agent.kube = BrokenKube(cluster.api_client)
    outcome: PassOutcome = agent.pass_once()
    assert outcome.exit_code == EXIT_UNEXPECTED and isinstance(outcome.error, RuntimeError)
    assert outcome.message == "unexpected RuntimeError: a bug"
    assert agent.next_delay(outcome) == 10.0
    assert status(rendered)["lastError"] == "unexpected RuntimeError: a bug"


def test_delegated_mode_forbidden_to_list_a_kind_is_refused_and_reported(
    cluster: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    assert cluster.fake is not None
    cluster.fake.fail_next(
        "GET", r"^/apis/batch/v1/jobs$", 403, forbidden("list", "jobs", group="batch"), 100
    )
    outcome = make_agent(orchestration_enabled=False).pass_once()
    assert outcome.exit_code == EXIT_REFUSED
    assert outcome.message.startswith("nova-agent may not list jobs.batch cluster-wide")
    assert outcome.report_pushed and status(rendered)["lastError"].startswith(outcome.message)


def test_capacity_not_measured_keeps_the_last_measurement_so_nothing_moves_away(
    cluster: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    """An empty, not-Ready cluster in the report would make the scheduler move every group away: one API blip
    on the nodes list must not. The last measured capacity and Ready stand; lastError says why."""
    assert cluster.fake is not None
    agent = make_agent(interval=10.0)
    agent.pass_once()
    measured = status(rendered)
    cluster.fake.fail_next("GET", r"^/api/v1/nodes$", 503, "etcd leader changed", times=100)
    cluster.fake.fail_next("GET", r"^/version$", 503, "etcd leader changed", times=100)
    agent.pass_once()
    report = status(rendered)
    for name in ("conditions", "capacityResources", "availableResources", "nodeLabels"):
        assert report[name] == measured[name], name
    assert report["conditions"][0]["status"] == "True"
    assert report["lastError"].startswith("capacity not measured:")


def test_capacity_never_measured_is_ready_unknown(
    cluster: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    assert cluster.fake is not None
    cluster.fake.fail_next("GET", r"^/api/v1/nodes$", 403, forbidden("list", "nodes"), times=100)
    make_agent(interval=10.0).pass_once()
    (ready,) = status(rendered)["conditions"]
    assert (ready["status"], ready["reason"]) == ("Unknown", "CapacityNotMeasured")
