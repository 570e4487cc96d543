"""One error tree for everything nova-gitops tells a user.

::

    NovaError                      base; never shown raw
    ├── UserError                  shown verbatim, one line (or a list), exit code on the class
    │   ├── InputError     (2)     the source is invalid: carries every Problem, file:line: message
    │   ├── RepoError      (2)     a git repository cannot be read or written; says what to check
    │   ├── ClusterError   (2)     a Kubernetes API cannot be reached or refused us
    │   └── SafetyError    (2)     refused on purpose (mass deletion without consent, ...)
    └── TemporaryError(delay)      a reconcile outcome (controller): try again after ``delay`` seconds

``nova_gitops.cli.errors`` is the one place that maps these to exit codes: a ``UserError`` exits with its
``exit_code`` and its message, Ctrl-C exits 130, anything else exits 3 with a pointer to ``--debug``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from nova_gitops.api.problems import Problem


class NovaError(Exception):
    """Base of every error nova-gitops raises on purpose."""


class UserError(NovaError):
    """An error whose message is written for the user and shown as it is."""

    exit_code: ClassVar[int] = 2


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
