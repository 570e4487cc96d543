"""``nova-gitops controller`` and Ctrl-C.

Behaviours covered:
- SIGINT to a running controller ends it at once with exit 130 and the one line ``interrupted`` last, no
  traceback, no failed reconcile logged;
- the same when Ctrl-C reaches the whole process group (git children too), however far the first
  reconcile got: whatever the killed git calls did is never blamed on the network;
- a reconcile that fails once the stop has come is logged as cut short (info), not as a failure.
"""

from __future__ import annotations

import io
import json
import sys
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from nova_gitops import errors
from nova_gitops.controller.logs import JsonLog
from nova_gitops.controller.ports import SourceSnapshot
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


class StoppingSource:
    """A source whose read is cut short by the stop, as git dies under a terminal's Ctrl-C."""

    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop

    def read(self) -> AbstractContextManager[SourceSnapshot]:
        self.stop.set()
        raise errors.RepoError("cannot fetch the source: fatal: the remote end hung up; check your network")

    def changes(self) -> Iterator[None] | None:
        return None


def test_a_reconcile_the_stop_cut_short_is_no_failure(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path)
    stop = threading.Event()
    controller = fleet.controller(source=StoppingSource(stop))
    output = io.StringIO()
    controller.log = JsonLog(output)
    controller.run(stop)
    events = [json.loads(line) for line in output.getvalue().splitlines()]
    assert [(event["level"], event["event"]) for event in events] == [
        ("info", "reconcile cut short by the stop"),
        ("info", "stopped"),
    ]
    failed = controller.metrics.value("nova_controller_reconciles_total", outcome="failed")
    assert failed == 1  # counted, but not blamed in the log
