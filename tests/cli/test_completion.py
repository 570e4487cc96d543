"""Shell completion.

Behaviours covered:
- ``nova-gitops completion bash|zsh|fish`` prints click's script for the ``nova-gitops`` program; another
  shell is a usage error;
- policy, cluster, ScheduleGroup and object names complete from the source named on the command line so
  far, or from the current directory; only names starting with what was typed are offered;
- ``explain SOURCE <Tab>`` completes object references, through click's own completion protocol, in a real
  process, printing nothing else;
- a broken or missing source gives no candidates, never an error or a traceback, on stdout or stderr;
- a directory too big to be a source (Tab in a home directory) is not read.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.shell_completion import ShellComplete
from click.testing import CliRunner

from nova_gitops.cli import completing
from nova_gitops.cli.main import cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "repo-layout" / "source"


@click.command("names")
@click.option("--source", default=".")
@click.argument("policy", shell_complete=completing.complete_policies)
@click.argument("cluster", shell_complete=completing.complete_clusters)
@click.argument("group", shell_complete=completing.complete_groups)
def names_command(source: str, policy: str, cluster: str, group: str) -> None:
    """A command shaped like the edit commands (``--source``, then names), to complete against."""


def completions(command: click.Command, args: list[str], incomplete: str) -> list[str]:
    return [item.value for item in ShellComplete(command, {}, "t", "_T").get_completions(args, incomplete)]


@pytest.mark.parametrize("shell", completing.SHELLS)
def test_completion_prints_the_script(shell: str) -> None:
    result = CliRunner().invoke(cli, ["completion", shell], prog_name="nova-gitops")
    assert result.exit_code == 0, result.output
    assert "_NOVA_GITOPS_COMPLETE" in result.output and "nova-gitops" in result.output


def test_completion_of_another_shell_is_a_usage_error() -> None:
    result = CliRunner().invoke(cli, ["completion", "tcsh"])
    assert result.exit_code == 2 and "'tcsh' is not one of" in result.output


def test_names_come_from_the_source_on_the_command_line() -> None:
    source = ["--source", str(EXAMPLE)]
    policies = completions(names_command, source, "")
    assert "web-spread" in policies and "gpu-training" in policies
    assert completions(names_command, source, "web") == ["web-spread"]
    clusters = completions(names_command, [*source, "web-spread"], "")
    assert clusters and all(isinstance(name, str) for name in clusters)
    assert set(clusters) == set(completing.cluster_names(EXAMPLE))
    groups = completions(names_command, [*source, "web-spread", clusters[0]], "")
    assert any(group.startswith("web-spread-") for group in groups)
    assert any(group.startswith("shop-blue-green-") for group in groups)


def test_names_come_from_the_current_directory_without_a_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "source")
    monkeypatch.chdir(tmp_path / "source")
    assert completions(names_command, [], "web") == ["web-spread"]


def test_explain_completes_objects() -> None:
    found = completions(cli, ["explain", str(EXAMPLE)], "deployment/shop/blue")
    assert found == ["deployment/shop/blue-cartservice", "deployment/shop/blue-frontend"]


def test_the_edit_commands_complete_names_from_their_source() -> None:
    source = ["--source", str(EXAMPLE)]
    assert completions(cli, ["split", *source], "web") == ["web-spread"]
    assert completions(cli, ["pin", *source], "deployment/shop/blue") == [
        "deployment/shop/blue-cartservice",
        "deployment/shop/blue-frontend",
    ]
    clusters = set(completing.cluster_names(EXAMPLE))
    assert set(completions(cli, ["cordon", *source], "")) == clusters
    assert any(group.startswith("web-spread-") for group in completions(cli, ["move", *source], "web"))


def test_a_broken_source_gives_no_candidates_and_no_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bad.yaml").write_text("kind: [\n")
    (tmp_path / "policy.yaml").write_text(
        "apiVersion: policy.elotl.co/v1alpha1\nkind: SchedulePolicy\nmetadata: {name: p}\nspec: {nope: 1}\n"
    )
    source = ["--source", str(tmp_path)]
    assert completions(names_command, source, "") == ["p"]  # read as far as it parses
    assert completions(names_command, [*source, "p", "c"], "") == []  # invalid: nothing to plan
    assert completions(names_command, ["--source", str(tmp_path / "missing")], "zzz") == []
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_completion_in_a_real_process_prints_only_candidates(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("kind: [\n")
    env = {
        **os.environ,
        "_NOVA_GITOPS_COMPLETE": "bash_complete",
        "COMP_WORDS": f"nova-gitops explain {EXAMPLE} deployment/web/",
        "COMP_CWORD": "3",
    }
    done = subprocess.run(
        [sys.executable, "-m", "nova_gitops.cli"], env=env, capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == ["plain,deployment/web/storefront"]
    env["COMP_WORDS"] = f"nova-gitops explain {tmp_path} x"
    done = subprocess.run(
        [sys.executable, "-m", "nova_gitops.cli"], env=env, capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "", "")


def test_a_huge_directory_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "source")
    assert completing.small_enough(tmp_path)
    monkeypatch.setattr(completing, "MAX_ENTRIES", 3)
    assert not completing.small_enough(tmp_path, limit=3)
    assert completions(names_command, ["--source", str(tmp_path / "source")], "web") == []
