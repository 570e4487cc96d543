"""Benchmark: release refs and the rollout record on a 100-cluster rendered repository (docs/publishing.md).

A synthetic render (``--clusters`` × ``--files-per-cluster`` files, as ``bench/publish.py --synthetic``) is
committed twice to a local bare remote, the second commit changing one file of one cluster. With the
publisher's cache already holding ``main`` (as it does in the controller), measures:
- ``read_state_s``: ``main`` and every release ref, one fetch (median of 5);
- ``create_refs_s``, ``advance_refs_s``, ``rollback_refs_s``: one atomic push moving every cluster's ref;
- ``changed_clusters_s``: which clusters differ between the two commits (two ``ls-tree``, no cache);
- ``write_record_s``: a rollout record written on a status branch holding one report per cluster;
- ``cold_read_state_s``: ``read_state`` into an empty cache (the whole render is fetched once), for scale.
Prints a JSON object as its last line.

    python bench/releases.py
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.publish import ENV, git, synthetic_tree
from nova_gitops.publishing.gitwriting import RenderedRepo, TreeChanges
from nova_gitops.publishing.releases import RefMove, Releases
from nova_gitops.publishing.rolloutrecords import RolloutRecords

T = TypeVar("T")


def timed(action: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clusters", type=int, default=100)
    parser.add_argument("--files-per-cluster", type=int, default=1000)
    arguments = parser.parse_args()
    os.environ.update(ENV)
    figures: dict[str, float | int] = {}
    with tempfile.TemporaryDirectory(prefix="nova-bench-releases-") as scratch:
        root = Path(scratch)
        git("init", "--bare", "--quiet", "--initial-branch=main", str(root / "rendered.git"))
        url = f"file://{root / 'rendered.git'}"
        publisher = RenderedRepo(root / "cache" / "repo", url)
        shape = synthetic_tree(arguments.clusters, arguments.files_per_cluster, 1)
        files = {path: data + f"# {path}\n".encode() for path, data in shape.items()}  # no two blobs alike
        first = publisher.commit(None, TreeChanges(files, ()), "render 1", environ=os.environ)
        changed = {"clusters/c005/ns00/deployment-w00000.yaml": b"changed\n"}
        second = publisher.commit(first, TreeChanges(changed, ()), "render 2", environ=os.environ)
        publisher.push(second, "main")
        figures["files"] = len(files)
        names = [f"c{number:03}" for number in range(arguments.clusters)]

        releases = Releases(publisher)
        releases.read_state()
        figures["create_refs_s"], _ = timed(lambda: releases.move({c: RefMove(None, first) for c in names}))
        readings = [timed(releases.read_state)[0] for _ in range(5)]
        figures["read_state_s"] = statistics.median(readings)
        figures["changed_clusters_s"], touched = timed(
            lambda: releases.changed_clusters(first, second, names)
        )
        figures["clusters_changed"] = len(touched)
        figures["advance_refs_s"], _ = timed(
            lambda: releases.move({c: RefMove(first, second) for c in names})
        )
        figures["rollback_refs_s"], _ = timed(
            lambda: releases.move({c: RefMove(second, first) for c in names})
        )

        git("init", "--bare", "--quiet", "--initial-branch=main", str(root / "status.git"))
        work = root / "status-work"
        git("init", "--quiet", "--initial-branch=nova-status", str(work))
        (work / "status").mkdir()
        for name in names:
            (work / "status" / f"{name}.yaml").write_text(f"kind: Cluster\nmetadata:\n  name: {name}\n")
        git("add", "-A", cwd=work)
        git("commit", "--quiet", "-m", "reports", cwd=work)
        git("push", "--quiet", f"file://{root / 'status.git'}", "HEAD:nova-status", cwd=work)
        records = RolloutRecords(
            RenderedRepo(root / "cache" / "status", f"file://{root / 'status.git'}"), "nova-status"
        )
        figures["write_record_s"], _ = timed(
            lambda: records.write_record(b"wave: 1\n", None, "rollout: wave 1")
        )

        cold = Releases(RenderedRepo(root / "cold" / "repo", url))
        figures["cold_read_state_s"], _ = timed(cold.read_state)
    print(
        json.dumps(
            {key: round(value, 3) if isinstance(value, float) else value for key, value in figures.items()}
        )
    )


if __name__ == "__main__":
    main()
