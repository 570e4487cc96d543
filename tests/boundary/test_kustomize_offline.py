"""kustomize cannot reach a network or a git remote, whatever its kustomization names (issue 21).

Our checks refuse remote entries before kustomize runs (test_kustomize_refusals.py); these tests bypass
them, handing kustomizations straight to the function that runs kustomize
(``kustomizerunning.run_kustomize``), so what is proven is the construction: the seccomp filter of
``sources.isolating`` (no socket can be opened) and a PATH that holds no ``git``.

Behaviours covered:
- a kustomization naming ``http://127.0.0.1:PORT/...`` (kustomize's own HTTP client) and a git repository
  over HTTP on 127.0.0.1 (kustomize runs ``git``): the local server sees no connection at all; the same
  kustomize run as before issue 21 (an unreachable proxy in its environment, git on PATH) is seen by the
  server, its HTTP request and git's, which is what makes the first assertion mean something (Go never
  sends a loopback request through a proxy);
- a ``file://`` git repository of the machine: not cloned (no git to run), nothing of it in the output or
  the error, where the same build without isolation reads it;
- a URL that our checks never see, in a transformer's configuration file (``PatchTransformer``'s
  ``path``), built through the ordinary path (``build_all``): the server sees nothing, the problem says
  the socket was refused; plain ``kubectl kustomize`` of the same directory fetches it;
- any program run through ``isolating`` gets EACCES from ``socket(2)``, and the server sees nothing;
- where no filter can be installed (not Linux), ``forbid_sockets`` says why and installs nothing, and the
  launcher's refusal becomes a problem at the kustomization that says kustomize was not run.
"""

from __future__ import annotations

import http.server
import os
import shutil
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from nova_gitops.sources import isolating, kustomizerunning, kustomizing, reading

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the socket filter is Linux's seccomp"),
    pytest.mark.skipif(
        shutil.which("kustomize") is None and shutil.which("kubectl") is None,
        reason="neither kustomize nor kubectl is installed",
    ),
]

MARKER = f"nova-host-{uuid.uuid4().hex}"


class Recorder(http.server.ThreadingHTTPServer):
    """A server on 127.0.0.1 that records every connection (TLS or not) and every request line."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        super().__init__(("127.0.0.1", 0), _Answer)

    def verify_request(self, request: object, client_address: object) -> bool:
        self.seen.append(f"connection from {client_address}")
        return True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Answer(http.server.BaseHTTPRequestHandler):
    """200 with text that is not YAML, so kustomize goes on from its HTTP fetch to ``git``."""

    def do_GET(self) -> None:
        assert isinstance(self.server, Recorder)
        self.server.seen.append(f"GET {self.path}")
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"- [not yaml\n")

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[Recorder]:
    recorder = Recorder()
    thread = threading.Thread(target=recorder.serve_forever, daemon=True)
    thread.start()
    try:
        yield recorder
    finally:
        recorder.shutdown()
        recorder.server_close()
        thread.join()


def kustomization(tmp_path: Path, *resources: str) -> Path:
    target = tmp_path / "k"
    target.mkdir()
    (target / "kustomization.yaml").write_text("resources:\n" + "".join(f"- {r}\n" for r in resources))
    return target


def as_before(tmp_path: Path) -> dict[str, str]:
    """The environment kustomize had before issue 21, less ``GIT_ALLOW_PROTOCOL=none``: PATH (git included),
    an unreachable proxy."""
    unreachable = "http://127.0.0.1:9"
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(tmp_path),
        "HTTP_PROXY": unreachable,
        "HTTPS_PROXY": unreachable,
        "http_proxy": unreachable,
        "https_proxy": unreachable,
    }


def test_kustomize_reaches_no_local_http_server_nor_git_remote(tmp_path: Path, server: Recorder) -> None:
    command = kustomizerunning.builder(os.environ)
    target = kustomization(tmp_path, f"{server.url}/cm.yaml", f"{server.url}/org/fleet.git//base?ref=main")
    done = kustomizerunning.run_kustomize(command, target, tmp_path / "scratch", timeout=60)
    assert done.returncode != 0
    assert server.seen == []
    # the controls, which make the assertion above mean something: kustomize's HTTP request to 127.0.0.1
    # with the environment it had before (an unreachable proxy: Go never proxies a loopback address) ...
    (target / "kustomization.yaml").write_text(f"resources:\n- {server.url}/cm.yaml\n")
    subprocess.run([*command, str(target)], env=as_before(tmp_path), capture_output=True, timeout=60)
    assert "GET /cm.yaml" in server.seen
    # ... and the git it runs for a remote base, when git is on PATH and allowed to
    (target / "kustomization.yaml").write_text(f"resources:\n- {server.url}/org/fleet.git//base?ref=main\n")
    plain = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(tmp_path)}
    subprocess.run([*command, str(target)], env=plain, capture_output=True, timeout=60)
    assert "GET /org/fleet.git/info/refs?service=git-upload-pack" in server.seen  # git's request


def test_kustomize_clones_no_repository_of_the_machine(tmp_path: Path) -> None:
    repository = tmp_path / "host-repo"
    (repository / "base").mkdir(parents=True)
    (repository / "base" / "kustomization.yaml").write_text("resources:\n- cm.yaml\n")
    (repository / "base" / "cm.yaml").write_text(
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stolen\ndata:\n  token: {MARKER}\n"
    )
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(repository)], check=True)
    subprocess.run(["git", "-C", str(repository), "add", "."], check=True)
    subprocess.run(["git", "-C", str(repository), *identity, "commit", "-qm", "host"], check=True)
    command = kustomizerunning.builder(os.environ)
    target = kustomization(tmp_path, f"file://{repository}//base?ref=main")
    done = kustomizerunning.run_kustomize(command, target, tmp_path / "scratch", timeout=60)
    assert done.returncode != 0
    assert MARKER not in done.stdout.decode() + done.stderr.decode()
    assert b"no 'git' program on path" in done.stderr or b"git" in done.stderr
    # the control: without isolation, kustomize clones it and prints the machine's file
    before = subprocess.run([*command, str(target)], env=as_before(tmp_path), capture_output=True, timeout=60)
    assert MARKER in before.stdout.decode()


def test_a_url_inside_a_transformer_configuration_reaches_nothing(tmp_path: Path, server: Recorder) -> None:
    source = tmp_path / "src"
    (source / "app").mkdir(parents=True)
    (source / "app" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
    (source / "app" / "patch.yaml").write_text(
        "apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\n"
        f"path: {server.url}/patch.yaml\ntarget:\n  kind: ConfigMap\n"
    )
    (source / "app" / "kustomization.yaml").write_text("resources:\n- cm.yaml\ntransformers:\n- patch.yaml\n")
    with reading.SourceReader(source) as reader:
        built = kustomizing.build_all(source, ["app/kustomization.yaml"], reader)
    [problem] = built.problems
    assert "kustomize build failed" in problem.message and "permission denied" in problem.message
    assert server.seen == []
    command = kustomizerunning.builder(os.environ)  # the control: kustomize alone fetches it
    subprocess.run([*command, str(source / "app")], capture_output=True, timeout=60)
    assert "GET /patch.yaml" in server.seen


def test_no_program_run_through_isolating_opens_a_socket(server: Recorder) -> None:
    probe = (
        "import socket\n"
        f"try:\n    socket.create_connection(('127.0.0.1', {server.server_address[1]}), timeout=5)\n"
        "except PermissionError:\n    print('refused')\n"
    )
    done = subprocess.run(
        isolating.command([sys.executable, "-c", probe]), capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout) == (0, "refused\n"), done.stderr
    assert server.seen == []


def test_where_no_filter_can_be_installed_kustomize_is_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patched:
        patched.setattr(sys, "platform", "darwin")
        with pytest.raises(OSError, match="seccomp is a Linux facility"):
            isolating.forbid_sockets()
    # what the launcher prints and exits with then, from a stand-in kustomize
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    refusing = bin_dir / "kustomize"
    refusing.write_text(
        f"#!/bin/sh\necho '{isolating.REFUSAL_PREFIX} (seccomp is a Linux facility)' >&2\n"
        f"exit {isolating.UNAVAILABLE}\n"
    )
    refusing.chmod(0o755)
    source = kustomization(tmp_path, "cm.yaml")
    (source / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
    with reading.SourceReader(tmp_path) as reader:
        built = kustomizing.build_all(
            tmp_path, ["k/kustomization.yaml"], reader, environ={"PATH": str(bin_dir)}
        )
    assert [str(problem) for problem in built.problems] == [
        "k/kustomization.yaml:1: kustomize is not run where it cannot be kept off the network: "
        "seccomp is a Linux facility"
    ]
