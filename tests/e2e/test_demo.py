"""The README's tour keeps working: ``python examples/demo/run.py`` runs the whole loop and tells its story.

Behaviours covered:
- the demo exits 0 and shows each step: the placement, the Pending pods with kube-scheduler's message, the
  agent's reschedule request, the moving commit quoting the reason, the prune, and the pinned placement.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo" / "run.py"

pytestmark = pytest.mark.fake_only


def test_the_demo_runs_the_whole_loop(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(DEMO), "--workdir", str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    output = done.stdout
    for expected in (
        "6 objects unscheduled (no SchedulePolicy matches)",
        "wlc-1: blue-web 2/2 ready",
        "wlc-2: green-web 0/2 ready; 2 shop pods Pending",
        "0/2 nodes are available: 2 Insufficient cpu, 2 Insufficient memory.",
        "does not have minimum replicas available",
        "rescheduled shop-",
        "pruned ['Deployment shop/green-web', 'Namespace shop']",
        "wlc-1: blue-web 2/2 ready, green-web 2/2 ready",
        "wlc-2: blue-web 2/2 ready",
    ):
        assert expected in output, output
