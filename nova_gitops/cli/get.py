"""``nova-gitops get schedulegroups|placements|clusters SOURCE``: tables like ``kubectl nova get``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from nova_gitops.cli import options

if TYPE_CHECKING:
    from nova_gitops.scheduling.plans import PlanSettings

RESOURCES = {
    "schedulegroups": "schedulegroups",
    "schedulegroup": "schedulegroups",
    "sg": "schedulegroups",
    "placements": "placements",
    "placement": "placements",
    "clusters": "clusters",
    "cluster": "clusters",
}


@click.command("get")
@click.argument("resource", type=click.Choice(sorted(RESOURCES), case_sensitive=False), metavar="RESOURCE")
@options.source_argument
@options.clusters_option
@click.option(
    "-o", "--output", default="table", show_default=True, help="table, yaml, json or jsonpath=EXPR."
)
@click.option(
    "--previous",
    metavar="DIR|REF",
    help="The previous render, for stickiness: a directory holding its placement.yaml, git-url[@ref] of "
    "the rendered repository, or a ref (branch, tag, commit, HEAD~1) of the git repository holding the "
    "current directory, whose placement.yaml at that ref is read.",
)
@options.plan_settings_options
@options.quiet_option
@click.pass_context
def get_command(
    context: click.Context,
    resource: str,
    source: str,
    clusters_path: Path | None,
    output: str,
    previous: str | None,
    settings: PlanSettings,
    quiet: bool,
) -> None:
    """List RESOURCE (schedulegroups, placements or clusters) as SOURCE's plan decides them.

    \b
    Examples:
      nova-gitops get schedulegroups examples/repo-layout/source
      nova-gitops get placements examples/repo-layout/source -o json
      nova-gitops get clusters examples/repo-layout/source -o jsonpath='{.items[*].name}'
    """

    def action() -> int:
        import os

        from nova_gitops.cli import output as printing
        from nova_gitops.rendering import views
        from nova_gitops.workflows import inspecting

        kind = RESOURCES[resource.lower()]
        found = inspecting.planned(
            source,
            clusters_path=clusters_path,
            settings=settings,
            environ=os.environ,
            previous=previous,
            plan=kind != "clusters",
        )
        if found.plan is None:
            clusters = sorted(found.source_set.clusters, key=lambda cluster: cluster.name)
            items = [views.cluster_item(cluster) for cluster in clusters]
            rows = [views.cluster_row(cluster) for cluster in clusters]
            printing.emit(output, items, views.CLUSTER_HEADERS, rows, quiet=quiet)
        elif kind == "schedulegroups":
            items = [views.schedule_group(group) for group in found.plan.groups]
            rows = [views.schedule_group_row(group) for group in found.plan.groups]
            printing.emit(output, items, views.SCHEDULE_GROUP_HEADERS, rows, quiet=quiet)
        else:
            items = views.placement_items(found.plan)
            rows = [views.placement_row(item) for item in items]
            printing.emit(output, items, views.PLACEMENT_HEADERS, rows, quiet=quiet)
        return 0

    options.finish(context, action)
