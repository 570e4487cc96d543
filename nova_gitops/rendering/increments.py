"""Render only what changed since the previous render: the incremental path of ``publish``.

Why: a reference render is ~100,000 files. When one workload changes, emitting and hashing all of them again
costs seconds, yet almost every byte is the same. So the previous render leaves a ``RenderIndex`` behind (the
caller stores it next to the commit it describes), and the next render re-emits only the files whose inputs
changed, taking every other file's blob id from the index.

What the index remembers, per group: a fingerprint of its *layout* (which objects, on which clusters: that
decides file paths and every kustomization.yaml) and of its *content* (everything else its bytes depend on:
each object's source file and line, replicas, completions, overrides, the group's name and policy), and the
(path, blob id) of its files on each cluster. Per cluster: a fingerprint of the Namespaces that follow their
objects there, and the (path, blob id) of the cluster's own files (kustomization.yaml, followed Namespaces).
Outside ``clusters/``, the (key, path, blob id) of each group's file and each policy folder's page, and the
rows of the pages (``placementfiles``, which decides those).

The rules, which make the result byte-identical to ``renders.render`` (a property the tests check):
- a cluster is *dirty*, and rendered whole, when it is new, when its followed Namespaces changed, or when a
  group with a copy on it (before or now) is new, gone, or changed layout — paths, clashes between groups
  and the kustomization are decided per cluster, so any layout change re-decides the cluster;
- a group whose content changed but not its layout is re-emitted on the clean clusters (its paths are the
  ones the index has, since no layout around it changed);
- every other file is the index's: same inputs, same bytes.

Soundness rests on the fingerprints (``rendering.fingerprinting``) covering every input of the bytes.
Source objects are fingerprinted by their file's digest (``digests``: file → digest of its text, from the
caller, which read the files) and line, so an object whose file is not in ``digests`` is always re-emitted.
``salt`` stands for what is not in the plan (the renderer's own code: the caller passes a digest of it); the
plan's settings are added here. Fingerprints are blake2b digests of ``marshal`` version 2 encodings (no
back-references, so equal values encode equally in every process).
"""

from __future__ import annotations

import marshal
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from nova_gitops.api.problems import SourceLocation
from nova_gitops.rendering import fingerprinting, layout, placementfiles, reports
from nova_gitops.rendering.fingerprinting import GroupFingerprints
from nova_gitops.rendering.placementfiles import blob_id as blob_id
from nova_gitops.rendering.renders import (
    Entry,
    Problems,
    cluster_files,
    namespace_entries,
    object_entries,
)
from nova_gitops.rollouts.waves import Wave
from nova_gitops.scheduling.planparts import GroupPlan
from nova_gitops.scheduling.plans import Plan

FORMAT = 4
"""Version of the index's layout; an index of another version is not used (4: the per-group placement files'
records replace placement.yaml's group entries and frame)."""

Files = tuple[tuple[str, str], ...]
"""(path, blob id) pairs."""


class UnreadableIndex(Exception):
    """A group's packed files could not be decoded: the index is damaged, and is not used."""


def pack_files(files: Mapping[str, Files]) -> bytes:
    """A group's files (cluster → (path, blob id) pairs) as bytes, clusters sorted so that equal files pack
    equally. Packed, a group that did not change is carried from one index to the next without decoding
    its files: loading and storing an index costs about a copy of its bytes, not ~100k objects."""
    return marshal.dumps(dict(sorted(files.items())), 2)


def unpack_files(packed: bytes) -> dict[str, Files]:
    """What ``pack_files`` packed; ``UnreadableIndex`` for anything else."""
    try:
        files = marshal.loads(packed)
    except (ValueError, EOFError, TypeError) as error:
        raise UnreadableIndex(str(error)) from None
    if not isinstance(files, dict) or not all(
        isinstance(cluster, str) and isinstance(pairs, tuple) for cluster, pairs in files.items()
    ):
        raise UnreadableIndex("not a group's files")
    return files


@dataclass(frozen=True, slots=True)
class GroupFiles:
    layout: bytes
    content: bytes | None  # None: an object's source is unknown, so never reused
    packed: bytes  # cluster → its files from this group (``pack_files``)

    @property
    def files(self) -> dict[str, Files]:
        """cluster → this group's files there (decoded on each call: only groups a change touches are)."""
        return unpack_files(self.packed)


@dataclass(frozen=True, slots=True)
class ClusterFiles:
    followed: bytes  # fingerprint of the Namespaces that follow their objects to this cluster
    files: Files  # kustomization.yaml and followed Namespaces


@dataclass(frozen=True, slots=True)
class RenderIndex:
    """What a render produced, by the inputs it came from (see the module doc)."""

    salt: str
    groups: Mapping[str, GroupFiles]
    clusters: Mapping[str, ClusterFiles]
    records: Mapping[str, tuple[bytes, str, str]]  # group → its file's entry key, path, blob id
    pages: Mapping[str, tuple[bytes, str]]  # policy folder's page → its key, blob id
    rows: Mapping[bytes, str]  # (entry key, table) → a group's row of its page
    others: Mapping[str, str]  # path → blob id of the root's files (placement.yaml, PLACEMENT.md, ...)

    @property
    def outside(self) -> placementfiles.Kept:
        """What the index keeps of the files outside ``clusters/`` (``placementfiles``)."""
        return placementfiles.Kept(self.records, self.pages, self.rows, self.others)

    def to_wire(self) -> bytes:
        """The index as bytes: it is a cache, read back only by ``from_wire``. A ``marshal`` header (all but
        the group packs, with their lengths), then the packs joined as they are: marshalling the packs into
        one object grows its buffer again and again, joining them copies each once."""
        names = list(self.groups)
        header = marshal.dumps(
            (
                FORMAT,
                self.salt,
                names,
                [self.groups[name].layout for name in names],
                [self.groups[name].content for name in names],
                [len(self.groups[name].packed) for name in names],
                {name: (c.followed, c.files) for name, c in self.clusters.items()},
                dict(self.records),
                dict(self.pages),
                dict(self.rows),
                dict(self.others),
            )
        )
        packs = (self.groups[name].packed for name in names)
        return b"".join([len(header).to_bytes(8, "little"), header, *packs])

    @classmethod
    def from_wire(cls, data: bytes) -> RenderIndex | None:
        """The index ``to_wire`` wrote; None for anything else (another format, a damaged file). A group's
        files are decoded when used: damage inside a pack surfaces as ``UnreadableIndex`` then."""
        try:
            size = int.from_bytes(data[:8], "little")
            header = marshal.loads(memoryview(data)[8 : 8 + size])
            if not isinstance(header, tuple) or len(header) != 11 or header[0] != FORMAT:
                return None
            _, salt, names, layouts, contents, lengths, clusters, records, pages, rows, others = header
            body = memoryview(data)[8 + size :]
            if not isinstance(salt, str) or sum(lengths) != len(body) or min(lengths, default=0) < 0:
                return None
            groups: dict[str, GroupFiles] = {}
            start = 0
            for name, shape, content, length in zip(names, layouts, contents, lengths, strict=True):
                groups[name] = GroupFiles(shape, content, bytes(body[start : start + length]))
                start += length
            index = cls(
                salt,
                groups,
                {name: ClusterFiles(*fields) for name, fields in clusters.items()},
                records,
                pages,
                rows,
                others,
            )
        except (ValueError, EOFError, TypeError, AttributeError):
            return None
        return index if all(isinstance(part, dict) for part in (records, pages, rows, others)) else None

    @property
    def blobs(self) -> dict[str, str]:
        """Every file of the render as path → blob id: the listing of the tree it was committed as (this
        decodes every group: a full render's cost, not an incremental one's)."""
        blobs: dict[str, str] = self.outside.blobs()
        for group in self.groups.values():
            for files in group.files.values():
                blobs.update(files)
        for cluster in self.clusters.values():
            blobs.update(cluster.files)
        return blobs


@dataclass(frozen=True, slots=True)
class IndexChanges:
    """What a render changes in the tree its previous index describes, found by looking only where the
    change reached (dirty clusters, re-emitted groups, the files outside clusters/): ``written`` (path →
    new bytes, each a blob the previous tree did not have there) and ``deleted`` paths, with ``before``
    (path → blob id in the previous tree) and ``after`` (path → blob id now) for every path looked at.
    Every cluster that loses a file is looked at whole, so ``before`` holds all its files."""

    written: Mapping[str, bytes]
    deleted: tuple[str, ...]
    before: Mapping[str, str]
    after: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class RenderDelta:
    """A render as changes to a previous one: ``files`` holds the bytes of each file that was emitted this
    time (at least every file whose blob id is not the previous render's); ``index`` describes the new
    render for the next one; ``changes`` says what changed in the previous tree (None without one)."""

    files: Mapping[str, bytes]
    index: RenderIndex
    rendered_clusters: int  # clusters rendered whole
    rendered_groups: int  # groups re-emitted on clean clusters
    changes: IndexChanges | None = None

    @property
    def blobs(self) -> dict[str, str]:
        """Every file of the new render (path → blob id); as costly as ``RenderIndex.blobs``."""
        return self.index.blobs


def render_delta(
    plan: Plan,
    source: reports.SourceInfo,
    previous: RenderIndex | None,
    *,
    digests: Mapping[str, str],
    salt: str,
    policy_locations: Mapping[str, SourceLocation] | None = None,
    waves: Sequence[Wave] = (),
) -> RenderDelta:
    """Render ``plan`` as changes to the render ``previous`` describes (everything when None, or when it was
    made with another salt or is damaged). The bytes are those ``renders.render`` gives; the same
    ``errors.InputError`` is raised for objects that cannot be rendered (only re-emitted objects can fail:
    the others rendered before, from the same inputs). ``waves`` are ``renders.render``'s (PLACEMENT.md's
    wave column)."""
    salt = f"{salt}\0{plan.settings!r}"
    if previous is not None and previous.salt == salt:
        try:
            return _render_delta(plan, source, previous, digests, salt, policy_locations or {}, waves)
        except UnreadableIndex:
            pass  # a damaged index: render everything, as without one
    return _render_delta(plan, source, None, digests, salt, policy_locations or {}, waves)


def _render_delta(
    plan: Plan,
    source: reports.SourceInfo,
    previous: RenderIndex | None,
    digests: Mapping[str, str],
    salt: str,
    policy_locations: Mapping[str, SourceLocation],
    waves: Sequence[Wave],
) -> RenderDelta:
    problems = Problems(policy_locations)
    groups = {group.name: group for group in plan.groups}
    fingerprints = {name: fingerprinting.of_group(group, digests) for name, group in groups.items()}
    followed = fingerprinting.followed(plan, digests)
    clusters = _all_clusters(plan, fingerprints.values())
    dirty, kept, changed = _dirty_clusters(clusters, groups, fingerprints, followed, previous)
    fresh: dict[str, bytes] = {}
    emitted = _re_emitted(plan, changed, dirty, previous, problems, fresh)
    dirty_files, cluster_index = _render_dirty(plan, dirty, followed, problems, fresh)
    problems.raise_if_any()
    if previous is not None:
        for cluster in clusters - dirty:
            cluster_index[cluster] = previous.clusters[cluster]
    group_index = _group_index(fingerprints, previous, kept, changed, dirty, dirty_files, emitted)
    try:
        outside = placementfiles.delta(
            plan,
            source,
            waves,
            {name: content for name, (_, content, _) in fingerprints.items()},
            previous.outside if previous is not None else None,
        )
    except ValueError as error:  # as renders.render: a name that cannot be a path, two groups for one file
        problems.add_plain(SourceLocation("<plan>", 0), str(error))
        problems.raise_if_any()
        raise  # not reached: raise_if_any raises the problem just added
    fresh.update(outside.fresh)
    records = outside.kept
    clusters_index = dict(sorted(cluster_index.items()))
    index = RenderIndex(
        salt, group_index, clusters_index, records.records, records.pages, records.rows, records.others
    )
    changes = None
    if previous is not None:
        touched = dirty | (previous.clusters.keys() - clusters)
        changes = _changes(previous, index, fingerprints, touched, dirty, dirty_files, emitted, fresh)
        changes = _with_outside(changes, outside, fresh)
    return RenderDelta(fresh, index, len(dirty), len(changed), changes)


def _render_dirty(
    plan: Plan, dirty: set[str], followed: Mapping[str, bytes], problems: Problems, fresh: dict[str, bytes]
) -> tuple[dict[str, dict[str, list[tuple[str, str]]]], dict[str, ClusterFiles]]:
    """Render the ``dirty`` clusters whole, their bytes into ``fresh``: (group → cluster → its files there,
    cluster → its own files)."""
    dirty_files: dict[str, dict[str, list[tuple[str, str]]]] = {}
    cluster_index: dict[str, ClusterFiles] = {}
    if not dirty:
        return dirty_files, cluster_index
    keep = dirty.__contains__
    entries: dict[str, list[Entry]] = {cluster: [] for cluster in dirty}
    for cluster, found in object_entries(plan.groups, plan.settings, problems, keep).items():
        entries[cluster].extend(found)
    for cluster, found in namespace_entries(plan, problems, keep).items():
        entries[cluster].extend(found)
    for cluster in sorted(dirty):
        own: list[tuple[str, str]] = []
        for path, (data, owner) in cluster_files(cluster, entries[cluster], problems).items():
            fresh[path] = data
            pair = (path, blob_id(data))
            if owner is None:
                own.append(pair)
            else:
                dirty_files.setdefault(owner, {}).setdefault(cluster, []).append(pair)
        cluster_index[cluster] = ClusterFiles(followed.get(cluster, b""), tuple(own))
    return dirty_files, cluster_index


def _group_index(
    fingerprints: Mapping[str, GroupFingerprints],
    previous: RenderIndex | None,
    kept: set[str],
    changed: set[str],
    dirty: set[str],
    dirty_files: Mapping[str, Mapping[str, list[tuple[str, str]]]],
    emitted: Mapping[str, Mapping[str, list[tuple[str, str]]]],
) -> dict[str, GroupFiles]:
    """Each group's entry of the new index: an unchanged group on clean clusters carries its packed files
    over undecoded; the others' are the index's on clean clusters, re-emitted or rendered anew."""
    group_index: dict[str, GroupFiles] = {}
    for name, (shape, content, where) in fingerprints.items():
        old = previous.groups.get(name) if previous is not None else None
        if old is not None and name in kept and dirty.isdisjoint(where):
            group_index[name] = GroupFiles(shape, content, old.packed)  # carried over, never decoded
            continue
        files: dict[str, Files] = {}
        if old is not None and name in kept:
            files = {cluster: pairs for cluster, pairs in old.files.items() if cluster not in dirty}
        elif name in changed:
            files = {c: tuple(pairs) for c, pairs in emitted.get(name, {}).items() if c not in dirty}
        files.update((cluster, tuple(pairs)) for cluster, pairs in dirty_files.get(name, {}).items())
        group_index[name] = GroupFiles(shape, content, pack_files(files))
    return group_index


def _changes(
    previous: RenderIndex,
    index: RenderIndex,
    fingerprints: Mapping[str, GroupFingerprints],
    touched: set[str],
    dirty: set[str],
    dirty_files: Mapping[str, Mapping[str, list[tuple[str, str]]]],
    emitted: Mapping[str, Mapping[str, list[tuple[str, str]]]],
    fresh: Mapping[str, bytes],
) -> IndexChanges:
    """The render's changes to ``previous``'s tree, looking only at the ``touched`` clusters (dirty ones
    and ones that are gone), the groups re-emitted on clean clusters and the files outside clusters/."""
    before: dict[str, str] = {}
    after: dict[str, str] = {}
    for cluster in touched:
        if cluster in previous.clusters:
            before.update(previous.clusters[cluster].files)
        if cluster in dirty:
            after.update(index.clusters[cluster].files)
    for name, old in previous.groups.items():
        now = fingerprints.get(name)
        if now is not None and now[0] == old.layout and touched.isdisjoint(now[2]):
            continue  # same clusters as before, none of them touched
        for cluster, old_pairs in old.files.items():
            if cluster in touched:
                before.update(old_pairs)
    for by_cluster in dirty_files.values():
        for new_pairs in by_cluster.values():
            after.update(new_pairs)
    for name, by_cluster in emitted.items():
        old_files = previous.groups[name].files
        for cluster, new_pairs in by_cluster.items():
            if cluster not in dirty:
                before.update(old_files.get(cluster, ()))
                after.update(new_pairs)
    written = {path: fresh[path] for path, blob in after.items() if before.get(path) != blob}
    deleted = tuple(sorted(path for path in before if path not in after))
    return IndexChanges(written, deleted, before, after)


def _with_outside(
    changes: IndexChanges, outside: placementfiles.Delta, fresh: Mapping[str, bytes]
) -> IndexChanges:
    """``changes`` with those of the files outside clusters/ (``placementfiles.Delta``)."""
    before = {**changes.before, **outside.before}
    after = {**changes.after, **outside.after}
    written = dict(changes.written)
    written.update((path, fresh[path]) for path, blob in outside.after.items() if before.get(path) != blob)
    deleted = tuple(sorted({*changes.deleted, *(path for path in outside.before if path not in after)}))
    return IndexChanges(written, deleted, before, after)


def _all_clusters(plan: Plan, fingerprints: Iterable[GroupFingerprints]) -> set[str]:
    """Every cluster directory the render has: the plan's clusters and any a copy (the groups' clusters
    ``fingerprinting.of_group`` found) or a Namespace names."""
    clusters = {usage.cluster for usage in plan.clusters}
    for _, _, where in fingerprints:
        clusters.update(where)
    clusters.update(item.cluster for item in plan.followed_namespaces)
    return clusters


def _dirty_clusters(
    clusters: set[str],
    groups: Mapping[str, GroupPlan],
    fingerprints: Mapping[str, GroupFingerprints],
    followed: Mapping[str, bytes],
    previous: RenderIndex | None,
) -> tuple[set[str], set[str], set[str]]:
    """(clusters to render whole, groups unchanged, groups whose content alone changed)."""
    if previous is None:
        return set(clusters), set(), set()
    dirty = {
        cluster
        for cluster in clusters
        if cluster not in previous.clusters
        or previous.clusters[cluster].followed != followed.get(cluster, b"")
    }
    kept: set[str] = set()
    changed: set[str] = set()
    for name, (shape, content, where) in fingerprints.items():
        old = previous.groups.get(name)
        if old is None or old.layout != shape:
            dirty.update(old.files if old is not None else ())
            dirty.update(where)
        elif content is None or old.content != content:
            changed.add(name)
        else:
            kept.add(name)
    for name, old in previous.groups.items():
        if name not in fingerprints:
            dirty.update(old.files)
    return dirty & clusters, kept, changed


def _re_emitted(
    plan: Plan,
    changed: set[str],
    dirty: set[str],
    previous: RenderIndex | None,
    problems: Problems,
    fresh: dict[str, bytes],
) -> dict[str, dict[str, list[tuple[str, str]]]]:
    """The files of the groups whose content alone changed (``changed``) on clean clusters, re-emitted at
    the paths the index has (their layout did not change). A re-emitted object whose path the index does
    not have makes its cluster dirty (``dirty`` grows; callers drop what was emitted on dirty clusters)."""
    emitted: dict[str, dict[str, list[tuple[str, str]]]] = {}
    if previous is None:
        return emitted
    for group in plan.groups:
        old = previous.groups.get(group.name)
        if group.name not in changed or old is None:
            continue
        old_files = old.files
        found = object_entries([group], plan.settings, problems, lambda cluster: cluster not in dirty)
        for cluster, entries in found.items():
            paths = {path for path, _ in old_files.get(cluster, ())}
            prefix = f"{layout.cluster_dir(cluster)}/"
            pairs: list[tuple[str, str]] = []
            for entry in entries:
                path = prefix + entry.target.relative
                if path not in paths:
                    path = prefix + entry.target.clashing_path()
                if path not in paths:  # cannot happen while the layout is unchanged; render it whole then
                    dirty.add(cluster)
                    break
                fresh[path] = entry.content
                pairs.append((path, blob_id(entry.content)))
            else:
                emitted.setdefault(group.name, {})[cluster] = pairs
    return emitted
