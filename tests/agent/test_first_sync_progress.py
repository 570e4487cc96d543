"""The agent's first sync shows its phases on a terminal, and only there (issue 13, item 2).

Behaviours covered:
- a pass tells ``api.progress`` of its phases in order: git, apply, prune, report;
- ``nova-agent sync`` on a terminal (``NOVA_AGENT_FORCE_TERMINAL=1``) draws those phases on stderr and syncs
  as ever; piped, with ``--quiet`` or with ``NO_COLOR`` it prints no drawing at all;
- ``run`` after a first pass made by the command line waits an interval before its next pass.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from nova_agent import cli
from nova_agent.clocks import FakeClock
from nova_agent.passerrors import EXIT_OK
from nova_gitops.api import progress as phases
from nova_gitops.clients import terminals
from tests.agent.conftest import AgentFactory
from tests.agent.gitrepos_helpers import RenderedRepo
from tests.agent.manifests import configmap, layout
from tests.fakekube.fixtures import KubeTarget

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def test_a_pass_reports_its_phases_in_order(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    rendered.commit(layout("c1", configmap("c1", kube.namespace, "settings")))
    recorded = phases.Recorded()
    outcome = make_agent().pass_once(recorded)
    assert outcome.exit_code == EXIT_OK, outcome.message
    assert recorded.names == [phases.GIT, phases.APPLY, phases.PRUNE, phases.REPORT]


def sync(kube: KubeTarget, rendered: RenderedRepo, cache: Path, *extra: str, env: dict[str, str]) -> str:
    args = [
        "sync", "--cluster", "c1", "--repo", rendered.url, "--kubeconfig", str(kube.kubeconfig_path),
        "--context", kube.context, "--namespace", kube.namespace, "--cache-dir", str(cache), *extra,
    ]  # fmt: skip
    result = CliRunner().invoke(cli.main, args, env=env)
    assert result.exit_code == EXIT_OK, result.output
    return result.stderr


@pytest.mark.parametrize(
    ("extra", "env", "drawn"),
    [
        ((), {terminals.AGENT_FORCE_TERMINAL: "1"}, True),
        ((), {}, False),
        (("--quiet",), {terminals.AGENT_FORCE_TERMINAL: "1"}, False),
        ((), {terminals.AGENT_FORCE_TERMINAL: "1", "NO_COLOR": "1"}, False),
    ],
)
def test_sync_draws_the_phases_on_a_terminal_only(
    kube: KubeTarget,
    rendered: RenderedRepo,
    tmp_path: Path,
    extra: tuple[str, ...],
    env: dict[str, str],
    drawn: bool,
) -> None:
    rendered.commit(layout("c1", configmap("c1", kube.namespace, "settings")))
    err = sync(kube, rendered, tmp_path / "cache", *extra, env=env)
    text = ANSI.sub("", err)
    for phase in ("git", "apply", "prune", "report"):
        assert bool(re.search(rf"✓ {phase}\b", text)) is drawn, text
    assert ("\x1b[" in err) is drawn


def test_run_after_a_first_pass_waits_first(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    rendered.commit(layout("c1", configmap("c1", kube.namespace, "a")))
    clock = FakeClock(stop_after_sleeps=1)
    agent = make_agent(clock=clock, interval=15.0, report_enabled=False)
    first = agent.pass_once()
    assert agent.run(first=first) == EXIT_OK
    assert clock.sleeps == [15.0]  # stopped during the wait after the first pass: no second pass
