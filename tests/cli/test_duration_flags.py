"""Every time flag of both CLIs takes the one duration syntax (``api.durations``).

Behaviours covered:
- ``nova-gitops controller`` ``--interval``/``--debounce``/``--failback-after``/``--reschedule-cooldown``,
  every ``--git-timeout`` and the agent's ``--interval``/``--pending-timeout``/``--heartbeat-interval`` read
  ``30s``, ``2m``, ``1h30m``, ``500ms`` and plain seconds (as they did before);
- a bad value is a usage error (exit 2) naming the option, quoting the value and showing examples;
- a value under the least allowed (``--interval`` under 100ms) is refused; defaults show as durations.
"""

from __future__ import annotations

from datetime import timedelta

import click
import pytest
from click.testing import CliRunner

from nova_agent import cli as agent_cli
from nova_gitops.cli.controller import controller_command
from nova_gitops.cli.main import cli

REQUIRED = ["--source", ".", "--repo", "file:///nowhere"]


def controller_params(*args: str) -> dict[str, object]:
    return controller_command.make_context("controller", [*REQUIRED, *args]).params


@pytest.mark.parametrize(
    ("flag", "text", "seconds"),
    [
        ("--interval", "2m", 120.0),
        ("--interval", "5", 5.0),
        ("--debounce", "500ms", 0.5),
        ("--debounce", "0.3", 0.3),
        ("--failback-after", "1h30m", 5400.0),
        ("--reschedule-cooldown", "90s", 90.0),
        ("--git-timeout", "1m30s", 90.0),
        ("--status-watch-interval", "250ms", 0.25),
        ("--status-watch-interval", "0", 0.0),
    ],
)
def test_controller_flags_take_durations(flag: str, text: str, seconds: float) -> None:
    name = flag.lstrip("-").replace("-", "_")
    assert controller_params(flag, text)[name] == pytest.approx(seconds)


def test_controller_defaults_are_the_documented_ones() -> None:
    params = controller_params()
    assert (params["interval"], params["debounce"], params["failback_after"]) == (30.0, 0.3, 600.0)
    assert (params["reschedule_cooldown"], params["git_timeout"]) == (600.0, 120.0)


@pytest.mark.parametrize(
    "command", [["controller", *REQUIRED], ["diff", "a", "b"], ["publish", ".", "--repo", "x"]]
)
def test_a_bad_duration_is_a_usage_error(command: list[str]) -> None:
    result = CliRunner().invoke(cli, [*command, "--git-timeout", "5x"])
    assert result.exit_code == 2
    assert "'--git-timeout'" in result.output
    assert "'5x' is not a duration: write it like 30s, 2m, 1h30m" in result.output


def test_too_short_an_interval_is_refused() -> None:
    with pytest.raises(click.BadParameter, match="too short: the least is 100ms"):
        controller_params("--interval", "10ms")


def test_help_shows_durations() -> None:
    result = CliRunner().invoke(cli, ["controller", "--help"])
    assert "[default: 30s]" in result.output and "[default: 300ms]" in result.output


@pytest.mark.parametrize(
    ("flag", "text", "expected"),
    [
        ("--interval", "1h30m", timedelta(hours=1, minutes=30)),
        ("--interval", "45", timedelta(seconds=45)),
        ("--pending-timeout", "500ms", timedelta(milliseconds=500)),
        ("--heartbeat-interval", "2m", timedelta(minutes=2)),
        ("--settle-interval", "0", timedelta(0)),
    ],
)
def test_agent_flags_take_the_same_durations(flag: str, text: str, expected: timedelta) -> None:
    context = agent_cli.sync.make_context("sync", ["--cluster", "c1", "--repo", "file:///x", flag, text])
    assert context.params[flag.lstrip("-").replace("-", "_")] == expected


def test_agent_bad_duration_is_the_same_usage_error() -> None:
    result = CliRunner().invoke(agent_cli.main, ["sync", "--cluster", "c", "--repo", "x", "--interval", "5x"])
    assert result.exit_code == 2
    assert "'5x' is not a duration: write it like 30s, 2m, 1h30m" in result.output
