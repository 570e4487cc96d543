"""``nova-gitops validate SOURCE [--strict]``."""

from __future__ import annotations

from pathlib import Path

import click

from nova_gitops import errors
from nova_gitops.cli import notices, options

EXIT_STRICT_WARNINGS = errors.EXIT_FOUND


@click.command("validate")
@options.source_argument
@options.clusters_option
@click.option(
    "--strict",
    is_flag=True,
    help="Also fail (exit 1) on warnings about the input: unknown fields, objects matched by several "
    "policies, unscheduled objects. Capacity warnings never fail it: they change by the hour.",
)
@options.namespace_option
@click.pass_context
def validate_command(
    context: click.Context, source: str, clusters_path: Path | None, strict: bool, namespace: str | None
) -> None:
    """Check SOURCE without writing anything: every problem is listed as file:line: message.

    Exit 0 valid, 1 warnings under --strict, 2 invalid.

    \b
    Example:
      nova-gitops validate examples/repo-layout/source --strict
    """

    def action() -> int:
        import os

        from nova_gitops.scheduling import findings
        from nova_gitops.scheduling.plans import PlanSettings
        from nova_gitops.workflows import rendering

        with rendering.opened_source(source, environ=os.environ) as (root, _):
            source_set = rendering.load_source(root, clusters_path, namespace=namespace)
            plan = rendering.plan_source(source_set, settings=PlanSettings(namespace=namespace))
            told = findings.findings_of(source_set, plan)
            notices.show(told, limit=None)
            unknown_fields = sum(1 for w in source_set.warnings if w.message.startswith("unknown field"))
            strict_failures = {
                "unknown field": unknown_fields,
                "other input warning": len(source_set.warnings) - unknown_fields,
                "policy overlap": len(plan.policy_overlaps),
                "unscheduled object": len(plan.unscheduled),
            }
            failed = strict and any(strict_failures.values())
            verdict = "valid, but not strict" if failed else "valid"
            click.echo(
                f"{source}: {verdict}: {len(source_set.policies)} policies, {len(source_set.clusters)} "
                f"clusters, {len(source_set.workloads)} objects; {len(plan.groups)} groups, "
                f"{notices.counted(told)}"
            )
            if not failed:
                return 0
            kinds = ", ".join(_counted(n, kind) for kind, n in strict_failures.items() if n)
            total = sum(strict_failures.values())
            verb = "fails" if total == 1 else "fail"
            click.echo(f"strict: {_counted(total, 'warning')} {verb} --strict: {kinds}", err=True)
            return EXIT_STRICT_WARNINGS

    options.finish(context, action)


def _counted(count: int, noun: str) -> str:
    """``1 policy overlap``, ``2 unknown fields``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
