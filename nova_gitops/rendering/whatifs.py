"""The files a what-if changes in today's render that ``diff`` reads, found without rendering the whole
fleet twice.

A what-if (``scheduling.whatif``) changes few groups; its diff (``diffs.diff_renders``) needs only the
files that differ, on both sides. A cluster directory's files depend on that cluster's entries alone (its
objects' copies, the groups that placed them, the Namespaces that follow them: paths, clashes and the
kustomization are decided per cluster), so a cluster whose entries are the same in both plans renders the
same bytes and is not rendered; a cluster that changed is rendered whole on both sides, with
``renders``'s own functions. Outside ``clusters/``, the files of the groups whose plan changed and the
index (placement.yaml) are rendered on both sides; the summaries a diff does not read (PLACEMENT.md, the
policies' pages: ``diffs.is_summary``) are not. The diff of these files is the diff of the two whole
renders (``tests/unit/scheduling/test_whatif.py`` holds it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nova_gitops.api.problems import SourceLocation
from nova_gitops.rendering import diffs, manifests, placementfiles, renders, schedulegroups
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.rollouts.waves import Wave
from nova_gitops.scheduling.planparts import GroupPlan, ObjectPlan
from nova_gitops.scheduling.plans import FollowedNamespace, Plan


@dataclass(frozen=True, slots=True)
class Changed:
    """The files that differ, and the documents the group files among them were emitted from (so that the
    diff need not parse them back: ``diffs.diff_renders``'s ``documents``)."""

    files: list[diffs.FileChange]
    documents: dict[bytes, Any]

    def diff(self, *, patch_limit: int | None = None) -> diffs.RenderDiff:
        return diffs.diff_renders(self.files, patch_limit=patch_limit, documents=self.documents)


def changed_files(
    before: Plan,
    after: Plan,
    source: SourceInfo,
    *,
    policy_locations: Mapping[str, SourceLocation] | None = None,
    waves: tuple[Sequence[Wave], Sequence[Wave]] = ((), ()),
) -> Changed:
    """The files whose bytes differ between the renders of ``before`` and ``after`` (``waves``: each
    side's RolloutStrategy waves) and that a diff reads, sorted by path; ``errors.InputError`` as
    ``renders.render`` raises it."""
    touched = touched_clusters(before, after)
    documents: dict[bytes, Any] = {}
    old = {
        **cluster_side(before, touched, policy_locations),
        **outside(before, after, source, waves[0], documents),
    }
    new = {
        **cluster_side(after, touched, policy_locations),
        **outside(after, before, source, waves[1], documents),
    }
    return Changed(diffs.changed_files(old, new), documents)


def touched_clusters(before: Plan, after: Plan) -> frozenset[str]:
    """The clusters whose entries differ: a copy added, removed or changed (replicas, overrides, a Job's
    share of its completions), a Namespace following there or no more, a cluster joining or leaving."""
    touched = {usage.cluster for usage in before.clusters} ^ {usage.cluster for usage in after.clusters}
    old = {group.name: group for group in before.groups}
    new = {group.name: group for group in after.groups}
    for name in old.keys() | new.keys():
        was, now = old.get(name), new.get(name)
        if was is now or was == now:
            continue
        if was is None or now is None or manifests.placed_by(was) != manifests.placed_by(now):
            touched |= _clusters_of(was) | _clusters_of(now)
            continue
        touched |= _touched_by(was, now)
    old_followed, new_followed = _followed(before), _followed(after)
    touched |= {
        cluster
        for cluster in old_followed.keys() | new_followed.keys()
        if old_followed.get(cluster) != new_followed.get(cluster)
    }
    return frozenset(touched)


def _clusters_of(group: GroupPlan | None) -> set[str]:
    return set() if group is None else {copy.cluster for item in group.objects for copy in item.copies}


def _touched_by(was: GroupPlan, now: GroupPlan) -> set[str]:
    """The clusters where a group's copies differ, object by object."""
    touched: set[str] = set()
    old = {item.manifest.key: item for item in was.objects}
    new = {item.manifest.key: item for item in now.objects}
    for key in old.keys() | new.keys():
        before, after = old.get(key), new.get(key)
        if before is None or after is None or before.manifest != after.manifest:
            touched |= _copy_clusters(before) | _copy_clusters(after)
            continue
        if before.copies == after.copies:
            continue
        copies = _by_cluster(before), _by_cluster(after)
        shares = manifests.completions_by_cluster(before), manifests.completions_by_cluster(after)
        for cluster in copies[0].keys() | copies[1].keys():
            same_copy = copies[0].get(cluster) == copies[1].get(cluster)
            if not same_copy or shares[0].get(cluster) != shares[1].get(cluster):
                touched.add(cluster)
    return touched


def _copy_clusters(item: ObjectPlan | None) -> set[str]:
    return set() if item is None else {copy.cluster for copy in item.copies}


def _by_cluster(item: ObjectPlan) -> dict[str, object]:
    return {copy.cluster: copy for copy in item.copies}


def _followed(plan: Plan) -> dict[str, list[FollowedNamespace]]:
    """Each cluster's followed Namespaces, compared by value: a Namespace the source lacks is made anew by
    each plan, equal but not the same object."""
    found: dict[str, list[FollowedNamespace]] = {}
    for item in plan.followed_namespaces:
        found.setdefault(item.cluster, []).append(item)
    return found


def cluster_side(
    plan: Plan, touched: frozenset[str], policy_locations: Mapping[str, SourceLocation] | None
) -> dict[str, bytes]:
    """The files of ``plan``'s render in the ``touched`` clusters' directories, each rendered whole."""
    problems = renders.Problems(policy_locations or {})
    keep = touched.__contains__
    groups = [group for group in plan.groups if not touched.isdisjoint(group.clusters)]
    entries: dict[str, list[renders.Entry]] = {u.cluster: [] for u in plan.clusters if u.cluster in touched}
    for cluster, found in renders.object_entries(groups, plan.settings, problems, keep).items():
        entries.setdefault(cluster, []).extend(found)
    for cluster, found in renders.namespace_entries(plan, problems, keep).items():
        entries.setdefault(cluster, []).extend(found)
    files: dict[str, bytes] = {}
    for cluster in sorted(entries):
        rendered = renders.cluster_files(cluster, entries[cluster], problems)
        files.update((path, data) for path, (data, _) in rendered.items())
    problems.raise_if_any()
    return files


def outside(
    plan: Plan, other: Plan, source: SourceInfo, waves: Sequence[Wave], documents: dict[bytes, Any]
) -> dict[str, bytes]:
    """The files outside ``clusters/`` that may differ from ``other``'s and that a diff reads: the files of
    the groups whose plan differs (their documents into ``documents``, by their bytes), and the root's
    files but the summary (``placementfiles``)."""
    theirs = {group.name: group for group in other.groups}
    files: dict[str, bytes] = {}
    for policy, groups in placementfiles.by_policy(plan.groups).items():
        for group, path in placementfiles.group_files(policy, groups):
            if theirs.get(group.name) != group:
                data = files[path] = placementfiles.group_text(group)
                documents[data] = schedulegroups.document(group)
    roots = placementfiles.root_files(plan, source, waves)
    files.update((path, data) for path, data in roots.items() if not diffs.is_summary(path))
    files[diffs.PLACEMENT_FILE] = roots[diffs.PLACEMENT_FILE]
    return files
