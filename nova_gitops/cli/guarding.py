"""The guard over ``nova-gitops``'s stdout and stderr: ``nova_gitops.clients.guarding``, which ``nova-agent``
shares (the agent imports only ``api`` and ``clients``). The command group installs it for every command
(``cli.main``); ``raw`` is the stream under it, for our own styling (``cli.terminal``, ``cli.output``).
"""

from __future__ import annotations

from nova_gitops.clients.guarding import GuardedStream, install, raw

__all__ = ["GuardedStream", "install", "raw"]
