"""The environment variables ``nova-gitops`` reads, and the ones it leaves alone (issue 22).

``NOVA_`` is Elotl Nova's prefix. Nova's docs and try-nova's README have a user
``export NOVA_NAMESPACE=elotl`` (the namespace Nova's control plane runs in),
``NOVA_CONTROLPLANE_CONTEXT=nova``, ``NOVA_WORKLOAD_CLUSTER_1=wlc-1`` and more in the shell they then run
everything from. Until issue 22 every
option of ours could come from ``NOVA_<COMMAND>_<OPTION>`` and ``-n`` from ``NOVA_NAMESPACE``, so that shell
silently rendered every manifest naming no namespace into ``elotl`` and sent a Namespace ``elotl`` to the
workload clusters. ``nova-gitops`` now reads only ``NOVA_GITOPS_*`` (click's ``auto_envvar_prefix``:
``NOVA_GITOPS_<COMMAND>_<OPTION>``, and those read by name: ``NOVA_GITOPS_NAMESPACE``, ``NOVA_GITOPS_QUIET``,
``NOVA_GITOPS_FORCE_TERMINAL``, the controller's ``NOVA_GITOPS_WEBHOOK_*``); ``nova-agent`` only
``NOVA_AGENT_*``.

A variable the running command read by its old name is ignored, with one line on stderr naming the new
name (``NOVA_RENDER_OUTPUT is ignored: ...``), so a setup written for the old names is not silently
configured differently. A name Nova itself defines is never mentioned, even where it was once ours too
(``NOVA_NAMESPACE``): a Nova user's environment changes nothing in any command's output. The old names are
derived from the commands' options, as click derived them, so a new option is covered the day it is added.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Final

import click

PREFIX: Final = "NOVA_GITOPS"
"""``auto_envvar_prefix`` of the ``nova-gitops`` group; every variable it reads starts with it."""
OLD_PREFIX: Final = "NOVA"
"""What the prefix was before issue 22: an old name is ``NOVA_`` + what follows ``NOVA_GITOPS_``."""

NOVA_VARIABLES: Final = frozenset(
    {
        # try-nova's README (Try Nova on KIND / on vCluster) and Nova's docs
        "NOVA_NAMESPACE",
        "NOVA_CONTROLPLANE_CONTEXT",
        "NOVA_WORKLOAD_CLUSTER_NAME",
        # try-nova's scripts (deploy_nova.sh, setup_*.sh)
        "NOVA_NODE_IP",
        "NOVA_KUBE_CONTEXT",
        "NOVA_CONTROL_PLANE_CONTEXT",
        "NOVA_AGENT_CONTEXT",
        "NOVA_AGENT_CONTEXTS",
        "NOVA_AGENT_SECRET",
        "NOVA_K8S_VERSION",
        "NOVA_E2E_K8S_VERSION",
        "NOVA_KUBECONFIG_FILE",
        "NOVA_EXIT_IF_CLUSTER_EXISTS",
        "NOVA_IDLE_ENTER_STANDBY_ENABLE",
        "NOVA_IDLE_ENTER_STANDBY_SECS",
        "NOVA_DELETE_CLUSTER_IN_STANDBY",
        "NOVA_CREATE_CLUSTER_IF_NEEDED",
        "NOVA_MAX_CREATED_CLUSTERS",
        "NOVA_API_PUBLIC_HOST_OVERRIDE",
    }
)
"""The ``NOVA_`` variables Elotl Nova's docs and try-nova's README and scripts set, besides the numbered
``NOVA_WORKLOAD_CLUSTER_<n>`` (``is_novas``). Never read, never mentioned."""
_NOVA_NUMBERED = re.compile(r"NOVA_WORKLOAD_CLUSTER_[0-9]+")


def is_novas(name: str) -> bool:
    """Whether Elotl Nova defines ``name`` (``NOVA_VARIABLES``, ``NOVA_WORKLOAD_CLUSTER_<n>``)."""
    return name in NOVA_VARIABLES or _NOVA_NUMBERED.fullmatch(name) is not None


def read_by(command: click.Command, prefix: str, *, nested: bool = True) -> Iterator[str]:
    """The variables click reads for ``command``'s options and (``nested``) those of its sub-commands, with
    ``prefix`` the command's ``auto_envvar_prefix`` (``NOVA_GITOPS_RENDER`` for ``render``): an option's own
    ``envvar``, and ``<prefix>_<NAME>`` (click falls back to it when the option's own is unset). Eager
    options that only print and exit (``--help``, ``--version``) configure nothing and are left out."""
    for parameter in command.params:
        if not isinstance(parameter, click.Option) or (parameter.is_eager and not parameter.expose_value):
            continue
        own = parameter.envvar
        yield from [own] if isinstance(own, str) else own or ()
        if parameter.allow_from_autoenv and parameter.name:
            yield f"{prefix}_{parameter.name.upper()}"
    if nested and isinstance(command, click.Group):
        for name, sub in command.commands.items():
            yield from read_by(sub, f"{prefix}_{name.upper()}".replace("-", "_"))


def old_name(name: str) -> str | None:
    """The name ``name`` (one of ours) had before issue 22; None for a name outside ``PREFIX``."""
    if not name.startswith(f"{PREFIX}_"):
        return None
    return f"{OLD_PREFIX}_{name.removeprefix(f'{PREFIX}_')}"


def ignored(names: Iterable[str], environ: Mapping[str, str]) -> list[str]:
    """One line for each old name of ``names`` (variables a command reads) that ``environ`` sets to
    something click would have read (not empty), unless Nova defines that name; sorted by name."""
    lines = {}
    for name in names:
        old = old_name(name)
        if old is None or is_novas(old) or not environ.get(old):
            continue
        lines[old] = f"warning: {old} is ignored: nova-gitops reads {name} (NOVA_ alone is Elotl Nova's)"
    return [lines[old] for old in sorted(lines)]
