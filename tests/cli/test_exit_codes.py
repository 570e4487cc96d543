"""Exit codes: one table (``nova_gitops.errors``, docs/exit-codes.md) for ``nova-gitops`` and ``nova-agent``,
and every git failure inside it.

Behaviours covered:
- the documented table lists exactly the codes both commands use, and the agent's names are the same numbers;
- a Kubernetes API that gives no answer or answers 429/5xx exits 4 (unreachable) from both commands; a 403
  exits 2; a git remote that gives no answer (a RepoError saying so) exits 4;
- a git command that fails where nothing wrapped it (GitPython's ``GitCommandError``, publishing's
  ``GitFailed``) prints ``git failed: git <command>: <git's words>`` and exits 2, or 4 when the remote gave
  no answer; never "This is a bug"; credentials in URLs are masked;
- Ctrl-C prints ``interrupted`` and exits 130; anything else exits 3 and points at ``--debug``.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import git
import pytest

from nova_agent import cli as agent_cli
from nova_agent import passerrors
from nova_gitops import errors
from nova_gitops.cli import errors as cli_errors
from nova_gitops.clients import gitfailures
from nova_gitops.clients.kuberest import KubeApiError, KubeUnavailable
from nova_gitops.publishing.gitcommands import GitFailed

DOCS = Path(__file__).resolve().parents[2] / "docs" / "exit-codes.md"


def run(error: BaseException, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    def action() -> int:
        raise error

    code = cli_errors.run(action)
    return code, capsys.readouterr().err


def real_git_failure(tmp_path: Path) -> git.GitCommandError:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    with pytest.raises(git.GitCommandError) as raised:
        git.Git(str(tmp_path)).execute(["git", "ls-tree", "HEAD"])
    return raised.value


def test_the_documented_table_is_the_one_in_the_code() -> None:
    rows = re.findall(r"^\| `?(\d+)`? \|", DOCS.read_text(encoding="utf-8"), re.MULTILINE)
    codes = {errors.EXIT_OK, errors.EXIT_FOUND, errors.EXIT_INVALID, errors.EXIT_UNEXPECTED}
    codes |= {errors.EXIT_UNREACHABLE, errors.EXIT_INTERRUPTED}
    assert sorted(int(row) for row in rows) == sorted(codes)
    agent = (passerrors.EXIT_OK, passerrors.EXIT_OBJECT_FAILURES, passerrors.EXIT_REFUSED)
    assert agent == (errors.EXIT_OK, errors.EXIT_FOUND, errors.EXIT_INVALID)
    agent_failures = (passerrors.EXIT_UNEXPECTED, passerrors.EXIT_UNREACHABLE)
    assert agent_failures == (errors.EXIT_UNEXPECTED, errors.EXIT_UNREACHABLE)
    assert "docs/exit-codes.md" in (DOCS.parents[1] / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (KubeUnavailable("connection refused"), 4),
        (KubeApiError(503, "Service Unavailable", "etcd"), 4),
        (KubeApiError(429, "Too Many Requests", "slow down"), 4),
        (KubeApiError(403, "Forbidden", "no"), 2),
        (errors.RepoError("cannot fetch the source x: no answer in time; check that the host is up"), 4),
        (errors.RepoError("cannot fetch x: fatal: unable to access 'x': Could not resolve host: x"), 4),
        (errors.RepoError("cannot push x: ! [remote rejected] main (protected branch hook declined)"), 2),
        (errors.SafetyError("refused"), 2),
    ],
)
def test_unreachable_is_4_and_refused_is_2(
    error: errors.UserError, code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(error, capsys)[0] == code
    if isinstance(error, KubeApiError | KubeUnavailable):  # the agent says the same of the same error
        assert passerrors.classify(error, "nova-agent")[0] == code


def test_a_failed_git_command_is_a_git_failure_not_a_bug(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run(real_git_failure(tmp_path), capsys)
    assert code == 2
    assert err.startswith("error: git failed: git ls-tree: fatal:"), err
    assert "bug" not in err and "unexpected" not in err


@pytest.mark.parametrize(
    ("stderr", "status", "code"),
    [
        ("fatal: unable to access 'https://tok3n@h/x.git/': Could not resolve host: h", 128, 4),
        ("ssh: connect to host h port 22: Connection refused", 128, 4),
        ("git fetch did not complete in 120s", -9, 4),
        ("remote: Permission denied\nfatal: unable to access 'https://h/x.git/': 403", 128, 2),
        ("fatal: Not a valid object name HEAD", 128, 2),
    ],
)
def test_git_failures_say_what_git_said(
    stderr: str, status: int, code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    failure = GitFailed(("fetch", "--quiet", "https://user:tok3n@h/x.git"), status, stderr)
    exit_code, err = run(failure, capsys)
    assert exit_code == code
    assert err.startswith("error: git failed: git fetch: ")
    assert "tok3n" not in err
    assert "bug" not in err


def test_gitpython_stderr_is_unwrapped() -> None:
    command = ["git", "-c", "a=b", "--git-dir=/x", "cat-file", "--batch"]
    error = git.GitCommandError(command, 128, b"fatal: bad")
    failure = gitfailures.git_failure(error)
    assert failure is not None
    assert failure.message.startswith("git failed: git cat-file: fatal: bad;")


def test_other_exceptions_are_not_git_failures() -> None:
    assert gitfailures.git_failure(subprocess.CalledProcessError(1, ["git", "x"], stderr="no")) is None
    assert gitfailures.git_failure(ValueError("x")) is None


def test_ctrl_c_and_bugs(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(KeyboardInterrupt(), capsys) == (130, "interrupted\n")
    code, err = run(RuntimeError("boom"), capsys)
    assert code == 3 and "--debug" in err


def test_the_agent_reports_what_escaped_a_pass_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert passerrors.classify(real_git_failure(tmp_path), "nova-agent")[0] == 2
    assert agent_cli._reported(real_git_failure(tmp_path)) == 2
    assert capsys.readouterr().err.startswith("error: git failed: git ls-tree: fatal:")
    assert agent_cli._reported(KubeUnavailable("no answer")) == 4
    assert agent_cli._reported(RuntimeError("boom")) == 3
    assert "unexpected RuntimeError" in capsys.readouterr().err
