"""A git command that failed, as a person should read it: ``git failed: <git's own words>``, and whether the
remote could not be reached (exit 4, try later) or git said no (exit 2, fix something).

The places that run git wrap the failures they expect (a fetch that finds no host says which remote and
what to check). This is for the rest: a ``git ls-tree`` on a damaged cache, a GitPython ``GitCommandError``
from a call nobody wrapped. Both CLIs' last line of defence asks ``git_failure`` before it calls anything a
bug, so a git failure is never reported as one.

A git failure is recognised by shape, not by class, so that this module imports neither GitPython (75 ms
that ``--help`` must not pay) nor the publishing layer: GitPython's ``GitCommandError`` and publishing's
``GitFailed`` both carry ``command``, ``status`` and ``stderr``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from nova_gitops import errors

NETWORK_SIGNS: Final = (
    "could not resolve host",
    "could not resolve hostname",
    "failed to connect",
    "connection refused",
    "connection timed out",
    "connection reset",
    "operation timed out",
    "network is unreachable",
    "no route to host",
    "did not complete in",
    "no answer in time",
)
"""Lower-cased phrases of git, ssh and curl (and of our own deadline messages) that mean the remote gave no
answer. Refusals (authentication, a missing repository, a protected branch) are not among them: retrying
those does not help, so they keep exit 2."""

_CREDENTIALS_IN_URL: Final = re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]+@")
_GITPYTHON_STDERR: Final = re.compile(r"^\s*stderr: '(.*)'\s*$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class GitFailure:
    """What to tell the user: one line, credentials masked, and the exit code it deserves."""

    message: str
    exit_code: int


def is_unreachable(text: str) -> bool:
    """Whether git's (or our wrapper's) words say the remote gave no answer."""
    lowered = text.lower()
    return any(sign in lowered for sign in NETWORK_SIGNS)


def scrub(text: str) -> str:
    """``text`` with the ``user:token@`` part of any URL masked: git quotes URLs in its errors."""
    return _CREDENTIALS_IN_URL.sub(r"\1***@", text)


def last_line(stderr: str, otherwise: str = "") -> str:
    """git's explanation: its last ``fatal:``/``error:`` line (or a push's ``!`` line), else its last line,
    else ``otherwise``. The one reading of git's words for nova-gitops and nova-agent alike."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    meaningful = [line for line in lines if line.startswith(("fatal:", "error:", "!"))]
    return (meaningful or lines or [otherwise])[-1]


def git_failure(error: BaseException) -> GitFailure | None:
    """``error`` as a git failure, or None when it is not one: an exception of a git class (by name) that
    carries ``command``, ``status`` and ``stderr``."""
    command, status, stderr = (getattr(error, name, None) for name in ("command", "status", "stderr"))
    if "git" not in type(error).__name__.lower() or command is None or not isinstance(stderr, str):
        return None
    words = [str(word) for word in command] if isinstance(command, list | tuple) else str(command).split()
    start = next((i + 1 for i, word in enumerate(words) if word == "git" or word.endswith("/git")), 0)
    subcommand = next((word for word in words[start:] if not word.startswith("-") and "=" not in word), "")
    unwrapped = _GITPYTHON_STDERR.match(stderr)
    text = unwrapped.group(1) if unwrapped else stderr
    timed_out = status == -9
    detail = last_line(text) or ("no answer in time" if timed_out else f"exit status {status}")
    unreachable = timed_out or is_unreachable(text)
    hint = "check the host and your network" if unreachable else "check the repository, the ref and access"
    return GitFailure(
        scrub(f"git failed: git {subcommand}: {detail}; {hint}"),
        errors.EXIT_UNREACHABLE if unreachable else errors.EXIT_INVALID,
    )
