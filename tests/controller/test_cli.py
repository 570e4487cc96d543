"""``nova-gitops controller``: the command as users run it.

Behaviours covered:
- --once renders and publishes one revision and exits 0; an invalid source exits 2 listing every problem
  and commits nothing;
- --webhook-listen without any secret is a usage error (unsigned requests are never accepted);
- a real process serves /readyz and /metrics, logs JSON lines without credentials, and on SIGTERM finishes
  and exits 0.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from nova_gitops.cli.controller import controller_command
from tests.controller.helpers import Fleet, cluster_report, deployment, git, policy


def make_fleet(root: Path) -> Fleet:
    fleet = Fleet(root)
    fleet.write_source("policy.yaml", policy())
    fleet.write_source("web.yaml", deployment())
    fleet.report(cluster_report("wlc-1"), cluster_report("wlc-2", cpu="8"))
    return fleet


def test_once_publishes_and_exits(tmp_path: Path) -> None:
    fleet = make_fleet(tmp_path)
    args = ["--source", str(fleet.source), "--repo", fleet.url, "--once", "--cache-dir", str(tmp_path / "c")]
    result = CliRunner().invoke(controller_command, args)
    assert result.exit_code == 0, result.output
    assert fleet.commit_count() == 1


def test_invalid_source_exits_2_and_commits_nothing(tmp_path: Path) -> None:
    fleet = make_fleet(tmp_path)
    (fleet.source / "bad.yaml").write_text("kind: [\n")
    args = ["--source", str(fleet.source), "--repo", fleet.url, "--once", "--cache-dir", str(tmp_path / "c")]
    result = CliRunner().invoke(controller_command, args)
    assert result.exit_code == 2
    assert "bad.yaml:" in result.output
    assert "main" not in git(fleet.remote, "branch", "--list")


def test_a_webhook_needs_a_secret(tmp_path: Path) -> None:
    args = ["--source", str(tmp_path), "--repo", "file:///nowhere", "--webhook-listen", "127.0.0.1:0"]
    result = CliRunner().invoke(controller_command, args, env={"NOVA_GITOPS_WEBHOOK_SECRET": ""})
    assert result.exit_code == 2
    assert "needs a secret" in result.output


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def http_get(port: int, path: str) -> tuple[int, str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def test_a_running_controller_serves_metrics_and_stops_on_sigterm(tmp_path: Path) -> None:
    fleet = make_fleet(tmp_path)
    port = free_port()
    secret_file = tmp_path / "secret"
    secret_file.write_text("webhook-s3cret\n")
    command = [
        sys.executable,
        "-c",
        "from nova_gitops.cli.controller import controller_command; controller_command()",
        "--source", str(fleet.source),
        "--repo", fleet.url,
        "--cache-dir", str(tmp_path / "c"),
        "--interval", "3600",
        "--metrics-listen", f"127.0.0.1:{port}",
        "--webhook-listen", f"127.0.0.1:{free_port()}",
        "--webhook-secret-file", str(secret_file),
    ]  # fmt: skip
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        deadline = time.monotonic() + 30
        status = 0
        while time.monotonic() < deadline:
            try:
                status, _ = http_get(port, "/readyz")
            except OSError:
                status = 0
            if status == 200:
                break
            time.sleep(0.05)
        assert status == 200
        code, metrics = http_get(port, "/metrics")
        assert code == 200 and "nova_controller_commits_total 1.0" in metrics
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
            assert process.stderr is not None
            process.stderr.close()
    assert process.stderr is not None
    with process.stderr:
        output = process.stderr.read()
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    events = [line["event"] for line in lines]
    assert events[0] == "started" and "reconciled" in events and events[-1] == "stopped"
    assert "webhook-s3cret" not in json.dumps(lines)
