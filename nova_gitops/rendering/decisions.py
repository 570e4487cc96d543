"""What a change decides, read from the placement files that differ: groups moved, placed or removed, replicas
per cluster, objects newly unscheduled or scheduled, new warnings.

Only the files that differ are read (callers find them by comparing bytes or git blob ids): each changed
group's file (``placement/<policy>/<group>.yaml``, a few kilobytes) and the index (``placement.yaml``, small:
O(policies + clusters)). A group whose file did not change decided nothing new, so a one-workload change
reads one group file, whatever the fleet's size.

A render in the single-file layout (before docs/design.md §4 split it) holds every group in
``placement.yaml``; such
a file is read entry by entry (``oldlayout``) and its groups compared with the other side's group files, so
``diff`` across the upgrade, and the commit that converts a repository, say what changed and nothing more.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nova_gitops.api import loading
from nova_gitops.rendering import oldlayout, schedulegroups

Sides = tuple[bytes | None, bytes | None]
"""A file's old and new bytes (None where it does not exist)."""

INDEX_FILE = schedulegroups.INDEX_FILE
VOLATILE_SECTIONS = ("source", "clusters")
"""placement.yaml sections that describe rather than decide: the source revision, and each cluster's
capacity (which agents report as it moves, so it alone must not make a commit every few minutes)."""
DECISION_SECTIONS = ("groups", "unscheduled", "warnings")
"""placement.yaml sections compared as decisions (``groups``: only in the single-file layout)."""


@dataclass(frozen=True, slots=True)
class GroupChange:
    """A group whose clusters differ; ``before``/``after`` is None when the group is new/gone."""

    name: str
    before: tuple[str, ...] | None
    after: tuple[str, ...] | None

    @property
    def moved(self) -> bool:
        return self.before is not None and self.after is not None and self.before != self.after


@dataclass(frozen=True, slots=True)
class ReplicaChange:
    group: str
    title: str  # "Deployment shop/web"
    cluster: str
    before: int | None
    after: int | None


@dataclass(frozen=True, slots=True)
class Decisions:
    groups: tuple[GroupChange, ...] = ()
    replicas: tuple[ReplicaChange, ...] = ()
    newly_unscheduled: tuple[str, ...] = ()
    newly_scheduled: tuple[str, ...] = ()
    new_warnings: tuple[str, ...] = ()
    cleared_warnings: tuple[str, ...] = ()
    records_changed: tuple[RecordChange, ...] = ()  # groups whose decision changed in no way above
    other_sections_changed: bool = False  # the index differs outside the decisions above and the volatile


@dataclass(frozen=True, slots=True)
class RecordChange:
    """A group still on the same clusters, with the same replicas and warnings, whose recorded decision
    changed otherwise: which of its fields (``reason``, ``requests``, ``mode``, ``phase``, ...)."""

    name: str
    fields: tuple[str, ...]


class UnreadablePlacement(ValueError):
    """A placement file of one of the two renders compared that records no decision: which render
    (``old``/``new``), which file, and why."""

    def __init__(self, side: str, path: str, reason: str) -> None:
        super().__init__(f"the {side} render's {path}: {reason}")
        self.side, self.path, self.reason = side, path, reason


@dataclass(frozen=True, slots=True)
class Group:
    """A group's decision as either layout records it."""

    name: str
    clusters: tuple[str, ...]
    replicas: Mapping[str, Mapping[str, int]]  # object title → cluster → replicas
    warnings: tuple[str, ...]
    record: Any  # the whole record, to tell any other difference


def compare(
    index: Sides | None, groups: Sequence[tuple[str, Sides]], documents: Mapping[bytes, Any] | None = None
) -> Decisions:
    """The decisions ``groups`` (path and sides of each group file that differs) and ``index``
    (placement.yaml, when it differs) change. ``UnreadablePlacement`` for a file that records no decision.
    ``documents`` (a group file's bytes → the document they were emitted from) spares parsing the group
    files a caller rendered itself (a what-if's, ``whatifs``)."""
    if index is not None and same_decisive_text(*index):
        index = None  # only its source and capacity differ: it decides nothing new, and is not parsed
    old_index, new_index = (
        sections(data, side) for data, side in zip(index or (None, None), SIDES, strict=True)
    )
    before: dict[str, Group] = {}
    after: dict[str, Group] = {}
    for position, found in ((0, before), (1, after)):
        legacy = (old_index, new_index)[position].get("groups")
        for record in legacy if isinstance(legacy, list) else ():
            _add(found, group_of(record))
        for path, sides in groups:
            data = sides[position]
            if data is not None:
                known = documents.get(data) if documents else None
                made = group_of(known) if known is not None else None
                _add(found, made if made is not None else group_file(data, SIDES[position], path))
    changes, replicas = group_changes(before, after)
    old_unscheduled = _titled(old_index.get("unscheduled"))
    new_unscheduled = _titled(new_index.get("unscheduled"))
    old_warnings = list(dict.fromkeys(_warnings(old_index, before.values())))
    new_warnings = list(dict.fromkeys(_warnings(new_index, after.values())))
    ignored = {*VOLATILE_SECTIONS, *DECISION_SECTIONS}
    others = {key for key in old_index.keys() | new_index.keys() if key not in ignored}
    shown = {change.name for change in changes} | {change.group for change in replicas}
    records = tuple(
        RecordChange(name, fields)
        for name in sorted(before.keys() & after.keys() - shown)
        if (fields := changed_fields(before[name], after[name]))
    )
    return Decisions(
        groups=changes,
        replicas=replicas,
        newly_unscheduled=tuple(
            f"{title}: {item.get('reason', '')}"
            for title, item in sorted(new_unscheduled.items())
            if title not in old_unscheduled
        ),
        newly_scheduled=tuple(sorted(title for title in old_unscheduled if title not in new_unscheduled)),
        new_warnings=tuple(w for w in new_warnings if w not in set(old_warnings)),
        cleared_warnings=tuple(w for w in old_warnings if w not in set(new_warnings)),
        records_changed=records,
        other_sections_changed=any(old_index.get(key) != new_index.get(key) for key in others),
    )


SIDES = ("old", "new")


def group_file(data: bytes, side: str, path: str) -> Group:
    """A group file's decision; ``UnreadablePlacement`` naming it when it records none."""
    try:
        record = loading.load_one(data)
    except loading.YamlRefused as error:
        raise UnreadablePlacement(side, path, f"not valid YAML: {error}") from None
    group = (
        group_of(record) if isinstance(record, dict) and record.get("kind") == schedulegroups.KIND else None
    )
    if group is None:
        kind = record.get("kind") if isinstance(record, dict) else None
        raise UnreadablePlacement(side, path, f"not a {schedulegroups.KIND} with a name (kind {kind!r})")
    return group


def changed_fields(old: Group, new: Group) -> tuple[str, ...]:
    """Which of a group's recorded decision fields differ besides what other lines show (its clusters,
    replicas, warnings; its objects' files are the objects' changes): ``policy``, ``groupBy``, ``mode``,
    ``phase``, ``reason``, ``requests``, read alike from a group file and from an entry of a single-file
    placement.yaml, so the same decision in either layout is no change (the upgrade commit moves nothing)."""
    if old.record == new.record:
        return ()
    before, after = _decision_fields(old.record), _decision_fields(new.record)
    return tuple(key for key in before if before[key] != after[key])


def _decision_fields(record: Any) -> dict[str, Any]:
    found = _mapping(record)
    if found.get("kind") == schedulegroups.KIND:
        status = _mapping(found.get("status"))
        policy = _mapping(found.get("policy")).get("name")
        phase = status.get("phase")
    else:
        status, policy, phase = found, found.get("policy"), found.get("status")
    return {
        "policy": policy,
        "groupBy": found.get("groupBy"),
        "mode": status.get("mode"),
        "phase": phase,
        "reason": status.get("reason"),
        "requests": status.get("requests"),
    }


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def sections(data: bytes | None, side: str = "old") -> dict[str, Any]:
    """A placement.yaml as a mapping (empty when absent), either layout; ``UnreadablePlacement`` when it
    is not one: a render that cannot be read back is said, never taken for one that decides nothing."""
    if data is None:
        return {}
    try:
        found = oldlayout.load(data.decode("utf-8", errors="replace"))
    except loading.YamlRefused as error:
        raise UnreadablePlacement(side, INDEX_FILE, f"not valid YAML: {error}") from None
    if not isinstance(found, dict):
        raise UnreadablePlacement(side, INDEX_FILE, "not a mapping")
    return found


def same_apart_from_source(old: bytes | None, new: bytes | None) -> bool:
    """Whether two placement.yaml texts differ only in their ``source`` (the revision they came from) and
    the clusters' capacity figures: then no decision changed and nothing is committed."""
    if same_decisive_text(old, new):
        return True
    old_sections, new_sections = sections(old, "old"), sections(new, "new")
    for section in VOLATILE_SECTIONS:
        old_sections.pop(section, None)
        new_sections.pop(section, None)
    return old_sections == new_sections


_TOP_LEVEL_KEY = re.compile(rb"([A-Za-z_][A-Za-z0-9_.-]*):(?: |\n|$)")
"""A line that starts a top-level section of a block-style mapping (``clusters:``)."""


def same_decisive_text(old: bytes | None, new: bytes | None) -> bool:
    """Whether two placement.yaml texts are the same bytes once their ``VOLATILE_SECTIONS`` are cut out: then
    they hold the same decisions, and neither need be parsed (at 500 clusters the index's capacity and
    unscheduled objects are ~10k nodes of YAML, parsed twice on every publish otherwise). Only texts in the
    block style our emitter writes are cut (each top-level key at the start of a line, everything else
    indented or a ``-`` item); any other shape answers False, and the caller parses both."""
    if old is None or new is None:
        return old is new
    old_cut, new_cut = _decisive_text(old), _decisive_text(new)
    return old_cut is not None and old_cut == new_cut


def _decisive_text(text: bytes) -> bytes | None:
    """``text`` without its volatile top-level sections; None when it is not block-style YAML of one
    document (a line at the margin that is neither a ``key:``, a ``- `` item nor blank)."""
    kept: list[bytes] = []
    volatile = False
    for line in text.splitlines(keepends=True):
        first = line[:1]
        if first in (b" ", b"-", b"\n", b"\r"):
            if first == b"-" and not line.startswith((b"- ", b"-\n")):
                return None  # a document marker, or a plain scalar at the margin
        else:
            found = _TOP_LEVEL_KEY.match(line)
            if found is None:
                return None
            volatile = found.group(1).decode() in VOLATILE_SECTIONS
        if not volatile:
            kept.append(line)
    return b"".join(kept)


def group_of(record: Any) -> Group | None:
    """A group file's document (``schedulegroups``) or an entry of a single-file placement.yaml as a
    ``Group``; None for anything else."""
    if not isinstance(record, dict):
        return None
    if record.get("kind") == schedulegroups.KIND:
        metadata, status = record.get("metadata"), record.get("status")
        name = metadata.get("name") if isinstance(metadata, dict) else None
        status = status if isinstance(status, dict) else {}
        clusters, objects, warnings = status.get("clusters"), record.get("objectRefs"), status.get("warnings")
    else:
        name, clusters = record.get("name"), record.get("clusters")
        objects, warnings = record.get("objects"), record.get("warnings")
    if not isinstance(name, str):
        return None
    return Group(
        name,
        tuple(sorted(str(c) for c in clusters)) if isinstance(clusters, list) else (),
        _replicas(objects),
        tuple(str(w) for w in warnings) if isinstance(warnings, list) else (),
        record,
    )


def object_title(item: Mapping[str, Any]) -> str:
    namespace = item.get("namespace")
    where = f"{namespace}/{item.get('name')}" if namespace else str(item.get("name"))
    return f"{item.get('kind', '?')} {where}"


def group_changes(
    before: Mapping[str, Group], after: Mapping[str, Group]
) -> tuple[tuple[GroupChange, ...], tuple[ReplicaChange, ...]]:
    changes: list[GroupChange] = []
    replicas: list[ReplicaChange] = []
    for name in sorted(before.keys() | after.keys()):
        old_group, new_group = before.get(name), after.get(name)
        old_clusters = old_group.clusters if old_group is not None else None
        new_clusters = new_group.clusters if new_group is not None else None
        if old_clusters != new_clusters:
            changes.append(GroupChange(name, old_clusters, new_clusters))
        if old_group is None or new_group is None or not set(old_clusters or ()) & set(new_clusters or ()):
            continue  # new, gone or moved as a whole: the group line says it all
        for title in sorted(old_group.replicas.keys() | new_group.replicas.keys()):
            was, now = old_group.replicas.get(title, {}), new_group.replicas.get(title, {})
            for cluster in sorted(was.keys() | now.keys()):
                if was.get(cluster) != now.get(cluster):
                    replicas.append(ReplicaChange(name, title, cluster, was.get(cluster), now.get(cluster)))
    return tuple(changes), tuple(replicas)


def _add(found: dict[str, Group], group: Group | None) -> None:
    if group is not None:
        found[group.name] = group


def _replicas(objects: Any) -> dict[str, dict[str, int]]:
    result: dict[str, dict[str, int]] = {}
    for item in objects if isinstance(objects, list) else []:
        if isinstance(item, dict) and isinstance(item.get("replicas"), dict):
            result[object_title(item)] = {
                str(k): v for k, v in item["replicas"].items() if isinstance(v, int)
            }
    return result


def _titled(items: Any) -> dict[str, Mapping[str, Any]]:
    return (
        {object_title(item): item for item in items if isinstance(item, dict)}
        if isinstance(items, list)
        else {}
    )


def _warnings(index: Mapping[str, Any], groups: Iterable[Group]) -> list[str]:
    """The index's warnings, then each group's (prefixed with its name, as the plan lists them)."""
    listed = index.get("warnings")
    found = [str(warning) for warning in listed] if isinstance(listed, list) else []
    for group in sorted(groups, key=lambda group: group.name):
        found += [f"{group.name}: {warning}" for warning in group.warnings]
    return found
