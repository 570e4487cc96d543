"""The placement a branch head records, for stickiness: what a publish and the controller plan against.

In the per-group layout (DESIGN §4) it is every group file under ``placement/``; in the single-file layout a
repository had before, its ``placement.yaml`` (read entry by entry: ``rendering.oldlayout``), so the first
publish after the upgrade keeps every group where it was.

Reading it whole costs what the fleet costs (thousands of group files to parse), yet the publish that made the
head knew it already: each publish keeps the placement it committed under the commit's id
(``placementcache``), and the next one loads it at a fraction of the cost. A commit id names an exact tree, so
an entry is never stale; a head made elsewhere is read from git once (``ls-tree`` of ``placement/``, one
``cat-file --batch``) and kept under its id. A single-file head is also looked up by its placement.yaml's blob
id, which is what an older version kept it under.
"""

from __future__ import annotations

from pathlib import Path

from nova_gitops import errors
from nova_gitops.publishing import placementcache
from nova_gitops.publishing.gitwriting import RenderedRepo
from nova_gitops.rendering import layout, schedulegroups
from nova_gitops.scheduling.plans import PreviousPlacement

INDEX = schedulegroups.INDEX_FILE


def read(repo: RenderedRepo, head: str | None, cache_dir: Path) -> PreviousPlacement:
    """The branch head's placement: from the cache when a publish kept it, else read from git (and kept).
    ``errors.RepoError`` naming the file when the head's placement cannot be read."""
    if head is None:
        return PreviousPlacement.empty()
    cached = placementcache.load(cache_dir, head)
    if cached is not None:
        return cached
    # A symbolic link is no render's (a render writes none): not read, as render --previous reads none, and
    # removed by the publish as any stray file.
    listing = repo.listing(head, paths=(INDEX, layout.PLACEMENT_DIR), links=False)
    wanted = {path: blob for path, blob in listing.items() if layout.is_group_file(path)}
    if not wanted and INDEX in listing:  # the single-file layout: every group in placement.yaml
        cached = placementcache.load(cache_dir, listing[INDEX])
        if cached is not None:
            return cached
        wanted = {INDEX: listing[INDEX]}
    blobs = repo.read_blobs(list(dict.fromkeys(wanted.values())))
    try:
        placement = schedulegroups.previous_from_files({path: blobs[blob] for path, blob in wanted.items()})
    except schedulegroups.UnreadableFile as error:
        raise errors.RepoError(
            f"the branch head {head} of {repo.url} has an unreadable {error.path} ({error.reason}); fix or "
            "remove it there, then publish again"
        ) from None
    placementcache.store(cache_dir, head, placement)
    return placement
