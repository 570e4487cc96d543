"""The files outside ``clusters/``: each group's file, each policy folder's page, the index and the summary.

A full render emits them all (``files``). An incremental render (``increments``) emits only what changed
(``delta``): a group's file when its *entry key* changed, a page when its policy's groups' keys or the
table's form changed, and always the root's three small files (``placement.yaml``, ``PLACEMENT.md``,
``.gitattributes``: O(policies + clusters), so emitting them costs less than deciding whether to). Every
other file keeps the blob id the previous render's records (``Kept``) give it, unread and unhashed.

A group's entry key covers everything its file and its page row depend on: its content fingerprint (its
objects and their copies, its name and policy: ``increments``) and the decision fields the content does not
cover (mode, status, clusters, reason, requests, warnings). A group whose objects have no known source
(``content`` None) is keyed by its document itself. Rows of a page are kept by entry key and table form, so
re-emitting the page of a policy with 2,400 groups joins 2,400 kept rows and builds one.
"""

from __future__ import annotations

import hashlib
import marshal
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nova_gitops.rendering import emitting, layout, policypages, reports, schedulegroups
from nova_gitops.rendering.policypages import GroupTable
from nova_gitops.rollouts.waves import Wave
from nova_gitops.scheduling.planparts import GroupPlan
from nova_gitops.scheduling.plans import Plan

PLACEMENT_YAML = schedulegroups.INDEX_FILE
PLACEMENT_MD = "PLACEMENT.md"
GITATTRIBUTES = ".gitattributes"
ROOT_FILES = (PLACEMENT_YAML, PLACEMENT_MD, GITATTRIBUTES)


def blob_id(data: bytes) -> str:
    """The id git gives a blob holding ``data`` (``git hash-object``), computed without git."""
    digest = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
    digest.update(data)
    return digest.hexdigest()


def fingerprint(value: Any) -> bytes:
    """A blake2b digest of ``marshal`` version 2 bytes (no back-references: equal values, equal bytes)."""
    return hashlib.blake2b(marshal.dumps(value, 2), digest_size=16).digest()


@dataclass(frozen=True, slots=True)
class Kept:
    """What a render's index keeps of its files outside ``clusters/``."""

    records: Mapping[str, tuple[bytes, str, str]] = field(default_factory=dict)  # group → key, path, blob
    pages: Mapping[str, tuple[bytes, str]] = field(default_factory=dict)  # page path → key, blob id
    rows: Mapping[bytes, str] = field(default_factory=dict)  # entry key + table key → the group's page row
    others: Mapping[str, str] = field(default_factory=dict)  # root file → blob id

    def blobs(self) -> dict[str, str]:
        """Every file outside ``clusters/`` (path → blob id)."""
        blobs = dict(self.others)
        blobs.update((path, blob) for _, path, blob in self.records.values())
        blobs.update((path, blob) for path, (_, blob) in self.pages.items())
        return blobs


@dataclass(frozen=True, slots=True)
class Delta:
    """The files outside ``clusters/`` as changes to a previous render's: ``fresh`` (path → bytes of each
    file emitted), ``kept`` (the records for the next render), and ``before`` / ``after`` (path → blob id in
    the previous and this render of every path that may have changed: those are all that can)."""

    fresh: dict[str, bytes]
    kept: Kept
    before: dict[str, str]
    after: dict[str, str]


def files(plan: Plan, source: reports.SourceInfo, waves: Sequence[Wave] = ()) -> dict[str, bytes]:
    """Every file outside ``clusters/`` (``ValueError`` for a group or policy name that cannot be a path,
    or for two groups whose names give one file)."""
    table = table_of(plan)
    out: dict[str, bytes] = {}
    for policy, groups in by_policy(plan.groups).items():
        for group, path in group_files(policy, groups):
            out[path] = group_text(group)
        out[page_path(policy)] = policypages.page(policy, groups, table).encode()
    out.update(root_files(plan, source, waves))
    return out


def delta(
    plan: Plan,
    source: reports.SourceInfo,
    waves: Sequence[Wave],
    contents: Mapping[str, bytes | None],
    previous: Kept | None,
) -> Delta:
    """The files outside ``clusters/`` as changes to ``previous`` (everything when None). ``contents``:
    each group's content fingerprint (``increments``), None where a source is unknown. ``ValueError`` as
    ``files``."""
    previous = previous or Kept()
    table = table_of(plan)
    table_key = fingerprint((table.matrix, table.clusters))
    fresh: dict[str, bytes] = {}
    records: dict[str, tuple[bytes, str, str]] = {}
    pages: dict[str, tuple[bytes, str]] = {}
    rows: dict[bytes, str] = {}
    for policy, groups in by_policy(plan.groups).items():
        keys: list[tuple[str, bytes]] = []
        for group, path in group_files(policy, groups):
            key = entry_key(group, contents.get(group.name))
            old = previous.records.get(group.name)
            if old is None or old[0] != key or old[1] != path:
                data = fresh[path] = group_text(group)
                old = (key, path, blob_id(data))
            records[group.name] = old
            keys.append((group.name, key))
        path = page_path(policy)
        page_key = fingerprint((path, table_key, keys))
        kept_page = previous.pages.get(path)
        if kept_page is None or kept_page[0] != page_key:
            row = _row_memo(records, table_key, previous.rows, rows)
            data = fresh[path] = policypages.page(policy, groups, table, row).encode()
            kept_page = (page_key, blob_id(data))
        else:  # unchanged: its rows are carried to the next index
            rows.update(
                (key + table_key, text)
                for _, key in keys
                if (text := previous.rows.get(key + table_key)) is not None
            )
        pages[path] = kept_page
    roots = root_files(plan, source, waves)
    fresh.update(roots)
    kept = Kept(records, pages, rows, {path: blob_id(data) for path, data in roots.items()})
    before: dict[str, str] = {}
    after: dict[str, str] = dict(kept.others)
    for name, (_, path, blob) in previous.records.items():
        if records.get(name) != previous.records[name]:
            before[path] = blob
    for name, (key, path, blob) in records.items():
        if previous.records.get(name) != (key, path, blob):
            after[path] = blob
    for path, (_, blob) in previous.pages.items():
        if pages.get(path) != previous.pages[path]:
            before[path] = blob
    for path, (_, blob) in pages.items():
        if previous.pages.get(path) != pages[path]:
            after[path] = blob
    before.update((path, blob) for path, blob in previous.others.items() if path in ROOT_FILES)
    return Delta(fresh, kept, before, after)


def root_files(plan: Plan, source: reports.SourceInfo, waves: Sequence[Wave]) -> dict[str, bytes]:
    return {
        PLACEMENT_YAML: emitting.dump(reports.placement_document(plan, source)).encode(),
        PLACEMENT_MD: reports.placement_markdown(plan, source, waves=waves).encode(),
        GITATTRIBUTES: reports.GITATTRIBUTES.encode(),
    }


def by_policy(groups: Iterable[GroupPlan]) -> dict[str | None, list[GroupPlan]]:
    """The groups of each policy folder, by name; folders in path order."""
    found: dict[str | None, list[GroupPlan]] = {}
    for group in sorted(groups, key=lambda group: group.name):
        found.setdefault(group.policy, []).append(group)
    return dict(sorted(found.items(), key=lambda item: layout.placement_folder(item[0])))


def group_files(policy: str | None, groups: Iterable[GroupPlan]) -> list[tuple[GroupPlan, str]]:
    """Each of a policy's groups with its file's path; ``ValueError`` naming both groups when two would be
    written to one file (a shortened name's digest colliding: never expected, never a silent overwrite)."""
    owners: dict[str, str] = {}
    found: list[tuple[GroupPlan, str]] = []
    for group in groups:
        path = layout.group_file(policy, group.name)
        other = owners.setdefault(path, group.name)
        if other != group.name:
            first, second = sorted((other, group.name))
            raise ValueError(f"ScheduleGroups {first} and {second} would both be written to {path}")
        found.append((group, path))
    return found


def page_path(policy: str | None) -> str:
    return f"{layout.placement_folder(policy)}/{layout.PAGE_FILE}"


def table_of(plan: Plan) -> GroupTable:
    return policypages.group_table(reports.cluster_names(plan))


def group_text(group: GroupPlan) -> bytes:
    return emitting.dump(schedulegroups.document(group)).encode()


def entry_key(group: GroupPlan, content: bytes | None) -> bytes:
    """What a group's file and page row depend on (see the module doc)."""
    if content is None:
        return fingerprint(("document", schedulegroups.document(group)))
    return fingerprint(
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


def _row_memo(
    records: Mapping[str, tuple[bytes, str, str]],
    table_key: bytes,
    kept: Mapping[bytes, str],
    rows: dict[bytes, str],
) -> Callable[[GroupPlan, GroupTable], str]:
    """A page's row of a group, taken from ``kept`` (the previous index's) when its entry key and the
    table's form are the same (a row depends on nothing else); each row lands in ``rows``."""

    def row(group: GroupPlan, table: GroupTable) -> str:
        key = records[group.name][0] + table_key
        text = kept.get(key) or policypages.group_row(group, table)
        rows[key] = text
        return text

    return row
