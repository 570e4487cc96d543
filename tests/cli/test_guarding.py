"""The last writer before a terminal (``cli.guarding``, issue 21 item 8).

Behaviours covered:
- a guarded stream shows every hidden character of what it is given as its escape, keeps newlines, tabs
  and CRLF line ends, and writes the rest untouched; it refuses bytes and has no ``buffer`` to write them;
- on a stream that cannot encode a character (an ASCII locale) that character is shown as an escape too,
  never an error;
- ``raw`` is the stream under the guard (for our own styling), any other stream itself;
- ``install`` guards stdout and stderr once, and its returned function puts them back;
- the controller's JSON log lines stay valid JSON through the guard and read back to the very message
  (a report's bidi override or C1 control included);
- every command runs guarded: the group installs the guard for the command and removes it after.
"""

from __future__ import annotations

import io
import json
import sys

import click
import pytest
from click.testing import CliRunner

from nova_gitops.cli import guarding
from nova_gitops.cli.main import cli
from nova_gitops.controller.logs import JsonLog

HOSTILE = "a\x1b]0;t\x07b\u202ec\x9bd\U000e0041e\r\n\tf\rg"


def test_a_guarded_stream_shows_hidden_characters_as_escapes() -> None:
    under = io.StringIO()
    stream = guarding.GuardedStream(under)
    assert stream.write(HOSTILE) == len(HOSTILE)
    stream.writelines(["x\x1by\n"])
    assert under.getvalue() == (
        "a\\u001b]0;t\\u0007b\\u202ec\\u009bd\\udb40\\udc41e\r\n\tf\\u000dg" + "x\\u001by\n"
    )
    with pytest.raises(TypeError):
        stream.write(b"\x1b")  # type: ignore[arg-type]
    assert not hasattr(stream, "buffer")
    assert guarding.raw(stream) is under and guarding.raw(sys.stdout) is sys.stdout  # type: ignore[arg-type]


def test_an_ascii_stream_gets_escapes_not_errors() -> None:
    buffer = io.BytesIO()
    under = io.TextIOWrapper(buffer, encoding="ascii")
    stream = guarding.GuardedStream(under)
    stream.write("wlc-1 → wlc-2 \u202e\n")
    stream.flush()
    assert buffer.getvalue() == b"wlc-1 \\u2192 wlc-2 \\u202e\n"
    assert stream.encoding == "ascii"


def test_install_guards_once_and_puts_the_streams_back(monkeypatch: pytest.MonkeyPatch) -> None:
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    restore = guarding.install()
    guarded = sys.stdout
    assert guarding.raw(guarded) is out and guarding.raw(sys.stderr) is err
    again = guarding.install()
    assert sys.stdout is guarded
    click.echo("x\x1b]0;t\x07", err=True)
    again()
    restore()
    assert sys.stdout is out and sys.stderr is err
    assert err.getvalue() == "x\\u001b]0;t\\u0007\n"


def test_json_log_lines_stay_json_through_the_guard() -> None:
    under = io.StringIO()
    log = JsonLog(guarding.GuardedStream(under))  # type: ignore[arg-type]
    log.warning("report", message=HOSTILE)
    [line] = under.getvalue().splitlines()
    assert not any(char in line for char in "\x1b\x07\u202e\x9b")
    assert json.loads(line)["message"] == HOSTILE


def test_every_command_runs_guarded() -> None:
    seen: list[object] = []

    @cli.command("probe-guard", hidden=True)
    def probe() -> None:
        seen.append(sys.stdout)
        click.echo("\x1b]0;t\x07")

    try:
        result = CliRunner().invoke(cli, ["probe-guard"])
    finally:
        cli.commands.pop("probe-guard")
    assert result.exit_code == 0 and result.output == "\\u001b]0;t\\u0007\n"
    assert isinstance(seen[0], guarding.GuardedStream)
    assert not isinstance(sys.stdout, guarding.GuardedStream)
