"""``nova-gitops publish``: render a source revision and commit it to the rendered repository."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from nova_gitops.cli import notices, options

if TYPE_CHECKING:
    from nova_gitops.scheduling.plans import PlanSettings
    from nova_gitops.workflows.publishing import SourcePublication


@click.command("publish")
@click.argument("source")
@click.option(
    "--repo", "repo_url", required=True, help="URL of the rendered repository (any URL git accepts)."
)
@click.option("--branch", default="main", show_default=True, help="Branch of the rendered repository.")
@click.option(
    "--pull-request",
    is_flag=True,
    help="Push to nova/render-<source-sha7> on top of --branch instead, and print the PR body (Markdown).",
)
@click.option("--body-file", type=click.Path(dir_okay=False, path_type=Path), help="Write the PR body here.")
@click.option(
    "--max-delete-percent",
    type=click.IntRange(0, 100),
    default=30,
    show_default=True,
    help="Refuse a render that deletes more than this share of a cluster's objects (or all of them).",
)
@click.option(
    "--allow-mass-delete", is_flag=True, help="Publish a mass deletion anyway (and let agents prune it)."
)
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path, resolve_path=True),
    help="Where git clones are cached.",
)
@options.git_timeout_option
@click.option(
    "--attempts", type=click.IntRange(1, 20), default=5, show_default=True, help="Pushes before giving up."
)
@options.clusters_option
@options.plan_settings_options
@options.headroom_options
@options.quiet_option
@click.pass_context
def publish_command(
    context: click.Context,
    source: str,
    repo_url: str,
    branch: str,
    pull_request: bool,
    body_file: Path | None,
    max_delete_percent: int,
    allow_mass_delete: bool,
    cache_dir: Path | None,
    git_timeout: float,
    attempts: int,
    clusters_path: Path | None,
    settings: PlanSettings,
    quiet: bool,
) -> None:
    """Render SOURCE and commit the result to --repo: only what changed, nothing when nothing changed.

    SOURCE is a directory or git-url[@ref]. The previous render on the branch gives stickiness. The commit
    says `render <source-sha7>: +A ~C -D objects, N groups moved`, lists moved groups and replica changes,
    and carries Nova-Source-Repo / Nova-Source-Revision trailers. A push that loses a race is redone on
    the new head.

    \b
    Examples:
      nova-gitops publish https://git.example.com/fleet.git@main --repo git@git.example.com:fleet-rendered.git
      nova-gitops publish . --repo file:///srv/rendered.git --pull-request --body-file pr.md
    """
    if body_file and not pull_request:
        raise click.UsageError("--body-file only applies with --pull-request")

    def action() -> int:
        import os

        from nova_gitops.cli import terminal
        from nova_gitops.workflows import publishing

        with terminal.progress(quiet=quiet) as progress:
            published = publishing.publish_source(
                source,
                repo_url,
                settings=settings,
                clusters_path=clusters_path,
                cache_dir=cache_dir,
                options=publishing.PublishOptions(
                    branch=branch,
                    pull_request=pull_request,
                    max_delete_percent=max_delete_percent,
                    allow_mass_delete=allow_mass_delete,
                    attempts=attempts,
                    timeout=git_timeout,
                ),
                environ=os.environ,
                progress=progress,
            )
        _tell(published, body_file)
        return 0

    options.finish(context, action)


def _tell(published: SourcePublication, body_file: Path | None) -> None:
    """The render's notices and a one-line summary on stderr; the PR body in ``body_file`` or on stdout."""
    from nova_gitops.workflows.publishing import Outcome

    result = published.result
    notices.show(published.findings)
    told = "" if result.outcome is Outcome.SUPERSEDED else f" ({notices.counted(published.findings)})"
    click.echo(summary(result) + told, err=True)
    if result.pull_request_body is not None:
        if body_file is not None:
            body_file.write_text(result.pull_request_body, encoding="utf-8")
        else:
            click.echo(result.pull_request_body, nl=False)


def summary(result: object) -> str:
    from nova_gitops.workflows.publishing import Outcome, PublishResult

    assert isinstance(result, PublishResult)
    where = f"{result.branch}"
    if result.outcome is Outcome.UNCHANGED:
        return f"nothing to publish: {where} already holds this render"
    if result.outcome is Outcome.SUPERSEDED:
        newer = result.head_revision
        return f"nothing to publish: {where} already holds a render of the newer source revision {newer}"
    subject = result.message.splitlines()[0] if result.message else ""
    tries = f" after {result.attempts} attempts" if result.attempts > 1 else ""
    return f"published {str(result.commit)[:12]} to {where}{tries}: {subject}"
