"""``nova-gitops diff``: what a change does to placement, for a terminal, a PR comment or a tool."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from nova_gitops import errors
from nova_gitops.cli import notices, options

if TYPE_CHECKING:
    from nova_gitops.api.progress import Progress
    from nova_gitops.rendering.diffs import RenderDiff
    from nova_gitops.scheduling.plans import PlanSettings
    from nova_gitops.workflows.diffing import SourceDiff

EXIT_NO_CHANGES, EXIT_CHANGES = errors.EXIT_OK, errors.EXIT_FOUND


@click.command("diff")
@click.argument("directories", nargs=-1, type=click.Path(path_type=Path))
@click.option("--source", help="A source directory (a git work tree) or git URL to render at two revisions.")
@click.option("--base", help="The revision the change starts from (branch, tag or commit).")
@click.option("--head", help="The revision with the change (default: the source's work tree as it is).")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
    help="markdown is made for a pull-request comment.",
)
@click.option("--color/--no-color", default=None, help="Colour the text diff (default: on a terminal).")
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path, resolve_path=True),
    help="Where git sources are cached.",
)
@click.option(
    "--headroom",
    is_flag=True,
    help="With --source: add what the change does to failover headroom (what losing each cluster strands).",
)
@click.option(
    "--headroom-domain",
    metavar="LABEL",
    help="With --headroom: lose every cluster sharing each value of this Cluster label at once.",
)
@options.git_timeout_option
@options.clusters_option
@options.plan_settings_options
@options.quiet_option
@click.pass_context
def diff_command(
    context: click.Context,
    directories: tuple[Path, ...],
    source: str | None,
    base: str | None,
    head: str | None,
    output_format: str,
    color: bool | None,
    cache_dir: Path | None,
    headroom: bool,
    headroom_domain: str | None,
    git_timeout: float,
    clusters_path: Path | None,
    settings: PlanSettings,
    quiet: bool,
) -> None:
    """Show placement changes, then the manifest diff, between two renders.

    Either OLD_DIR NEW_DIR (two renders on disk), or --source with --base [--head] (render the source at
    two revisions; the work tree when --head is not given). With --source, when the head has a
    RolloutStrategy, the wave plan of the change follows: the clusters each wave will change, those it
    does not touch, and the earliest time to complete. With --headroom, what losing each cluster strands
    after the change that it did not before, and the reverse. Secret values are never shown. Exits 0 when
    nothing changed, 1 when something did, 2 on an error.

    \b
    Examples:
      nova-gitops diff rendered-old/ rendered-new/
      nova-gitops diff --source . --base origin/main --format markdown > comment.md
      nova-gitops diff --source . --base origin/main --headroom --format markdown > comment.md
      nova-gitops diff --source https://git.example.com/fleet.git --base v1 --head v2 --format json
    """
    _check_arguments(context, directories, source=source, base=base, head=head, settings=settings)
    _check_headroom(source, headroom, headroom_domain)

    def action() -> int:
        from nova_gitops.cli import terminal

        with terminal.progress(quiet=quiet) as progress:
            found = _found(
                directories,
                source,
                base,
                head,
                settings=settings,
                clusters_path=clusters_path,
                cache_dir=cache_dir,
                timeout=git_timeout,
                progress=progress,
                headroom=(headroom, headroom_domain),
            )
        return _tell(found, head, output_format, color)

    options.finish(context, action)


def _found(
    directories: tuple[Path, ...],
    source: str | None,
    base: str | None,
    head: str | None,
    *,
    settings: PlanSettings,
    clusters_path: Path | None,
    cache_dir: Path | None,
    timeout: float,
    progress: Progress,
    headroom: tuple[bool, str | None],
) -> SourceDiff:
    """The diff of two revisions of ``source`` (with ``--headroom``: and its failover headroom), or of two
    render directories."""
    import os

    from nova_gitops.scheduling import findings
    from nova_gitops.workflows import diffing

    if not source:
        return diffing.SourceDiff(diffing.diff_directories(*directories, progress=progress), findings.NONE)
    return diffing.diff_source(
        source,
        base or "",
        head,
        settings=settings,
        clusters_path=clusters_path,
        cache_dir=cache_dir,
        environ=os.environ,
        timeout=timeout,
        progress=progress,
        headroom=headroom[0],
        domain=headroom[1],
    )


def _tell(found: SourceDiff, head: str | None, output_format: str, color: bool | None) -> int:
    """The diff on stdout, the head's notices on stderr (stdout is the diff, as scripts read it); the exit
    code."""
    if found.findings.warnings:
        notices.show(found.findings)
        click.echo(f"{head or 'the work tree'}: {notices.counted(found.findings)}", err=True)
    _echo(found.diff, output_format, color)
    return EXIT_NO_CHANGES if found.diff.is_empty else EXIT_CHANGES


def _check_headroom(source: str | None, headroom: bool, domain: str | None) -> None:
    if headroom and not source:
        raise click.UsageError("--headroom only applies with --source (a render on disk holds no inventory)")
    if domain is not None and not headroom:
        raise click.UsageError("--headroom-domain only applies with --headroom")


def _check_arguments(
    context: click.Context,
    directories: tuple[Path, ...],
    *,
    source: str | None,
    base: str | None,
    head: str | None,
    settings: PlanSettings,
) -> None:
    """``UsageError`` for a combination of arguments that names no diff."""
    if directories and source:
        raise click.UsageError("give either OLD_DIR NEW_DIR or --source, not both")
    if not source and len(directories) != 2:
        raise click.UsageError("give two render directories (OLD_DIR NEW_DIR), or --source with --base")
    if source and not base:
        raise click.UsageError("--source needs --base (the revision to compare against)")
    if head and not source:
        raise click.UsageError("--head only applies with --source")
    given = context.get_parameter_source("namespace") is click.core.ParameterSource.COMMANDLINE
    if settings.namespace and given and not source:
        raise click.UsageError("--namespace only applies with --source (OLD_DIR NEW_DIR are renders already)")


def _echo(result: RenderDiff, output_format: str, color: bool | None) -> None:
    """The diff on stdout in ``output_format`` (text coloured on a terminal, or as ``--color`` says)."""
    import sys

    from nova_gitops.cli import output as printing
    from nova_gitops.rendering import diffformats

    if output_format == "text":
        colour = sys.stdout.isatty() if color is None else color
        printing.styled(diffformats.to_text(result, colour=colour), colour=colour)
    elif output_format == "markdown":
        click.echo(diffformats.to_markdown(result), nl=False)
    else:
        click.echo(diffformats.to_json(result), nl=False)
