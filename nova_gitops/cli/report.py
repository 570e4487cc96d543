"""``nova-gitops report SOURCE -o fleet.html``: the fleet's views as one offline HTML file (issue 27)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from nova_gitops.cli import options

if TYPE_CHECKING:
    from nova_gitops.scheduling.plans import PlanSettings


@click.command("report")
@options.source_argument
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The HTML file to write (replaced whole).",
)
@options.clusters_option
@click.option(
    "--previous",
    metavar="DIR|REF",
    help="The previous render, for stickiness: a directory holding its placement files, git-url[@ref] of "
    "the rendered repository, or a ref of the git repository holding the current directory.",
)
@options.plan_settings_options
@options.quiet_option
@click.pass_context
def report_command(
    context: click.Context,
    source: str,
    output: Path,
    clusters_path: Path | None,
    previous: str | None,
    settings: PlanSettings,
    quiet: bool,
) -> None:
    """Write SOURCE's plan as one self-contained HTML file: the fleet's capacity, the groups and every
    candidate's verdict, the rollout's waves — the controller's web view, offline, for a CI artifact.

    The file references nothing outside itself (its CSS and script are inline, allowed by their hashes),
    so it opens from disk or a CI artifact with no network.

    \b
    Examples:
      nova-gitops report examples/repo-layout/source -o fleet.html
      nova-gitops report ./source --clusters status/ --previous origin/main -o fleet.html
    """

    def action() -> int:
        import os

        from nova_gitops.workflows import reporting

        html = reporting.report_html(
            source, clusters_path=clusters_path, settings=settings, environ=os.environ, previous=previous
        )
        reporting.write_report(html, output)
        if not quiet:
            click.echo(f"wrote {output} ({len(html.encode()) // 1024} KiB)", err=True)
        return 0

    options.finish(context, action)
