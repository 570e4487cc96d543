"""A running controller on the bundled demo's inputs (tests/e2e/manifests.py: the platform on every cluster,
the shop's colours each on one), with its web view listening, for the browser tests and bench/ui.py.

The controller is the real loop in a thread of its own over real git (``tests.controller.helpers.Fleet``:
a source directory, a bare rendered repository, agents' reports pushed to its status branch). A test makes
the story happen by writing files and pushing reports, then ``reconcile`` triggers the loop and waits for
the view's next version: a signal, never a sleep.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from nova_gitops.controller import looping, statusreading, uiserving, uistate
from nova_gitops.controller.ports import MonotonicClock
from nova_gitops.controller.serving import Server
from nova_gitops.controller.settings import Address
from nova_gitops.controller.sourcereading import DirectorySource
from tests.controller.helpers import Fleet, _quiet_log, cluster_report
from tests.e2e import manifests, rollouts

NAMESPACES = """\
apiVersion: v1
kind: Namespace
metadata: {name: platform}
---
apiVersion: v1
kind: Namespace
metadata: {name: shop}
"""


@dataclass
class Running:
    fleet: Fleet
    controller: looping.Controller
    view: uistate.FleetView
    server: Server

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    def reconcile(self, timeout: float = 60.0) -> int:
        """Wake the loop and wait until the view has the reconcile's version; that version."""
        before = self.view.version
        self.controller.triggers.put("test")
        deadline = time.monotonic() + timeout
        while self.view.version == before:
            if time.monotonic() > deadline:
                raise TimeoutError("the controller did not reconcile")
            time.sleep(0.02)
        return self.view.version


def write_demo(fleet: Fleet) -> None:
    files = {
        **manifests.APPS,
        **manifests.POLICIES,
        "apps/namespaces.yaml": NAMESPACES,
        "rollout.yaml": rollouts.strategy(),  # wave canary (wlc-1), then the others (wlc-2)
    }
    for name, text in files.items():
        path = fleet.source / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    fleet.report(
        cluster_report("wlc-1", cpu="4", nodes=2, labels=dict(rollouts.CANARY_LABELS)),
        cluster_report("wlc-2", cpu="4", nodes=2),
    )


@contextmanager
def running(root: Path) -> Iterator[Running]:
    """The demo's controller, reconciled once, its view on a free loopback port."""
    fleet = Fleet(root)
    write_demo(fleet)
    settings = fleet.settings(interval=3600.0, debounce=0.01, status_watch_interval=0.0)
    view = uistate.FleetView(title="demo", where=f"--repo {fleet.url} --source {fleet.source}")
    controller = looping.Controller(
        settings,
        source=DirectorySource(fleet.source, watch_changes=False),
        status=statusreading.GitStatusReader(
            settings.status_url, settings.status_branch, cache_dir=settings.cache_dir
        ),
        clock=MonotonicClock(),
        log=_quiet_log(),
        observers=[view],
        journal=view,
    )
    server = uiserving.ui_server(Address("127.0.0.1", 0), view).start()
    stop = threading.Event()
    thread = threading.Thread(target=controller.run, args=(stop,), name="demo-controller", daemon=True)
    thread.start()
    running = Running(fleet, controller, view, server)
    try:
        deadline = time.monotonic() + 60
        while view.version == 0 and time.monotonic() < deadline:  # the loop reconciles at start
            time.sleep(0.02)
        yield running
    finally:
        stop.set()
        controller.triggers.put(looping.STOP_REASON)
        thread.join(timeout=30)
        server.close()
