"""Shell completion: ``nova-gitops completion bash|zsh|fish`` prints click's script, and arguments that
name a policy, a cluster, a ScheduleGroup or an object complete from the source.

The source is the one on the command line so far (a ``SOURCE`` argument or ``--source``) when it is a
directory, else the current directory, as the edit commands default to. Policies, clusters and objects come
from the source's documents as read (an invalid source still completes); ScheduleGroup names exist only
once the source is planned, so they complete only for a source that validates.

A completion runs on every Tab press, inside the user's shell: it must never fail, never print and never
keep the user waiting. Every completer here returns no candidates rather than raise, whatever the loader
would say goes nowhere, and a directory with more than ``MAX_ENTRIES`` entries below it (Tab pressed in a
home directory) is not read at all.
"""

from __future__ import annotations

import contextlib
import io
import os
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path

import click
from click.shell_completion import CompletionItem

SHELLS = ("bash", "zsh", "fish")
MAX_ENTRIES = 20_000
"""Files and directories below a source beyond which completion gives up rather than read them all."""

Completer = Callable[[click.Context, click.Parameter, str], list[CompletionItem]]


def source_root(context: click.Context) -> Path:
    """The source directory the command line names so far, or the current directory."""
    for current in _contexts(context):
        value = current.params.get("source")
        if value:
            path = Path(str(value))
            if path.is_dir():
                return path
    return Path(".")


def _contexts(context: click.Context) -> Iterable[click.Context]:
    current: click.Context | None = context
    while current is not None:
        yield current
        current = current.parent


def small_enough(root: Path, limit: int | None = None) -> bool:
    """Whether ``root`` holds at most ``limit`` entries (hidden directories skipped, as sources skip them);
    stops counting at the limit, so a huge tree costs no more than a small one."""
    limit = MAX_ENTRIES if limit is None else limit
    seen = 0
    for _, directories, files in os.walk(root):
        directories[:] = [name for name in directories if not name.startswith(".")]
        seen += len(directories) + len(files)
        if seen > limit:
            return False
    return True


# Each reads the source only when ``small_enough``, and imports the workflows module it asks when Tab is
# pressed: the names from documents need only the reader; ScheduleGroups need the planner.


def policy_names(root: Path) -> list[str]:
    from nova_gitops.workflows import sourcenames

    return sourcenames.policy_names(root) if small_enough(root) else []


def cluster_names(root: Path) -> list[str]:
    from nova_gitops.workflows import sourcenames

    return sourcenames.cluster_names(root) if small_enough(root) else []


def group_names(root: Path) -> list[str]:
    from nova_gitops.workflows import inspecting

    return inspecting.group_names(root) if small_enough(root) else []


def object_references(root: Path) -> list[str]:
    """``kind/namespace/name`` (``kind/name`` when cluster-scoped or unnamespaced), kind lower-cased, as
    ``explain`` and ``pin`` take them."""
    from nova_gitops.workflows import sourcenames

    return sourcenames.object_references(root) if small_enough(root) else []


def _quietly(names: Callable[[Path], list[str]]) -> Completer:
    """A click ``shell_complete`` callback offering ``names(source)`` that start with what was typed."""

    def complete(context: click.Context, parameter: click.Parameter, incomplete: str) -> list[CompletionItem]:
        try:
            with (
                contextlib.redirect_stdout(io.StringIO()),
                contextlib.redirect_stderr(io.StringIO()),
                warnings.catch_warnings(),
            ):
                warnings.simplefilter("ignore")
                found = names(source_root(context))
        except Exception:  # a broken source, an unreadable file: no candidates, never an error
            return []
        return [CompletionItem(name) for name in found if name.startswith(incomplete)]

    return complete


complete_policies = _quietly(policy_names)
complete_clusters = _quietly(cluster_names)
complete_groups = _quietly(group_names)
complete_objects = _quietly(object_references)


@click.command("completion")
@click.argument("shell", type=click.Choice(SHELLS))
@click.pass_context
def completion_command(context: click.Context, shell: str) -> None:
    """Print the shell completion script for SHELL (bash, zsh or fish).

    Commands, options, and the names of policies, clusters, ScheduleGroups and objects of the source
    (the SOURCE or --source given so far, else the current directory) complete on Tab.

    \b
    Examples:
      eval "$(nova-gitops completion bash)"        # in ~/.bashrc
      eval "$(nova-gitops completion zsh)"         # in ~/.zshrc
      nova-gitops completion fish > ~/.config/fish/completions/nova-gitops.fish
    """
    from click.shell_completion import get_completion_class

    root = context.find_root()
    program = root.info_name or "nova-gitops"
    variable = f"_{program.replace('-', '_').replace('.', '_').upper()}_COMPLETE"
    completion_class = get_completion_class(shell)
    assert completion_class is not None  # SHELLS are click's own
    click.echo(completion_class(root.command, {}, program, variable).source())
