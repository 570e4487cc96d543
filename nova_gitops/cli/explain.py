"""``nova-gitops explain SOURCE KIND/[NAMESPACE/]NAME``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from nova_gitops.cli import completing, options

if TYPE_CHECKING:
    from nova_gitops.scheduling.plans import PlanSettings


@click.command("explain")
@options.source_argument
@click.argument("reference", metavar="KIND/[NAMESPACE/]NAME", shell_complete=completing.complete_objects)
@options.clusters_option
@click.option(
    "--previous",
    metavar="DIR|REF",
    help="The previous render, for stickiness: a directory holding its placement.yaml, git-url[@ref] of "
    "the rendered repository, or a ref (branch, tag, commit, HEAD~1) of the git repository holding the "
    "current directory, whose placement.yaml at that ref is read.",
)
@click.option(
    "-o", "--output", type=click.Choice(["text", "json", "yaml"]), default="text", show_default=True
)
@options.plan_settings_options
@options.quiet_option
@click.pass_context
def explain_command(
    context: click.Context,
    source: str,
    reference: str,
    clusters_path: Path | None,
    previous: str | None,
    output: str,
    settings: PlanSettings,
    quiet: bool,
) -> None:
    """Explain where one object goes and why: its policy, group, candidates, each cluster's fit, the choice.

    \b
    Examples:
      nova-gitops explain examples/repo-layout/source deployment/shop/blue-frontend
      nova-gitops explain ./source job/ml/train -o json
    """

    def action() -> int:
        import os

        from nova_gitops.scheduling import explaining
        from nova_gitops.workflows import inspecting

        explanation = inspecting.explain(
            source,
            reference,
            clusters_path=clusters_path,
            settings=settings,
            environ=os.environ,
            previous=previous,
        )
        if output == "json":
            click.echo(json.dumps(explanation, indent=2))
        elif output == "yaml":
            import yaml

            click.echo(yaml.dump(explanation, Dumper=yaml.CSafeDumper, sort_keys=False), nl=False)
        elif not show_on_terminal(explaining.as_text(explanation), explanation, quiet=quiet):
            click.echo(explaining.as_text(explanation))
        return 0

    options.finish(context, action)


PLACED_ON = "Placed on:"
PLACED_HEADERS = ("CLUSTER", "REPLICAS", "OVERRIDES", "AVAILABLE", "PLACED BY THIS RENDER")


def show_on_terminal(text: str, explanation: dict[str, Any], *, quiet: bool) -> bool:
    """On a decorated terminal (``cli.terminal``): the text's lines with their labels in bold, and where it
    lists the clusters, a table of them with their replicas, overrides and capacity. False, printing
    nothing, elsewhere."""
    import sys

    from nova_gitops.cli import terminal
    from nova_gitops.clients import terminals

    if not terminals.decorated(sys.stdout, quiet=quiet):
        return False
    from rich.text import Text

    from nova_gitops.api import texts

    out = terminal.console(stderr=False)
    # data, shown before rich styles it; only newlines cut lines (splitlines would obey a data's \x1c)
    lines = [texts.one_line(line) for line in text.removesuffix("\n").split("\n")]
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if line == PLACED_ON:
            while index < len(lines) and lines[index].startswith("  "):
                index += 1  # the table below says it all
            capacity = explanation.get("capacity", {})
            rows = [
                (
                    cluster,
                    "" if copy["replicas"] is None else str(copy["replicas"]),
                    "; ".join(copy["overrides"]),
                    str(capacity.get(cluster, {}).get("available", "")),
                    str(capacity.get(cluster, {}).get("placedByThisRender", "")),
                )
                for cluster, copy in explanation.get("clusters", {}).items()
            ]
            out.print(Text(line, style="bold"), soft_wrap=True)
            terminal.print_table(PLACED_HEADERS, rows)
            continue
        label, colon, rest = line.partition(":")
        if colon and not line.startswith(" "):
            out.print(Text.assemble((label + colon, "bold"), rest), soft_wrap=True)
        else:
            out.print(Text(line), soft_wrap=True)
    return True
