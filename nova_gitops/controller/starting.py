"""Assemble a running controller from its settings: the source, the status reader, the servers, the signals.

The CLI stays a thin parser; this is where the real implementations of the ports are chosen and where the
process-level concerns live (SIGTERM/SIGINT, the webhook and metrics threads, leader election), so tests
of the loop never need them.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import FrameType

from nova_gitops import errors
from nova_gitops.clients.kuberest import build_api_client
from nova_gitops.controller import (
    leaderelection,
    looping,
    serving,
    statusreading,
    uihistory,
    uiserving,
    uistate,
    webhook,
    writeback,
)
from nova_gitops.controller.logs import JsonLog
from nova_gitops.controller.ports import MonotonicClock, PlanObserver, SourceReader, StatusReader, Triggers
from nova_gitops.controller.settings import ControllerSettings
from nova_gitops.controller.sourcereading import ControlPlaneReader, DirectorySource, GitSource
from nova_gitops.sources import controlplane, gitsources, kubeapi
from nova_gitops.sources.gitsources import public_url

CONTROLPLANE = "controlplane"


def source_reader(spec: str, settings: ControllerSettings, stop: threading.Event) -> SourceReader:
    """A directory (watched) or ``git-url[@ref]`` (polled)."""
    if gitsources.is_git_spec(spec):
        return GitSource.from_spec(spec, cache_dir=settings.cache_dir, timeout=settings.git_timeout)
    root = Path(spec)
    if not root.is_dir():
        raise errors.UserError(
            f"source {spec} does not exist: give a directory, a git URL, or 'controlplane'"
        )
    return DirectorySource(root, stop=stop)


def status_reader(settings: ControllerSettings) -> StatusReader:
    return statusreading.GitStatusReader(
        settings.status_url,
        settings.status_branch,
        cache_dir=settings.cache_dir,
        timeout=settings.git_timeout,
    )


def run(
    settings: ControllerSettings,
    *,
    source_spec: str,
    once: bool = False,
    verbose: bool = False,
    leader_elect: bool = False,
    leader_namespace: str = "nova-gitops",
    kubeconfig: str | None = None,
    kube_context: str | None = None,
    environ: Mapping[str, str],
) -> int:
    stop = threading.Event()
    log = JsonLog(secrets=_secrets(settings), debug=verbose)
    triggers = Triggers()
    metrics = serving.Metrics()
    stop_hooks: list[Callable[[], None]] = []
    elector = None
    if leader_elect and not once:
        elector = _elector(leader_namespace, kubeconfig, kube_context, environ)
    source, observers = _source(source_spec, settings, stop, stop_hooks, kubeconfig, kube_context)
    view = _view(settings, source_spec, log) if not once else None
    observers = [*observers, view] if view is not None else observers
    status: StatusReader = statusreading.NoStatus()
    if source_spec != CONTROLPLANE or settings.status_repo is not None:
        status = status_reader(settings)
    controller = looping.Controller(
        settings,
        source=source,
        status=status,
        observers=observers,
        clock=MonotonicClock(),
        triggers=triggers,
        metrics=metrics,
        log=log,
        is_leader=(lambda: elector.is_leader) if elector is not None else None,
        journal=view,
    )
    if view is not None:
        uihistory.attach(view, controller)
    if once:
        try:
            controller.reconcile_once()
        except errors.TemporaryError as error:
            raise errors.UserError(str(error)) from None
        return 0
    servers = _servers(settings, metrics, triggers, log, view)
    campaign = _campaign(elector, triggers, log) if elector is not None else None
    interrupted = _on_signals(stop, triggers, log)
    _started(log, settings, source_spec)
    serve(controller, stop, campaign=campaign, closers=[*stop_hooks, *(server.close for server in servers)])
    if interrupted.is_set():  # Ctrl-C: the CLI says "interrupted" and exits 130, as for any command
        raise KeyboardInterrupt
    return 0


def _source(
    spec: str,
    settings: ControllerSettings,
    stop: threading.Event,
    stop_hooks: list[Callable[[], None]],
    kubeconfig: str | None,
    kube_context: str | None,
) -> tuple[SourceReader, list[PlanObserver]]:
    """The source reader, and who is told of each plan: a control plane's reader writes back to it (and
    its watch is closed at the end, a hook added to ``stop_hooks``); any other source, no one."""
    if spec != CONTROLPLANE:
        return source_reader(spec, settings, stop), []
    api = kubeapi.KubeApi(build_api_client(kubeconfig, kube_context))
    control_plane = controlplane.ControlPlaneSource(api, f"controlplane:{kube_context or 'in-cluster'}")
    stop_hooks.append(control_plane.close)
    return ControlPlaneReader(control_plane), [writeback.WriteBack(api)]


def _started(log: JsonLog, settings: ControllerSettings, source_spec: str) -> None:
    log.info(
        "started",
        source=public_url(source_spec),
        repo=public_url(settings.repo_url),
        branch=settings.branch,
        interval=settings.interval,
        webhook=str(settings.webhook_listen) if settings.webhook_listen else None,
        metrics=str(settings.metrics_listen) if settings.metrics_listen else None,
        ui=str(settings.ui_listen) if settings.ui_listen else None,
        delegated=settings.delegated,
    )


def _view(settings: ControllerSettings, source_spec: str, log: JsonLog) -> uistate.FleetView | None:
    """What the web view shows, when ``--ui-listen`` asks for one (redacted as the log is)."""
    if settings.ui_listen is None:
        return None
    where = _where(settings, source_spec)
    return uistate.FleetView(title=public_url(source_spec), where=where, redact=log.redact)


def _where(settings: ControllerSettings, source_spec: str) -> str:
    """The options that name the rendered repository and the source in the rollout commands the view
    shows (credentials masked)."""
    branch = f" --branch {settings.branch}" if settings.branch != "main" else ""
    return f"--repo {public_url(settings.repo_url)}{branch} --source {public_url(source_spec)}"


def _servers(
    settings: ControllerSettings,
    metrics: serving.Metrics,
    triggers: Triggers,
    log: JsonLog,
    view: uistate.FleetView | None = None,
) -> list[serving.Server]:
    """The metrics, webhook and web view servers the settings ask for, listening; none left open when one
    cannot."""
    servers: list[serving.Server] = []
    try:
        if settings.metrics_listen is not None:
            servers.append(serving.metrics_server(settings.metrics_listen, metrics).start())
        if settings.webhook_listen is not None:
            servers.append(
                webhook.webhook_server(
                    settings.webhook_listen, settings.webhook_secrets, triggers, log
                ).start()
            )
        if settings.ui_listen is not None and view is not None:
            servers.append(uiserving.ui_server(settings.ui_listen, view).start())
    except OSError as error:
        for server in servers:
            server.close()
        raise errors.UserError(f"cannot listen: {error.strerror}; is the address free and local?") from None
    return servers


def _campaign(
    elector: leaderelection.LeaderElector, triggers: Triggers, log: JsonLog
) -> leaderelection.Campaign:
    """The leader election, running: leading triggers a reconcile."""
    return leaderelection.Campaign(
        elector,
        on_started=lambda: triggers.put("leading"),
        on_stopped=lambda: log.info("not leading"),
        on_error=lambda error: log.error(
            "leader election step failed", error=str(error), kind=type(error).__name__
        ),
    ).start()


def serve(
    controller: looping.Controller,
    stop: threading.Event,
    *,
    campaign: leaderelection.Campaign | None = None,
    closers: Sequence[Callable[[], None]] = (),
) -> None:
    """Run the loop until ``stop`` (a reconcile in progress finishes), close the sources and servers, and
    only then end the election: the Lease is held until this replica can no longer push. ``/healthz``
    fails when the election thread has died, so Kubernetes restarts a replica that can no longer lead."""
    if campaign is not None:
        loop_alive, election = controller.metrics.alive, campaign
        controller.metrics.alive = lambda: loop_alive() and election.alive
    try:
        controller.run(stop)
    finally:
        stop.set()
        for close in closers:
            close()
        if campaign is not None:
            campaign.end()


def _elector(
    namespace: str, kubeconfig: str | None, kube_context: str | None, environ: Mapping[str, str]
) -> leaderelection.LeaderElector:
    """A Lease candidate over the API of ``kubeconfig``/``kube_context`` (in-cluster when neither)."""

    api = kubeapi.KubeApi(build_api_client(kubeconfig, kube_context))
    return leaderelection.LeaderElector(
        leaderelection.KubeLeases(api, namespace), leaderelection.default_identity(environ)
    )


def _on_signals(stop: threading.Event, triggers: Triggers, log: JsonLog) -> threading.Event:
    """SIGTERM and SIGINT set ``stop``; the event returned is set by SIGINT (Ctrl-C), which exits 130."""
    interrupted = threading.Event()

    def handle(number: int, frame: FrameType | None) -> None:
        log.info("stopping", signal=signal.Signals(number).name)
        if number == signal.SIGINT:
            interrupted.set()
        stop.set()
        triggers.put(looping.STOP_REASON)

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, handle)
        signal.signal(signal.SIGINT, handle)
    return interrupted


def _secrets(settings: ControllerSettings) -> list[str]:
    secrets = settings.webhook_secrets
    return [secret for secret in (secrets.github, secrets.gitlab, secrets.generic) if secret]
