"""The issue's "done when": the example source (examples/repo-layout) rendered by ``nova-gitops render``;
two agents on two fake clusters sync the rendered repo, apply every object of their own directory, report
status; ``nova-gitops render --clusters`` accepts the agents' reports as the inventory; after a change the
right agent prunes the removed object and the other changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from nova_agent.clocks import FakeClock
from nova_agent.kubeclient import ApiClientKube
from nova_agent.running import EXIT_OK, Agent
from nova_agent.settings import AgentSettings
from nova_gitops.cli.main import cli as nova_gitops
from tests.agent.gitrepos_helpers import RenderedRepo, git
from tests.fakekube.fixtures import client_for
from tests.fakekube.server import FakeKubeServer

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "repo-layout" / "source"
CLUSTERS = ("wlc-aws-east-1", "wlc-gpu")


def render(output: Path, *extra: str) -> None:
    result = CliRunner().invoke(nova_gitops, ["render", str(EXAMPLE), "-o", str(output), *extra])
    assert result.exit_code == 0, result.output


@pytest.mark.fake_only
def test_two_agents_sync_the_rendered_example_report_and_prune(
    rendered: RenderedRepo, tmp_path: Path
) -> None:
    render(rendered.work)
    git(rendered.work, "add", "-A")
    git(rendered.work, "commit", "-q", "-m", "render example")
    git(rendered.work, "push", "-q", "origin", "HEAD:main")
    servers = {name: FakeKubeServer() for name in CLUSTERS}
    try:
        agents = {}
        for name, server in servers.items():
            server.add_node(f"{name}-1", allocatable={"cpu": "8", "memory": "32Gi", "pods": "110"})
            settings = AgentSettings(name, rendered.url, tmp_path / f"cache-{name}", namespace="default")
            agents[name] = Agent(settings, ApiClientKube(client_for(server)), FakeClock())
        for name, agent in agents.items():
            outcome = agent.pass_once()
            assert outcome.exit_code == EXIT_OK, outcome.message
            assert outcome.sync is not None
            files = [
                p
                for p in (rendered.work / "clusters" / name).rglob("*.yaml")
                if p.name != "kustomization.yaml"
            ]
            assert len(outcome.sync.applied) == len(files) > 0
        status_dir = tmp_path / "status"
        status_dir.mkdir()
        for name in CLUSTERS:
            (status_dir / f"{name}.yaml").write_text(
                rendered.show("nova-status", f"status/{name}.yaml") + "\n"
            )
        render(tmp_path / "rerendered", "--clusters", str(status_dir))

        removed = next((rendered.work / "clusters" / "wlc-aws-east-1").rglob("deployment-*.yaml"))
        rendered.commit({str(removed.relative_to(rendered.work)): None}, "render: one deployment fewer")
        aws, gpu = agents["wlc-aws-east-1"].pass_once(), agents["wlc-gpu"].pass_once()
        assert aws.sync is not None and [ref.name for ref in aws.sync.pruned] == [
            removed.stem.split("-", 1)[1]
        ]
        assert gpu.sync is not None and gpu.sync.pruned == [] and gpu.sync.applied == []
    finally:
        for server in servers.values():
            server.stop()
