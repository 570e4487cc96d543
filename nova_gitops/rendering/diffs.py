"""What a change to the rendered repository does: files added, changed and deleted per cluster, groups that
moved, replicas that changed, objects that became unscheduled, new warnings.

Pure and cheap on purpose. A reviewer's question is "what will this do to placement", and the rendered
repository of a real fleet holds ~100k files and a placement.yaml of several megabytes; parsing all of it to
answer a one-workload change would cost seconds. So the input is the list of files that differ (callers find
them by comparing bytes or git blob ids), only those files are parsed, and placement.yaml is compared section
by section and group by group as text, parsing only the entries whose text differs. Sections and groups are
cut with regular expressions over the whole text, not a Python loop over its lines: a reference placement.yaml
has 125k lines, and publish compares it on every run.

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
from nova_gitops.rendering.oldlayout import list_items, top_sections
from nova_gitops.rollouts.plans import ChangePlan

PLACEMENT_FILE = "placement.yaml"
SUMMARY_FILES = frozenset({PLACEMENT_FILE, "PLACEMENT.md"})
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
class RenderDiff:
    objects: tuple[ObjectChange, ...] = ()  # sorted by path
    clusters: tuple[ClusterCounts, ...] = ()  # sorted by cluster
    groups: tuple[GroupChange, ...] = ()  # sorted by name
    replicas: tuple[ReplicaChange, ...] = ()
    newly_unscheduled: tuple[str, ...] = ()  # "Deployment shop/web: reason"
    newly_scheduled: tuple[str, ...] = ()
    new_warnings: tuple[str, ...] = ()
    summary_changed: bool = False  # placement.yaml differs outside decisions and VOLATILE_SECTIONS
    other_files: tuple[FileChange, ...] = field(default=(), repr=False)  # README.md, .gitattributes, ...
    rollout: ChangePlan | None = None  # the wave plan, when the new side's source has a RolloutStrategy

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
        return bool(self.groups or self.replicas or self.newly_unscheduled or self.newly_scheduled) or bool(
            self.new_warnings
        )

    @property
    def is_empty(self) -> bool:
        """Nothing changed but, perhaps, placement.yaml's VOLATILE_SECTIONS (source revision, capacity
        figures) and PLACEMENT.md: exactly when publish would make no commit."""
        return not (self.objects or self.placement_changed or self.other_files or self.summary_changed)


def changed_files(old: Mapping[str, bytes], new: Mapping[str, bytes]) -> list[FileChange]:
    """Every path whose bytes differ between two whole trees, sorted by path."""
    changes = [FileChange(path, data, new.get(path)) for path, data in old.items() if new.get(path) != data]
    changes += [FileChange(path, None, data) for path, data in new.items() if path not in old]
    return sorted(changes, key=lambda change: change.path)


def diff_renders(changes: Iterable[FileChange], *, patch_limit: int | None = None) -> RenderDiff:
    """Summarise the files that differ between two renders (only those files are read).

    ``patch_limit`` bounds how many object files get a unified diff (None: all); the others are only
    counted, which keeps a cold publish of 100k files from parsing them all for a commit message.
    """
    objects: list[ObjectChange] = []
    counts: dict[str, dict[Change, int]] = {}
    others: list[FileChange] = []
    placement: FileChange | None = None
    for change in sorted(changes, key=lambda item: item.path):
        cluster = cluster_of(change.path)
        if cluster is not None and not change.path.endswith("/kustomization.yaml"):
            with_patch = patch_limit is None or len(objects) < patch_limit
            objects.append(object_change(change, cluster) if with_patch else counted_change(change, cluster))
            per_cluster = counts.setdefault(cluster, {"added": 0, "changed": 0, "deleted": 0})
            per_cluster[change.change] += 1
        elif change.path == PLACEMENT_FILE:
            placement = change
        elif cluster is None and change.path not in SUMMARY_FILES:
            others.append(change)
    cluster_counts = tuple(
        ClusterCounts(name, numbers["added"], numbers["changed"], numbers["deleted"])
        for name, numbers in sorted(counts.items())
    )
    decisions = compare_placements(placement.old, placement.new) if placement else Decisions()
    return RenderDiff(
        objects=tuple(objects),
        clusters=cluster_counts,
        groups=decisions.groups,
        replicas=decisions.replicas,
        newly_unscheduled=decisions.newly_unscheduled,
        newly_scheduled=decisions.newly_scheduled,
        new_warnings=decisions.new_warnings,
        summary_changed=decisions.other_sections_changed,
        other_files=tuple(others),
    )


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
    placement.yaml / PLACEMENT.md."""
    return all(change.path in SUMMARY_FILES for change in changes) and not any(
        change.path == PLACEMENT_FILE and not same_apart_from_source(change.old, change.new)
        for change in changes
    )


# placement.yaml, compared as text and parsed only where it differs


@dataclass(frozen=True, slots=True)
class Decisions:
    groups: tuple[GroupChange, ...] = ()
    replicas: tuple[ReplicaChange, ...] = ()
    newly_unscheduled: tuple[str, ...] = ()
    newly_scheduled: tuple[str, ...] = ()
    new_warnings: tuple[str, ...] = ()
    other_sections_changed: bool = False


DECISION_SECTIONS = ("groups", "unscheduled", "warnings")


def parse_items(chunks: Iterable[str]) -> list[Any]:
    parsed: list[Any] = []
    for chunk in chunks:
        try:
            loaded = loading.load_one(chunk)
        except loading.YamlRefused:
            continue
        if isinstance(loaded, list):
            parsed.extend(loaded)
    return parsed


def differing_items(
    old: list[str] | None, new: list[str] | None, section: str, whole: tuple[Any, Any]
) -> tuple[list[Any], list[Any]]:
    """Parsed items present only in the old / only in the new list (whole documents as a fallback)."""
    if old is None or new is None:
        before = whole[0].get(section) if isinstance(whole[0], dict) else None
        after = whole[1].get(section) if isinstance(whole[1], dict) else None
        before_items = before if isinstance(before, list) else []
        after_items = after if isinstance(after, list) else []
        return (
            [item for item in before_items if item not in after_items],
            [item for item in after_items if item not in before_items],
        )
    old_set, new_set = set(old), set(new)
    return parse_items(c for c in old if c not in new_set), parse_items(c for c in new if c not in old_set)


def compare_placements(old: bytes | None, new: bytes | None) -> Decisions:
    old_text, new_text = text(old), text(new)
    old_sections, new_sections = top_sections(old_text), top_sections(new_text)
    old_items = {name: list_items(old_sections.get(name, "")) for name in DECISION_SECTIONS}
    new_items = {name: list_items(new_sections.get(name, "")) for name in DECISION_SECTIONS}
    whole: tuple[Any, Any] = (None, None)
    if any(items is None for items in (*old_items.values(), *new_items.values())):
        whole = (loading.load_or_none(old), loading.load_or_none(new))
    gone_groups, new_groups = differing_items(old_items["groups"], new_items["groups"], "groups", whole)
    gone_unscheduled, new_unscheduled = differing_items(
        old_items["unscheduled"], new_items["unscheduled"], "unscheduled", whole
    )
    _, warnings = differing_items(old_items["warnings"], new_items["warnings"], "warnings", whole)
    groups, replicas = group_changes(gone_groups, new_groups)
    before_keys = {object_title(item): item for item in gone_unscheduled if isinstance(item, dict)}
    after_keys = {object_title(item): item for item in new_unscheduled if isinstance(item, dict)}
    ignored = {*VOLATILE_SECTIONS, *DECISION_SECTIONS}  # as publish: capacity figures alone are no change
    others = {key for key in old_sections.keys() | new_sections.keys() if key not in ignored}
    return Decisions(
        groups=groups,
        replicas=replicas,
        newly_unscheduled=tuple(
            f"{title}: {item.get('reason', '')}"
            for title, item in sorted(after_keys.items())
            if title not in before_keys
        ),
        newly_scheduled=tuple(sorted(title for title in before_keys if title not in after_keys)),
        new_warnings=tuple(str(warning) for warning in warnings),
        other_sections_changed=any(old_sections.get(key) != new_sections.get(key) for key in others),
    )


def object_title(item: dict[str, Any]) -> str:
    namespace = item.get("namespace")
    where = f"{namespace}/{item.get('name')}" if namespace else str(item.get("name"))
    return f"{item.get('kind', '?')} {where}"


def clusters_of(group: dict[str, Any]) -> tuple[str, ...]:
    clusters = group.get("clusters")
    return tuple(sorted(str(name) for name in clusters)) if isinstance(clusters, list) else ()


def replicas_of(group: dict[str, Any]) -> dict[str, dict[str, int]]:
    result: dict[str, dict[str, int]] = {}
    objects = group.get("objects")
    for item in objects if isinstance(objects, list) else []:
        if isinstance(item, dict) and isinstance(item.get("replicas"), dict):
            result[object_title(item)] = {
                str(k): v for k, v in item["replicas"].items() if isinstance(v, int)
            }
    return result


def group_changes(
    gone: list[Any], added: list[Any]
) -> tuple[tuple[GroupChange, ...], tuple[ReplicaChange, ...]]:
    before = {str(g.get("name")): g for g in gone if isinstance(g, dict)}
    after = {str(g.get("name")): g for g in added if isinstance(g, dict)}
    changes: list[GroupChange] = []
    replicas: list[ReplicaChange] = []
    for name in sorted(before.keys() | after.keys()):
        old_group, new_group = before.get(name), after.get(name)
        old_clusters = clusters_of(old_group) if old_group is not None else None
        new_clusters = clusters_of(new_group) if new_group is not None else None
        if old_clusters != new_clusters:
            changes.append(GroupChange(name, old_clusters, new_clusters))
        if old_group is None or new_group is None or not set(old_clusters or ()) & set(new_clusters or ()):
            continue  # new, gone or moved as a whole: the group line says it all
        old_replicas, new_replicas = replicas_of(old_group), replicas_of(new_group)
        for title in sorted(old_replicas.keys() | new_replicas.keys()):
            was, now = old_replicas.get(title, {}), new_replicas.get(title, {})
            for cluster in sorted(was.keys() | now.keys()):
                if was.get(cluster) != now.get(cluster):
                    replicas.append(ReplicaChange(name, title, cluster, was.get(cluster), now.get(cluster)))
    return tuple(changes), tuple(replicas)


VOLATILE_SECTIONS = ("source", "clusters")
"""placement.yaml sections that describe rather than decide: the source revision, and each cluster's
capacity (which agents report as it moves, so it alone must not make a commit every few minutes)."""


def same_apart_from_source(old: bytes | None, new: bytes | None) -> bool:
    """Whether two placement.yaml texts differ only in their ``source`` (the revision they came from) and the
    clusters' capacity figures: then no decision changed and nothing is committed."""
    old_sections, new_sections = top_sections(text(old)), top_sections(text(new))
    for section in VOLATILE_SECTIONS:
        old_sections.pop(section, None)
        new_sections.pop(section, None)
    return old_sections == new_sections
