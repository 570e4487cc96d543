"""Options shared by several commands, and the small helpers commands use to run their one function."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from nova_gitops.cli import errors

if TYPE_CHECKING:
    from nova_gitops.scheduling.plans import PlanSettings

F = TypeVar("F", bound=Callable[..., Any])


class Duration(click.ParamType[float, Any]):
    """A time flag in seconds, written as ``nova_gitops.api.durations`` reads it: ``30s``, ``2m``,
    ``1h30m``, ``500ms``, or plain seconds as before. ``minimum`` (seconds) is the least value accepted."""

    name = "duration"

    def __init__(self, minimum: float = 0.0) -> None:
        self.minimum = minimum

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        from nova_gitops.api import durations

        if isinstance(value, int | float) and not isinstance(value, bool):
            seconds = float(value)
        else:
            try:
                seconds = durations.parse_seconds(str(value))
            except durations.DurationError as error:
                self.fail(str(error), param, ctx)
        if seconds < self.minimum:
            least = durations.format_seconds(self.minimum)
            self.fail(f"{value!r} is too short: the least is {least}", param, ctx)
        return seconds


def git_timeout_option(function: F) -> F:
    """``--git-timeout``: how long one git network call may take before it fails naming the remote."""
    return click.option(
        "--git-timeout",
        type=Duration(minimum=0.001),
        default="2m",
        show_default=True,
        help="Longest a git network call may take (30s, 2m, or seconds).",
    )(function)


def source_argument(function: F) -> F:
    """SOURCE: a directory of manifests, or ``git-url[@ref]`` (any URL git understands, file:// included)."""
    return click.argument("source", metavar="SOURCE", type=click.Path())(function)


def clusters_option(function: F) -> F:
    return click.option(
        "--clusters",
        "clusters_path",
        type=click.Path(exists=True, path_type=Path),
        help="Cluster inventory: a file or directory of Cluster objects (e.g. agents' status/ reports); "
        "they replace the source's Clusters of the same name.",
    )(function)


def _checked_namespace(context: click.Context, parameter: click.Parameter, value: str | None) -> str | None:
    from nova_gitops.api import names, selectors

    if value is None or value == "":
        return None
    if not selectors.is_dns1123_label(value):
        raise click.BadParameter(f"{value!r} is not a namespace name: {names.DNS1123_LABEL_RULE}")
    return value


def namespace_option(function: F) -> F:
    """``-n/--namespace NS``, as ``kubectl apply -n``: the namespace of namespaced objects that name none."""
    return click.option(
        "-n",
        "--namespace",
        metavar="NS",
        envvar="NOVA_GITOPS_NAMESPACE",
        callback=_checked_namespace,
        help="Namespace of namespaced objects that name none (as kubectl apply -n; default: default). "
        "An object's own metadata.namespace always wins; cluster-scoped kinds are untouched.",
    )(function)


def plan_options(function: F) -> F:
    function = click.option(
        "--external-orchestrator",
        "delegated",
        is_flag=True,
        help="Another tool applies the render: placements are 'delegated' and objects are labelled "
        "nova.elotl.co/schedule=true for nova-agent --no-orchestration-enabled to watch.",
    )(function)
    function = click.option(
        "--namespace-follow/--no-namespace-follow",
        default=True,
        show_default=True,
        help="Send each cluster the Namespaces of the objects it receives (Nova leaves this to you).",
    )(function)
    return click.option(
        "--luna-management/--no-luna-management",
        default=True,
        show_default=True,
        help="Label pod templates elotl-luna=true so the Luna autoscaler manages their pods.",
    )(function)


def plan_settings_options(function: F) -> F:
    """The plan's switches — ``--luna-management``, ``--namespace-follow``, ``--external-orchestrator``
    and ``-n/--namespace`` — given to the command as one ``settings`` argument (``plan_settings``)."""

    @functools.wraps(function)
    def with_settings(
        *args: Any,
        luna_management: bool,
        namespace_follow: bool,
        delegated: bool,
        namespace: str | None,
        **kwargs: Any,
    ) -> Any:
        settings = plan_settings(luna_management, namespace_follow, delegated, namespace)
        return function(*args, settings=settings, **kwargs)

    return plan_options(namespace_option(with_settings))  # type: ignore[return-value]


def plan_settings(
    luna_management: bool, namespace_follow: bool, delegated: bool, namespace: str | None
) -> PlanSettings:
    """The ``PlanSettings`` of the plan options: the one place a command makes them."""
    from nova_gitops.scheduling.plans import PlanSettings

    return PlanSettings(luna_management, namespace_follow, delegated, namespace)


def headroom_options(function: F) -> F:
    """``--headroom`` and ``--headroom-domain LABEL`` of the commands that render (``render``, ``publish``):
    folded into the ``settings`` of ``plan_settings_options``, which must be listed above this one."""

    @functools.wraps(function)
    def with_headroom(
        *args: Any, settings: PlanSettings, headroom: bool, headroom_domain: str | None, **kwargs: Any
    ) -> Any:
        if headroom_domain is not None and not headroom:
            raise click.UsageError("--headroom-domain only applies with --headroom")
        settings = dataclasses.replace(settings, headroom=headroom, headroom_domain=headroom_domain)
        return function(*args, settings=settings, **kwargs)

    with_domain = click.option(
        "--headroom-domain",
        metavar="LABEL",
        help="With --headroom: lose every cluster sharing each value of this Cluster label at once.",
    )(with_headroom)
    return click.option(  # type: ignore[return-value]
        "--headroom",
        is_flag=True,
        help="Add a Failover headroom section to PLACEMENT.md: what losing each cluster would strand "
        "(one more plan per cluster).",
    )(with_domain)


def quiet_option(function: F) -> F:
    """``-q/--quiet``: no progress display and plain tables even on a terminal (see ``cli.terminal``)."""
    return click.option(
        "-q",
        "--quiet",
        is_flag=True,
        envvar="NOVA_GITOPS_QUIET",
        help="No progress display or rich tables, even on a terminal (as when piped, or with NO_COLOR).",
    )(function)


def finish(context: click.Context, action: Callable[[], int]) -> None:
    """Run a command's function through the one error mapping and exit with its code."""
    debug = bool((context.find_root().obj or {}).get("debug"))
    context.exit(errors.run(action, debug=debug))
