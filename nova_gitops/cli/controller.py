"""``nova-gitops controller``: the always-on reconcile loop (docs/design.md §8), as a thin click command.

Secrets never travel on the command line (``ps`` shows it to every user of the machine): webhook secrets
come from files (a mounted Secret) or from the environment.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from nova_gitops.cli import options

if TYPE_CHECKING:  # the settings module pulls in the scheduler's types: imported when the command runs
    from nova_gitops.controller.settings import Address

SECRET_ENVIRONMENT = {
    "github": "NOVA_GITOPS_WEBHOOK_GITHUB_SECRET",
    "gitlab": "NOVA_GITOPS_WEBHOOK_GITLAB_TOKEN",
    "generic": "NOVA_GITOPS_WEBHOOK_SECRET",
}


def _address(context: click.Context, parameter: click.Parameter, value: str | None) -> Address | None:
    if value is None:
        return None
    from nova_gitops.controller.settings import parse_address

    try:
        return parse_address(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


def _ui_address(context: click.Context, parameter: click.Parameter, value: str | None) -> Address | None:
    """``HOST:PORT``; a port alone (``8081`` or ``:8081``) binds 127.0.0.1: the view is local unless told."""
    if value is not None and value.lstrip(":").isdigit():
        value = f"127.0.0.1:{value.lstrip(':')}"
    return _address(context, parameter, value)


def _secret(path: Path | None, variable: str, environ: dict[str, str]) -> str | None:
    if path is not None:
        return path.read_text(encoding="utf-8").strip() or None
    return environ.get(variable) or None


@click.command("controller")
@click.option(
    "--source",
    required=True,
    help="What to render: a directory (watched), git-url[@ref] (polled, and woken by the webhook), or "
    "'controlplane' (a Nova control plane, with --kubeconfig/--context).",
)
@click.option("--repo", "repo_url", required=True, help="URL of the rendered repository.")
@click.option("--branch", default="main", show_default=True, help="Branch of the rendered repository.")
@click.option("--status-branch", default="nova-status", show_default=True, help="Branch agents report to.")
@click.option("--status-repo", help="Repository agents report to, when not the rendered one (--status-repo).")
@click.option(
    "--interval",
    type=options.Duration(minimum=0.1),
    default="30s",
    show_default=True,
    help="Time between polls of the source and the status branch (30s, 2m, or seconds).",
)
@click.option(
    "--debounce",
    type=options.Duration(),
    default="300ms",
    show_default=True,
    help="Quiet time after a trigger before a reconcile.",
)
@click.option(
    "--status-watch-interval",
    type=options.Duration(),
    default=None,
    help="Time between peeks at the status branch (a new report reconciles at once); "
    "default: a quarter of --interval; 0: off.",
)
@click.option(
    "--failback-after",
    type=options.Duration(),
    default="10m",
    show_default=True,
    help="How long a higher tier must have had room before a group moves back up to it.",
)
@click.option(
    "--reschedule-cooldown",
    type=options.Duration(),
    default="10m",
    show_default=True,
    help="How long a group stays off a cluster that asked to reschedule it (less if its capacity changes).",
)
@click.option(
    "--webhook-listen", callback=_address, help="HOST:PORT for the webhook receiver (e.g. 0.0.0.0:9000)."
)
@click.option(
    "--webhook-github-secret-file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help=f"GitHub webhook secret (X-Hub-Signature-256); or ${SECRET_ENVIRONMENT['github']}.",
)
@click.option(
    "--webhook-gitlab-token-file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help=f"GitLab webhook token (X-Gitlab-Token); or ${SECRET_ENVIRONMENT['gitlab']}.",
)
@click.option(
    "--webhook-secret-file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help=f"Generic HMAC secret (X-Nova-Signature-256); or ${SECRET_ENVIRONMENT['generic']}.",
)
@click.option("--metrics-listen", callback=_address, help="HOST:PORT for /healthz, /readyz and /metrics.")
@click.option(
    "--ui-listen",
    callback=_ui_address,
    help="HOST:PORT (or a port: 127.0.0.1) for the read-only web view of the fleet; default off. It has no "
    "login: keep it on 127.0.0.1 and port-forward, or put an authenticating proxy in front (docs/ui.md).",
)
@click.option(
    "--headroom/--no-headroom",
    default=True,
    show_default=True,
    help="Compute failover headroom in the background after each change of placement, capacity, policies or "
    "clusters, for the nova_headroom_* metrics (one plan per cluster; a reconcile never waits for it).",
)
@click.option(
    "--headroom-domain",
    metavar="LABEL",
    help="Lose every cluster sharing each value of this Cluster label at once (e.g. a region).",
)
@click.option(
    "--headroom-in-placement",
    is_flag=True,
    help="Compute it in each render instead, for PLACEMENT.md's Failover headroom section (as publish "
    "--headroom; the reconcile waits for it).",
)
@click.option("--leader-elect", is_flag=True, help="Run only while holding a Lease (several replicas).")
@click.option("--leader-election-namespace", default="nova-gitops", show_default=True)
@click.option(
    "--kubeconfig", type=click.Path(dir_okay=False, path_type=Path), help="For controlplane/leases."
)
@click.option("--context", "kube_context", help="kubeconfig context.")
@click.option(
    "--max-delete-percent",
    type=click.IntRange(0, 100),
    default=30,
    show_default=True,
    help="Mass-delete guard.",
)
@click.option("--allow-mass-delete", is_flag=True, help="Publish a mass deletion anyway.")
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path, resolve_path=True),
    help="Where git clones are cached.",
)
@options.git_timeout_option
@click.option(
    "--once", is_flag=True, help="Reconcile once and exit (0: done, 2: invalid input or git error)."
)
@click.option("--verbose", is_flag=True, help="Also log triggers (debug lines).")
@options.plan_options
@options.namespace_option
@click.pass_context
def controller_command(
    context: click.Context,
    source: str,
    repo_url: str,
    branch: str,
    status_branch: str,
    status_repo: str | None,
    interval: float,
    debounce: float,
    status_watch_interval: float | None,
    failback_after: float,
    reschedule_cooldown: float,
    webhook_listen: Address | None,
    webhook_github_secret_file: Path | None,
    webhook_gitlab_token_file: Path | None,
    webhook_secret_file: Path | None,
    metrics_listen: Address | None,
    ui_listen: Address | None,
    headroom: bool,
    headroom_domain: str | None,
    headroom_in_placement: bool,
    leader_elect: bool,
    leader_election_namespace: str,
    kubeconfig: Path | None,
    kube_context: str | None,
    max_delete_percent: int,
    allow_mass_delete: bool,
    cache_dir: Path | None,
    git_timeout: float,
    once: bool,
    verbose: bool,
    luna_management: bool,
    namespace_follow: bool,
    delegated: bool,
    namespace: str | None,
) -> None:
    """Keep the rendered repository right: watch the source, read agents' reports, plan, render, publish.

    Each reconcile reads one source revision and the status branch (cluster capacity, health and reschedule
    requests), plans with the previous placement (stickiness) and with reschedule requests as exclusions,
    and commits only when the render changed. Logs are JSON lines on stderr. SIGTERM/SIGINT stop it after
    the reconcile in progress.

    \b
    Examples:
      nova-gitops controller --source ./fleet --repo file:///srv/rendered.git --interval 5
      nova-gitops controller --source https://git.example.com/fleet.git@main \\
          --repo git@git.example.com:fleet-rendered.git --webhook-listen 0.0.0.0:9000 \\
          --webhook-github-secret-file /etc/nova/webhook-secret --metrics-listen 0.0.0.0:8080
    """
    import os

    from nova_gitops.controller.settings import ControllerSettings, WebhookSecrets

    environ = dict(os.environ)
    secrets = WebhookSecrets(
        github=_secret(webhook_github_secret_file, SECRET_ENVIRONMENT["github"], environ),
        gitlab=_secret(webhook_gitlab_token_file, SECRET_ENVIRONMENT["gitlab"], environ),
        generic=_secret(webhook_secret_file, SECRET_ENVIRONMENT["generic"], environ),
    )
    if webhook_listen is not None and not secrets.any:
        raise click.UsageError(
            "--webhook-listen needs a secret (--webhook-github-secret-file, --webhook-gitlab-token-file, "
            "--webhook-secret-file or their environment variables): unsigned requests are never accepted"
        )
    if source == "controlplane" and kubeconfig is None and "KUBERNETES_SERVICE_HOST" not in environ:
        raise click.UsageError("--source controlplane needs --kubeconfig (or to run inside a cluster)")

    def action() -> int:
        from nova_gitops.controller import starting
        from nova_gitops.sources import gitsources

        settings = ControllerSettings(
            repo_url=repo_url,
            cache_dir=cache_dir or gitsources.default_cache_dir(environ),
            branch=branch,
            status_branch=status_branch,
            status_repo=status_repo,
            interval=interval,
            debounce=debounce,
            status_watch_interval=status_watch_interval,
            failback_after=failback_after,
            reschedule_cooldown=reschedule_cooldown,
            webhook_listen=webhook_listen,
            webhook_secrets=secrets,
            metrics_listen=metrics_listen,
            ui_listen=ui_listen,
            delegated=delegated,
            luna_management=luna_management,
            namespace_follow=namespace_follow,
            namespace=namespace,
            max_delete_percent=max_delete_percent,
            allow_mass_delete=allow_mass_delete,
            git_timeout=git_timeout,
            headroom=headroom,
            headroom_domain=headroom_domain,
            headroom_in_placement=headroom_in_placement,
        )
        return starting.run(
            settings,
            source_spec=source,
            once=once,
            verbose=verbose,
            leader_elect=leader_elect,
            leader_namespace=leader_election_namespace,
            kubeconfig=str(kubeconfig) if kubeconfig else None,
            kube_context=kube_context,
            environ=environ,
        )

    options.finish(context, action)
