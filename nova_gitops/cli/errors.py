"""The one place that turns errors into exit codes and messages (pre-commit's ``error_handler``).

A ``UserError`` prints its message (an ``InputError`` prints one ``file:line: message`` per problem) and
exits with the error's ``exit_code`` (a Kubernetes API that answered 429/5xx: 4, unreachable, as the agent
says); Ctrl-C prints ``interrupted`` and exits 130; a git command that failed where nothing wrapped it prints
``git failed: …`` and exits 2, or 4 when the remote gave no answer (``clients.gitfailures``); output whose
reader went away (``nova-gitops rollout status | head -1``) ends quietly with ``EXIT_CLOSED_PIPE`` (141,
128 + SIGPIPE, as git and the shell's own tools end), the rest of the output thrown away; anything
else exits 3 with a pointer to ``--debug``, which shows the traceback. Library exceptions never reach a user
raw. The codes are ``nova_gitops.errors``' table, shared with ``nova-agent`` (docs/exit-codes.md).

An ``InputError`` prints at most ``MAX_PRINTED_PROBLEMS`` problems, then ``… and K more problems``: a source
of a million broken documents would otherwise print tens of megabytes to a terminal or a CI log, and the
first hundred say what is wrong as well as all of them. ``--debug`` prints every one. No machine-readable
output (``-o json``) lists problems today; one that does should list them all, since a program can page.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import traceback
from collections.abc import Callable
from typing import TypeVar

import click

from nova_gitops import errors
from nova_gitops.api.problems import shortened
from nova_gitops.clients import gitfailures
from nova_gitops.clients.kuberest import KubeApiError
from nova_gitops.errors import InputError, UserError

EXIT_INTERRUPTED = errors.EXIT_INTERRUPTED
EXIT_UNEXPECTED = errors.EXIT_UNEXPECTED
EXIT_CLOSED_PIPE = 128 + signal.SIGPIPE
MAX_PRINTED_PROBLEMS = 100

T = TypeVar("T")


def report(message: str) -> None:
    click.echo(message, err=True)


def run(action: Callable[[], int], *, debug: bool = False) -> int:
    """Run ``action`` and return the exit code it asks for, or the one its error maps to."""
    try:
        return action()
    except InputError as error:
        report_problems(error, limit=None if debug else MAX_PRINTED_PROBLEMS)
        return error.exit_code
    except UserError as error:
        failure = gitfailures.git_failure(error)  # a git command nothing put into words of its own
        if failure is not None:
            report(f"error: {failure.message}")
            return failure.exit_code
        report(f"error: {error}")
        return exit_code_of(error)
    except KeyboardInterrupt:
        report("interrupted")
        return EXIT_INTERRUPTED
    except click.exceptions.Exit:
        raise
    except BrokenPipeError as error:
        if _output_closed():
            return EXIT_CLOSED_PIPE
        return _unexpected(error, debug)  # a pipe of our own (to a child), not the user's output
    except Exception as error:  # the last line of defence: nothing raw reaches the user
        return _unexpected(error, debug)


def _unexpected(error: Exception, debug: bool) -> int:
    failure = gitfailures.git_failure(error)
    if debug:
        traceback.print_exc(file=sys.stderr)
    if failure is not None:
        report(f"error: {failure.message}")
        return failure.exit_code
    if not debug:
        # an exception's text can quote input (a whole document): only its start is shown
        report(f"error: unexpected {type(error).__name__}: {shortened(str(error))}")
        report("This is a bug in nova-gitops. Run again with --debug to see where it happened.")
    return EXIT_UNEXPECTED


def _output_closed() -> bool:
    """Whether stdout or stderr is a pipe whose reader has gone (poll says POLLERR); each such one is
    pointed at /dev/null, so that nothing more is written to it — not even by the interpreter's flush at
    exit, which would print "Exception ignored … BrokenPipeError"."""
    closed = False
    for stream in (sys.stdout, sys.stderr):
        try:
            descriptor = stream.fileno()
        except (AttributeError, OSError, ValueError):  # not a file (a test's runner): nothing to check
            continue
        poll = select.poll()
        poll.register(descriptor, select.POLLOUT)
        if any(events & select.POLLERR for _, events in poll.poll(0)):
            closed = True
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, descriptor)
            os.close(null)
    return closed


def exit_code_of(error: UserError) -> int:
    """The error's own code, except that a Kubernetes API that answered "not now" (429, 5xx) and a git
    remote that gave no answer count as unreachable, as they do for the agent."""
    if isinstance(error, KubeApiError) and error.unavailable:
        return errors.EXIT_UNREACHABLE
    if isinstance(error, errors.RepoError) and gitfailures.is_unreachable(str(error)):
        return errors.EXIT_UNREACHABLE
    return error.exit_code


def report_problems(error: InputError, *, limit: int | None = MAX_PRINTED_PROBLEMS) -> None:
    """The first ``limit`` problems (all when None), one line each, then how many were left out, and a
    summary counting the errors among all of them."""
    problems = error.problems
    shown = problems if limit is None else problems[:limit]
    if shown:
        report("\n".join(problem.pointed() for problem in shown))
    if len(problems) > len(shown):
        more = len(problems) - len(shown)
        report(f"… and {more} more problem{'s' if more != 1 else ''} (run with --debug to list them all)")
    count = sum(1 for problem in problems if problem.is_error)
    plural = "s" if count != 1 else ""
    report(f"error: the source is invalid ({count} problem{plural}); nothing was written")
