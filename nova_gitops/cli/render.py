"""``nova-gitops render SOURCE -o DIR``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from nova_gitops.cli import notices, options

if TYPE_CHECKING:
    from nova_gitops.scheduling.plans import PlanSettings
    from nova_gitops.workflows.rendering import DirectoryRender


@click.command("render")
@options.source_argument
@click.option(
    "-o",
    "--output",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Directory of the rendered repository (created; a previous render there is updated in place).",
)
@options.clusters_option
@click.option(
    "--previous",
    metavar="DIR|REF",
    help="The previous render, for stickiness: a directory holding its placement.yaml, git-url[@ref] of "
    "the rendered repository, or a ref (branch, tag, commit, HEAD~1) of the git repository holding the "
    "output directory, read from git (default: the output directory itself).",
)
@click.option("--no-previous", is_flag=True, help="Ignore any previous render: place every group afresh.")
@click.option("--source-name", help="How placement.yaml names the source (default: the directory's name).")
@options.plan_settings_options
@options.headroom_options
@options.quiet_option
@click.pass_context
def render_command(
    context: click.Context,
    source: str,
    output: Path,
    clusters_path: Path | None,
    previous: str | None,
    no_previous: bool,
    source_name: str | None,
    settings: PlanSettings,
    quiet: bool,
) -> None:
    """Render SOURCE into per-cluster manifests in DIR.

    SOURCE is a directory of YAML manifests (workloads, SchedulePolicies, Clusters) or git-url[@ref],
    fetched into a clone cache under $XDG_CACHE_HOME/nova-gitops and never re-cloned. Invalid input exits
    2 and lists every problem as file:line: message; nothing is written then.

    \b
    Examples:
      nova-gitops render examples/repo-layout/source -o rendered/
      nova-gitops render ./source -o rendered/ --clusters status/ --no-luna-management
      nova-gitops render ./source -o rendered/ --previous HEAD~1
    """

    def action() -> int:
        import os

        from nova_gitops.cli import terminal
        from nova_gitops.workflows import rendering

        wanted = None if no_previous else previous
        with (
            terminal.progress(quiet=quiet) as progress,
            rendering.opened_source(source, environ=os.environ, progress=progress) as (root, source_info),
            rendering.previous_directory(wanted, repository_of=output, environ=os.environ) as previous_dir,
        ):
            result = rendering.render_to_directory(
                root,
                output,
                settings=settings,
                clusters_path=clusters_path,
                previous=previous_dir,
                use_previous=not no_previous,
                source_name=source_name,
                source_info=source_info,
                progress=progress,
            )
        _tell(result, output)
        return 0

    options.finish(context, action)


def _tell(result: DirectoryRender, output: Path) -> None:
    """The plan's notices and what was rendered and written, on stderr."""
    notices.show(result.findings)
    plan = result.tree.plan
    objects = sum(len(copy_plan.copies) for group in plan.groups for copy_plan in group.objects)
    objects += len(plan.followed_namespaces)
    clusters = len({cluster for group in plan.groups for cluster in group.clusters})
    stats = result.stats
    click.echo(
        f"rendered {objects} objects in {len(plan.groups)} groups onto {clusters} clusters "
        f"({notices.counted(result.findings)}) into {output}: "
        f"{stats.written} written, {stats.unchanged} unchanged, {stats.removed} removed",
        err=True,
    )
