"""Render a source directory: read → validate → plan → render, all in memory; nothing is written here.

The cluster inventory is the source's Cluster objects, replaced name by name by the Clusters found under
``clusters_path`` (agents' ``status/<cluster>.yaml`` reports are Cluster objects), since a report is newer
than whatever the source says about a cluster.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from nova_gitops.api import inputs
from nova_gitops.api import progress as phases
from nova_gitops.api.problems import Problem, SourceLocation
from nova_gitops.clients import collection
from nova_gitops.errors import RepoError, UserError
from nova_gitops.publishing import directories
from nova_gitops.rendering import layout, renders, schedulegroups
from nova_gitops.rendering.renders import RenderedTree
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.rollouts import waves
from nova_gitops.scheduling import failover, findings, planning
from nova_gitops.scheduling.findings import Findings
from nova_gitops.scheduling.memory import PlanMemory
from nova_gitops.scheduling.plans import Plan, PlanSettings, PreviousPlacement
from nova_gitops.sources import directory, exporting, gitsources
from nova_gitops.sources.parsecache import ParseCache
from nova_gitops.workflows import loading
from nova_gitops.workflows.gitprogress import git_progress


def load_source(
    root: Path,
    clusters_path: Path | None = None,
    *,
    parse_cache: ParseCache | None = None,
    namespace: str | None = None,
) -> inputs.SourceSet:
    """Read and validate a source; ``InputError`` lists every problem of every file. ``parse_cache`` skips
    parsing files whose bytes it has seen (``sources.parsecache``). ``namespace`` is ``-n``'s: the
    namespace of namespaced objects that name none."""
    return load_source_with_digests(root, clusters_path, parse_cache=parse_cache, namespace=namespace)[0]


def load_source_with_digests(
    root: Path,
    clusters_path: Path | None = None,
    *,
    parse_cache: ParseCache | None = None,
    namespace: str | None = None,
    blobs: Mapping[str, str] | None = None,
) -> tuple[inputs.SourceSet, dict[str, str]]:
    """``load_source``, and a digest of each file read (file name as in locations → sha1 of its text), which
    an incremental render uses to know which objects' sources changed.

    With ``parse_cache``, the load costs what changed: a file whose bytes the cache holds is not parsed, and
    its documents are not validated again either (the cache keeps each one's ``classifying.Classified``);
    only the checks across files (CRD scopes, duplicates, namespaces, unmatched policies) run over
    everything. ``blobs`` (a git export's or a work tree's path → blob id, ``gitsources.Checkout.blobs``)
    also spares reading the files the cache holds with the same blob id. Whatever the cache holds, the
    result, its warnings and its problems are those of a load without it.

    The garbage collector is paused meanwhile: the load makes ~100 containers per document and no cycles,
    and a collection run every few hundred of them walks the growing heap (most of a load's time).
    """
    with collection.paused():
        return _load_source_with_digests(root, clusters_path, parse_cache, namespace, blobs)


def _load_source_with_digests(
    root: Path,
    clusters_path: Path | None,
    parse_cache: ParseCache | None,
    namespace: str | None,
    blobs: Mapping[str, str] | None,
) -> tuple[inputs.SourceSet, dict[str, str]]:
    files = directory.read_source(root, cache=parse_cache, blobs=blobs, save_cache=False)
    documents = list(files.documents)
    texts: Mapping[str, str] = files.texts
    problems: list[Problem] = list(files.problems)
    digests = dict(files.digests)  # objects a kustomize build made depend on more than their file: not here
    if clusters_path is not None:
        reports = directory.read_source(clusters_path, prefix=f"{clusters_path.name}/")
        problems += reports.problems
        clusters = [document for document in reports.documents if loading.is_cluster(document)]
        documents = loading.without_clusters(documents, {loading.name_of(document) for document in clusters})
        documents += clusters
        texts = directory.overlaid_texts(texts, reports.texts)
        digests.update(reports.digests)
    source_set = loading.validated(
        documents, texts=texts, problems=problems, namespace=namespace, parse_cache=parse_cache
    )
    return source_set, digests


def plan_source(
    source_set: inputs.SourceSet,
    *,
    previous: PreviousPlacement | None = None,
    settings: PlanSettings | None = None,
    recalled: PlanMemory | None = None,
    file_digests: Mapping[str, str] | None = None,
) -> Plan:
    """The plan; with ``file_digests`` (``load_source_with_digests``) it carries its memory and reuses what
    ``recalled`` (an earlier plan's memory) has of it (``scheduling.memory``). With ``settings.headroom``
    (``--headroom``) it carries its failover headroom too, for PLACEMENT.md (``failover.with_failover``:
    one more plan per cluster, reusing this one's memory)."""
    plan = planning.plan(
        source_set, previous=previous, settings=settings, recalled=recalled, file_digests=file_digests
    )
    if plan.settings.headroom:
        return failover.with_failover(source_set, plan, recalled=recalled, file_digests=file_digests)
    return plan


def render_source(
    root: Path,
    *,
    source: SourceInfo,
    previous: PreviousPlacement,
    settings: PlanSettings,
    clusters_path: Path | None = None,
    parse_cache: ParseCache | None = None,
    progress: phases.Progress = phases.NO_PROGRESS,
) -> tuple[RenderedTree, Findings]:
    """Read ``root``, validate it (``errors.InputError`` lists every problem), plan, and render in memory;
    each phase is reported to ``progress``. With the tree, what the plan has to tell (``Findings``)."""
    progress.phase(phases.LOAD)
    source_set = load_source(root, clusters_path, parse_cache=parse_cache, namespace=settings.namespace)
    progress.phase(phases.PLAN)
    plan = plan_source(source_set, previous=previous, settings=settings)
    progress.phase(phases.RENDER)
    tree = render_plan(plan, source_set, source)
    return tree, findings.findings_of(source_set, plan)


def render_plan(plan: Plan, source_set: inputs.SourceSet, source: SourceInfo) -> RenderedTree:
    """Every file of ``plan``'s render in memory (``renders.render``), with the policies' locations for its
    problems and the source's rollout waves for PLACEMENT.md: how each command renders a plan whole
    (``renderers.render_changes`` renders what changed since an earlier render the same way)."""
    return renders.render(
        plan, source, policy_locations=policy_locations(source_set), waves=rollout_waves(source_set)
    )


def rollout_waves(source_set: inputs.SourceSet) -> tuple[waves.Wave, ...]:
    """The waves of the source's RolloutStrategy over its clusters; none without a strategy (so PLACEMENT.md
    and ``diff`` stay as they were before rollouts)."""
    if source_set.rollout is None:
        return ()
    return waves.waves_for(source_set.rollout, source_set.clusters)


def policy_locations(source_set: inputs.SourceSet) -> dict[str, SourceLocation]:
    """Where each policy is defined, so render problems can point at the policy as well as the object."""
    return {policy.name: policy.location for policy in source_set.policies}


PLACEMENT_FILE = schedulegroups.INDEX_FILE
_FILE_MODES = ("100644", "100755")


def placement_files(directory: Path) -> dict[str, bytes]:
    """What a render in ``directory`` records its placement in: its group files (``placement/*/*.yaml``)
    and its ``placement.yaml``, by path relative to it. Links are not followed."""
    files: dict[str, bytes] = {}
    index = directory / PLACEMENT_FILE
    if index.is_file() and not index.is_symlink():
        files[PLACEMENT_FILE] = index.read_bytes()
    folders = directory / layout.PLACEMENT_DIR
    if folders.is_dir() and not folders.is_symlink():
        for folder in sorted(folders.iterdir()):
            if not folder.is_dir() or folder.is_symlink():
                continue
            for path in sorted(folder.iterdir()):
                relative = f"{layout.PLACEMENT_DIR}/{folder.name}/{path.name}"
                if layout.is_group_file(relative) and path.is_file() and not path.is_symlink():
                    files[relative] = path.read_bytes()
    return files


def previous_from_directory(directory: Path) -> PreviousPlacement:
    """The placement of a previous render in ``directory`` (empty when there is none): its group files,
    or the single placement.yaml of a render made before the per-group layout."""
    try:
        return schedulegroups.previous_from_files(placement_files(directory))
    except schedulegroups.UnreadableFile as error:
        where = directory / error.path
        raise UserError(f"{where}: cannot read the previous placement: {error.reason}") from error


@contextmanager
def previous_directory(
    value: str | None, *, repository_of: Path, environ: Mapping[str, str]
) -> Iterator[Path | None]:
    """``--previous DIR|REF`` as a directory holding that previous render's placement (its group files and
    ``placement.yaml``; none when the revision has none, as for a directory without one), for the block;
    None when ``value`` is None.

    - an existing directory (not a bare repository) is the previous render itself;
    - ``git-url[@ref]`` (or a bare repository) is fetched through the clone cache like a source, and the
      render at the top of that revision's export is read;
    - anything else is a ref (branch, tag, commit, ``HEAD~1``) of the git repository that holds
      ``repository_of`` (the output directory): ``REF:<repository_of>/placement.yaml`` and
      ``REF:<repository_of>/placement/`` are read (one ``ls-tree`` and one ``cat-file --batch``).

    The placement is read here, so a bad one is reported as ``REF:path``, not by a temporary path.
    """
    if value is None:
        yield None
        return
    path = Path(value)
    if path.is_dir() and not gitsources.is_bare_repository(path):
        yield path
        return
    if path.is_file():
        raise UserError(
            f"--previous {value}: is a file; give the directory holding the previous render, git-url[@ref], "
            "or a ref of the output directory's git repository"
        )
    if gitsources.is_git_spec(value):
        with opened_source(value, environ=environ) as (root, _):
            _check_previous(placement_files(root), f"{value}: ")
            yield root
        return
    top = _repository_top(repository_of, value)
    repository = gitsources.Repository(gitsources.git_dir_of(top))
    revision = repository.resolve(value)
    if revision is None:
        raise RepoError(
            f"--previous {value!r}: not a directory, and the git repository at {top} has no branch, tag "
            "or commit of that name"
        )
    prefix = (repository_of.resolve() / PLACEMENT_FILE).relative_to(top).parent.as_posix()
    prefix = "" if prefix == "." else f"{prefix}/"
    wanted = [f"{prefix}{PLACEMENT_FILE}", f"{prefix}{layout.PLACEMENT_DIR}"]
    entries = exporting.tree_entries(repository.run_bytes("ls-tree", "-r", "-z", revision, "--", *wanted))
    blobs = {entry.path[len(prefix) :]: entry.oid for entry in entries if entry.mode != exporting.LINK_MODE}
    read = dict(repository.blobs(dict.fromkeys(blobs.values()))) if blobs else {}
    files = {
        path: read[oid] for path, oid in blobs.items() if path == PLACEMENT_FILE or layout.is_group_file(path)
    }
    _check_previous(files, f"{value}:{prefix}")
    with tempfile.TemporaryDirectory(prefix="nova-previous-") as scratch:
        for relative, data in files.items():
            target = Path(scratch, *relative.split("/"))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        yield Path(scratch)


def _repository_top(path: Path, ref: str) -> Path:
    """The top of the git work tree (or bare repository) holding ``path``, which may not exist yet."""
    start = path.resolve()
    for candidate in (start, *start.parents):
        if candidate.is_dir() and ((candidate / ".git").exists() or gitsources.is_bare_repository(candidate)):
            return candidate
    raise RepoError(
        f"--previous {ref!r}: not a directory or a git URL, and {path} is not inside a git repository "
        "whose ref it could name"
    )


def _check_previous(files: Mapping[str, bytes], where: str) -> None:
    """The placement ``files`` record, or a ``UserError`` naming the file as ``where`` + its path."""
    try:
        schedulegroups.previous_from_files(files)
    except schedulegroups.UnreadableFile as error:
        raise UserError(f"{where}{error.path}: cannot read the previous placement: {error.reason}") from error


@contextmanager
def opened_source(
    spec: str,
    *,
    environ: Mapping[str, str],
    timeout: float = 120.0,
    progress: phases.Progress = phases.NO_PROGRESS,
) -> Iterator[tuple[Path, SourceInfo | None]]:
    """SOURCE as a local directory (``SourceInfo`` left to the caller) or ``git-url[@ref]``: fetched into
    the clone cache and exported at one revision for the block, recorded by URL and commit."""
    if not gitsources.is_git_spec(spec):
        yield Path(spec), None
        return
    progress.phase(phases.GIT, f"fetching {spec}")
    cache_dir = gitsources.default_cache_dir(environ)
    source = gitsources.parse_spec(spec)
    with gitsources.checkout(
        source, cache_dir=cache_dir, timeout=timeout, progress=git_progress(progress, f"fetching {spec}")
    ) as checkout:
        yield checkout.root, SourceInfo(checkout.repo, checkout.revision)


def local_source_info(root: Path, name: str | None = None) -> SourceInfo:
    """A directory source is recorded by its name only, so renders are byte-identical wherever the
    directory lives (an absolute path would differ from machine to machine)."""
    return SourceInfo(repo=name or root.resolve().name, revision=None)


@dataclass(frozen=True, slots=True)
class DirectoryRender:
    tree: RenderedTree
    stats: directories.WriteStats
    source_warnings: tuple[Problem, ...]
    findings: Findings = findings.NONE  # what the command tells of its plan (``cli.notices``)


def render_to_directory(
    root: Path,
    output: Path,
    *,
    settings: PlanSettings,
    clusters_path: Path | None = None,
    previous: Path | None = None,
    use_previous: bool = True,
    source_name: str | None = None,
    source_info: SourceInfo | None = None,
    progress: phases.Progress = phases.NO_PROGRESS,
) -> DirectoryRender:
    """Render ``root`` into ``output``. Everything is computed and validated in memory first, so a failed
    render never touches ``output``; then only files whose bytes changed are written.

    Stickiness comes from ``previous`` (a directory holding a render), by default from ``output`` itself
    when it holds one, so re-rendering into the same directory does not reshuffle placements.
    """
    progress.phase(phases.LOAD)
    source_set = load_source(root, clusters_path, namespace=settings.namespace)
    before = PreviousPlacement.empty()
    if use_previous:
        before = previous_from_directory(previous if previous is not None else output)
    progress.phase(phases.PLAN)
    plan = plan_source(source_set, previous=before, settings=settings)
    progress.phase(phases.RENDER)
    tree = render_plan(plan, source_set, source_info or local_source_info(root, source_name))
    progress.phase(phases.WRITE, f"{len(tree.files)} files into {output}")
    stats = directories.write_tree(output, tree.files)
    return DirectoryRender(tree, stats, source_set.warnings, findings.findings_of(source_set, plan))


def read_previous(value: str | None, *, repository_of: Path, environ: Mapping[str, str]) -> PreviousPlacement:
    """The placement ``--previous DIR|REF`` names (see ``previous_directory``); empty when none is given."""
    with previous_directory(value, repository_of=repository_of, environ=environ) as directory:
        return previous_from_directory(directory) if directory is not None else PreviousPlacement.empty()
