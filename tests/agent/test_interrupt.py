"""``nova-agent run`` and Ctrl-C.

Behaviours covered:
- SIGINT to a running agent ends it with exit 130 and the one line ``interrupted`` last, no traceback;
- the same when Ctrl-C reaches the whole process group (git children too), however far the first pass
  got: a pass the interrupt cut short is not logged as a network or API failure;
- SIGTERM (how Kubernetes stops a pod) still exits 0.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from tests.agent.gitrepos_helpers import RenderedRepo
from tests.agent.manifests import configmap, layout
from tests.fakekube.fixtures import KubeTarget
from tests.interrupting import Running


def started(kube: KubeTarget, rendered: RenderedRepo, tmp_path: Path) -> Running:
    rendered.commit(layout("c1", configmap("c1", kube.namespace, "app-config")))
    command = [
        sys.executable, "-m", "nova_agent.cli", "run",
        "--cluster", "c1", "--repo", rendered.url,
        "--kubeconfig", str(kube.kubeconfig_path), "--context", kube.context,
        "--namespace", kube.namespace, "--cache-dir", str(tmp_path / "cache"),
        "--no-report", "--interval", "1h",
    ]  # fmt: skip
    return Running.start(command)


def test_ctrl_c_after_a_pass_exits_130(kube: KubeTarget, rendered: RenderedRepo, tmp_path: Path) -> None:
    running = started(kube, rendered, tmp_path)
    running.wait_for(lambda: running.said("revision "))
    code = running.ctrl_c()
    output = running.output()
    assert code == 130, output
    assert running.lines[-1] == "interrupted", output
    assert "Traceback" not in output and "unexpected" not in output


@pytest.mark.parametrize("after", ["", "revision "])
def test_ctrl_c_to_the_process_group_blames_nothing(
    kube: KubeTarget, rendered: RenderedRepo, tmp_path: Path, after: str
) -> None:
    running = started(kube, rendered, tmp_path)
    running.wait_for(lambda: bool(running.lines) and running.said(after))
    code = running.ctrl_c(whole_group=True)
    output = running.output()
    assert code == 130, output
    assert running.lines[-1] == "interrupted", output
    assert "Traceback" not in output and "unexpected" not in output
    assert "ERROR" not in output, output


def test_sigterm_still_exits_0(kube: KubeTarget, rendered: RenderedRepo, tmp_path: Path) -> None:
    running = started(kube, rendered, tmp_path)
    running.wait_for(lambda: running.said("revision "))
    running.process.send_signal(signal.SIGTERM)
    assert running.wait() == 0, running.output()
    assert "interrupted" not in running.output()
