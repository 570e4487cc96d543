"""A PodControllerShape with a path out of bounds is an invalid source to the controller, not a crash
(issue 21 item 4).

Before: a ``template`` JSONPath of ~1,000 segments raised RecursionError in planning; ``controller --once``
exited 3 and the long-running controller retried with back-off, reconciling nothing for any cluster.

Behaviours covered:
- the reconcile ends in ``InputError`` naming the file, line, field and bound, so the loop waits for the
  next change (no back-off retry of the same source), as for any invalid source; nothing is committed;
- once the declaration is fixed, the next reconcile publishes;
- ``controller --once`` exits 2 (invalid input) with the problem, not 3 (a bug).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from nova_gitops.cli.controller import controller_command
from nova_gitops.controller import looping
from nova_gitops.errors import InputError
from nova_gitops.workflows.publishing import Outcome
from tests.controller.helpers import Fleet, cluster_report, deployment, policy

LONG = ".".join(["spec"] + ["x"] * 1000)


def shape(template: str) -> dict[str, Any]:
    return {
        "apiVersion": "gitops.nova.elotl.co/v1alpha1",
        "kind": "PodControllerShape",
        "metadata": {"name": "widgets"},
        "spec": {"group": "example.com", "kind": "Widget", "podSets": [{"name": "p", "template": template}]},
    }


def widget() -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "demo", "labels": {"app": "w"}},
        "spec": {"x": {"template": {"spec": {"containers": [{"name": "c"}]}}}},
    }


def fleet_with_bad_shape(tmp_path: Path) -> Fleet:
    fleet = Fleet(tmp_path)
    fleet.write_source("policy.yaml", policy())
    fleet.write_source("web.yaml", deployment(), widget())
    fleet.write_source("shape.yaml", shape(LONG))
    fleet.report(cluster_report("wlc-1"))
    return fleet


def test_the_reconcile_reports_the_path_and_waits_for_a_change(tmp_path: Path) -> None:
    fleet = fleet_with_bad_shape(tmp_path)
    controller = fleet.controller()
    with pytest.raises(InputError) as raised:
        controller.reconcile_once()
    text = str(raised.value)
    assert "shape.yaml:" in text and "spec.podSets[0].template" in text and "more than 512 characters" in text
    assert looping.backoff_delay(raised.value, 1, 300.0) is None  # the next trigger or poll, no back-off
    nothing = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", "main"], cwd=fleet.remote, check=False
    )
    assert nothing.returncode != 0  # nothing committed
    fleet.write_source("shape.yaml", shape("spec.x.template"))
    assert controller.reconcile_once().outcome is Outcome.PUBLISHED
    assert any(path.startswith("clusters/wlc-1/") and "widget" in path for path in fleet.files()), (
        fleet.files()
    )


def test_controller_once_exits_2_with_the_problem(tmp_path: Path) -> None:
    fleet = fleet_with_bad_shape(tmp_path)
    args = ["--source", str(fleet.source), "--repo", fleet.url, "--once", "--cache-dir", str(tmp_path / "c")]
    result = CliRunner().invoke(controller_command, args)
    assert result.exit_code == 2, result.output
    assert "spec.podSets[0].template" in result.output and "RecursionError" not in result.output
