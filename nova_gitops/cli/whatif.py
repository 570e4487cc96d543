"""``nova-gitops whatif`` and ``nova-gitops headroom``: what a change to the fleet would do, and what the
loss of each cluster would strand (docs/headroom.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from nova_gitops import errors
from nova_gitops.cli import completing, notices, options

if TYPE_CHECKING:
    from nova_gitops.scheduling.plans import PlanSettings
    from nova_gitops.workflows.whatif import WhatIfReport

EXIT_PLACED, EXIT_STRANDED = errors.EXIT_OK, errors.EXIT_FOUND

previous_option = click.option(
    "--previous",
    metavar="DIR|REF",
    help="Today's render, whose placement the change starts from: a directory holding its placement, "
    "git-url[@ref] of the rendered repository, or a ref (branch, tag, commit, HEAD~1) of the git repository "
    "holding the current directory (default: the source placed afresh).",
)
output_option = click.option(
    "-o",
    "--output",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
    help="markdown is made for a pull-request comment.",
)


@click.command("whatif")
@options.source_argument
@click.option(
    "--without",
    multiple=True,
    metavar="CLUSTER",
    shell_complete=completing.complete_clusters,
    help="The cluster leaves the inventory.",
)
@click.option(
    "--cordon",
    multiple=True,
    metavar="CLUSTER",
    shell_complete=completing.complete_clusters,
    help="The cluster is cordoned.",
)
@click.option(
    "--capacity",
    multiple=True,
    metavar="CLUSTER=PERCENT",
    help="Every node of the cluster keeps PERCENT % of its allocatable and available room (0-1000).",
)
@click.option(
    "--scale",
    multiple=True,
    metavar="KIND/[NS/]NAME=REPLICAS",
    help="The workload's replicas (spec.replicas, a Job's parallelism).",
)
@click.option(
    "--add-cluster",
    multiple=True,
    metavar="FILE",
    type=click.Path(path_type=Path),
    help="A file of Cluster documents that join the inventory.",
)
@click.option("--patches", is_flag=True, help="Show each changed manifest's diff too (default: counted).")
@click.option("--color/--no-color", default=None, help="Colour the text (default: on a terminal).")
@options.clusters_option
@previous_option
@output_option
@options.plan_settings_options
@options.quiet_option
@click.pass_context
def whatif_command(
    context: click.Context,
    source: str,
    without: tuple[str, ...],
    cordon: tuple[str, ...],
    capacity: tuple[str, ...],
    scale: tuple[str, ...],
    add_cluster: tuple[Path, ...],
    patches: bool,
    color: bool | None,
    clusters_path: Path | None,
    previous: str | None,
    output: str,
    settings: PlanSettings,
    quiet: bool,
) -> None:
    """Show what a change to the fleet would do to placement, as diff shows a change.

    The change is planned by the planner's own rules with today's placement as the previous one; the
    output is the diff of today's render and the what-if's, what becomes unschedulable and what it
    lacks, and each cluster's capacity after. Flags repeat and combine. Exits 0 when everything stays
    placed, 1 when something becomes unschedulable, 2 on an error.

    \b
    Examples:
      nova-gitops whatif examples/repo-layout/source --without wlc-gpu
      nova-gitops whatif ./source --capacity wlc-1=50 --scale deployment/shop/web=12 -o markdown
      nova-gitops whatif ./source --without wlc-1 --add-cluster new-cluster.yaml --previous rendered/
    """
    if not (without or cordon or capacity or scale or add_cluster):
        raise click.UsageError(
            "give at least one change: --without, --cordon, --capacity, --scale or --add-cluster"
        )

    def action() -> int:
        import os

        from nova_gitops.cli import terminal
        from nova_gitops.workflows import whatif

        flags = whatif.Flags(without, cordon, capacity, scale, add_cluster)
        changes = whatif.changes_of(flags)
        with (
            terminal.progress(quiet=quiet) as progress,
            whatif.loaded(
                source,
                clusters_path=clusters_path,
                settings=settings,
                previous=previous,
                environ=os.environ,
                progress=progress,
            ) as found,
        ):
            report = whatif.what_if_of(found, changes, patches=patches, progress=progress)
        if report.findings.warnings:  # on stderr: stdout is the what-if, as scripts read it
            notices.show(report.findings)
        _echo(report, output, color)
        return EXIT_STRANDED if report.result.unschedulable else EXIT_PLACED

    options.finish(context, action)


def _echo(report: WhatIfReport, output: str, color: bool | None) -> None:
    """The what-if on stdout in ``output`` (text coloured on a terminal, or as ``--color`` says)."""
    import sys

    from nova_gitops.cli import output as printing
    from nova_gitops.rendering import whatifformats

    if output == "text":
        colour = sys.stdout.isatty() if color is None else color
        printing.styled(whatifformats.to_text(report.result, report.diff, colour=colour), colour=colour)
    elif output == "markdown":
        click.echo(whatifformats.to_markdown(report.result, report.diff), nl=False)
    else:
        click.echo(whatifformats.to_json(report.result, report.diff), nl=False)


@click.command("headroom")
@options.source_argument
@click.option(
    "--domain",
    metavar="LABEL",
    help="Lose every cluster sharing each value of this Cluster label at once "
    "(e.g. nova.elotl.co/cluster.region); default: each cluster alone.",
)
@click.option(
    "--ignore",
    multiple=True,
    metavar="GROUP-OR-POLICY",
    shell_complete=completing.complete_policies,
    help="An accepted risk: a ScheduleGroup or SchedulePolicy name (or shell glob) whose stranding does "
    "not fail the command.",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(1, 64),
    help="Processes that plan the losses (default: the CPUs available, at most 4).",
)
@options.clusters_option
@previous_option
@output_option
@options.plan_settings_options
@options.quiet_option
@click.pass_context
def headroom_command(
    context: click.Context,
    source: str,
    domain: str | None,
    ignore: tuple[str, ...],
    jobs: int | None,
    clusters_path: Path | None,
    previous: str | None,
    output: str,
    settings: PlanSettings,
    quiet: bool,
) -> None:
    """Show what the loss of each cluster (or each --domain value) would move and strand.

    Each loss is planned as `whatif --without` plans it, from today's placement. A group is stranded
    when no cluster left can take it, its policy selects none, an annotation pins it to a lost cluster,
    or a spread's share no longer fits; the shortfall is what would rescue them. Worst loss first. Exits 1
    when some loss strands a group not --ignore'd (a CI gate), 0 otherwise, 2 on an error.

    \b
    Examples:
      nova-gitops headroom examples/repo-layout/source
      nova-gitops headroom ./source --domain nova.elotl.co/cluster.region -o markdown
      nova-gitops headroom ./source --previous rendered/ --ignore gpu-training -o json
    """

    def action() -> int:
        import os

        from nova_gitops.cli import terminal
        from nova_gitops.rendering import headroomformats
        from nova_gitops.workflows import whatif

        with (
            terminal.progress(quiet=quiet) as progress,
            whatif.loaded(
                source,
                clusters_path=clusters_path,
                settings=settings,
                previous=previous,
                environ=os.environ,
                progress=progress,
            ) as found,
        ):
            report = whatif.headroom_of(
                found, domain=domain, ignore=ignore, jobs=jobs or whatif.default_jobs(), progress=progress
            )
        click.echo(headroomformats.FORMATTERS[output](report), nl=False)
        return EXIT_STRANDED if report.strands else EXIT_PLACED

    options.finish(context, action)
