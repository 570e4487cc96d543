"""Benchmark: what-if plans and failover headroom on the reference fleet (issue 26), end to end.

Each figure is a ``nova-gitops`` command in a new process (interpreter start-up, imports, load, plans,
output), with the caches such a command keeps in the clone cache directory (the parse cache and the
what-if's plan memory) in a scratch ``XDG_CACHE_HOME``:

- ``whatif_cold_s``: ``nova-gitops whatif SOURCE --without <cluster>`` with no cache yet;
- ``whatif_s``: the median of three more what-ifs, each losing another cluster, with the caches the first
  one left (what a person or a CI job running it again meets);
- ``headroom_s``: ``nova-gitops headroom SOURCE -o json``, the loss of every cluster in turn (K × 100
  plans); ``losses`` and ``stranding_losses`` say what it found, ``headroom_per_loss_s`` what each cost;
- ``peak_rss_mb``: the largest resident set of those processes.

``--scale K`` runs it on K copies of the fleet side by side (``bench/fleet.py``: K × 100 clusters);
``--no-headroom`` measures the what-ifs only. Prints a JSON object as its last line.

    python bench/headroom.py                # reference fleet: 100 clusters, 2,000 workloads
    python bench/headroom.py --scale 5      # 500 clusters, 10,000 workloads (slow: minutes)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.fleet import forget_outer_repository, generate_fleet

COMMAND = [sys.executable, "-m", "nova_gitops.cli"]


def timed(args: list[str], environ: dict[str, str]) -> tuple[float, str]:
    """Run ``nova-gitops ARGS`` in a new process; its wall time and stdout. Exit 0 and 1 are answers (1:
    something is stranded); anything else stops the benchmark."""
    started = time.perf_counter()
    done = subprocess.run([*COMMAND, *args], env=environ, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"nova-gitops {' '.join(args)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return elapsed, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clusters", type=int, default=100)
    parser.add_argument("--workloads", type=int, default=2000)
    parser.add_argument("--scale", type=int, default=1, help="K copies of the fleet (K x clusters, ...)")
    parser.add_argument("--no-headroom", action="store_true", help="Measure the what-ifs only.")
    arguments = parser.parse_args()
    forget_outer_repository()

    with tempfile.TemporaryDirectory(prefix="nova-bench-headroom-") as scratch:
        source = Path(scratch) / "source"
        generate_fleet(source, arguments.clusters, arguments.workloads, scale=arguments.scale)
        environ = {**os.environ, "XDG_CACHE_HOME": str(Path(scratch) / "cache"), "NO_COLOR": "1"}
        environ["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
        names = [f"wlc-{index:03d}" for index in (5, 17, 42, 77)]
        whatif = ["whatif", str(source), "-q", "--without"]
        whatif_cold_s, _ = timed([*whatif, names[0]], environ)
        warm = [timed([*whatif, name], environ)[0] for name in names[1:]]
        figures: dict[str, object] = {
            "scale": arguments.scale,
            "clusters": arguments.clusters * arguments.scale,
            "workloads": arguments.workloads * arguments.scale,
            "whatif_cold_s": round(whatif_cold_s, 3),
            "whatif_runs_s": [round(value, 3) for value in warm],
            "whatif_s": round(statistics.median(warm), 3),
        }
        if not arguments.no_headroom:
            headroom_s, stdout = timed(["headroom", str(source), "-q", "-o", "json"], environ)
            report = json.loads(stdout)
            figures |= {
                "headroom_s": round(headroom_s, 3),
                "losses": len(report["losses"]),
                "stranding_losses": sum(1 for loss in report["losses"] if loss["stranded"]),
                "headroom_per_loss_s": round(headroom_s / max(len(report["losses"]), 1), 3),
            }
        figures["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)
        figures["load_average"] = round(os.getloadavg()[0], 2)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
