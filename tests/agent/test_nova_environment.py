"""nova-agent reads only ``NOVA_AGENT_*``, and none of Nova's own variables (issue 22, item 1).

Behaviours covered:
- a real ``nova-agent sync`` process, run in a shell holding try-nova's environment (its README's exports and
  every ``NOVA_`` variable its scripts set, ``NOVA_AGENT_CONTEXT`` and ``NOVA_AGENT_SECRET`` among them),
  writes the same stdout and stderr (log times aside) and exits with the same code as without it;
- ``NOVA_AGENT_FORCE_TERMINAL=1`` draws the first sync's progress as on a terminal, and ``nova-gitops``'s
  ``NOVA_GITOPS_FORCE_TERMINAL`` does not.
"""

from __future__ import annotations

import re
from pathlib import Path

from nova_gitops.clients import terminals
from tests.agent.gitrepos_helpers import RenderedRepo
from tests.agent.manifests import configmap, layout
from tests.agent.test_terminal_guard import agent
from tests.cli.test_nova_environment import NOVA_ENVIRONMENT
from tests.fakekube.fixtures import KubeTarget

LOG_TIME = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ ", re.MULTILINE)


def test_novas_environment_changes_nothing_for_the_agent(
    kube: KubeTarget, rendered: RenderedRepo, tmp_path: Path
) -> None:
    files = layout("c1", configmap("c1", kube.namespace, "settings"))
    rendered.commit({**files, "clusters/c1/broken.yaml": "kind: [unclosed\n"})  # refused: nothing applied
    runs = []
    for env in ({}, {**NOVA_ENVIRONMENT, "NOVA_AGENT_CONTEXT": "nova", "NOVA_AGENT_SECRET": "x"}):
        done = agent(kube, rendered, tmp_path, env=env)
        runs.append((done.returncode, done.stdout, LOG_TIME.sub("", done.stderr)))
    assert runs[0] == runs[1]
    assert runs[0][0] == 2 and "broken.yaml" in runs[0][2]


def test_the_agents_own_variable_forces_the_terminal(
    kube: KubeTarget, rendered: RenderedRepo, tmp_path: Path
) -> None:
    rendered.commit({**layout("c1"), "clusters/c1/broken.yaml": "kind: [unclosed\n"})
    drawn = agent(kube, rendered, tmp_path, env={terminals.AGENT_FORCE_TERMINAL: "1"})
    assert "\x1b[" in drawn.stderr
    not_ours = agent(
        kube, rendered, tmp_path, env={terminals.FORCE_TERMINAL: "1", "NOVA_FORCE_TERMINAL": "1"}
    )
    assert "\x1b[" not in not_ours.stderr
