"""Where ``nova-gitops report -o`` writes (issue 27): a regular file is replaced whole (a temporary file
beside it, renamed over it), but ``-o /dev/stdout`` (a link to a pipe or a terminal) is written through,
never replaced by a regular file (run as root, as in many CI containers, the rename replaced the system's
/dev/stdout link); an output that cannot be written is an error naming it (exit 2), not "a bug"."""

from __future__ import annotations

import fcntl
import os
import stat
from pathlib import Path

import yaml
from click.testing import CliRunner

from nova_gitops.cli.main import cli
from tests.builders import cluster, deployment, policy

F_SETPIPE_SZ = 1031  # Linux: a pipe buffer that holds the whole report, so the writer never waits


def source(tmp_path: Path) -> Path:
    folder = tmp_path / "source"
    folder.mkdir()
    documents = [cluster("wlc-1"), policy("p", clusterSelector={}), deployment("web")]
    (folder / "source.yaml").write_text(yaml.safe_dump_all(documents))
    return folder


def test_a_link_to_a_pipe_is_written_through_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        fcntl.fcntl(reader, F_SETPIPE_SZ, 1 << 20)
        link = tmp_path / "stdout"  # as /dev/stdout -> /proc/self/fd/1
        link.symlink_to(fifo)
        result = CliRunner().invoke(cli, ["report", str(source(tmp_path)), "-o", str(link), "--quiet"])
        assert result.exit_code == 0, result.output
        assert link.is_symlink() and stat.S_ISFIFO(fifo.lstat().st_mode)
        written = b""
        while chunk := os.read(reader, 1 << 20):
            written += chunk
    finally:
        os.close(reader)
    assert written.startswith(b"<!doctype html>") and written.rstrip().endswith(b"</html>")


def test_an_output_that_cannot_be_written_is_an_error_naming_it(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    output = blocker / "fleet.html"
    result = CliRunner().invoke(cli, ["report", str(source(tmp_path)), "-o", str(output)])
    assert result.exit_code == 2, result.output
    assert f"cannot write {output}" in result.stderr and "bug" not in result.stderr
