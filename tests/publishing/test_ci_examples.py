"""The GitHub Actions examples in ``examples/ci``, checked for what a team copying them relies on.

Behaviours covered:
- every checkout has the whole history (``fetch-depth: 0``): diff needs the base revision, publish needs
  it to tell that the branch already holds a newer source (superseded);
- nova-gitops is installed from a git URL, never by its bare name from PyPI;
- the PR comment step also runs when diff exits 0, so a stale comment is refreshed, and it only creates a
  comment when there are changes (to placement, or to failover headroom: the diff runs with ``--headroom``);
- every ``run:`` script is valid bash.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

CI = Path(__file__).resolve().parents[2] / "examples" / "ci"
WORKFLOWS = sorted(CI.glob("*.yaml"))


def steps_of(workflow: Path) -> list[dict[str, Any]]:
    document = yaml.safe_load(workflow.read_text())
    return [step for job in document["jobs"].values() for step in job["steps"]]


def test_there_are_workflows() -> None:
    assert {path.name for path in WORKFLOWS} == {
        "diff-on-pull-request.yaml",
        "publish-on-merge.yaml",
        "report-on-pull-request.yaml",
    }


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda path: path.name)
def test_checkout_has_the_whole_history(workflow: Path) -> None:
    checkouts = [
        step for step in steps_of(workflow) if str(step.get("uses", "")).startswith("actions/checkout")
    ]
    assert checkouts and all(step.get("with", {}).get("fetch-depth") == 0 for step in checkouts)


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda path: path.name)
def test_nova_gitops_is_installed_from_git(workflow: Path) -> None:
    document = yaml.safe_load(workflow.read_text())
    installs = [step["run"] for step in steps_of(workflow) if "pip install" in step.get("run", "")]
    assert installs == ['pip install "$NOVA_GITOPS"']
    assert document["env"]["NOVA_GITOPS"].startswith("nova-gitops @ git+https://")


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda path: path.name)
def test_run_scripts_are_valid_bash(workflow: Path) -> None:
    for step in steps_of(workflow):
        if "run" in step:
            checked = subprocess.run(["bash", "-n"], input=step["run"], text=True, capture_output=True)
            assert checked.returncode == 0, checked.stderr


def test_a_stale_comment_is_refreshed_when_diff_finds_no_change() -> None:
    (comment,) = [step for step in steps_of(CI / "diff-on-pull-request.yaml") if "gh " in step.get("run", "")]
    assert "if" not in comment  # runs for exit 0 too
    assert "PATCH" in comment["run"] and '[ "$CHANGED" = 1 ]' in comment["run"]


def test_the_pull_request_comment_says_what_the_change_does_to_failover_headroom() -> None:
    (diffing,) = [
        step
        for step in steps_of(CI / "diff-on-pull-request.yaml")
        if "nova-gitops diff" in step.get("run", "")
    ]
    assert "--headroom" in diffing["run"] and "--format markdown" in diffing["run"]
    (comment,) = [step for step in steps_of(CI / "diff-on-pull-request.yaml") if "gh " in step.get("run", "")]
    assert "Failover headroom" in comment["run"]  # a headroom-only change (exit 0) is commented too


def test_the_fleet_report_is_attached_to_the_run_as_an_artifact() -> None:
    steps = steps_of(CI / "report-on-pull-request.yaml")
    (writing,) = [step for step in steps if "nova-gitops report" in step.get("run", "")]
    assert "-o fleet.html" in writing["run"]
    (upload,) = [step for step in steps if str(step.get("uses", "")).startswith("actions/upload-artifact")]
    assert upload["with"]["path"] == "fleet.html" and upload["with"]["if-no-files-found"] == "error"
