"""``whatif`` and ``headroom``: a source loaded the way ``render`` loads it, today's placement planned, and
the pure core asked (``scheduling.whatif``, ``scheduling.headroom``); nothing is rendered to disk.

SOURCE is a directory or ``git-url[@ref]`` (``rendering.opened_source``), with the Clusters under
``--clusters`` laid over its own; ``--previous DIR|REF`` is today's render (``rendering.read_previous``,
a ref of the git repository holding the current directory, as ``explain`` reads it); without it, today's
placement is the source placed afresh. Files seen before are not parsed again and every plan reuses what
the last one worked out: the parse cache and a plan memory of its own (``WHATIF_MEMORY``) are kept in the
clone cache directory, as ``publish`` keeps its own.

How ``diff --headroom`` and the controller call the headroom::

    with whatif.loaded(spec, clusters_path=..., settings=..., previous=..., environ=os.environ) as found:
        report = whatif.headroom_of(found, domain=None, ignore=())

or, with a source set and a placement of their own, ``scheduling.headroom.headroom`` directly.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nova_gitops.api import clusters, inputs
from nova_gitops.api import progress as phases
from nova_gitops.api.problems import Problem
from nova_gitops.clients import collection
from nova_gitops.errors import InputError
from nova_gitops.publishing import planmemory
from nova_gitops.rendering import diffs, whatifs
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.scheduling import findings, headroom, planning, whatif
from nova_gitops.scheduling.findings import Findings
from nova_gitops.scheduling.memory import PlanMemory
from nova_gitops.scheduling.plans import Plan, PlanSettings, PreviousPlacement
from nova_gitops.sources import directory, gitsources
from nova_gitops.sources.parsecache import ParseCache
from nova_gitops.workflows import loading, rendering

WHATIF_MEMORY = "whatif:"
"""The prefix of the plan memory's key: a what-if keeps its own, never replacing the one ``publish`` keeps."""


@dataclass(frozen=True, slots=True)
class Loaded:
    """A source loaded for a what-if or a headroom: its source set and file digests, where it came from,
    today's previous placement, the plan memory kept for it, and where caches are kept."""

    source: inputs.SourceSet
    digests: Mapping[str, str]
    info: SourceInfo
    previous: PreviousPlacement
    settings: PlanSettings
    recalled: PlanMemory | None = None
    cache_dir: Path | None = None
    _keeping: list[threading.Thread] = field(default_factory=list, compare=False, repr=False)

    def today(self) -> Plan:
        """Today's plan: the source placed with the previous placement (the render as it is); its memory
        is kept for the next what-if while the caller goes on (``finish`` waits for it)."""
        plan = planning.plan(
            self.source,
            previous=self.previous,
            settings=self.settings,
            recalled=self.recalled,
            file_digests=self.digests,
        )
        if self.cache_dir is not None and plan.memory is not None:
            keeping = threading.Thread(
                target=planmemory.store,
                args=(self.cache_dir, WHATIF_MEMORY + self.info.repo, plan.memory, self.recalled),
                name="nova-whatif-memory",
            )
            keeping.start()
            self._keeping.append(keeping)
        return plan

    def finish(self) -> None:
        for keeping in self._keeping:
            keeping.join()
        self._keeping.clear()


@contextmanager
def loaded(
    spec: str,
    *,
    clusters_path: Path | None,
    settings: PlanSettings,
    previous: str | None,
    environ: Mapping[str, str],
    cache_dir: Path | None = None,
    progress: phases.Progress = phases.NO_PROGRESS,
) -> Iterator[Loaded]:
    """SOURCE loaded as ``render`` loads it (``rendering.load_source_with_digests``), with ``--previous``
    read and the caches of ``cache_dir`` (default: the clone cache, ``gitsources.default_cache_dir``)."""
    caches = cache_dir or gitsources.default_cache_dir(environ)
    with rendering.opened_source(spec, environ=environ, progress=progress) as (root, opened):
        info = opened or rendering.local_source_info(root)
        progress.phase(phases.LOAD)
        source_set, digests = rendering.load_source_with_digests(
            root,
            clusters_path,
            parse_cache=ParseCache.for_source(caches, info.repo),
            namespace=settings.namespace,
        )
        before = rendering.read_previous(previous, repository_of=Path.cwd(), environ=environ)
        recalled = planmemory.load(caches, WHATIF_MEMORY + info.repo)
        found = Loaded(source_set, digests, info, before, settings, recalled, caches)
        try:
            with collection.paused():
                yield found
        finally:
            found.finish()


@dataclass(frozen=True, slots=True)
class Flags:
    """The what-if's changes as given on the command line."""

    without: Sequence[str] = ()
    cordon: Sequence[str] = ()
    capacity: Sequence[str] = ()
    scale: Sequence[str] = ()
    add_cluster: Sequence[Path] = ()


def changes_of(flags: Flags) -> list[whatif.Change]:
    """The changes ``flags`` name; ``WhatIfError`` (naming the flag) or ``InputError`` (a Cluster file's
    problems at file:line) for one that cannot be read."""
    changes: list[whatif.Change] = [whatif.Without(name) for name in flags.without]
    changes += [whatif.Cordon(name) for name in flags.cordon]
    changes += [whatif.parse_capacity(text) for text in flags.capacity]
    changes += [whatif.parse_scale(text) for text in flags.scale]
    changes += [whatif.AddCluster(cluster) for path in flags.add_cluster for cluster in read_clusters(path)]
    return changes


def read_clusters(path: Path) -> list[clusters.Cluster]:
    """The Cluster documents of ``--add-cluster FILE``, validated as a source's are; ``InputError`` lists
    every problem at its file and line, a document that is not a Cluster among them."""
    if not path.is_file():
        raise whatif.WhatIfError(f"--add-cluster {path}: not a file (give a YAML file of Cluster documents)")
    prefix = "" if str(path.parent) in ("", ".") else f"{path.parent.as_posix()}/"
    files = directory.read_source(path, prefix=prefix)
    problems: list[Problem] = list(files.problems)
    found: list[clusters.Cluster] = []
    for document in files.documents:
        if not loading.is_cluster(document):
            wanted = "--add-cluster takes Cluster documents (cluster.elotl.co/v1alpha1)"
            problems.append(Problem(document.location, wanted))
            continue
        cluster = clusters.parse_cluster(document, problems)
        if cluster is not None:
            found.append(cluster)
    if any(problem.is_error for problem in problems):
        raise InputError(sorted(problems, key=lambda problem: problem.location))
    if not found:
        raise whatif.WhatIfError(f"--add-cluster {path}: the file holds no Cluster document")
    return found


@dataclass(frozen=True, slots=True)
class WhatIfReport:
    """A what-if, its diff against today's render, and what the what-if's plan has to tell."""

    result: whatif.WhatIf
    diff: diffs.RenderDiff
    findings: Findings


def what_if_of(
    found: Loaded,
    changes: Sequence[whatif.Change],
    *,
    patches: bool = False,
    progress: phases.Progress = phases.NO_PROGRESS,
) -> WhatIfReport:
    """``changes`` planned over today's placement, and the diff of the two renders (object files counted,
    not shown, unless ``patches``)."""
    progress.phase(phases.PLAN)
    today = found.today()
    result = whatif.what_if(
        found.source,
        changes,
        today=today,
        settings=found.settings,
        recalled=today.memory,
        file_digests=found.digests,
    )
    progress.phase(phases.DIFF)
    waves = (rendering.rollout_waves(found.source), rendering.rollout_waves(result.source))
    changed = whatifs.changed_files(
        today,
        result.after,
        found.info,
        policy_locations=rendering.policy_locations(found.source),
        waves=waves,
    )
    diff = changed.diff(patch_limit=None if patches else 0)
    return WhatIfReport(result, diff, findings.findings_of(result.source, result.after))


def headroom_of(
    found: Loaded,
    *,
    domain: str | None = None,
    ignore: Sequence[str] = (),
    jobs: int = 1,
    progress: phases.Progress = phases.NO_PROGRESS,
) -> headroom.Headroom:
    """The failover headroom of the loaded source (``scheduling.headroom``), from today's plan and memory;
    the losses planned by ``jobs`` processes (``spread_over``)."""
    progress.phase(phases.PLAN, "today's placement")
    today = found.today()
    found.finish()  # no thread may run while the processes are forked
    progress.phase(phases.PLAN, f"the loss of each {'cluster' if domain is None else domain}")
    return headroom.headroom(
        found.source,
        domain=domain,
        ignore=ignore,
        file_digests=found.digests,
        today=today,
        mapper=spread_over(jobs),
    )


def default_jobs() -> int:
    """The processes ``headroom`` plans losses with by default: the CPUs this process may use, at most 4."""
    return max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1))


_WORK: list[Callable[[Any], Any]] = []
"""The function the forked processes apply (they inherit it: only the losses and the results are sent)."""


def spread_over(jobs: int) -> headroom.Mapper:
    """A ``map`` that plans the losses in ``jobs`` forked processes (each inherits the loaded source, today's
    plan and its memory, so nothing big is sent); the plain ``map`` for one job or one loss. Each loss is
    planned alone, so the report is the same whatever ``jobs`` is."""

    def mapper(function: Callable[[Any], headroom.Loss], items: Sequence[Any]) -> list[headroom.Loss]:
        if jobs <= 1 or len(items) < 2 or "fork" not in multiprocessing.get_all_start_methods():
            return list(map(function, items))
        _WORK[:] = [function]
        try:
            with multiprocessing.get_context("fork").Pool(min(jobs, len(items)), initializer=_quiet) as pool:
                return pool.map(_apply, items, chunksize=1)
        finally:
            _WORK.clear()

    return mapper


def _apply(item: Any) -> Any:
    return _WORK[0](item)


def _quiet() -> None:
    """A forked process's standard streams go to the null device: it writes nothing (its results and errors
    go back through the pool), and a lock a thread of the parent held on the streams when it forked (a
    terminal's progress display refreshing) is never waited for, at its exit's flush or anywhere else."""
    sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 -- the process's own, until it exits
    sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
