"""Running kustomize on a copy of a source's kustomizations, so that it can reach nothing but that copy.

- it cannot reach a network or a git remote by construction, whatever reaches it (``run_kustomize``): it
  runs in a process that cannot open a socket (``sources.isolating``'s seccomp filter), with a PATH where
  no ``git`` is found, an environment of its own and a deadline; Go's HTTP client would otherwise send a
  request for ``127.0.0.1`` past any proxy setting;
- no plugins (no ``--enable-alpha-plugins``, ``--enable-exec``, ``--enable-helm``): generators and
  transformers that would run programs fail the build.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from nova_gitops.api.problems import shortened
from nova_gitops.errors import UserError
from nova_gitops.sources import isolating

TIMEOUT_SECONDS = 60.0
_MESSAGE_LIMIT = 400

_KLOG_PREFIX = re.compile(r"^[EWI]\d{4} [\d:.]+\s+\d+ [\w.]+:\d+\] ")


def builder(environ: Mapping[str, str]) -> list[str]:
    """The command that builds a kustomization: ``kustomize build`` or ``kubectl kustomize``, as found on
    PATH (an absolute path: it runs with a PATH of nothing); UserError naming both when neither is."""
    path = environ.get("PATH", os.defpath)
    found = shutil.which("kustomize", path=path)
    if found:
        return [os.path.abspath(found), "build"]
    found = shutil.which("kubectl", path=path)
    if found:
        return [os.path.abspath(found), "kustomize"]
    raise UserError(
        "the source holds a kustomization.yaml, and building it needs `kustomize` or `kubectl` (which embeds "
        "kustomize) on PATH: neither was found; install one, or remove the kustomization"
    )


def failure(done: subprocess.CompletedProcess[bytes], scratch: str) -> str:
    stderr = done.stderr.decode("utf-8", "replace")
    if done.returncode == isolating.UNAVAILABLE and stderr.startswith(isolating.REFUSAL_PREFIX):
        reason = shortened(stderr.removeprefix(isolating.REFUSAL_PREFIX).strip(" ()\n"), _MESSAGE_LIMIT)
        return f"kustomize is not run where it cannot be kept off the network: {reason}"
    return f"kustomize build failed: {_kustomize_message(stderr, scratch)}"


def run_kustomize(
    command: Sequence[str], target: Path, scratch: Path, timeout: float
) -> subprocess.CompletedProcess[bytes]:
    """``command target`` (``kustomize build DIR``) run so that it can reach no network and run no git: in
    a process that cannot open a socket (``sources.isolating``), with a PATH of nothing, an environment of
    its own (a HOME and a working directory in ``scratch``) and a deadline, after which its whole process
    group is killed. Nothing here checks what ``target`` names; ``build_all`` does, before."""
    scratch.mkdir(parents=True, exist_ok=True)
    argv = isolating.command([*command, str(target)])
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_environment(scratch),
        cwd=scratch,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        raise
    except BaseException:
        _kill_group(process)
        raise
    return subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.communicate()


def _environment(scratch: Path) -> dict[str, str]:
    """Nothing of ours for kustomize: a PATH where no program is found (no git, no helm, no plugin), a
    HOME of its own, and, should a git run all the same, no transport and no configuration."""
    unreachable = "http://127.0.0.1:9"
    return {
        "PATH": str(scratch / "no-programs"),
        "HOME": str(scratch / "home"),
        "KUBECONFIG": str(scratch / "no-kubeconfig"),
        "GIT_ALLOW_PROTOCOL": "none",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "HTTP_PROXY": unreachable,
        "HTTPS_PROXY": unreachable,
        "http_proxy": unreachable,
        "https_proxy": unreachable,
        "NO_PROXY": "",
        "no_proxy": "",
    }


def _kustomize_message(stderr: str, scratch: str) -> str:
    """kustomize's error, without the temporary directory's path, klog's prefix and the deprecation
    chatter, shortened."""
    lines = [
        _KLOG_PREFIX.sub("", line.strip())
        for line in stderr.replace(os.path.join(scratch, "source") + os.sep, "")
        .replace(scratch, "")
        .splitlines()
        if line.strip() and not line.lstrip().startswith("# Warning:")
    ]
    text = " ".join(lines).removeprefix("Error: ").strip() or "no message"
    return shortened(text, _MESSAGE_LIMIT)
