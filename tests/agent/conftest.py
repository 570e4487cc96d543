"""Agent boundary fixtures: the fake (or real, with NOVA_TEST_KUBECONFIG) cluster from tests/fakekube, a
rendered repository over file://, and a factory for agents wired to both with a fake clock.

``pytest_plugins`` may only be declared in the root conftest, so the two cluster fixtures are imported here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from nova_agent.clocks import Clock, FakeClock
from nova_agent.kubeclient import ApiClientKube
from nova_agent.running import Agent
from nova_agent.settings import AgentSettings
from tests.agent.gitrepos_helpers import RenderedRepo
from tests.fakekube.fixtures import KubeTarget, fake_kube, kube  # noqa: F401

AgentFactory = Callable[..., Agent]


@pytest.fixture
def rendered(tmp_path: Path) -> RenderedRepo:
    return RenderedRepo(tmp_path)


@pytest.fixture
def make_agent(kube: KubeTarget, rendered: RenderedRepo, tmp_path: Path) -> AgentFactory:  # noqa: F811
    def factory(
        cluster: str = "c1", *, clock: Clock | None = None, api_client: Any = None, **overrides: Any
    ) -> Agent:
        settings = AgentSettings(
            cluster=cluster,
            repo=rendered.url,
            cache_dir=tmp_path / f"cache-{cluster}",
            **{"namespace": kube.namespace, **overrides},
        )
        return Agent(settings, ApiClientKube(api_client or kube.api_client), clock or FakeClock())

    return factory
