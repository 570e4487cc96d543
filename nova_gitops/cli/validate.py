"""``nova-gitops validate SOURCE [--strict]``."""

from __future__ import annotations

from pathlib import Path

import click

from nova_gitops.cli import options

EXIT_STRICT_WARNINGS = 1


@click.command("validate")
@options.source_argument
@options.clusters_option
@click.option(
    "--strict",
    is_flag=True,
    help="Also fail (exit 1) on warnings about the input: unknown fields, objects matched by several "
    "policies, unscheduled objects. Capacity warnings never fail it: they change by the hour.",
)
@click.pass_context
def validate_command(context: click.Context, source: str, clusters_path: Path | None, strict: bool) -> None:
    """Check SOURCE without writing anything: every problem is listed as file:line: message.

    Exit 0 valid, 1 warnings under --strict, 2 invalid.

    \b
    Example:
      nova-gitops validate examples/repo-layout/source --strict
    """

    def action() -> int:
        import os

        from nova_gitops.workflows import rendering

        with rendering.opened_source(source, environ=os.environ) as (root, _):
            source_set = rendering.load_source(root, clusters_path)
            plan = rendering.plan_source(source_set)
            for warning in source_set.warnings:
                click.echo(str(warning), err=True)
            for plan_warning in plan.warnings:
                click.echo(f"warning: {plan_warning}", err=True)
            for entry in plan.unscheduled:
                click.echo(f"warning: {entry.key} is not scheduled: {entry.reason}", err=True)
            count = len(source_set.warnings) + len(plan.warnings) + len(plan.unscheduled)
            strict_failures = len(source_set.warnings) + len(plan.policy_overlaps) + len(plan.unscheduled)
            click.echo(
                f"{source}: valid: {len(source_set.policies)} policies, {len(source_set.clusters)} clusters, "
                f"{len(source_set.workloads)} objects; {len(plan.groups)} groups, "
                f"{len(plan.unscheduled)} unscheduled, {count} warnings"
            )
            return EXIT_STRICT_WARNINGS if strict and strict_failures else 0

    options.finish(context, action)
