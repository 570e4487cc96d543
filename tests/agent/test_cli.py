"""The agent's command line: Nova's install spellings ``--orchestration-enabled=false`` and
``--rescheduling-enabled=false`` (also ``=true``, the space form and the bare flag) are accepted next to
click's ``--no-...`` form; a value that is not a boolean is a usage error naming the accepted values; a
``sync --orchestration-enabled=false`` against a cluster applies nothing."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from nova_agent import cli
from nova_agent.kubeclient import ApiClientKube
from nova_agent.kubeports import Resource
from nova_agent.settings import AgentSettings
from tests.agent.gitrepos_helpers import RenderedRepo
from tests.agent.manifests import configmap, layout
from tests.fakekube.fixtures import KubeTarget

REQUIRED = ["--cluster", "c1", "--repo", "file:///nowhere"]
CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap", True)


def parsed(*args: str) -> AgentSettings:
    context = cli.sync.make_context("sync", [*REQUIRED, *args])
    return cli.settings_from(context.params)


@pytest.mark.parametrize(
    ("args", "orchestration", "rescheduling"),
    [
        ((), True, True),
        (("--orchestration-enabled=false",), False, True),
        (("--orchestration-enabled", "false"), False, True),
        (("--orchestration-enabled=true",), True, True),
        (("--orchestration-enabled",), True, True),
        (("--no-orchestration-enabled",), False, True),
        (("--rescheduling-enabled=false",), True, False),
        (("--rescheduling-enabled", "False"), True, False),
        (("--no-rescheduling-enabled",), True, False),
        (("--orchestration-enabled=false", "--rescheduling-enabled=false"), False, False),
        (("--orchestration-enabled", "--rescheduling-enabled", "--cluster", "c2"), True, True),
        (("--orchestration-enabled=true", "--no-orchestration-enabled"), False, True),
    ],
)
def test_both_spellings_of_the_switches(args: Sequence[str], orchestration: bool, rescheduling: bool) -> None:
    settings = parsed(*args)
    assert (settings.orchestration_enabled, settings.rescheduling_enabled) == (orchestration, rescheduling)


def test_a_switch_value_that_is_not_a_boolean_is_a_usage_error() -> None:
    result = CliRunner().invoke(cli.main, ["sync", *REQUIRED, "--orchestration-enabled=maybe"])
    assert result.exit_code == 2
    assert "'maybe' is not a valid boolean" in result.output


def test_sync_with_orchestration_disabled_applies_nothing(
    kube: KubeTarget, rendered: RenderedRepo, tmp_path: Path
) -> None:
    rendered.commit(layout("c1", configmap("c1", kube.namespace, "not-applied")))
    args: Sequence[str] = [
        "sync", "--cluster", "c1", "--repo", rendered.url, "--kubeconfig", str(kube.kubeconfig_path),
        "--context", kube.context, "--namespace", kube.namespace, "--cache-dir", str(tmp_path / "cache"),
        "--no-report", "--orchestration-enabled=false",
    ]  # fmt: skip
    result = CliRunner().invoke(cli.main, list(args))
    assert result.exit_code == 0, result.output
    assert ApiClientKube(kube.api_client).get(CONFIGMAPS, kube.namespace, "not-applied") is None
