"""``nova-gitops controller`` and Ctrl-C.

Behaviours covered:
- SIGINT to a running controller ends it at once with exit 130 and the one line ``interrupted`` last, no
  traceback, no failed reconcile logged;
- the same when Ctrl-C reaches the whole process group (git children too), however far the first
  reconcile got: whatever the killed git calls did is never blamed on the network.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.controller.helpers import Fleet, cluster_report, deployment, policy
from tests.interrupting import Running


def started(tmp_path: Path) -> tuple[Fleet, Running]:
    fleet = Fleet(tmp_path)
    fleet.write_source("policy.yaml", policy())
    fleet.write_source("web.yaml", deployment())
    fleet.report(cluster_report("wlc-1"))
    command = [
        sys.executable, "-m", "nova_gitops.cli", "controller",
        "--source", str(fleet.source), "--repo", fleet.url,
        "--cache-dir", str(tmp_path / "cache"), "--interval", "1h",
    ]  # fmt: skip
    return fleet, Running.start(command)


def assert_interrupted_cleanly(code: int, running: Running) -> None:
    output = running.output()
    assert code == 130, output
    assert running.lines[-1] == "interrupted", output
    assert "Traceback" not in output
    assert "reconcile failed" not in output
    assert "unreachable" not in output and "unexpected" not in output


def test_ctrl_c_after_a_reconcile_exits_130(tmp_path: Path) -> None:
    fleet, running = started(tmp_path)
    running.wait_for(lambda: running.said('"reconciled"'))
    assert fleet.commit_count() == 1
    assert_interrupted_cleanly(running.ctrl_c(), running)


@pytest.mark.parametrize("after", ['"started"', "reconciled"])
def test_ctrl_c_to_the_process_group_blames_nothing(tmp_path: Path, after: str) -> None:
    _, running = started(tmp_path)
    running.wait_for(lambda: running.said(after))
    assert_interrupted_cleanly(running.ctrl_c(whole_group=True), running)
