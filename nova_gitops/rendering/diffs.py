"""What a change to the rendered repository does: files added, changed and deleted per cluster, groups that
moved, replicas that changed, objects that became unscheduled, new warnings.

Pure and cheap on purpose. A reviewer's question is "what will this do to placement", and the rendered
repository of a real fleet holds ~100k files; parsing all of it to answer a one-workload change would cost
seconds. So the input is the list of files that differ (callers find them by comparing bytes or git blob
ids), and only those files are parsed: the changed group files and the small index (``decisions``), and the
changed manifests.

Secret values never leave this module in clear: a Secret's ``data``/``stringData`` values are replaced by a
placeholder before any text is produced, and the change is summarised as a count of keys.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml

from nova_gitops.api import loading
from nova_gitops.rendering import decisions, layout, schedulegroups
from nova_gitops.rendering.decisions import GroupChange as GroupChange
from nova_gitops.rendering.decisions import RecordChange as RecordChange
from nova_gitops.rendering.decisions import ReplicaChange as ReplicaChange
from nova_gitops.rendering.decisions import UnreadablePlacement as UnreadablePlacement
from nova_gitops.rendering.headroomdiffs import HeadroomDiff
from nova_gitops.rollouts.plans import ChangePlan

PLACEMENT_FILE = schedulegroups.INDEX_FILE
SUMMARY_FILES = frozenset({PLACEMENT_FILE, "PLACEMENT.md"})
"""The root's summaries; each policy folder's page (``layout.is_page``) is one too."""
VOLATILE_SECTIONS = decisions.VOLATILE_SECTIONS
HIDDEN = "(hidden)"
Change = Literal["added", "changed", "deleted"]


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file that differs between two renders; ``None`` on the side where it does not exist."""

    path: str
    old: bytes | None
    new: bytes | None

    @property
    def change(self) -> Change:
        if self.old is None:
            return "added"
        return "deleted" if self.new is None else "changed"


@dataclass(frozen=True, slots=True)
class ObjectChange:
    """A rendered object file that differs. ``patch`` is the unified diff, Secret values already hidden."""

    path: str
    cluster: str
    change: Change
    title: str  # "Deployment shop/web"
    patch: str
    hidden_keys: int = 0  # Secret keys whose values changed, were added or removed


@dataclass(frozen=True, slots=True)
class ClusterCounts:
    cluster: str
    added: int = 0
    changed: int = 0
    deleted: int = 0


@dataclass(frozen=True, slots=True)
class RenderDiff:
    objects: tuple[ObjectChange, ...] = ()  # sorted by path
    clusters: tuple[ClusterCounts, ...] = ()  # sorted by cluster
    groups: tuple[GroupChange, ...] = ()  # sorted by name
    replicas: tuple[ReplicaChange, ...] = ()
    newly_unscheduled: tuple[str, ...] = ()  # "Deployment shop/web: reason"
    newly_scheduled: tuple[str, ...] = ()
    new_warnings: tuple[str, ...] = ()
    cleared_warnings: tuple[str, ...] = ()
    records_changed: tuple[RecordChange, ...] = ()  # a group's reason, requests, mode... and nothing else
    summary_changed: bool = False  # the index differs outside the decisions and its VOLATILE_SECTIONS
    other_files: tuple[FileChange, ...] = field(default=(), repr=False)  # README.md, .gitattributes, ...
    rollout: ChangePlan | None = None  # the wave plan, when the new side's source has a RolloutStrategy
    headroom: HeadroomDiff | None = None  # ``diff --headroom``: what the change does to failover headroom

    @property
    def moved(self) -> tuple[GroupChange, ...]:
        return tuple(group for group in self.groups if group.moved)

    @property
    def added(self) -> int:
        return sum(counts.added for counts in self.clusters)

    @property
    def changed(self) -> int:
        return sum(counts.changed for counts in self.clusters)

    @property
    def deleted(self) -> int:
        return sum(counts.deleted for counts in self.clusters)

    @property
    def placement_changed(self) -> bool:
        return bool(
            self.groups
            or self.replicas
            or self.newly_unscheduled
            or self.newly_scheduled
            or self.new_warnings
            or self.cleared_warnings
            or self.records_changed
        )

    @property
    def is_empty(self) -> bool:
        """Nothing changed but, perhaps, placement.yaml's VOLATILE_SECTIONS (source revision, capacity
        figures) and the summaries (PLACEMENT.md, the policies' pages): exactly when publish would make no
        commit."""
        return not (self.objects or self.placement_changed or self.other_files or self.summary_changed)


def changed_files(old: Mapping[str, bytes], new: Mapping[str, bytes]) -> list[FileChange]:
    """Every path whose bytes differ between two whole trees, sorted by path."""
    changes = [FileChange(path, data, new.get(path)) for path, data in old.items() if new.get(path) != data]
    changes += [FileChange(path, None, data) for path, data in new.items() if path not in old]
    return sorted(changes, key=lambda change: change.path)


def diff_renders(
    changes: Iterable[FileChange],
    *,
    patch_limit: int | None = None,
    documents: Mapping[bytes, Any] | None = None,
) -> RenderDiff:
    """Summarise the files that differ between two renders (only those files are read).

    ``patch_limit`` bounds how many object files get a unified diff (None: all); the others are only
    counted, which keeps a cold publish of 100k files from parsing them all for a commit message.
    ``documents`` (group file bytes → the document emitted as them) spares parsing group files the caller
    rendered itself (``decisions.compare``).
    """
    objects: list[ObjectChange] = []
    counts: dict[str, dict[Change, int]] = {}
    others: list[FileChange] = []
    index: tuple[bytes | None, bytes | None] | None = None
    groups: list[tuple[str, tuple[bytes | None, bytes | None]]] = []
    for change in sorted(changes, key=lambda item: item.path):
        cluster = cluster_of(change.path)
        if cluster is not None and not change.path.endswith("/kustomization.yaml"):
            with_patch = patch_limit is None or len(objects) < patch_limit
            objects.append(object_change(change, cluster) if with_patch else counted_change(change, cluster))
            per_cluster = counts.setdefault(cluster, {"added": 0, "changed": 0, "deleted": 0})
            per_cluster[change.change] += 1
        elif change.path == PLACEMENT_FILE:
            index = (change.old, change.new)
        elif layout.is_group_file(change.path):
            groups.append((change.path, (change.old, change.new)))
        elif cluster is None and not is_summary(change.path):
            others.append(change)
    cluster_counts = tuple(
        ClusterCounts(name, numbers["added"], numbers["changed"], numbers["deleted"])
        for name, numbers in sorted(counts.items())
    )
    decided = decisions.compare(index, groups, documents) if index or groups else decisions.Decisions()
    return RenderDiff(
        objects=tuple(objects),
        clusters=cluster_counts,
        groups=decided.groups,
        replicas=decided.replicas,
        newly_unscheduled=decided.newly_unscheduled,
        newly_scheduled=decided.newly_scheduled,
        new_warnings=decided.new_warnings,
        cleared_warnings=decided.cleared_warnings,
        records_changed=decided.records_changed,
        summary_changed=decided.other_sections_changed,
        other_files=tuple(others),
    )


def is_summary(path: str) -> bool:
    """PLACEMENT.md, placement.yaml or a policy folder's page: what a render writes besides the decisions."""
    return path in SUMMARY_FILES or layout.is_page(path)


def touched_clusters(changes: Iterable[FileChange]) -> frozenset[str]:
    """The clusters whose rendered directory differs (any file under ``clusters/<c>/``, kustomization
    included): those a rollout releases through its gate; the others advance at once."""
    return frozenset(cluster for change in changes if (cluster := cluster_of(change.path)) is not None)


def cluster_of(path: str) -> str | None:
    """``clusters/<c>/...`` → ``c``; None for files outside the cluster directories."""
    parts = path.split("/", 2)
    return parts[1] if len(parts) == 3 and parts[0] == "clusters" else None


def object_change(change: FileChange, cluster: str) -> ObjectChange:
    old_body, new_body = loading.load_or_none(change.old), loading.load_or_none(change.new)
    body = new_body if new_body is not None else old_body
    secret = is_secret(change.path, body)
    hidden = 0
    old_text, new_text = text(change.old), text(change.new)
    if secret:
        hidden = changed_secret_keys(old_body, new_body)
        old_text = redacted_text(old_body, change.old)
        new_text = redacted_text(new_body, change.new)
    patch = unified(change.path, old_text, new_text)
    return ObjectChange(change.path, cluster, change.change, title_of(body, change.path), patch, hidden)


def counted_change(change: FileChange, cluster: str) -> ObjectChange:
    """An object change without its content: nothing parsed, nothing printed."""
    return ObjectChange(change.path, cluster, change.change, change.path.split("/", 2)[2], "")


def text(data: bytes | None) -> str:
    return "" if data is None else data.decode("utf-8", errors="replace")


def is_secret(path: str, body: Any) -> bool:
    """A Secret by its kind, or — when the file does not parse — by its file name: hide when unsure."""
    if isinstance(body, dict) and "kind" in body:
        return body.get("kind") == "Secret"
    name = path.rsplit("/", 1)[-1]
    return name.startswith(("secret-", "secret."))


def title_of(body: Any, path: str) -> str:
    if not isinstance(body, dict):
        return path
    metadata = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
    namespace = metadata.get("namespace") if isinstance(metadata, dict) else None
    name = metadata.get("name") if isinstance(metadata, dict) else None
    where = f"{namespace}/{name}" if namespace else str(name)
    return f"{body.get('kind', '?')} {where}"


def secret_values(body: Any) -> dict[tuple[str, str], Any]:
    values: dict[tuple[str, str], Any] = {}
    if isinstance(body, dict):
        for section in ("data", "stringData"):
            entries = body.get(section)
            if isinstance(entries, dict):
                values.update({(section, str(key)): value for key, value in entries.items()})
    return values


def changed_secret_keys(old: Any, new: Any) -> int:
    before, after = secret_values(old), secret_values(new)
    return sum(1 for key in before.keys() | after.keys() if before.get(key) != after.get(key))


def redacted_text(body: Any, data: bytes | None) -> str:
    """The Secret with every data/stringData value replaced; nothing at all when it cannot be parsed."""
    if data is None:
        return ""
    if not isinstance(body, dict):
        return f"# {HIDDEN}: the Secret could not be parsed, its content is not shown\n"
    hidden = dict(body)
    for section in ("data", "stringData"):
        entries = body.get(section)
        if isinstance(entries, dict):
            hidden[section] = {key: HIDDEN for key in entries}
        elif section in body:
            hidden[section] = HIDDEN
    dumped: str = yaml.dump(hidden, Dumper=yaml.CSafeDumper, sort_keys=False, default_flow_style=False)
    return dumped


def unified(path: str, old_text: str, new_text: str) -> str:
    lines = difflib.unified_diff(
        old_text.splitlines(keepends=True),
        new_text.splitlines(keepends=True),
        fromfile="/dev/null" if not old_text else f"a/{path}",
        tofile="/dev/null" if not new_text else f"b/{path}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def bookkeeping_only(changes: Sequence[FileChange]) -> bool:
    """True when the only differences are the source revision and the clusters' capacity figures recorded in
    placement.yaml, and the summaries (PLACEMENT.md, the policies' pages)."""
    return all(is_summary(change.path) for change in changes) and not any(
        change.path == PLACEMENT_FILE and not decisions.same_apart_from_source(change.old, change.new)
        for change in changes
    )
