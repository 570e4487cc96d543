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
And the emitted text of each ``placement.yaml`` group entry, keyed by the entry's content.

The rules, which make the result byte-identical to ``renders.render`` (a property the tests check):
- a cluster is *dirty*, and rendered whole, when it is new, when its followed Namespaces changed, or when a
  group with a copy on it (before or now) is new, gone, or changed layout — paths, clashes between groups
  and the kustomization are decided per cluster, so any layout change re-decides the cluster;
- a group whose content changed but not its layout is re-emitted on the clean clusters (its paths are the
  ones the index has, since no layout around it changed);
- every other file is the index's: same inputs, same bytes.

Soundness rests on the fingerprints covering every input of the bytes. Source objects are fingerprinted by
their file's digest (``digests``: file → digest of its text, from the caller, which read the files) and
line, so an object whose file is not in ``digests`` is always re-emitted. ``salt`` stands for what is not in
the plan (the renderer's own code: the caller passes a digest of it); the plan's settings are added here.
Fingerprints are blake2b digests of ``marshal`` version 2 encodings (no back-references, so equal values
encode equally in every process).
"""

from __future__ import annotations

import hashlib
import marshal
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nova_gitops.api.objects import Manifest
from nova_gitops.api.problems import SourceLocation
from nova_gitops.rendering import emitting, layout, manifests, reports
from nova_gitops.rendering.renders import (
    GITATTRIBUTES,
    PLACEMENT_MD,
    PLACEMENT_YAML,
    Entry,
    Problems,
    cluster_files,
    namespace_entries,
    object_entries,
    overrides_key,
)
from nova_gitops.rollouts.waves import Wave
from nova_gitops.scheduling.plans import FollowedNamespace, GroupPlan, Plan

FORMAT = 3
"""Version of the index's layout; an index of another version is not used."""

Files = tuple[tuple[str, str], ...]
"""(path, blob id) pairs."""


def blob_id(data: bytes) -> str:
    """The id git gives a blob holding ``data`` (``git hash-object``), computed without git."""
    digest = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
    digest.update(data)
    return digest.hexdigest()


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
    chunks: Mapping[bytes, str]  # placement.yaml group entry fingerprint → its text
    others: Mapping[str, str]  # path → blob id of the files outside cluster directories (placement.yaml, ...)
    rows: Mapping[bytes, str]  # (table, entry fingerprint) → PLACEMENT.md row
    frame: tuple[str, str]  # placement.yaml's text before its group entries, and after them

    def to_wire(self) -> bytes:
        """The index as bytes: it is a cache, read back only by ``from_wire``. A ``marshal`` header (all but
        the group packs, with their lengths), then the packs joined as they are: marshalling ~11 MB of
        packs into one object costs ~50 ms of buffer growth, joining them ~2 ms."""
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
                dict(self.chunks),
                dict(self.others),
                dict(self.rows),
                self.frame,
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
            _, salt, names, layouts, contents, lengths, clusters, chunks, others, rows, frame = header
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
                chunks,
                others,
                rows,
                frame,
            )
        except (ValueError, EOFError, TypeError, AttributeError):
            return None
        framed = isinstance(frame, tuple) and len(frame) == 2 and all(isinstance(part, str) for part in frame)
        return index if framed and all(isinstance(part, dict) for part in (chunks, others, rows)) else None

    @property
    def blobs(self) -> dict[str, str]:
        """Every file of the render as path → blob id: the listing of the tree it was committed as (this
        decodes every group: a full render's cost, not an incremental one's)."""
        blobs: dict[str, str] = dict(self.others)
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
    fingerprints = {name: _fingerprints(group, digests) for name, group in groups.items()}
    followed = _followed_fingerprints(plan, digests)
    clusters = _all_clusters(plan, fingerprints.values())
    dirty, kept, changed = _dirty_clusters(clusters, groups, fingerprints, followed, previous)
    fresh: dict[str, bytes] = {}
    emitted = _re_emitted(plan, changed, dirty, previous, problems, fresh)
    dirty_files: dict[str, dict[str, list[tuple[str, str]]]] = {}  # group → cluster → files (dirty ones)
    cluster_index: dict[str, ClusterFiles] = {}
    if dirty:
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
    problems.raise_if_any()
    if previous is not None:
        for cluster in clusters - dirty:
            cluster_index[cluster] = previous.clusters[cluster]
    group_index: dict[str, GroupFiles] = {}
    for name in groups:
        shape, content, where = fingerprints[name]
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
    entry_keys, chunks, frame, placement = _placement_yaml(
        plan, source, fingerprints, previous.chunks if previous is not None else {}
    )
    fresh[PLACEMENT_YAML] = placement
    rows: dict[bytes, str] = {}
    row = _row_memo(entry_keys, previous.rows if previous is not None else {}, rows)
    fresh[PLACEMENT_MD] = reports.placement_markdown(plan, source, waves=waves, row=row).encode()
    fresh[GITATTRIBUTES] = reports.GITATTRIBUTES.encode()
    others = {path: blob_id(fresh[path]) for path in (PLACEMENT_YAML, PLACEMENT_MD, GITATTRIBUTES)}
    index = RenderIndex(salt, group_index, dict(sorted(cluster_index.items())), chunks, others, rows, frame)
    changes = None
    if previous is not None:
        touched = dirty | (previous.clusters.keys() - clusters)
        changes = _changes(previous, index, fingerprints, touched, dirty, dirty_files, emitted, fresh)
    return RenderDelta(fresh, index, len(dirty), len(changed), changes)


def _row_memo(
    entry_keys: Mapping[str, bytes], kept: Mapping[bytes, str], rows: dict[bytes, str]
) -> Callable[[GroupPlan, reports.GroupTable], str]:
    """PLACEMENT.md's row of a group, taken from ``kept`` (the previous index's) when its placement.yaml
    entry and the table's form are the same (a row depends on nothing else); each row lands in ``rows``."""
    tables: dict[reports.GroupTable, bytes] = {}

    def row(group: GroupPlan, table: reports.GroupTable) -> str:
        table_key = tables.get(table)
        if table_key is None:
            table_key = tables[table] = _fingerprint((table.matrix, table.clusters))
        key = entry_keys[group.name] + table_key
        text = rows.get(key) or kept.get(key) or reports.group_row(group, table)
        rows[key] = text
        return text

    return row


def _changes(
    previous: RenderIndex,
    index: RenderIndex,
    fingerprints: Mapping[str, tuple[bytes, bytes | None, frozenset[str]]],
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
    for path in (PLACEMENT_YAML, PLACEMENT_MD, GITATTRIBUTES):
        if path in previous.others:
            before[path] = previous.others[path]
        after[path] = index.others[path]
    written = {path: fresh[path] for path, blob in after.items() if before.get(path) != blob}
    deleted = tuple(sorted(path for path in before if path not in after))
    return IndexChanges(written, deleted, before, after)


def _fingerprint(value: Any) -> bytes:
    return hashlib.blake2b(marshal.dumps(value, 2), digest_size=16).digest()


def _fingerprints(group: GroupPlan, digests: Mapping[str, str]) -> tuple[bytes, bytes | None, frozenset[str]]:
    """(layout, content) fingerprints of a group's files (the module doc says what each covers), and the
    clusters it has copies on. This runs for every copy of every object (~100k at the reference size): it
    reads each field of the copies in one C-level pass (``map``) rather than building a tuple per copy.
    Copies are in the plan's order (sorted by cluster, ``ObjectPlan``): another order would only make a
    fingerprint differ, which re-renders, never reuses wrongly."""
    identities = []
    for object_plan in group.objects:
        manifest = object_plan.manifest
        group_name = manifest.api_version.rpartition("/")[0]
        identities.append(((group_name, manifest.kind, manifest.namespace, manifest.name), object_plan))
    identities.sort(key=_first)
    placed: list[tuple[tuple[str, str, str, str], tuple[str, ...]]] = []
    parts: list[object] = []
    where: set[str] = set()
    known = True
    for identity, object_plan in identities:
        copies = object_plan.copies
        on = tuple(map(_cluster_of, copies))
        where.update(on)
        placed.append((identity, on))
        if not known:
            continue
        source = _source_of(object_plan.manifest, digests)
        if source is None:
            known = False
            continue
        overrides: tuple[object, ...] = ()
        if any(map(_overrides_of, copies)):
            overrides = tuple(
                (index, overrides_key(copy.overrides)) for index, copy in enumerate(copies) if copy.overrides
            )
        replicas = tuple(map(_replicas_of, copies))
        parts.append((source, replicas, tuple(map(_completions_of, copies)), overrides))
    layout = _fingerprint((group.name, manifests.placed_by(group), tuple(placed)))
    return layout, _fingerprint((layout, tuple(parts))) if known else None, frozenset(where)


_first = operator.itemgetter(0)
_cluster_of = operator.attrgetter("cluster")
_replicas_of = operator.attrgetter("replicas")
_completions_of = operator.attrgetter("completions")
_overrides_of = operator.attrgetter("overrides")


def _source_of(manifest: Manifest, digests: Mapping[str, str]) -> tuple[Any, ...] | None:
    """What an object's bytes come from: its file's digest and line, and how the source set read it
    (identity, scope); None when the file has no digest."""
    digest = digests.get(manifest.location.file)
    if digest is None:
        return None
    return (
        digest,
        manifest.location.file,
        manifest.location.line,
        manifest.api_version,
        manifest.kind,
        manifest.namespace,
        manifest.name,
        manifest.namespaced,
    )


def _followed_fingerprints(plan: Plan, digests: Mapping[str, str]) -> dict[str, bytes]:
    """Per cluster, a fingerprint of everything its followed Namespaces' bytes depend on."""
    placers = {group.name: manifests.placed_by(group) for group in plan.groups}
    by_cluster: dict[str, list[FollowedNamespace]] = {}
    for item in plan.followed_namespaces:
        by_cluster.setdefault(item.cluster, []).append(item)
    fingerprints: dict[str, bytes] = {}
    for cluster, items in by_cluster.items():
        parts = []
        for item in sorted(items, key=lambda item: (item.manifest.key, item.group)):
            where = _source_of(item.manifest, digests)
            parts.append(
                (
                    where if where is not None else repr(item.manifest.body),
                    item.group,
                    item.policy,
                    placers.get(item.group),
                    overrides_key(item.overrides),
                )
            )
        fingerprints[cluster] = _fingerprint(tuple(parts))
    return fingerprints


def _all_clusters(plan: Plan, fingerprints: Iterable[tuple[bytes, bytes | None, frozenset[str]]]) -> set[str]:
    """Every cluster directory the render has: the plan's clusters and any a copy (the groups' clusters
    ``_fingerprints`` found) or a Namespace names."""
    clusters = {usage.cluster for usage in plan.clusters}
    for _, _, where in fingerprints:
        clusters.update(where)
    clusters.update(item.cluster for item in plan.followed_namespaces)
    return clusters


def _dirty_clusters(
    clusters: set[str],
    groups: Mapping[str, GroupPlan],
    fingerprints: Mapping[str, tuple[bytes, bytes | None, frozenset[str]]],
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


def _placement_yaml(
    plan: Plan,
    source: reports.SourceInfo,
    fingerprints: Mapping[str, tuple[bytes, bytes | None, frozenset[str]]],
    cached: Mapping[bytes, str],
) -> tuple[dict[str, bytes], dict[bytes, str], tuple[str, str], bytes]:
    """placement.yaml, emitting only the group entries ``cached`` does not hold; with each group's entry
    key (group → key), the entries' texts (key → text) and the text around the entries (before, after).

    An entry is keyed by its group's content fingerprint (objects, copies, name, policy) and the decision
    fields the content does not cover, so an unchanged group's entry is neither built nor emitted."""
    keys: dict[str, bytes] = {}
    chunks: dict[bytes, str] = {}
    texts: list[str] = [emitting.dump(reports.placement_head(source))]
    groups = sorted(plan.groups, key=lambda group: group.name)
    texts.append("groups:\n" if groups else "groups: []\n")
    head = "".join(texts)
    for group in groups:
        content = fingerprints[group.name][1]
        entry = None
        if content is None:
            entry = reports.group_entry(group)
            key = _fingerprint(entry)
        else:
            key = _fingerprint(
                (
                    content,
                    group.policy,
                    group.group_by,
                    group.mode,
                    group.status,
                    tuple(sorted(group.clusters)),
                    group.reason,
                    tuple(sorted(group.requests.items())),
                    group.warnings,
                )
            )
        text = chunks.get(key) or cached.get(key)
        if text is None:
            text = emitting.dump_items([entry if entry is not None else reports.group_entry(group)])
        keys[group.name] = key
        chunks[key] = text
        texts.append(text)
    tail = emitting.dump(reports.placement_tail(plan))
    texts.append(tail)
    return keys, chunks, (head, tail), "".join(texts).encode()


def placement_segments(
    previous: RenderIndex, index: RenderIndex
) -> tuple[int, list[tuple[int, int] | bytes]]:
    """This render's placement.yaml as ranges of the ``previous`` render's — (offset, length) — and new bytes,
    with the previous file's size: the group entries both renders hold are copied, the rest is new. A git
    delta of the new file against the old (``publishing.gitdelta``) at the cost of the entries, not of a
    search through ~5 MB per 100 clusters. The previous file is its frame's head, its entries in the order
    its index lists them (the file's), and its frame's tail."""
    old_head, old_tail = (part.encode() for part in previous.frame)
    where: dict[str, tuple[int, int]] = {}
    offset = len(old_head)
    for text in previous.chunks.values():
        length = len(text) if text.isascii() else len(text.encode())  # isascii: a flag, not a scan
        where[text] = (offset, length)
        offset += length
    head, tail = (part.encode() for part in index.frame)
    segments: list[tuple[int, int] | bytes] = [(0, len(head)) if head == old_head else head]
    for text in index.chunks.values():
        segments.append(where.get(text) or text.encode())
    segments.append((offset, len(tail)) if tail == old_tail else tail)
    return offset + len(old_tail), segments


def placement_difference(previous: RenderIndex, index: RenderIndex) -> tuple[bytes, bytes]:
    """placement.yaml of the ``previous`` render and of this one (``index``) with the group entries both hold
    left out: the same decisions to ``diffs.compare_placements`` and the same verdict to
    ``diffs.same_apart_from_source`` as the two whole files, since both compare group entries as a set of
    texts, while costing the entries that changed rather than the whole fleet's (~5 MB per 100 clusters to
    read back from git and to split). Entries are compared by text: an object edit that leaves its group's
    entry as it was changes the entry's key, not its text."""
    old_entries, new_entries = set(previous.chunks.values()), set(index.chunks.values())
    old = [previous.frame[0], *sorted(old_entries - new_entries), previous.frame[1]]
    new = [index.frame[0], *sorted(new_entries - old_entries), index.frame[1]]
    return "".join(old).encode(), "".join(new).encode()
