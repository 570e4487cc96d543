"""nova-agent's own terminal and log output shows data's control and bidi characters as escapes (issue 21,
follow-up of item 8).

``nova-gitops`` writes through a guard (``clients.guarding``); ``nova-agent`` logged API server messages,
object and file names and git's messages as they came, so a file named with an OSC 0 title sequence in the
rendered repository, or a ``--path`` holding a bidi override, reached the terminal of whoever ran the agent
(and ``kubectl logs`` of its pod) as what it is.

Behaviours covered:
- a real ``nova-agent sync`` process whose pass names a hostile file of the rendered repository, and one
  whose ``--path`` holds ESC and U+202E: stderr shows ``\\u001b``, ``\\u0007`` and ``\\u202e`` where the
  characters were, and none of them raw; the exit code is the pass's (2, refused);
- on a terminal (the first sync's rich progress), the drawing's own escape sequences still reach it while a
  log line's data is shown escaped, one logged while rich draws included (rich reads ANSI in what is written
  to the stderr it holds then, and would turn an OSC 8 sequence into a link), and so is a phase's detail;
- every command of ``nova-agent`` runs guarded, and the streams are put back after it.
"""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from nova_agent import cli
from nova_gitops.clients import guarding, terminals
from tests.agent.gitrepos_helpers import RenderedRepo
from tests.agent.manifests import configmap, layout
from tests.fakekube.fixtures import KubeTarget

NAME = "evil\x1b]0;owned\x07\u202egnp"
SHOWN = "evil\\u001b]0;owned\\u0007\\u202egnp"
LINK = "\x1b]8;;https:example.invalid\x1b\\click\x1b]8;;\x1b\\"  # an OSC 8 link (no / in a file name)
LINK_SHOWN = "\\u001b]8;;https:example.invalid\\u001b\\click"
RAW = ("\x1b]", "\x07", "\u202e")


def arguments(kube: KubeTarget, rendered: RenderedRepo, tmp_path: Path, *extra: str) -> list[str]:
    return [
        "sync", "--cluster", "c1", "--repo", rendered.url,
        "--kubeconfig", str(kube.kubeconfig_path), "--context", kube.context,
        "--namespace", kube.namespace, "--cache-dir", str(tmp_path / "cache"), "--no-report", *extra,
    ]  # fmt: skip


def agent(
    kube: KubeTarget, rendered: RenderedRepo, tmp_path: Path, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """A real ``nova-agent`` process; its output as read from its pipes."""
    command = [sys.executable, "-m", "nova_agent.cli", *arguments(kube, rendered, tmp_path, *extra)]
    environment = {**os.environ, **(env or {})}
    return subprocess.run(
        command, capture_output=True, text=True, encoding="utf-8", check=False, timeout=120, env=environment
    )


def test_a_hostile_file_name_in_the_render_is_logged_escaped(
    kube: KubeTarget, rendered: RenderedRepo, tmp_path: Path
) -> None:
    files = layout("c1", configmap("c1", kube.namespace, "settings"))
    rendered.commit({**files, f"clusters/c1/{NAME}.yaml": "kind: [unclosed\n"})
    done = agent(kube, rendered, tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"{SHOWN}.yaml" in done.stderr
    assert not any(char in done.stderr + done.stdout for char in RAW), done.stderr


def test_a_hostile_path_is_logged_escaped(kube: KubeTarget, rendered: RenderedRepo, tmp_path: Path) -> None:
    rendered.commit(layout("c1", configmap("c1", kube.namespace, "settings")))
    done = agent(kube, rendered, tmp_path, "--path", f"clusters/{NAME}")
    assert done.returncode == 2, done.stderr
    assert f"clusters/{SHOWN}" in done.stderr
    assert not any(char in done.stderr + done.stdout for char in RAW), done.stderr


def test_on_a_terminal_the_drawing_passes_and_the_data_is_escaped(
    kube: KubeTarget, rendered: RenderedRepo, tmp_path: Path
) -> None:
    files = layout("c1", configmap("c1", kube.namespace, "settings"))
    rendered.commit({**files, f"clusters/c1/{NAME}{LINK}.yaml": "kind: [unclosed\n"})
    done = agent(kube, rendered, tmp_path, env={terminals.AGENT_FORCE_TERMINAL: "1"})
    assert done.returncode == 2, done.stderr
    assert "\x1b[32m✓" in done.stderr  # rich's own drawing: a green tick
    assert SHOWN + LINK_SHOWN in done.stderr
    assert not any(char in done.stderr for char in (*RAW, "\x1b]8"))


def test_a_log_line_written_while_the_progress_is_drawn_is_escaped(monkeypatch: pytest.MonkeyPatch) -> None:
    """While rich draws, it holds stderr and reads ANSI in what is written there (OSC 8 becomes a link)."""
    terminal = io.StringIO()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setenv(terminals.AGENT_FORCE_TERMINAL, "1")
    restore = guarding.install()
    handler = logging.StreamHandler(sys.stderr)  # as the agent's logging.basicConfig makes it
    logging.getLogger().addHandler(handler)
    try:
        with cli.TerminalProgress() as progress:
            progress.phase("apply", f"applying {NAME}")
            assert handler.stream is not sys.stderr  # rich's: the line is printed above the drawing
            logging.getLogger("nova_agent").warning("cannot apply ConfigMap %s%s", NAME, LINK)
    finally:
        logging.getLogger().removeHandler(handler)
        restore()
    written = terminal.getvalue()
    assert "\x1b[32m✓" in written  # the drawing
    assert f"applying {SHOWN}" in written
    unwrapped = written.replace("\n", "")  # rich wraps a line printed above the drawing at its width
    assert f"cannot apply ConfigMap {SHOWN}{LINK_SHOWN}" in unwrapped
    assert not any(char in written for char in (*RAW, "\x1b]8"))


def test_the_guard_is_the_command_s() -> None:
    before = sys.stdout, sys.stderr
    seen: list[object] = []

    @cli.main.command("probe-guard", hidden=True)
    def probe() -> None:
        seen.append(sys.stderr)

    try:
        result = CliRunner().invoke(cli.main, ["probe-guard"])
    finally:
        cli.main.commands.pop("probe-guard")
    assert result.exit_code == 0
    assert isinstance(seen[0], guarding.GuardedStream)
    assert (sys.stdout, sys.stderr) == before
