"""Benchmark: a cold render of the reference fleet, source directory → files on disk.

Prints a JSON object as its last line with ``clusters``, ``source_objects``, ``rendered_objects``,
``load_s`` (read + validate), ``plan_s`` (match + place + split, no I/O), ``sticky_plan_s`` (the same
plan again with the first one's placement as previous, as a publish re-plans), ``render_s`` (the whole cold
render: source dir → files), ``emit_floor_s`` (PyYAML's C dumper alone on every rendered object, in memory,
same run, measured before the render) and ``peak_rss_mb`` (of the whole run, which includes holding
every rendered object as a dict for the floor; the render itself needs less).

``--scale K`` renders K copies of the fleet side by side (``bench/fleet.py``: K × the clusters, workloads and
policies; ``--clusters`` and ``--workloads`` are per copy).

    python bench/render.py                      # reference size: 100 clusters, 2,000 workloads
    python bench/render.py --scale 5            # 500 clusters, 10,000 workloads, ~500k rendered objects
    python bench/render.py --clusters 20 --workloads 200
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.fleet import generate_fleet
from nova_gitops.rendering import manifests, reports
from nova_gitops.scheduling.plans import Plan, PlanSettings, PreviousPlacement
from nova_gitops.workflows import rendering


def rendered_bodies(plan: Plan) -> list[dict[str, object]]:
    """Every rendered object as a dict, as the renderer builds them (not timed)."""
    bodies = []
    for group in plan.groups:
        for object_plan in group.objects:
            completions = manifests.completions_by_cluster(object_plan)
            for copy in object_plan.copies:
                bodies.append(
                    manifests.render_object(
                        object_plan.manifest,
                        copy,
                        group,
                        plan.settings,
                        completions=completions.get(copy.cluster),
                    )
                )
    for followed in plan.followed_namespaces:
        bodies.append(dict(followed.manifest.body))
    return bodies


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clusters", type=int, default=100)
    parser.add_argument("--workloads", type=int, default=2000)
    parser.add_argument("--scale", type=int, default=1, help="K copies of the fleet (K x clusters, ...)")
    parser.add_argument("--keep", type=Path, help="Render into this directory and keep it.")
    arguments = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="nova-bench-") as scratch:
        source = Path(scratch) / "source"
        output = arguments.keep or Path(scratch) / "rendered"
        generate_fleet(source, arguments.clusters, arguments.workloads, scale=arguments.scale)

        load_started = time.perf_counter()
        source_set = rendering.load_source(source)
        load_s = time.perf_counter() - load_started
        plan_started = time.perf_counter()
        plan = rendering.plan_source(source_set, previous=PreviousPlacement.empty(), settings=PlanSettings())
        plan_s = time.perf_counter() - plan_started
        previous = reports.previous_of(plan)
        sticky_started = time.perf_counter()
        rendering.plan_source(source_set, previous=previous, settings=PlanSettings())
        sticky_plan_s = time.perf_counter() - sticky_started

        # The floor first: it is CPU work, and it also lets the disk settle from any mass deletion of an
        # earlier run (creating files right after one is ~10x slower for tens of seconds, docs/design.md §11).
        bodies = rendered_bodies(plan)
        emit_started = time.perf_counter()
        for body in bodies:
            yaml.dump(body, Dumper=yaml.CSafeDumper, sort_keys=False)
        emit_floor_s = time.perf_counter() - emit_started
        source_objects = len(source_set.workloads) + len(source_set.policies) + len(source_set.clusters)
        del bodies, plan, source_set

        started = time.perf_counter()
        result = rendering.render_to_directory(source, output, settings=PlanSettings(), use_previous=False)
        render_s = time.perf_counter() - started
        peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

        rendered_objects = sum(
            1
            for path in result.tree.files
            if path.startswith("clusters/") and not path.endswith("/kustomization.yaml")
        )
        figures = {
            "scale": arguments.scale,
            "clusters": arguments.clusters * arguments.scale,
            "workloads": arguments.workloads * arguments.scale,
            "source_objects": source_objects,
            "rendered_objects": rendered_objects,
            "files_written": result.stats.written,
            "load_s": round(load_s, 3),
            "plan_s": round(plan_s, 3),
            "sticky_plan_s": round(sticky_plan_s, 3),
            "render_s": round(render_s, 3),
            "emit_floor_s": round(emit_floor_s, 3),
            "render_over_emit_floor": round(render_s / emit_floor_s, 3),
            "peak_rss_mb": round(peak_rss_mb, 1),
        }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
