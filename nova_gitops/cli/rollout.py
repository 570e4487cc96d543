"""``nova-gitops rollout status|promote|pause|resume|abort``: see and steer a progressive rollout.

``status`` decides as the controller's next step would and pushes nothing; the others commit one request
to ``rollout/requests.yaml`` on ``nova/rollout`` of the rendered repository (docs/rollouts.md), which the
controller reads at its next step. The logic is ``nova_gitops.controller.rolloutcommands``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from nova_gitops.cli import options

F = TypeVar("F", bound=Callable[..., Any])


def _where_options(*, source_required: bool) -> Callable[[F], F]:
    def decorate(function: F) -> F:
        for option in reversed(
            [
                click.option("--repo", "repo_url", required=True, help="URL of the rendered repository."),
                click.option("--branch", default="main", show_default=True, help="Its rendered branch."),
                click.option(
                    "--source",
                    required=source_required,
                    help="The source the controller reads (a directory or git-url[@ref]): it holds the "
                    "RolloutStrategy, which is never rendered.",
                ),
                click.option(
                    "--status-branch",
                    default="nova-status",
                    show_default=True,
                    help="Branch agents report to.",
                ),
                click.option("--status-repo", help="Repository agents report to, when not the rendered one."),
                click.option(
                    "--cache-dir",
                    type=click.Path(file_okay=False, path_type=Path, resolve_path=True),
                    help="Where git clones are cached.",
                ),
                options.git_timeout_option,
            ]
        ):
            function = option(function)
        return function

    return decorate


def _where(parameters: dict[str, Any]) -> Any:
    import os

    from nova_gitops.controller.rolloutcommands import Where
    from nova_gitops.sources import gitsources

    return Where(
        repo_url=parameters["repo_url"],
        source=parameters.get("source") or "",
        cache_dir=parameters["cache_dir"] or gitsources.default_cache_dir(os.environ),
        branch=parameters["branch"],
        status_branch=parameters["status_branch"],
        status_repo=parameters["status_repo"],
        timeout=parameters["git_timeout"],
    )


def _now() -> Any:
    from datetime import UTC, datetime

    return datetime.now(UTC)


@click.group("rollout")
def rollout_command() -> None:
    """See and steer the progressive rollout of the rendered repository's newest commit.

    \b
    Examples:
      nova-gitops rollout status --repo file:///srv/rendered.git --source ./fleet
      nova-gitops rollout pause --repo file:///srv/rendered.git --reason "change freeze"
      nova-gitops rollout promote --repo file:///srv/rendered.git --source ./fleet --wave canary
    """


@rollout_command.command("status")
@_where_options(source_required=True)
@click.option(
    "-o",
    "--output",
    type=click.Choice(["table", "yaml", "json"]),
    default="table",
    show_default=True,
    help="table for a terminal; yaml or json (stable keys, full commit ids) for scripts.",
)
@options.quiet_option
@click.pass_context
def status_command(context: click.Context, /, output: str, quiet: bool, **parameters: Any) -> None:
    """Waves × clusters: each wave's state and reason; each cluster's wave, released and synced commits,
    health for the released commit, and why it is where it is. Reads only; pushes nothing."""

    def action() -> int:
        import json

        import yaml

        from nova_gitops.cli import output as printing
        from nova_gitops.controller import rolloutcommands
        from nova_gitops.rollouts import statuses

        found = rolloutcommands.status(_where(parameters), _now())
        if found is None:
            if output == "table":
                click.echo("no rollout: nothing is published, or no RolloutStrategy and no release branches")
            else:
                empty = {
                    "apiVersion": "gitops.nova.elotl.co/v1alpha1",
                    "kind": "RolloutStatus",
                    "target": None,
                }
                click.echo(
                    json.dumps(empty, indent=2) if output == "json" else yaml.safe_dump(empty), nl=False
                )
            return 0
        if output == "json":
            click.echo(printing.json_text(found, indent=2))
        elif output == "yaml":
            click.echo(printing.yaml_text(found, allow_unicode=True), nl=False)
        else:
            shown = printing.one_lined(found)  # a reason from a report forges no line
            click.echo(statuses.headline(shown))
            click.echo()
            printing.show_table(statuses.WAVE_HEADERS, statuses.wave_rows(shown), quiet=quiet)
            click.echo()
            printing.show_table(statuses.CLUSTER_HEADERS, statuses.cluster_rows(shown), quiet=quiet)
            for problem in shown["refusedReports"]:
                click.echo(f"warning: report refused: {problem}", err=True)
        return 0

    options.finish(context, action)


def _requesting(context: click.Context, /, command: str, parameters: dict[str, Any], **extra: Any) -> None:
    def action() -> int:
        import os

        from nova_gitops.controller import rolloutcommands

        click.echo(
            rolloutcommands.request(_where(parameters), command, now=_now(), environ=os.environ, **extra)
        )
        return 0

    options.finish(context, action)


@rollout_command.command("promote")
@_where_options(source_required=True)
@click.option("--wave", help="The wave to pass now, without its gate (default: the current wave).")
@click.pass_context
def promote_command(context: click.Context, /, wave: str | None, **parameters: Any) -> None:
    """Pass a wave of the rollout of the newest commit now: the next wave is released without the bake."""
    _requesting(context, "promote", parameters, wave=wave)


@rollout_command.command("pause")
@_where_options(source_required=False)
@click.option("--reason", default="", help="Why (shown by rollout status, with your git name).")
@click.pass_context
def pause_command(context: click.Context, /, reason: str, **parameters: Any) -> None:
    """Hold every gated and remedial release, across new renders, until rollout resume."""
    _requesting(context, "pause", parameters, reason=reason)


@rollout_command.command("resume")
@_where_options(source_required=True)
@click.pass_context
def resume_command(context: click.Context, /, **parameters: Any) -> None:
    """Clear a pause by request, and retry the wave a failure paused."""
    _requesting(context, "resume", parameters)


@rollout_command.command("abort")
@_where_options(source_required=True)
@click.pass_context
def abort_command(context: click.Context, /, **parameters: Any) -> None:
    """Roll back every cluster the rollout of the newest commit released (a first release: its branch is
    deleted), and stop that rollout."""
    _requesting(context, "abort", parameters)
