"""The agent looks again sooner while what it just applied is not yet healthy (``--settle-interval``), so a
rollout's gate sees a workload healthy seconds after it is, not an interval later; and only then: a healthy
cluster, or a workload still not healthy long after the apply, is looked at every ``--interval``."""

from __future__ import annotations

from nova_agent.clocks import FakeClock
from nova_agent.running import EXIT_OK
from nova_agent.settings import SETTLE_WINDOW
from tests.agent.conftest import AgentFactory
from tests.agent.gitrepos_helpers import RenderedRepo
from tests.agent.manifests import configmap, deployment, layout
from tests.agent.pods import available
from tests.agent.test_revision_health import with_image
from tests.fakekube.fixtures import KubeTarget
from tests.realkube.kubelets import Kubelet


def test_passes_come_sooner_until_what_was_applied_is_healthy(
    kube: KubeTarget, kubelet: Kubelet, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    kubelet.add_node("n1")
    kubelet.pause()  # applied, not yet available, whatever the timing
    clock = FakeClock()
    agent = make_agent(clock=clock, interval=30.0, settle_interval=5.0)
    rendered.commit(layout("c1", deployment("c1", ns, "web")))
    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_OK and agent.next_delay(outcome) == 5.0  # applied, not yet available
    kubelet.resume()
    kubelet.until(lambda: available(kube, "web") == 1, "web available")
    assert agent.next_delay(agent.pass_once()) == 30.0  # healthy: back to the interval

    kubelet.pause()
    rendered.commit(layout("c1", with_image(deployment("c1", ns, "web"), "registry.example/app:2")))
    assert agent.next_delay(agent.pass_once()) == 5.0
    clock.advance(SETTLE_WINDOW.total_seconds() + 1)
    assert agent.next_delay(agent.pass_once()) == 30.0  # still not healthy long after: the interval again


def test_nothing_to_wait_for_or_settling_off_keeps_the_interval(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    rendered.commit(layout("c1", configmap("c1", ns, "cfg")))
    agent = make_agent(interval=30.0, settle_interval=5.0)
    assert agent.next_delay(agent.pass_once()) == 30.0  # a ConfigMap has no health to wait for
    rendered.commit(layout("c1", configmap("c1", ns, "cfg"), deployment("c1", ns, "web")))
    off = make_agent(interval=30.0, settle_interval=0.0)
    assert off.next_delay(off.pass_once()) == 30.0
