"""Benchmark: the controller's web view (issue 27) on the fleet at K = 5 (500 clusters, ~7,500 groups).

Sets up what a running controller sees (``bench/fleet.py``'s fleet as a clean source work tree, a bare
rendered repository, one agent report per cluster on its status branch) and a controller with its view on
a loopback port; the first reconcile publishes the whole render (not timed). Then:

- **server time** of each page, the first request after a reconcile (``*_first_ms``: the page's rows are
  built then, and the HTML rendered) and the next (``*_cached_ms``: answered from the rendered page), as the
  client measures it over loopback; the **HTML size** of each; and the size of ``nova-gitops report``'s
  file of the same plan (``report_bytes``, with ``report_ms`` to write it);
- **first paint** of the fleet page in headless Chromium (``first_paint_ms``: the Performance API's
  first-contentful-paint, median of ``--paints`` fresh loads), and when its script has run
  (``dom_ready_ms``);
- the **reconcile after one workload changed** with no view (``off``: detached, as without ``--ui-listen``),
  the view closed (attached, nobody asking) and open (a browser on the fleet page, polling and fetching the
  page again after each reconcile), alternated ``--rounds`` times (``reconcile_{off,closed,open}_s``:
  medians), and the same for the **no-change reconcile** (``skip_{off,closed,open}_ms``).

Prints a JSON object as its last line, with the 1-minute load average before and after (the machine is
shared: compare figures taken at similar load).

    python bench/ui.py                          # K = 5
    python bench/ui.py --scale 1 --rounds 2     # the reference fleet, a quicker look
"""

from __future__ import annotations

import argparse
import http.client
import io
import json
import os
import resource
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.fleet import change_one_workload, forget_outer_repository
from bench.reconcile import ENV, fleet_with_reports, git
from nova_gitops.controller import looping, ports, settings, sourcereading, statusreading, uiserving, uistate
from nova_gitops.controller.logs import JsonLog
from nova_gitops.controller.serving import Server
from nova_gitops.controller.settings import Address
from nova_gitops.webui import pages
from tests.webui import browser

STATES = ("off", "closed", "open")
"""The view detached (as without --ui-listen), attached with nobody looking, and open in a browser."""
PAGES = {"fleet": "/", "groups": "/groups", "rollout": "/rollout", "reconciles": "/reconciles"}


def fetch(port: int, path: str) -> tuple[float, int, int]:
    """Seconds for a whole answer over loopback, its status and its size in bytes."""
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
    finally:
        connection.close()
    return time.perf_counter() - started, response.status, len(body)


def start(work: Path, arguments: argparse.Namespace) -> tuple[looping.Controller, uistate.FleetView, Path]:
    made = fleet_with_reports(work, arguments)
    source, url = made.source, made.url
    configured = settings.ControllerSettings(repo_url=url, cache_dir=work / "cache", max_delete_percent=100)
    view = uistate.FleetView(title="bench fleet", where=f"--repo {url} --source {source}")
    controller = looping.Controller(
        configured,
        source=sourcereading.DirectorySource(source, watch_changes=False),
        status=statusreading.GitStatusReader(url, configured.status_branch, cache_dir=configured.cache_dir),
        clock=ports.MonotonicClock(),
        log=JsonLog(io.StringIO()),
        observers=[view],
        journal=view,
    )
    return controller, view, source


def page_figures(server: Server, controller: looping.Controller) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    for name, path in PAGES.items():
        first, status, size = fetch(server.port, path)
        cached, _, _ = fetch(server.port, path)
        assert status == 200, (path, status)
        figures[f"{name}_first_ms"] = round(1000 * first, 1)
        figures[f"{name}_cached_ms"] = round(1000 * cached, 1)
        figures[f"{name}_bytes"] = size
    model = controller.journal.snapshot().model  # type: ignore[union-attr]
    figures["clusters"] = len(model.clusters)
    figures["groups"] = len(model.groups)
    started = time.perf_counter()
    report = pages.report(model, stamp="bench")
    figures["report_ms"] = round(1000 * (time.perf_counter() - started), 1)
    figures["report_bytes"] = len(report.encode())
    return figures


def paint_figures(driver: Any, port: int, paints: int) -> dict[str, Any]:
    painted, ready = [], []
    for _ in range(paints):
        driver.get("about:blank")
        driver.get(f"http://127.0.0.1:{port}/")
        entries = driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "const ready = performance.getEntriesByType('navigation').map(e => e.domContentLoadedEventEnd);"
            "new PerformanceObserver(list => { for (const e of list.getEntries())"
            " if (e.name === 'first-contentful-paint') done([[e.startTime], ready]); })"
            ".observe({type: 'paint', buffered: true});"
            "setTimeout(() => done([[null], ready]), 10000);"
        )
        if entries[0][0] is None:
            raise SystemExit("no first-contentful-paint reported by the browser")
        painted.append(entries[0][0])
        ready.append(entries[1][0])
    return {
        "first_paint_ms": round(statistics.median(painted), 1),
        "dom_ready_ms": round(statistics.median(ready), 1),
    }


def reconcile_figures(
    controller: looping.Controller, source: Path, driver: Any, port: int, rounds: int
) -> dict[str, Any]:
    """One-change and no-change reconciles, the view closed and open, alternated."""
    view = controller.journal
    times: dict[str, list[float]] = {state: [] for state in STATES}
    times.update({f"skip_{state}": [] for state in STATES})
    for _ in range(rounds):
        for state in STATES:
            if state == "off":  # no view: the controller as without --ui-listen
                controller.journal = None
                controller.reconciler.observers = ()
            elif controller.journal is None:
                controller.watch(view)  # type: ignore[arg-type]
            driver.get(f"http://127.0.0.1:{port}/" if state == "open" else "about:blank")
            change_one_workload(source)
            git(source, "commit", "--quiet", "-am", "one workload")
            started = time.perf_counter()
            outcome = controller.reconcile_once()
            times[state].append(time.perf_counter() - started)
            assert outcome.outcome.value == "published", outcome
            if state == "open":  # the page fetches itself again: wait until it shows this version
                wanted = str(controller.journal.version)  # type: ignore[union-attr]
                deadline = time.monotonic() + 60
                while driver.execute_script("return document.body.getAttribute('data-version');") != wanted:
                    if time.monotonic() > deadline:
                        raise SystemExit("the open page did not update")
                    time.sleep(0.05)
            controller.reconcile_once()  # the reconcile after a commit plans once on its own head
            started = time.perf_counter()
            skipped = controller.reconcile_once()
            times[f"skip_{state}"].append(time.perf_counter() - started)
            assert skipped.skipped, skipped
    figures: dict[str, Any] = {}
    for state in STATES:
        figures[f"reconcile_{state}_s"] = round(statistics.median(times[state]), 3)
        figures[f"reconcile_{state}_each_s"] = [round(t, 3) for t in times[state]]
        figures[f"skip_{state}_ms"] = round(1000 * statistics.median(times[f"skip_{state}"]), 1)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clusters", type=int, default=100)
    parser.add_argument("--workloads", type=int, default=2000)
    parser.add_argument("--scale", type=int, default=5, help="K copies of the reference fleet")
    parser.add_argument("--rounds", type=int, default=3, help="closed/open reconcile pairs")
    parser.add_argument("--paints", type=int, default=3)
    arguments = parser.parse_args()
    forget_outer_repository()
    for name in [name for name in os.environ if name.startswith("GIT_")]:
        del os.environ[name]
    os.environ.update(ENV)
    reason = browser.missing()
    if reason is not None:
        raise SystemExit(f"bench/ui.py needs the browser: {reason}")
    figures: dict[str, Any] = {"scale": arguments.scale}
    with tempfile.TemporaryDirectory(prefix="nova-bench-ui-") as scratch:
        controller, view, source = start(Path(scratch), arguments)
        controller.reconcile_once()
        server = uiserving.ui_server(Address("127.0.0.1", 0), view).start()
        try:
            figures["load_before"] = round(os.getloadavg()[0], 2)
            figures.update(page_figures(server, controller))
            with browser.chromium() as driver:
                figures.update(paint_figures(driver, server.port, arguments.paints))
                figures.update(reconcile_figures(controller, source, driver, server.port, arguments.rounds))
            figures["load_after"] = round(os.getloadavg()[0], 2)
            figures["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        finally:
            server.close()
    print(json.dumps(figures))


if __name__ == "__main__":
    threading.current_thread().name = "bench-ui"
    main()
