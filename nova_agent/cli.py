"""``nova-agent``: thin click commands that parse options, build the collaborators (kube client, clock,
settings) and call one function that returns an exit code.

``kubernetes`` is imported only inside the commands, so ``nova-agent --help`` stays instant. Exit codes,
the same as ``nova-gitops``'s (docs/exit-codes.md, ``nova_gitops.errors``): 0 in sync, 1 some objects
failed, 2 refused (invalid render, bad signature, mass prune, a permission the agent lacks) or bad usage,
3 unexpected error (rerun with ``--debug``), 4 git or the Kubernetes API unreachable (no answer, or
5xx/429), 130 interrupted by Ctrl-C (see :mod:`nova_agent.passerrors`).

Output: every command writes through the guard ``nova-gitops`` writes through (``clients.guarding``): the
log lines, errors and progress of a pass name files, objects, API servers' and git's messages, and a
control or bidi character in one of them is shown as its ``\\uXXXX`` escape, never acted on by a terminal.
The first sync's rich drawing is our own and goes under the guard, its data made visible first.

Stopping: SIGTERM (Kubernetes) lets the pass in progress finish and exits 0. SIGINT (Ctrl-C) does the same
but exits 130 and says only ``interrupted``: on a terminal, Ctrl-C also reaches the git children of
the pass, so the pass's own failure is the interrupt's doing and is not reported as a network
or API error.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import traceback
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

import click

from nova_agent.clocks import SystemClock
from nova_agent.drifting import DRIFT_ANNOTATION, DriftMode
from nova_agent.settings import AgentSettings
from nova_gitops import errors
from nova_gitops.api import durations, texts
from nova_gitops.clients import gitfailures, guarding
from nova_gitops.clients.kuberest import KubeApiError

if TYPE_CHECKING:
    from nova_agent.running import Agent, PassOutcome

EXIT_UNEXPECTED = errors.EXIT_UNEXPECTED


class Duration(click.ParamType[timedelta, Any]):
    """A time flag as ``nova_gitops.api.durations`` reads it, the syntax ``nova-gitops`` takes too: ``30s``,
    ``2m``, ``1h30m``, ``500ms``, or plain seconds."""

    name = "duration"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> timedelta:
        if isinstance(value, timedelta):
            return value
        try:
            return durations.parse_duration(str(value))
        except durations.DurationError as error:
            self.fail(str(error), param, ctx)


def _labels(values: tuple[str, ...]) -> dict[str, str]:
    labels = {}
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{value!r} is not key=value", param_hint="--label")
        labels[key] = text
    return labels


def _default_cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return str(Path(base) / "nova-agent")


def _switch(name: str, help_text: str) -> tuple[Any, Any]:
    """A boolean option spelled as Nova's install flags are (``--NAME=false``, ``--NAME false``, bare
    ``--NAME``) plus click's ``--no-NAME``; ``--no-NAME`` wins over ``--NAME`` (see ``_switched``)."""
    dest = name.replace("-", "_")
    return (
        click.option(
            f"--{name}",
            dest,
            type=click.BOOL,
            default=True,
            is_flag=False,
            flag_value=True,
            metavar="true|false",
            show_default=True,
            help=help_text,
        ),
        click.option(f"--no-{name}", f"no_{dest}", is_flag=True, help=f"Same as --{name}=false."),
    )


def _switched(options: dict[str, Any], dest: str) -> bool:
    return bool(options[dest]) and not options[f"no_{dest}"]


def _where_options() -> list[Callable[[Any], Any]]:
    """Which repository, directory and cluster a pass reads and writes."""
    return [
        click.option("--cluster", required=True, help="This cluster's name (its directory clusters/<name>)."),
        click.option("--repo", required=True, help="URL of the rendered repository."),
        click.option(
            "--branch", default="main", show_default=True, help="Branch of the rendered repository."
        ),
        click.option("--path", default="", help="Directory to apply  [default: clusters/<cluster>]"),
        click.option(
            "--follow-release",
            is_flag=True,
            help="Apply what the controller released to this cluster (branch nova/clusters/<cluster>, "
            "progressive rollouts) instead of the head of --branch.",
        ),
        click.option(
            "--kubeconfig", type=click.Path(dir_okay=False), help="Kubeconfig; in-cluster when absent."
        ),
        click.option("--context", help="Context of the kubeconfig."),
        click.option(
            "--namespace", default="nova-agent", show_default=True, help="Namespace of the inventory."
        ),
    ]


def _pass_options() -> list[Callable[[Any], Any]]:
    """When passes run, and what they do."""
    return [
        click.option(
            "--interval", type=Duration(), default="30s", show_default=True, help="Time between passes."
        ),
        click.option(
            "--settle-interval",
            type=Duration(),
            default="5s",
            show_default=True,
            help="Time between passes while what was just applied is not yet healthy (up to 10m; 0: off).",
        ),
        *_switch("orchestration-enabled", "Apply and prune; false: only watch objects labelled for Nova."),
        *_switch("rescheduling-enabled", "Ask the controller to move workloads whose pods stay Pending."),
        click.option("--pending-timeout", type=Duration(), default="2m", show_default=True),
        click.option("--max-prune-percent", type=click.IntRange(0, 100), default=30, show_default=True),
    ]


def _report_options() -> list[Callable[[Any], Any]]:
    """Where status reports go, and how often when nothing changes."""
    return [
        click.option("--status-branch", default="nova-status", show_default=True),
        click.option("--status-repo", default="", help="A repository of its own for status reports."),
        click.option("--heartbeat-interval", type=Duration(), default="5m", show_default=True),
    ]


def _apply_options() -> list[Callable[[Any], Any]]:
    """What a pass applies, and how."""
    return [
        click.option(
            "--verify-signatures",
            "allowed_signers",
            type=click.Path(exists=True, dir_okay=False),
            help="Apply only commits signed by a key in this SSH allowed-signers file.",
        ),
        click.option("--dry-run", is_flag=True, help="Server-side dry run; delete and push nothing."),
        click.option("--force-conflicts/--no-force-conflicts", default=True, show_default=True),
        click.option(
            "--drift",
            type=click.Choice([mode.value for mode in DriftMode]),
            default=DriftMode.CORRECT.value,
            show_default=True,
            help="Live objects that departed from git: put them back, only report them, or do not check "
            f"(per object: annotation {DRIFT_ANNOTATION}: correct|warn|ignore).",
        ),
        click.option("--autoscaled/--no-autoscaled", default=None, help="Default: detect an autoscaler."),
    ]


def _identity_options() -> list[Callable[[Any], Any]]:
    """What the report says of the cluster, and the agent's own files and output."""
    return [
        click.option("--provider", default=""),
        click.option("--region", default=""),
        click.option("--zone", default=""),
        click.option("--label", "labels", multiple=True, help="Cluster label key=value (repeatable)."),
        click.option("--cache-dir", default=_default_cache_dir, help="Where the git caches live."),
        click.option(
            "--previous-repository",
            "previous_repositories",
            multiple=True,
            help="A former gitops.nova.elotl.co/repository id of this fleet (its --repo or --path moved).",
        ),
        click.option("--no-report", is_flag=True, help="Do not write a status report."),
        click.option("--debug", is_flag=True, help="Show tracebacks of unexpected errors."),
    ]


def common_options(function: Any) -> Any:
    options = [
        *_where_options(),
        *_pass_options(),
        *_report_options(),
        *_apply_options(),
        *_identity_options(),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def settings_from(options: dict[str, Any]) -> AgentSettings:
    return AgentSettings(
        cluster=options["cluster"],
        repo=options["repo"],
        cache_dir=Path(options["cache_dir"]).absolute(),  # git runs in other directories
        branch=options["branch"],
        follow_release=options["follow_release"],
        path=options["path"],
        namespace=options["namespace"],
        interval=options["interval"].total_seconds(),
        settle_interval=options["settle_interval"].total_seconds(),
        orchestration_enabled=_switched(options, "orchestration_enabled"),
        rescheduling_enabled=_switched(options, "rescheduling_enabled"),
        pending_timeout=options["pending_timeout"],
        max_prune_percent=options["max_prune_percent"],
        status_repo=options["status_repo"],
        status_branch=options["status_branch"],
        heartbeat_interval=options["heartbeat_interval"],
        allowed_signers=Path(options["allowed_signers"]) if options["allowed_signers"] else None,
        dry_run=options["dry_run"],
        force_conflicts=options["force_conflicts"],
        autoscaled=options["autoscaled"],
        provider=options["provider"],
        region=options["region"],
        zone=options["zone"],
        cluster_labels=_labels(options["labels"]),
        report_enabled=not options["no_report"],
        drift=DriftMode(options["drift"]),
        previous_repositories=tuple(options["previous_repositories"]),
    )


def _execute(options: dict[str, Any], loop: bool) -> int:
    from nova_agent.kubeclient import ApiClientKube
    from nova_agent.running import Agent, log_outcome
    from nova_gitops.clients.kuberest import build_api_client

    settings = settings_from(options)
    try:
        api_client = build_api_client(options["kubeconfig"], options["context"])
    except Exception as error:  # the kubernetes config loaders raise many kinds
        click.echo(
            f"error: cannot build a Kubernetes client: {error}; check --kubeconfig/--context", err=True
        )
        return errors.EXIT_INVALID
    clock = SystemClock()
    metrics = None
    if loop and options.get("metrics_address"):
        from nova_agent.metrics import AgentMetrics

        metrics = AgentMetrics()
        port = metrics.serve(options["metrics_address"])
        logging.getLogger("nova_agent").info("serving /metrics on port %d", port)
    agent = Agent(settings, ApiClientKube(api_client), clock, metrics)
    interrupted: list[int] = []

    def stop(number: int, frame: Any) -> None:
        if number == signal.SIGINT:
            interrupted.append(number)
        clock.stop()

    if loop:
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, stop)
    outcome = first_pass(agent, quiet=options["quiet"])  # shown on a terminal (the loop's first pass too)
    if not loop:
        log_outcome(outcome)
        if outcome.error is not None and options["debug"]:
            raise outcome.error  # the report is written; now the traceback
        return outcome.exit_code
    if not (interrupted and outcome.exit_code != errors.EXIT_OK):
        log_outcome(outcome)
    code = agent.run(stopping=lambda: bool(interrupted), first=outcome)
    if interrupted:
        raise KeyboardInterrupt
    return code


class _CurrentStderr:
    """Whatever ``sys.stderr`` is at each write: while rich draws progress it is rich's, which prints log
    lines above the drawing instead of through it."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


class TerminalProgress:
    """The first sync's phases (git, apply, prune, report) drawn by rich on stderr: a spinner while a phase
    runs, a tick and its time when it is over. The agent's own copy of nova_gitops.cli.terminal's display,
    which the agent may not import; only this module of the agent imports rich."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        from nova_gitops.clients import terminals

        forced = True if terminals.forced(variable=terminals.AGENT_FORCE_TERMINAL) else None
        self.display = Progress(
            SpinnerColumn(finished_text="[green]✓[/]"),
            TextColumn("[bold]{task.fields[phase]:<6}[/] {task.description}"),
            TimeElapsedColumn(),
            # our drawing goes under the guard (its data is made visible in ``phase``)
            console=Console(file=guarding.raw(sys.stderr), force_terminal=forced, highlight=False),
        )
        self._current: Any = None
        self._handlers: list[logging.StreamHandler[Any]] = []

    def phase(self, name: str, detail: str = "") -> None:
        from rich.markup import escape

        self._end_current()
        name, detail = texts.one_line(name), texts.one_line(detail)
        room = max(10, self.display.console.width - len(name) - 16)
        detail = detail if len(detail) <= room else "…" + detail[-(room - 1) :]
        self._current = self.display.add_task(escape(detail), total=1, phase=escape(name))

    def _end_current(self) -> None:
        if self._current is not None:
            self.display.update(self._current, completed=1)
            self._current = None

    def __enter__(self) -> TerminalProgress:
        for handler in logging.getLogger().handlers:
            if isinstance(handler, logging.StreamHandler) and handler.stream is sys.stderr:
                handler.setStream(_CurrentStderr())
                self._handlers.append(handler)
        self.display.start()
        # rich now holds sys.stdout and sys.stderr (to print above the drawing) and reads ANSI in what is
        # written there (an OSC 8 sequence becomes a link): guard them again; stop() restores the guarded ones
        if guarding.raw(sys.stderr) is sys.stderr:
            sys.stderr = cast(TextIO, guarding.GuardedStream(sys.stderr))
        if guarding.raw(sys.stdout) is sys.stdout:
            sys.stdout = cast(TextIO, guarding.GuardedStream(sys.stdout))
        return self

    def __exit__(self, *exc: object) -> None:
        self._end_current()
        self.display.stop()
        for handler in self._handlers:
            handler.setStream(sys.stderr)


def first_pass(agent: Agent, *, quiet: bool = False) -> PassOutcome:
    """The first pass, its phases shown on stderr when that is a terminal (``clients.terminals``: not when
    piped, with ``--quiet`` or ``NO_COLOR``); exactly as any other pass otherwise."""
    from nova_gitops.clients import terminals

    if not terminals.decorated(sys.stderr, quiet=quiet, variable=terminals.AGENT_FORCE_TERMINAL):
        return agent.pass_once()
    with TerminalProgress() as progress:
        return agent.pass_once(progress)


def _main(options: dict[str, Any], loop: bool) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    try:
        code = _execute(options, loop)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        code = errors.EXIT_INTERRUPTED
    except Exception as error:
        if options["debug"]:  # the traceback, through the guard (an exception's text may quote data)
            traceback.print_exc(file=sys.stderr)
            code = EXIT_UNEXPECTED
        else:
            code = _reported(error)
    sys.exit(code)


def _reported(error: Exception) -> int:
    """Print an error that escaped a pass (they classify their own) and return its exit code: a git failure
    or one of the error tree's says what it is, anything else is unexpected."""
    failure = gitfailures.git_failure(error)
    if failure is not None:
        click.echo(f"error: {failure.message}", err=True)
        return failure.exit_code
    if isinstance(error, errors.UserError):
        click.echo(f"error: {error}", err=True)
        unavailable = isinstance(error, KubeApiError) and error.unavailable  # 429/5xx, as passes count it
        return errors.EXIT_UNREACHABLE if unavailable else error.exit_code
    name = type(error).__name__
    click.echo(f"error: unexpected {name}: {error} (rerun with --debug for details)", err=True)
    return EXIT_UNEXPECTED


@click.group(context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": "NOVA_AGENT"})
@click.pass_context
def main(context: click.Context) -> None:
    """Pull this cluster's directory of the rendered repo, apply it, prune safely, report status."""
    context.call_on_close(guarding.install())  # data's control and bidi characters shown, never acted on


def quiet_option(function: Any) -> Any:
    return click.option(
        "-q",
        "--quiet",
        is_flag=True,
        help="No progress display of the first sync, even on a terminal (as when piped, or with NO_COLOR).",
    )(function)


@main.command()
@common_options
@quiet_option
@click.option(
    "--metrics-address",
    default="",
    metavar="HOST:PORT",
    help="Serve Prometheus /metrics here (e.g. :9102); off when empty.",
)
def run(**options: Any) -> None:
    """Sync and report every --interval until stopped (SIGTERM)."""
    _main(options, loop=True)


@main.command()
@common_options
@quiet_option
def sync(**options: Any) -> None:
    """One pass; the exit code says what happened (0 in sync, 1 object failures, 2 refused, 4 unreachable)."""
    _main(options, loop=False)


if __name__ == "__main__":
    main()
