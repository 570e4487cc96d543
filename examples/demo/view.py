"""The demo's web view (``--ui-listen PORT``, docs/ui.md): the controller's read-only fleet view, served
while the story runs, so the story can be watched happen — placement, a cluster filling up, the move, the
rollout's waves. Each step then waits: for Enter on a terminal, else ``--ui-step-seconds`` (the page updates
itself within 2 s of each reconcile)."""

from __future__ import annotations

import sys
import time
from typing import Any

_WAIT: list[Any] = []  # what each step waits for, once a view is served


def serve(loop: Any, address: str | None, step_seconds: float, title: str) -> Any:
    """The view of ``loop``'s controller on ``address`` (None: no view), listening; the server, to close."""
    if address is None:
        return None
    from nova_gitops.controller import settings, uiserving, uistate

    host_port = f"127.0.0.1:{address.lstrip(':')}" if address.lstrip(":").isdigit() else address
    listen = settings.parse_address(host_port)
    where = f"--repo {loop.rendered_url} --source {loop.source.url}"
    view = uistate.FleetView(title=title, where=where)
    loop.controller.watch(view)
    server = uiserving.ui_server(listen, view).start()
    print(f"   the fleet view: http://{listen.host}:{server.port}/  (it updates itself after each reconcile)")
    _WAIT[:] = [step_seconds]
    return server


def between_steps() -> None:
    """Before a step: give the person watching the view time to see the last one."""
    if not _WAIT:
        return
    if sys.stdin.isatty():
        input("   [Enter: the next step]")
    else:
        time.sleep(_WAIT[0])


def close(server: Any) -> None:
    if server is not None:
        if sys.stdin.isatty():
            input("   [Enter: stop the fleet view and end the demo]")
        server.close()
