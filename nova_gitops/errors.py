"""One error tree for everything nova-gitops tells a user.

::

    NovaError                      base; never shown raw
    ├── UserError                  shown verbatim, one line (or a list), exit code on the class
    │   ├── InputError     (2)     the source is invalid: carries every Problem, file:line: message
    │   ├── RepoError      (2)     a git repository cannot be read or written; says what to check
    │   ├── ClusterError   (2)     a Kubernetes API refused us (KubeUnavailable, no answer: 4)
    │   └── SafetyError    (2)     refused on purpose (mass deletion without consent, ...)
    └── TemporaryError(delay)      a reconcile outcome (controller): try again after ``delay`` seconds

``nova_gitops.cli.errors`` is the one place that maps these to exit codes: a ``UserError`` exits with its
``exit_code`` and its message, Ctrl-C exits 130, a git command that failed exits 2 (4 when the remote could
not be reached) with ``git failed: …``, anything else exits 3 with a pointer to ``--debug``.

The exit codes below are shared with ``nova-agent`` (``nova_agent.passerrors``): one table, documented in
docs/exit-codes.md, so that a script or a CI job reads both commands alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar, Final

if TYPE_CHECKING:
    from nova_gitops.api.problems import Problem

EXIT_OK: Final = 0
"""Done: rendered, published, in sync; ``diff``: no change."""
EXIT_FOUND: Final = 1
"""Done, and found what the caller asked about: ``diff`` changes, ``validate --strict`` warnings, objects
the agent could not apply or delete."""
EXIT_INVALID: Final = 2
"""Nothing done: invalid input or usage, or refused (a mass deletion, a bad signature, a permission the
credentials lack, a git command or an API request that failed for a reason other than the network)."""
EXIT_UNEXPECTED: Final = 3
"""A bug, or an answer no server should give; ``--debug`` shows where."""
EXIT_UNREACHABLE: Final = 4
"""A git remote or a Kubernetes API gave no answer (or answered 429/5xx): try again later."""
EXIT_INTERRUPTED: Final = 130
"""Ctrl-C (SIGINT), as shells report it (128 + 2)."""


class NovaError(Exception):
    """Base of every error nova-gitops raises on purpose."""


class UserError(NovaError):
    """An error whose message is written for the user and shown as it is."""

    exit_code: ClassVar[int] = EXIT_INVALID


class InputError(UserError):
    """The source is invalid. ``problems`` lists every problem found, not only the first."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__(f"{len(self.problems)} problems")

    def __str__(self) -> str:
        """Every problem, one per line: built when asked for, since a source can have a million of them
        and most callers (``cli.errors``) print only the first hundred."""
        return "\n".join(str(problem) for problem in self.problems)


class RepoError(UserError):
    """A git repository could not be read or written."""


class ClusterError(UserError):
    """A Kubernetes API server could not be reached or refused a request."""


class SafetyError(UserError):
    """An action was refused because it could lose what a user has (e.g. mass deletion)."""


class TemporaryError(NovaError):
    """A reconcile failed for a reason that may pass; retry after ``delay`` seconds."""

    def __init__(self, message: str, delay: float = 10.0) -> None:
        super().__init__(message)
        self.delay = delay
