"""The one place that turns errors into exit codes and messages (pre-commit's ``error_handler``).

A ``UserError`` prints its message (an ``InputError`` prints one ``file:line: message`` per problem) and
exits with the error's ``exit_code``; Ctrl-C exits 130; anything unexpected exits 3 with a pointer to
``--debug``, which shows the traceback. Library exceptions never reach a user raw.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable
from typing import TypeVar

import click

from nova_gitops.errors import InputError, UserError

EXIT_INTERRUPTED = 130
EXIT_UNEXPECTED = 3

T = TypeVar("T")


def report(message: str) -> None:
    click.echo(message, err=True)


def run(action: Callable[[], int], *, debug: bool = False) -> int:
    """Run ``action`` and return the exit code it asks for, or the one its error maps to."""
    try:
        return action()
    except InputError as error:
        for problem in error.problems:
            report(str(problem))
        count = sum(1 for problem in error.problems if problem.is_error)
        plural = "s" if count != 1 else ""
        report(f"error: the source is invalid ({count} problem{plural}); nothing was written")
        return error.exit_code
    except UserError as error:
        report(f"error: {error}")
        return error.exit_code
    except KeyboardInterrupt:
        report("interrupted")
        return EXIT_INTERRUPTED
    except click.exceptions.Exit:
        raise
    except Exception as error:  # the last line of defence: nothing raw reaches the user
        if debug:
            traceback.print_exc(file=sys.stderr)
        else:
            report(f"error: unexpected {type(error).__name__}: {error}")
            report("This is a bug in nova-gitops. Run again with --debug to see where it happened.")
        return EXIT_UNEXPECTED
