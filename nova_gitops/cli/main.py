"""The ``nova-gitops`` command group. Sub-commands live in their own modules and import heavy libraries
only when they run, so ``nova-gitops --help`` starts at once."""

from __future__ import annotations

from collections.abc import Callable

import click

from nova_gitops import __version__
from nova_gitops.cli import (
    completing,
    controller,
    diff,
    edit,
    explain,
    get,
    guarding,
    publish,
    render,
    report,
    rollout,
    validate,
    variables,
    whatif,
)

CONTEXT_SETTINGS = {
    "help_option_names": ["-h", "--help"],
    "auto_envvar_prefix": variables.PREFIX,  # NOVA_ alone is Elotl Nova's (cli.variables)
    "max_content_width": 100,
}


@click.group(context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, prog_name="nova-gitops")
@click.option("--debug", is_flag=True, help="Show tracebacks of unexpected errors.")
@click.pass_context
def cli(context: click.Context, debug: bool) -> None:
    """GitOps multi-cluster scheduler for Kubernetes, speaking Elotl Nova's SchedulePolicy API.

    Reads workloads and SchedulePolicies from a source, decides which cluster gets what, and renders
    per-cluster manifests that kubectl, Flux, Argo CD or nova-agent apply.

    \b
    Examples:
      nova-gitops render examples/repo-layout/source -o rendered/
      nova-gitops explain examples/repo-layout/source deployment/shop/blue-frontend
      nova-gitops get schedulegroups examples/repo-layout/source
      nova-gitops validate examples/repo-layout/source --strict
    """
    context.obj = {"debug": debug}
    context.call_on_close(guarding.install())  # data's control and bidi characters shown, never acted on
    _say_what_is_ignored(context)
    if context.invoked_subcommand not in DAEMONS:
        context.call_on_close(_keep_persons_git_configuration())


DAEMONS = frozenset({"controller"})
"""Sub-commands that run unattended: git runs under the policy alone (no system or global configuration)."""


def _say_what_is_ignored(context: click.Context) -> None:
    """One line on stderr for each variable the invoked command would have read by its old ``NOVA_`` name
    (``cli.variables``): the group's options, the command's, and those read by name."""
    import os

    from nova_gitops.clients import terminals

    group, name = context.command, context.invoked_subcommand
    names = [*variables.read_by(group, variables.PREFIX, nested=False), terminals.FORCE_TERMINAL]
    command = cli.commands.get(name) if name is not None else None
    if command is not None and name is not None:
        names += variables.read_by(command, f"{variables.PREFIX}_{name.upper()}".replace("-", "_"))
        names += READ_BY_NAME.get(name, ())
    for line in variables.ignored(names, os.environ):
        click.echo(line, err=True)


READ_BY_NAME: dict[str, tuple[str, ...]] = {"controller": tuple(controller.SECRET_ENVIRONMENT.values())}
"""Variables a command reads itself rather than through click (besides ``NOVA_GITOPS_FORCE_TERMINAL``, which
every command's output reads)."""


def _keep_persons_git_configuration() -> Callable[[], None]:
    """Commands a person runs use their own git configuration (credential helpers, ``insteadOf``), as git
    in their shell would (docs/publishing.md, "Git"): set before any git runs, for the command's duration
    (the returned function puts the environment back, for tests that run many commands in one process)."""
    import os
    from pathlib import Path

    from nova_gitops.clients import gitenvironment

    home = Path.home()
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "git" / "config"
    found = next((str(path) for path in (home / ".gitconfig", xdg) if path.is_file()), None)
    chosen = gitenvironment.person_configuration(os.environ, found)
    os.environ.update(chosen)

    def restore() -> None:
        for name in chosen:
            os.environ.pop(name, None)

    return restore


cli.add_command(render.render_command)
cli.add_command(report.report_command)
cli.add_command(validate.validate_command)
cli.add_command(explain.explain_command)
cli.add_command(get.get_command)
cli.add_command(publish.publish_command)
cli.add_command(diff.diff_command)
cli.add_command(controller.controller_command)
cli.add_command(rollout.rollout_command)
cli.add_command(completing.completion_command)
cli.add_command(whatif.whatif_command)
cli.add_command(whatif.headroom_command)
for edit_command in (
    edit.pin_command,
    edit.unpin_command,
    edit.split_command,
    edit.move_command,
    edit.cordon_command,
    edit.uncordon_command,
):
    cli.add_command(edit_command)


def main() -> None:
    cli(prog_name="nova-gitops")
