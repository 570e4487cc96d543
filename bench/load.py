"""Benchmark: the load phase of an incremental publish (read, parse, validate: ``load_source_with_digests``
with the on-disk parse cache), after one workload changed, for this code and optionally another revision's,
measured in the same run.

Each measurement runs in a new process (no in-memory state carried over, as a new ``nova-gitops publish``
would find it): a warm-up load, then per repetition one Deployment's replicas bumped and the load timed with
a parse cache opened from disk. The processes of the two codes alternate, so a busy machine slows both alike;
compare the ratio. Two sources:

- ``directory``: the fleet as a git work tree (what ``bench/publish.py`` publishes), each change committed:
  loaded with the blob ids of the files git finds unchanged (``open_directory(with_blobs=True)``, not
  timed), so those are not even read; code without that reads and hashes every file, and parses and
  validates only the changed ones;
- ``git``: each change committed and the revision exported (``gitsources.checkout_local``; the export is not
  timed), loaded with the export's blob ids, so unchanged files are not even read (the other code loads the
  same export without them when it does not take ``blobs``).

Prints a JSON object as its last line: per source, the median load in seconds of each code and their ratio.

    python bench/load.py                          # reference fleet (K = 1), this code only
    python bench/load.py --scale 5 --against a5cc79d
"""

from __future__ import annotations

import argparse
import gc
import inspect
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def child(source: Path, cache: Path, mode: str, repetitions: int) -> None:
    """Time ``repetitions`` loads after one change each, with the code first on ``sys.path``."""
    sys.path.insert(0, str(ROOT))
    from bench.fleet import change_one_workload
    from nova_gitops.sources import gitsources
    from nova_gitops.sources.parsecache import ParseCache
    from nova_gitops.workflows import rendering

    takes_blobs = "blobs" in inspect.signature(rendering.load_source_with_digests).parameters

    def load(root: Path, blobs: object) -> float:
        gc.disable()  # as a publish loads (``SourceRenderer.render_delta``): no collection over what is read
        start = time.perf_counter()
        options = {"blobs": blobs} if takes_blobs else {}
        cached = ParseCache.for_source(cache, "bench")
        rendering.load_source_with_digests(root, parse_cache=cached, **options)  # type: ignore[arg-type]
        spent = time.perf_counter() - start
        gc.enable()
        return spent

    opens_blobs = "with_blobs" in inspect.signature(gitsources.open_directory).parameters

    def once() -> float:
        if mode == "directory":  # git's answer is not timed, as the export is not
            opened = gitsources.open_directory(source, with_blobs=True) if opens_blobs else None
            return load(source, getattr(opened, "blobs", None))
        with gitsources.checkout_local(source, "main") as checkout:
            return load(checkout.root, getattr(checkout, "blobs", None))

    once()  # warm-up: the cache as the last publish left it, files in the page cache
    spent = []
    for _ in range(repetitions):
        change_one_workload(source)
        git("commit", "--quiet", "-am", "one workload", cwd=source)
        spent.append(once())
    print(json.dumps(spent))


def measure(code: Path, source: Path, cache: Path, mode: str, repetitions: int) -> list[float]:
    command = [sys.executable, str(code / "bench" / "load.py"), "--child", mode, str(source), str(cache)]
    command += ["--repetitions", str(repetitions)]
    done = subprocess.run(
        command, check=True, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(code)}
    )
    return list(json.loads(done.stdout.splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--against", help="a git revision of this repository whose load to compare with")
    parser.add_argument("--rounds", type=int, default=3, help="processes per code and source, alternated")
    parser.add_argument("--repetitions", type=int, default=3, help="timed loads per process")
    parser.add_argument("--child", nargs=3, metavar=("MODE", "SOURCE", "CACHE"), help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    os.environ.update(ENV)
    if arguments.child:
        mode, source, cache = arguments.child
        child(Path(source), Path(cache), mode, arguments.repetitions)
        return
    sys.path.insert(0, str(ROOT))
    from bench.fleet import generate_fleet

    figures: dict[str, object] = {"scale": arguments.scale}
    with tempfile.TemporaryDirectory(prefix="nova-bench-load-") as scratch:
        work = Path(scratch)
        codes = {"new": ROOT}
        if arguments.against:
            old = work / "old"
            old.mkdir()
            archive = subprocess.run(
                ["git", "archive", arguments.against, "nova_gitops", "bench"],
                cwd=ROOT,
                check=True,
                capture_output=True,
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
            (old / "bench" / "load.py").write_bytes((ROOT / "bench" / "load.py").read_bytes())
            codes["old"] = old
        source = work / "source"
        generate_fleet(source, scale=arguments.scale)
        git("init", "--quiet", "--initial-branch=main", cwd=source)
        git("add", "-A", cwd=source)
        git("commit", "--quiet", "-m", "fleet", cwd=source)
        for mode in ("directory", "git"):
            spent: dict[str, list[float]] = {name: [] for name in codes}
            for _ in range(arguments.rounds):
                for name, code in codes.items():
                    cache = work / f"cache-{name}-{mode}"
                    spent[name] += measure(code, source, cache, mode, arguments.repetitions)
            for name in codes:
                figures[f"{mode}_load_{name}_s"] = round(statistics.median(spent[name]), 3)
            if "old" in codes:
                figures[f"{mode}_load_ratio"] = round(
                    statistics.median(spent["new"]) / statistics.median(spent["old"]), 3
                )
        figures["load_average"] = round(os.getloadavg()[0], 2)
    print(json.dumps(figures))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    from bench.fleet import forget_outer_repository

    forget_outer_repository()
    main()
