"""``nova-gitops pin|unpin|split|move|cordon|uncordon``: propose a placement change by editing the source.

Each edits the user's own files in place (comments, order, quoting and other documents kept), prints the
placement diff the edit causes, as ``nova-gitops diff --source . --base HEAD`` would, and never writes a
source that would not validate. ``--dry-run`` shows the diff and writes nothing. docs/editing.md.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from nova_gitops.cli import completing, options

if TYPE_CHECKING:
    from nova_gitops.workflows.editing import LoadedSource
    from nova_gitops.workflows.proposing import Proposal

F = TypeVar("F", bound=Callable[..., Any])


def _edit_options(function: F) -> F:
    function = click.option(
        "--color/--no-color", default=None, help="Colour the placement diff (default: on a terminal)."
    )(function)
    function = click.option("--dry-run", is_flag=True, help="Show the placement diff; write nothing.")(
        function
    )
    return click.option(
        "--source",
        "-s",
        "source",
        default=".",
        show_default=True,
        type=click.Path(file_okay=False, path_type=Path),
        help="The source directory to edit (a clone of the source repository).",
    )(function)


def _run(
    context: click.Context,
    source: Path,
    dry_run: bool,
    color: bool | None,
    propose: Callable[[LoadedSource], Proposal],
) -> None:
    def action() -> int:
        import sys

        from nova_gitops.cli import output as printing
        from nova_gitops.errors import InputError
        from nova_gitops.rendering import diffformats
        from nova_gitops.workflows import editing

        loaded = editing.load(source)
        try:
            proposal = propose(loaded)
        except InputError:
            click.echo(
                "error: the edit would make the source invalid (the lines below are of the edited text); "
                "nothing was written",
                err=True,
            )
            raise
        result = proposal.result
        for note in proposal.notes:
            click.echo(f"note: {note}", err=True)
        verb = "edited" if result.written else "would edit"
        for file_edit in result.edits:
            click.echo(f"{verb} {source / file_edit.file}", err=True)
        colour = sys.stdout.isatty() if color is None else color
        printing.styled(diffformats.to_text(result.diff, colour=colour), colour=colour)  # past the guard
        return 0

    options.finish(context, action)


@click.command("pin")
@click.argument("reference", metavar="KIND[.GROUP]/[NS/]NAME", shell_complete=completing.complete_objects)
@click.argument("cluster", metavar="CLUSTER", shell_complete=completing.complete_clusters)
@_edit_options
@click.pass_context
def pin_command(
    context: click.Context, reference: str, cluster: str, source: Path, dry_run: bool, color: bool | None
) -> None:
    """Pin an object to CLUSTER: annotate it nova.elotl.co/cluster: CLUSTER in its source file.

    Name the API group (deployment.apps/shop/web) when the source has the kind in two groups.

    \b
    Example:
      nova-gitops pin deployment/shop/blue-frontend wlc-2
    """
    from nova_gitops.workflows import proposing

    _run(
        context,
        source,
        dry_run,
        color,
        lambda loaded: proposing.pin(loaded, reference, cluster, dry_run=dry_run),
    )


@click.command("unpin")
@click.argument("reference", metavar="KIND[.GROUP]/[NS/]NAME", shell_complete=completing.complete_objects)
@_edit_options
@click.pass_context
def unpin_command(
    context: click.Context, reference: str, source: Path, dry_run: bool, color: bool | None
) -> None:
    """Remove an object's pin (its nova.elotl.co/cluster annotation): its policy places it again.

    \b
    Example:
      nova-gitops unpin deployment/shop/blue-frontend
    """
    from nova_gitops.workflows import proposing

    _run(context, source, dry_run, color, lambda loaded: proposing.unpin(loaded, reference, dry_run=dry_run))


@click.command("split")
@click.argument("policy", metavar="POLICY", shell_complete=completing.complete_policies)
@click.argument("assignments", nargs=-1, required=True, metavar="CLUSTER_OR_DOMAIN=PERCENT...")
@_edit_options
@click.pass_context
def split_command(
    context: click.Context,
    policy: str,
    assignments: tuple[str, ...],
    source: Path,
    dry_run: bool,
    color: bool | None,
) -> None:
    """Set a Divide policy's percentageSplit (percentages summing to 100), in the shape it already has.

    \b
    Example:
      nova-gitops split web-spread us-east-1=70 us-central1=30
    """
    from nova_gitops.workflows import proposing

    _run(
        context,
        source,
        dry_run,
        color,
        lambda loaded: proposing.split(loaded, policy, assignments, dry_run=dry_run),
    )


@click.command("move")
@click.argument("group", metavar="GROUP", shell_complete=completing.complete_groups)
@click.argument("cluster", metavar="CLUSTER", shell_complete=completing.complete_clusters)
@_edit_options
@click.pass_context
def move_command(
    context: click.Context, group: str, cluster: str, source: Path, dry_run: bool, color: bool | None
) -> None:
    """Move a ScheduleGroup to CLUSTER by pinning each of its objects there (see get schedulegroups).

    \b
    Example:
      nova-gitops move shop-blue-green-4f068569 wlc-2
    """
    from nova_gitops.workflows import proposing

    _run(
        context,
        source,
        dry_run,
        color,
        lambda loaded: proposing.move(loaded, group, cluster, dry_run=dry_run),
    )


def _cordon_command(name: str, cordoned: bool, summary: str) -> click.Command:
    @click.command(name, help=summary)
    @click.argument("cluster", metavar="CLUSTER", shell_complete=completing.complete_clusters)
    @_edit_options
    @click.pass_context
    def command(
        context: click.Context, cluster: str, source: Path, dry_run: bool, color: bool | None
    ) -> None:
        from nova_gitops.workflows import proposing

        _run(
            context,
            source,
            dry_run,
            color,
            lambda loaded: proposing.cordon(loaded, cluster, cordoned=cordoned, dry_run=dry_run),
        )

    return command


cordon_command = _cordon_command(
    "cordon",
    True,
    'Cordon CLUSTER: label its Cluster nova.elotl.co/cordoned: "true" in the source. No new or moved group '
    "goes there; the groups it runs stay.",
)
uncordon_command = _cordon_command(
    "uncordon", False, "Uncordon CLUSTER: remove its Cluster's nova.elotl.co/cordoned label."
)
