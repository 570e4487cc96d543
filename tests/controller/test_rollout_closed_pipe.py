"""A command whose output pipe is closed early (``nova-gitops rollout status | head -1``) ends quietly.

Behaviours covered, with a real pipe whose reading end is closed before the command writes (what ``head``
does once it has its line) and a real ``nova-gitops`` process:
- ``rollout status`` says nothing on stderr (no "unexpected BrokenPipeError … This is a bug", no Python
  "Exception ignored" at exit) and exits 141 (128 + SIGPIPE, as git and the shell's own tools do), not 3;
- the same holds for another command through the one error mapper (``explain``);
- a command whose output is read whole still prints it all and exits 0.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nova_gitops.cli.errors import EXIT_CLOSED_PIPE
from tests.controller.helpers import Fleet
from tests.controller.test_rollouts import WallClock, rollout_fleet


@pytest.fixture
def fleet(tmp_path: Path) -> Fleet:
    return rollout_fleet(tmp_path)


def closed_pipe_run(arguments: list[str], cwd: Path) -> tuple[int, str]:
    """Run ``nova-gitops`` with stdout a pipe nobody reads any more: (exit code, stderr)."""
    reading, writing = os.pipe()
    os.close(reading)  # the reader is gone before the first write, as `head -1` is after its line
    try:
        done = subprocess.run(
            [sys.executable, "-m", "nova_gitops.cli", *arguments],
            stdout=writing,
            stderr=subprocess.PIPE,
            cwd=cwd,
            timeout=120,
            check=False,
        )
    finally:
        os.close(writing)
    return done.returncode, done.stderr.decode()


def where(fleet: Fleet) -> list[str]:
    return ["--repo", fleet.url, "--cache-dir", str(fleet.root / "cli-cache"), "--source", str(fleet.source)]


def test_rollout_status_into_a_closed_pipe_ends_quietly(fleet: Fleet) -> None:
    fleet.controller(wall_clock=WallClock()).reconcile_once()  # a rollout in progress: status has lines
    code, stderr = closed_pipe_run(["rollout", "status", *where(fleet)], fleet.root)
    assert stderr == ""
    assert code == EXIT_CLOSED_PIPE == 141


@pytest.mark.parametrize("output", ["table", "json"])
def test_a_status_read_whole_is_printed_whole(fleet: Fleet, output: str) -> None:
    fleet.controller(wall_clock=WallClock()).reconcile_once()
    done = subprocess.run(
        [sys.executable, "-m", "nova_gitops.cli", "rollout", "status", *where(fleet), "-o", output],
        capture_output=True,
        cwd=fleet.root,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert b"wlc-1" in done.stdout and b"wlc-2" in done.stdout


def test_another_command_into_a_closed_pipe_ends_quietly() -> None:
    root = Path(__file__).resolve().parents[2]
    code, stderr = closed_pipe_run(
        ["explain", "examples/repo-layout/source", "deployment/shop/blue-frontend"], root
    )
    assert stderr == ""
    assert code == EXIT_CLOSED_PIPE
