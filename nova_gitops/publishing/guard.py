"""The mass-delete guard: refuse a render that would remove most of a cluster's objects.

config-sync had such a guard and still wiped clusters, because it counted what it had *read* and a partial
read looked like a deliberate deletion. Here the guard runs on the complete render (the whole new tree, built
in memory after every source file was read and validated) against the complete tree on the branch head, and
it counts files per cluster directory, which is exactly what each agent will prune.

Pure functions over path sets, so the rule is testable as a table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from nova_gitops import errors

DEFAULT_MAX_DELETE_PERCENT = 30


@dataclass(frozen=True, slots=True)
class MassDeletion:
    cluster: str
    before: int
    deleted: int

    @property
    def percent(self) -> float:
        return 100.0 * self.deleted / self.before

    def __str__(self) -> str:
        what = "all" if self.deleted == self.before else f"{self.percent:.0f}%"
        return f"{self.cluster}: {self.deleted} of {self.before} objects ({what})"


def object_cluster(path: str) -> str | None:
    """The cluster of a rendered object file; None for kustomization.yaml and files outside clusters/."""
    parts = path.split("/")
    if len(parts) < 4 or parts[0] != "clusters" or parts[-1] == "kustomization.yaml":
        return None
    return parts[1]


def mass_deletions(
    old_paths: Iterable[str], new_paths: Iterable[str], max_percent: int
) -> list[MassDeletion]:
    """Clusters that would lose more than ``max_percent`` of their objects, or all of them."""
    new = set(new_paths)
    before: Counter[str] = Counter()
    deleted: Counter[str] = Counter()
    for path in old_paths:
        cluster = object_cluster(path)
        if cluster is None:
            continue
        before[cluster] += 1
        if path not in new:
            deleted[cluster] += 1
    return [
        MassDeletion(cluster, before[cluster], count)
        for cluster, count in sorted(deleted.items())
        if count * 100 > max_percent * before[cluster] or count == before[cluster]
    ]


def check(
    old_paths: Iterable[str], new_paths: Iterable[str], *, max_percent: int, allow: bool
) -> list[MassDeletion]:
    """Raise ``errors.SafetyError`` on a mass deletion unless ``allow``; return what was allowed."""
    found = mass_deletions(old_paths, new_paths, max_percent)
    if found and not allow:
        clusters = "; ".join(str(item) for item in found)
        raise errors.SafetyError(
            f"refusing to publish: the render deletes more than {max_percent}% of a cluster's objects "
            f"({clusters}). If this is intended, run again with --allow-mass-delete "
            f"(or raise --max-delete-percent); nothing was committed."
        )
    return found
