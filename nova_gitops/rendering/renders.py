"""A plan becomes every byte of the rendered repository, in memory.

Why it is built this way: a reference render is ~100,000 rendered objects from ~6,000 source objects over 100
clusters, because Duplicate policies copy a group to every cluster. Emitting YAML is costly per object even
with libyaml, so emitting each rendered object would be most of a render's time. But most copies of an object
differ only in the target-cluster label. So each object is prepared once with ``manifests.SENTINEL_CLUSTER``
as its cluster, each *distinct* variant (its replicas, completions and overrides) is emitted once, and each
cluster's file is the emitted text with the cluster name spliced in where the sentinel was
(``emitting.scalar`` gives the name exactly as the emitter would write it). A variant whose text holds the
sentinel other than exactly once is handled without splicing: none (an override replaced the label) means the
text is the same for every cluster; several (the sentinel text occurs in user data) means each cluster's copy
is rendered on its own. Either way the bytes equal a per-cluster render.

Determinism: every collection is sorted here, whatever order the plan holds, so equivalent plans give
byte-identical trees; files are UTF-8, LF, with a trailing newline.

Every cluster the plan knows gets a directory with a ``kustomization.yaml``, even when it receives nothing
(``resources: []``): Flux and Argo CD fail on a missing path, and an explicit empty directory tells an agent
"nothing belongs here" rather than "not rendered".
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from nova_gitops import errors
from nova_gitops.api import labels
from nova_gitops.api.objects import Manifest
from nova_gitops.api.policies import FieldOverride
from nova_gitops.api.problems import Problem, SourceLocation
from nova_gitops.rendering import emitting, layout, manifests, placementfiles, reports
from nova_gitops.rollouts.waves import Wave
from nova_gitops.scheduling.planparts import GroupPlan, ObjectPlan
from nova_gitops.scheduling.plans import FollowedNamespace, Plan, PlanSettings


@dataclass(frozen=True, slots=True)
class RenderedTree:
    """Every file of the rendered repository (path relative to its root → bytes), the plan behind it, and
    the waves of the source's RolloutStrategy (empty without one), which ``diff`` plans a change over."""

    files: Mapping[str, bytes]
    plan: Plan
    waves: tuple[Wave, ...] = ()


@dataclass(frozen=True, slots=True)
class _Target:
    """What one source object needs to become files, computed once and shared by all its copies."""

    manifest: Manifest
    identity: tuple[str, str, str, str]  # namespace, kind, group, name
    relative: str  # its path below a cluster directory when no other group's kind clashes with it
    followed: bool  # a namespace sent along with its objects; an explicitly placed one wins a tie

    @classmethod
    def of(cls, manifest: Manifest, followed: bool, problems: Problems) -> _Target | None:
        group = manifest.group
        try:
            relative = f"{layout.object_dir(manifest.namespace)}/"
            relative += layout.object_file_name(manifest.kind, group, manifest.name, clash=False)
        except ValueError as error:
            problems.add_plain(manifest.location, f"{manifest.key}: {error}")
            return None
        return cls(manifest, (manifest.namespace, manifest.kind, group, manifest.name), relative, followed)

    def clashing_path(self) -> str:
        namespace, kind, group, name = self.identity
        return f"{layout.object_dir(namespace)}/{layout.object_file_name(kind, group, name, clash=True)}"


class Entry(NamedTuple):
    """One rendered object on its way into a cluster directory; ``group`` is None for a followed Namespace."""

    target: _Target
    content: bytes
    group: str | None


ClusterFile = tuple[bytes, str | None]
"""A cluster directory's file: its bytes and the group that placed it (None: kustomization, followed)."""


def render(
    plan: Plan,
    source: reports.SourceInfo,
    *,
    policy_locations: Mapping[str, SourceLocation] | None = None,
    waves: Sequence[Wave] = (),
) -> RenderedTree:
    """Render ``plan``. Raises ``errors.InputError`` listing every object that cannot be rendered (override
    failures, paths that cannot be files), each at the object's file:line; ``policy_locations`` (policy
    name → where it is defined) lets messages point at the policy too. ``waves`` (a RolloutStrategy's,
    ``rollouts.waves.waves_for``) add a wave column to PLACEMENT.md; none, none. Outside ``clusters/``: each
    group's file, each policy folder's page, the index and the summary (``placementfiles``)."""
    problems = Problems(policy_locations or {})
    entries: dict[str, list[Entry]] = {usage.cluster: [] for usage in plan.clusters}
    for cluster, cluster_entries in object_entries(plan.groups, plan.settings, problems).items():
        entries.setdefault(cluster, []).extend(cluster_entries)
    for cluster, cluster_entries in namespace_entries(plan, problems).items():
        entries.setdefault(cluster, []).extend(cluster_entries)
    files: dict[str, bytes] = {}
    for cluster in sorted(entries):
        files.update(
            (path, data) for path, (data, _) in cluster_files(cluster, entries[cluster], problems).items()
        )
    try:
        files.update(placementfiles.files(plan, source, waves))
    except ValueError as error:  # a name that cannot be a path, two groups for one file (not expected: a bug)
        problems.add_plain(SourceLocation("<plan>", 0), str(error))
    problems.raise_if_any()
    return RenderedTree(files=dict(sorted(files.items())), plan=plan, waves=tuple(waves))


def object_entries(
    groups: Iterable[GroupPlan],
    settings: PlanSettings,
    problems: Problems,
    keep: Callable[[str], bool] | None = None,
) -> dict[str, list[Entry]]:
    """The rendered objects of ``groups`` by cluster, in group-name then object-key order; only copies on
    clusters ``keep`` accepts (all when None)."""
    entries: dict[str, list[Entry]] = {}
    for group in sorted(groups, key=lambda group: group.name):
        policy = manifests.placed_by(group)
        for object_plan in sorted(group.objects, key=lambda object_plan: object_plan.manifest.key):
            if keep is not None and not any(keep(copy.cluster) for copy in object_plan.copies):
                continue
            target = _Target.of(object_plan.manifest, False, problems)
            if target is None:
                continue
            for cluster, content in _render_copies(object_plan, group, policy, settings, problems, keep):
                entries.setdefault(cluster, []).append(Entry(target, content, group.name))
    return entries


def namespace_entries(
    plan: Plan, problems: Problems, keep: Callable[[str], bool] | None = None
) -> dict[str, list[Entry]]:
    """The Namespaces that follow their objects, by cluster; only on clusters ``keep`` accepts."""
    followed = plan.followed_namespaces
    if keep is not None:
        followed = tuple(item for item in followed if keep(item.cluster))
    targets: dict[int, _Target | None] = {}
    placers = {group.name: manifests.placed_by(group) for group in plan.groups}
    entries: dict[str, list[Entry]] = {}
    for cluster, manifest, content in _render_namespaces(followed, placers, plan.settings, problems):
        if id(manifest) not in targets:
            targets[id(manifest)] = _Target.of(manifest, True, problems)
        target = targets[id(manifest)]
        if target is not None:
            entries.setdefault(cluster, []).append(Entry(target, content, None))
    return entries


def cluster_files(cluster: str, entries: Sequence[Entry], problems: Problems) -> dict[str, ClusterFile]:
    """The files of one cluster directory: one per object, and the kustomization listing them, each with
    the group that placed it."""
    try:
        prefix = f"{layout.cluster_dir(cluster)}/"
    except ValueError as error:
        location = entries[0].target.manifest.location if entries else SourceLocation("<plan>", 0)
        problems.add_plain(location, str(error))
        return {}
    groups_by_file: dict[tuple[str, str, str], set[str]] = {}
    for entry in entries:
        namespace, kind, group, name = entry.target.identity
        groups_by_file.setdefault((namespace, kind.lower(), name), set()).add(group)
    chosen: dict[str, Entry] = {}
    for entry in entries:
        target = entry.target
        namespace, kind, group, name = target.identity
        clash = len(groups_by_file[(namespace, kind.lower(), name)]) > 1
        relative = target.clashing_path() if clash else target.relative
        other = chosen.get(relative)
        if other is None or (other.target.followed and not target.followed):
            chosen[relative] = entry
        elif not target.followed and other.target is not target:  # two placed objects, one file: a duplicate
            problems.add_plain(
                target.manifest.location,
                f"{target.manifest.key} and {other.target.manifest.key} ({other.target.manifest.location}) "
                f"would both be rendered to {prefix}{relative}",
            )
    files: dict[str, ClusterFile] = {
        f"{prefix}{relative}": (entry.content, entry.group) for relative, entry in chosen.items()
    }
    kustomization = layout.kustomization(chosen)
    files[f"{prefix}{layout.KUSTOMIZATION_FILE}"] = (emitting.dump(kustomization).encode(), None)
    return files


def _render_copies(
    object_plan: ObjectPlan,
    group: GroupPlan,
    policy: str,
    settings: PlanSettings,
    problems: Problems,
    keep: Callable[[str], bool] | None = None,
) -> Iterator[tuple[str, bytes]]:
    """(cluster, bytes) of every copy of one object (on the clusters ``keep`` accepts), emitting each distinct
    variant once. A copy's bytes can depend on the other copies (a Job's completions are split over them)."""
    manifest = object_plan.manifest
    copies = sorted(
        (copy for copy in object_plan.copies if keep is None or keep(copy.cluster)),
        key=lambda copy: copy.cluster,
    )
    try:
        base = manifests.prepare(manifest, manifests.SENTINEL_CLUSTER, group.name, policy, settings)
    except manifests.ObjectRenderError as error:
        for copy in copies:
            problems.add(manifest, None, copy.cluster, error)
        return
    completions = manifests.completions_by_cluster(object_plan)
    variants: dict[tuple[Any, ...], _Variant] = {}
    for copy in copies:
        share = completions.get(copy.cluster)
        variant_key = (copy.replicas, share, overrides_key(copy.overrides))
        variant = variants.get(variant_key)
        if variant is None:
            variant = variants[variant_key] = _Variant.emit(
                manifest, base, copy.replicas, share, copy.overrides
            )
        if variant.failure is not None:
            problems.add(manifest, group.policy, copy.cluster, variant.failure)
            continue
        if variant.parts is not None:
            yield copy.cluster, _splice(variant.parts, copy.cluster)
            continue
        body = manifests.customize(  # the sentinel text occurs in user data: render this copy on its own
            manifest,
            manifests.prepare(manifest, copy.cluster, group.name, policy, settings),
            copy.replicas,
            share,
            copy.overrides,
        )
        yield copy.cluster, emitting.dump(body).encode()


def _render_namespaces(
    followed: Sequence[FollowedNamespace],
    placers: Mapping[str, str],
    settings: PlanSettings,
    problems: Problems,
) -> Iterator[tuple[str, Manifest, bytes]]:
    """(cluster, manifest, bytes) of each followed Namespace, emitting each distinct one once. A namespace
    pulled in by an annotation-placed group (no policy) is annotated with that annotation, as its objects."""
    variants: dict[tuple[Any, ...], tuple[Manifest, _Variant]] = {}
    for item in sorted(followed, key=lambda item: (item.cluster, item.manifest.key, item.group)):
        manifest = item.manifest
        policy = item.policy or placers.get(item.group, labels.CLUSTER_PIN)
        key = (manifest.key, item.group, policy, overrides_key(item.overrides))
        cached = variants.get(key)
        if cached is None or not (cached[0].body is manifest.body or cached[0].body == manifest.body):
            try:
                base = manifests.prepare(manifest, manifests.SENTINEL_CLUSTER, item.group, policy, settings)
                variant = _Variant.emit(manifest, base, None, None, item.overrides)
            except manifests.ObjectRenderError as error:
                variant = _Variant(None, error)
            cached = variants[key] = (manifest, variant)
        variant = cached[1]
        if variant.failure is not None:
            problems.add(manifest, item.policy, item.cluster, variant.failure)
        elif variant.parts is not None:
            yield item.cluster, manifest, _splice(variant.parts, item.cluster)
        else:
            body = manifests.prepare(manifest, item.cluster, item.group, policy, settings)
            body = manifests.customize(manifest, body, None, None, item.overrides)
            yield item.cluster, manifest, emitting.dump(body).encode()


@dataclass(frozen=True, slots=True)
class _Variant:
    """One emitted variant: the bytes around the sentinel (``parts``), or the reason it failed. Both None:
    the sentinel occurs more than once, so each copy is rendered on its own."""

    parts: tuple[bytes, ...] | None
    failure: manifests.ObjectRenderError | None = None

    @classmethod
    def emit(
        cls,
        manifest: Manifest,
        base: dict[str, Any],
        replicas: int | None,
        completions: int | None,
        overrides: Sequence[FieldOverride],
    ) -> _Variant:
        try:
            body = manifests.customize(manifest, base, replicas, completions, overrides)
        except manifests.ObjectRenderError as error:
            return cls(None, error)
        pieces = emitting.dump(body).split(_sentinel_text())
        if len(pieces) > 2:
            return cls(None)
        return cls(tuple(piece.encode() for piece in pieces))


def _splice(parts: tuple[bytes, ...], cluster: str) -> bytes:
    if len(parts) == 1:
        return parts[0]
    return parts[0] + _cluster_text(cluster) + parts[1]


@functools.lru_cache(maxsize=4096)
def _cluster_text(cluster: str) -> bytes:
    """The cluster name as the emitter writes it as a value (quoted when YAML needs it)."""
    return emitting.scalar(cluster).encode()


def _sentinel_text() -> str:
    return emitting.scalar(manifests.SENTINEL_CLUSTER)


def overrides_key(overrides: Sequence[FieldOverride]) -> tuple[tuple[str, str, str], ...]:
    """A hashable key of overrides: equal keys mean equal effect (repr keeps YAML types apart)."""
    return tuple(
        (override.path.text, type(override.value).__name__, repr(override.value)) for override in overrides
    )


class Problems:
    """Render problems, collapsed: one Problem per object, policy and failure, naming every cluster."""

    def __init__(self, policy_locations: Mapping[str, SourceLocation]) -> None:
        self._policy_locations = policy_locations
        self._clusters: dict[tuple[SourceLocation, str | None, str], list[str]] = {}
        self._plain: list[Problem] = []

    def add(
        self, manifest: Manifest, policy: str | None, cluster: str, error: manifests.ObjectRenderError
    ) -> None:
        for failure in error.failures:
            origin = ""
            if policy is not None:
                where = self._policy_locations.get(policy)
                origin = f"override from SchedulePolicy {policy}" + (f" ({where})" if where else "") + ": "
            message = f"{manifest.key}: {origin}{failure.message}"
            self._clusters.setdefault((manifest.location, failure.field, message), []).append(cluster)

    def add_plain(self, location: SourceLocation, message: str) -> None:
        self._plain.append(Problem(location, message))

    def raise_if_any(self) -> None:
        problems = list(self._plain)
        for (location, field, message), clusters in self._clusters.items():
            names = sorted(set(clusters))
            shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
            problems.append(Problem(location, f"{message} (in cluster {shown})", field))
        if problems:
            raise errors.InputError(sorted(set(problems), key=_problem_order))


def _problem_order(problem: Problem) -> tuple[str, int, str, str]:
    return (problem.location.file, problem.location.line, problem.message, problem.field or "")
