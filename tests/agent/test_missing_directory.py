"""An agent whose directory does not exist in the commit it read reports an error and exits non-zero (issue 21
item 5, and the LOW item "an agent --path that does not exist: say so"), on the fake API server and on a real
cluster (NOVA_TEST_KUBECONFIG):

- a wrong ``--path`` fails the pass (exit 2): the message names the directory, the commit and ``--path``;
  nothing is applied, and nothing is pruned even under ``Nova-Allow-Mass-Prune: true`` (a missing directory
  is not "delete everything"); the status report carries that ``lastError`` and keeps the ``syncedRevision``
  the cluster really reflects, never the commit it could not read — a rollout gate cannot pass it;
- a cluster the render does not have (``clusters/<me>/`` missing) says so, naming ``--cluster``;
- ``nova-agent sync`` exits non-zero saying why; ``run`` goes on at its interval, reporting the error;
- delegated mode reports the same error instead of a synced, empty directory;
- an empty cluster as the renderer writes it (``kustomization.yaml`` with ``resources: []``) is not missing:
  the pass succeeds and prunes what it created.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from nova_agent import cli
from nova_agent.clocks import FakeClock
from nova_agent.kubeclient import ApiClientKube
from nova_agent.kubeports import Resource
from nova_agent.running import EXIT_OK, EXIT_REFUSED
from tests.agent.conftest import AgentFactory
from tests.agent.gitrepos_helpers import RenderedRepo
from tests.agent.manifests import configmap, layout
from tests.fakekube.fixtures import KubeTarget

CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap", True)
MASS_PRUNE = "Nova-Allow-Mass-Prune: true"


def _status(rendered: RenderedRepo, cluster: str = "c1") -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(rendered.show("nova-status", f"status/{cluster}.yaml"))
    return document["status"]  # type: ignore[no-any-return]


def _names(kube: KubeTarget) -> set[str]:
    listed = ApiClientKube(kube.api_client).list(CONFIGMAPS, kube.namespace)
    return {str(item["metadata"]["name"]) for item in listed}


def _synced(kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory) -> str:
    """Three ConfigMaps applied by the agent of c1 at the returned commit."""
    objects = [configmap("c1", kube.namespace, f"app-{i}") for i in range(3)]
    revision = rendered.commit(layout("c1", *objects))
    first = make_agent().pass_once()
    assert first.exit_code == EXIT_OK, first.message
    return revision


def test_a_path_that_does_not_exist_fails_the_pass_and_prunes_nothing(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    synced = _synced(kube, rendered, make_agent)
    revision = rendered.commit({"README.md": "a change elsewhere\n"}, trailers=MASS_PRUNE)
    agent = make_agent(path="clusters/typo")

    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_REFUSED
    assert f"clusters/typo/ does not exist in commit {revision[:12]}" in outcome.message
    assert "--path clusters/typo" in outcome.message and "nothing is applied nor pruned" in outcome.message
    assert outcome.sync is None
    assert {"app-0", "app-1", "app-2"} <= _names(kube)
    status = _status(rendered)
    assert status["lastError"] == outcome.message
    assert status["syncedRevision"] == synced


def test_a_cluster_the_render_does_not_have_says_so(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    revision = rendered.commit(layout("c1", configmap("c1", kube.namespace, "app")))
    outcome = make_agent("c2").pass_once()
    assert outcome.exit_code == EXIT_REFUSED
    assert f"clusters/c2/ does not exist in commit {revision[:12]}" in outcome.message
    assert "cluster c2's directory (--cluster)" in outcome.message
    status = _status(rendered, "c2")
    assert status["lastError"] == outcome.message and status["syncedRevision"] == ""
    assert "app" not in _names(kube)


def test_run_goes_on_reporting_the_error(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    _synced(kube, rendered, make_agent)
    clock = FakeClock(stop_after_sleeps=3)
    agent = make_agent(clock=clock, interval=20.0, path="clusters/typo")
    assert agent.run() == EXIT_OK  # stopped by its clock, after a pass each interval
    assert clock.sleeps == [20.0, 20.0, 20.0]  # a refusal: the normal interval, no back-off
    assert "clusters/typo/ does not exist" in _status(rendered)["lastError"]
    assert {"app-0", "app-1", "app-2"} <= _names(kube)


def test_nova_agent_sync_exits_non_zero_and_says_why(
    kube: KubeTarget,
    rendered: RenderedRepo,
    make_agent: AgentFactory,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    _synced(kube, rendered, make_agent)
    args: Sequence[str] = [
        "sync", "--cluster", "c1", "--repo", rendered.url, "--kubeconfig", str(kube.kubeconfig_path),
        "--context", kube.context, "--namespace", kube.namespace, "--cache-dir", str(tmp_path / "cli-cache"),
        "--no-report", "--path", "clusters/typo/",
    ]  # fmt: skip
    result = CliRunner().invoke(cli.main, list(args))
    assert result.exit_code == EXIT_REFUSED, result.output
    assert "clusters/typo/ does not exist in commit" in caplog.text  # the log is the agent's output
    assert {"app-0", "app-1", "app-2"} <= _names(kube)


def test_delegated_mode_reports_the_missing_directory(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    revision = rendered.commit(layout("c1", configmap("c1", kube.namespace, "app")))
    outcome = make_agent(orchestration_enabled=False, path="clusters/typo").pass_once()
    assert outcome.exit_code == EXIT_REFUSED
    assert f"clusters/typo/ does not exist in commit {revision[:12]}" in outcome.message
    status = _status(rendered)
    assert status["lastError"] == outcome.message and status["syncedRevision"] != revision


def test_an_empty_cluster_as_rendered_is_not_missing(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    _synced(kube, rendered, make_agent)
    emptied: dict[str, str | None] = {
        f"clusters/c1/{kube.namespace}/configmap-app-{i}.yaml": None for i in range(3)
    }
    emptied["clusters/c1/kustomization.yaml"] = (
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n"
    )
    revision = rendered.commit(emptied, trailers=MASS_PRUNE)
    outcome = make_agent().pass_once()
    assert outcome.exit_code == EXIT_OK, outcome.message
    assert outcome.sync is not None and sorted(ref.name for ref in outcome.sync.pruned) == [
        "app-0",
        "app-1",
        "app-2",
    ]
    assert _status(rendered)["syncedRevision"] == revision
