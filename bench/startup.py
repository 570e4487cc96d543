"""Benchmark: start-up of the command line (``nova-gitops --help``), as a user's shell runs it.

Runs the installed console script 20 times and prints the median and the slowest as a JSON last line. The
budget is 0.2 s: commands import heavy libraries (kubernetes, GitPython, the scheduler) only when they run.

    python bench/startup.py
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def main() -> None:
    script = shutil.which("nova-gitops") or str(Path(sys.executable).parent / "nova-gitops")
    timings = []
    for _ in range(20):
        started = time.perf_counter()
        subprocess.run([script, "--help"], check=True, capture_output=True)
        timings.append(time.perf_counter() - started)
    print(
        json.dumps(
            {"help_median_s": round(statistics.median(timings), 3), "help_max_s": round(max(timings), 3)}
        )
    )


if __name__ == "__main__":
    main()
