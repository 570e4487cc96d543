"""Benchmark: publishing renders to git, and diffing two renders.

Measures, on the reference fleet (``bench/fleet.py``, ~100k rendered objects):
- ``render_s``: one in-memory render of the source (load, validate, plan, render), for comparison;
- ``cold_publish_s``: publish into an empty bare repository (render + commit of every file + push);
- ``incremental_publish_s``: after one workload changed and was committed to the source: fetch, load,
  plan, render what changed (the render index the previous publish cached), commit, push to the local bare
  repository — end to end, in this process, with the on-disk caches a new process would find and no
  in-memory state carried over (a new renderer object); ``incremental_load_s``, ``incremental_plan_s`` and
  ``incremental_emit_s`` split its render (``incremental_render_s``) into its three phases;
- ``next_publish_s`` (with ``next_load_s``, ``next_plan_s``, ``next_emit_s``, ``next_git_s``): the same for
  the next change, as every publish after the first onto a branch is (the first one's plan has the cold
  render's placement as its previous placement for the first time, so no component is found in memory);
- ``incremental_publish_cli_s``: the same once more through ``nova-gitops publish`` in a new process
  (interpreter start-up and imports included);
- ``incremental_written`` and ``next_written``: what the commits of those one-workload changes write, as git
  has them (``diff-tree`` of the commit against its parent): files and bytes in all, and how many files under
  ``clusters/``, under ``placement/`` and at the root;
- ``diff_s``: ``diff OLD_DIR NEW_DIR`` of two renders on disk that differ in that one workload.

``--scale K`` publishes K copies of the fleet side by side (``bench/fleet.py``: K × the clusters, workloads
and policies, ~K × 100k rendered objects; ``--clusters`` and ``--workloads`` are per copy).

``--synthetic`` skips the renderer and publishes an in-memory tree of the same shape (``--clusters`` ×
``--files-per-cluster`` files of ~1.5 KB), which isolates the git side. Prints a JSON object as its last line.

``NOVA_BENCH_CODE=DIR`` measures the ``nova_gitops`` package found in DIR instead of this tree's (the
benchmark itself stays this one), so another revision is measured the same way in the same sitting:
``git archive REV nova_gitops | tar -x -C DIR``.

    python bench/publish.py                           # reference fleet: 100 clusters, 2,000 workloads
    python bench/publish.py --scale 5 --no-diff       # 500 clusters, 10,000 workloads
    python bench/publish.py --synthetic               # 100 clusters × 1,000 files, no renderer
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, os.environ.get("NOVA_BENCH_CODE") or sys.path[0])  # another revision's code, when asked

from bench.fleet import change_one_workload, forget_outer_repository
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.scheduling.plans import PlanSettings, PreviousPlacement
from nova_gitops.workflows import diffing, publishing, renderers

ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def write_tree(root: Path, files: Mapping[str, bytes]) -> None:
    for path, data in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def synthetic_tree(clusters: int, per_cluster: int, replicas: int) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    padding = "x" * 1200
    for c in range(clusters):
        for i in range(per_cluster):
            count = replicas if i == 0 else 1
            files[f"clusters/c{c:03}/ns{i % 20:02}/deployment-w{i:05}.yaml"] = (
                f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: w{i:05}\n"
                f"  namespace: ns{i % 20:02}\n  annotations:\n    pad: {padding}\n"
                f"spec:\n  replicas: {count}\n"
            ).encode()
    files["placement.yaml"] = (
        f"apiVersion: gitops.nova.elotl.co/v1alpha1\nkind: Placement\nv: {replicas}\n".encode()
    )
    return files


def settle() -> None:
    """Before a timed step: write back what earlier steps left dirty (a cold publish leaves ~100 MB) and
    collect their garbage, so the step is timed as it runs on its own."""
    os.sync()
    gc.collect()


def timed(action: object) -> tuple[float, object]:
    start = time.perf_counter()
    result = action()  # type: ignore[operator]
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clusters", type=int, default=100)
    parser.add_argument("--workloads", type=int, default=2000)
    parser.add_argument("--scale", type=int, default=1, help="K copies of the fleet (K x clusters, ...)")
    parser.add_argument("--synthetic", action="store_true")
    parser.add_argument("--files-per-cluster", type=int, default=1000)
    parser.add_argument("--no-diff", action="store_true", help="skip diff_s (two renders written to disk)")
    arguments = parser.parse_args()
    os.environ.update(ENV)
    figures: dict[str, object] = {"mode": "synthetic" if arguments.synthetic else "fleet"}
    if not arguments.synthetic:
        figures["scale"] = arguments.scale
    with tempfile.TemporaryDirectory(prefix="nova-bench-") as scratch:
        work = Path(scratch)
        remote = work / "rendered.git"
        git("init", "--bare", "--quiet", "--initial-branch=main", str(remote))
        source = work / "source"
        source.mkdir()
        git("init", "--quiet", "--initial-branch=main", str(source))
        state = {"replicas": 1}
        cache = work / "cache"  # clone, placement and parse caches: cold for the first publish
        if arguments.synthetic:

            def render(root: Path, info: SourceInfo, previous: PreviousPlacement) -> Mapping[str, bytes]:
                return synthetic_tree(arguments.clusters, arguments.files_per_cluster, state["replicas"])

            (source / "marker").write_text("1\n")
        else:
            from bench.fleet import generate_fleet

            generate_fleet(source, arguments.clusters, arguments.workloads, seed=0, scale=arguments.scale)
            render = renderers.default_render(PlanSettings(), cache_dir=cache)
            uncached_render = renderers.default_render(PlanSettings())
        git("add", "-A", cwd=source)
        git("commit", "--quiet", "-m", "fleet", cwd=source)
        info = SourceInfo("bench", None)
        first_render = render if arguments.synthetic else uncached_render
        render_s, first = timed(lambda: first_render(source, info, PreviousPlacement.empty()))
        assert isinstance(first, Mapping)
        figures["rendered_files"] = len(first)
        figures["render_s"] = round(render_s, 2)
        url = f"file://{remote}"
        options = publishing.PublishOptions(max_delete_percent=100)
        settle()
        cold_s, _ = timed(
            lambda: publishing.publish(str(source), url, render=render, cache_dir=cache, options=options)
        )
        figures["cold_publish_s"] = round(cold_s, 2)
        # one workload changes in the source
        if arguments.synthetic:
            state["replicas"] = 7
            (source / "marker").write_text("2\n")
        else:
            changed = change_one_workload(source)
            figures["changed_file"] = changed
        git("commit", "--quiet", "-am", "one workload", cwd=source)
        spent: list[float] = []
        timed_render: renderers.RenderFiles
        if arguments.synthetic:

            def timed_render(
                root: Path, info: SourceInfo, previous: PreviousPlacement
            ) -> Mapping[str, bytes]:
                start = time.perf_counter()
                files = render(root, info, previous)
                spent.append(time.perf_counter() - start)
                return files

        else:
            timed_render = TimedRenderer(PlanSettings(), cache_dir=cache, spent=spent)
        settle()
        incremental_s, result = timed(
            lambda: publishing.publish(
                str(source), url, render=timed_render, cache_dir=cache, options=options
            )
        )
        assert isinstance(result, publishing.PublishResult)
        figures["incremental_publish_s"] = round(incremental_s, 2)
        figures["incremental_render_s"] = round(sum(spent), 2)  # load + plan + render inside the publish
        figures["incremental_git_s"] = round(incremental_s - sum(spent), 2)  # fetch, hash, commit, push
        if isinstance(timed_render, TimedRenderer):  # of the last render (the one that was pushed)
            figures.update(
                {f"incremental_{name}_s": round(took, 3) for name, took in timed_render.phases.items()}
            )
        figures["incremental_subject"] = (
            result.message.splitlines()[0] if result.message else result.outcome.value
        )
        figures["incremental_written"] = written(remote)
        if not arguments.synthetic:  # the next change, as each push after the first is published
            change_one_workload(source)
            git("commit", "--quiet", "-am", "the next change", cwd=source)
            again = TimedRenderer(PlanSettings(), cache_dir=cache, spent=[])
            settle()
            next_s, _ = timed(
                lambda: publishing.publish(str(source), url, render=again, cache_dir=cache, options=options)
            )
            figures["next_publish_s"] = round(next_s, 2)
            figures["next_written"] = written(remote)
            figures["next_git_s"] = round(next_s - sum(again.spent), 2)
            figures.update({f"next_{name}_s": round(took, 3) for name, took in again.phases.items()})
        if not arguments.synthetic:
            change_one_workload(source)
            git("commit", "--quiet", "-am", "one more workload", cwd=source)
            command = [sys.executable, "-m", "nova_gitops.cli", "publish", str(source), "--repo", url]
            command += ["--cache-dir", str(cache), "--max-delete-percent", "100"]
            code = os.environ.get("NOVA_BENCH_CODE")
            environ = {**os.environ, "PYTHONPATH": code} if code else None
            settle()
            # run from the scratch directory: ``-m`` puts the working directory first on sys.path, which
            # from a checkout ran the checkout's code whatever NOVA_BENCH_CODE said
            run = functools.partial(subprocess.run, check=True, capture_output=True, env=environ, cwd=work)
            cli_s, _ = timed(lambda: run(command))
            figures["incremental_publish_cli_s"] = round(cli_s, 2)
        if arguments.no_diff:
            print(json.dumps(figures))
            return
        old_dir = work / "old"  # written only now: flushing 99k new files slows whatever runs meanwhile
        write_tree(old_dir, first)
        previous = getattr(first, "placement", None) or PreviousPlacement.empty()  # as publish would: sticky
        del first
        second = render(source, info, previous)
        new_dir = work / "new"
        write_tree(new_dir, second)
        settle()
        diff_s, diff = timed(lambda: diffing.diff_directories(old_dir, new_dir))
        figures["diff_s"] = round(diff_s, 2)
        figures["diff_files"] = len(diff.objects)  # type: ignore[attr-defined]
    print(json.dumps(figures))


class PhaseClock:
    """A progress port that notes when each phase began."""

    def __init__(self) -> None:
        self.started: dict[str, float] = {}

    def phase(self, name: str, detail: str = "") -> None:
        self.started[name] = time.perf_counter()


class TimedRenderer(renderers.SourceRenderer):
    """The real renderer, timing its incremental renders (load, plan and render what changed) and, in
    ``phases``, each of the three."""

    def __init__(self, settings: PlanSettings, *, cache_dir: Path, spent: list[float]) -> None:
        self.clock = PhaseClock()
        super().__init__(settings, cache_dir=cache_dir, progress=self.clock)
        self.spent = spent
        self.phases: dict[str, float] = {}

    def render_delta(self, *args: Any, **options: Any) -> renderers.IncrementalRender:
        start = time.perf_counter()
        try:
            return super().render_delta(*args, **options)
        finally:
            end = time.perf_counter()
            self.spent.append(end - start)
            began = self.clock.started
            if {"load", "plan", "render"} <= began.keys():
                self.phases = {
                    "load": began["plan"] - began["load"],
                    "plan": began["render"] - began["plan"],
                    "emit": end - began["render"],
                }


def written(remote: Path, commit: str = "main") -> dict[str, int]:
    """What ``commit`` writes on top of its parent, as git stores it: files (added or changed) and their
    bytes, and how many of the files are under ``clusters/``, under ``placement/`` and at the root."""
    listed = git("--git-dir", str(remote), "diff-tree", "-r", "-z", "--no-commit-id", f"{commit}~1", commit)
    fields = listed.split("\0")
    paths: dict[str, str] = {}
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        parts = meta.split()
        if len(parts) == 5 and parts[4] != "D":
            paths[path] = parts[3]
    sizes = subprocess.run(
        ["git", "--git-dir", str(remote), "cat-file", "--batch-check=%(objectsize)"],
        input="".join(f"{blob}\n" for blob in paths.values()),
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return {
        "files": len(paths),
        "bytes": sum(int(size) for size in sizes),
        "clusters": sum(path.startswith("clusters/") for path in paths),
        "placement": sum(path.startswith("placement/") for path in paths),
        "root": sum("/" not in path for path in paths),
    }


if __name__ == "__main__":
    forget_outer_repository()
    main()
