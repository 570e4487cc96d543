"""A group's history from the rendered repository's log, for the web view's group page (issue 27).

The controller's rendered repository is a local bare cache (``publishing.gitwriting.RenderedRepo``) holding
every commit it fetched or made; a group's file (``placement/<policy>/<group>.yaml``) changes exactly when its
decision does, so ``git log`` of that file at the head the last reconcile saw is the group's history, each
commit saying in its message's lines what moved and why. Read when someone opens the group's page (once per
version of the view, like the page), at most ``MAX_COMMITS`` commits, never written.
"""

from __future__ import annotations

from collections.abc import Sequence

from nova_gitops import errors
from nova_gitops.controller import looping, uistate
from nova_gitops.controller.committing import GitPublisher
from nova_gitops.publishing.gitwriting import RenderedRepo
from nova_gitops.rendering import layout
from nova_gitops.rendering.fleetviews import shown

MAX_COMMITS = 20
RECORD, FIELD = "\x1e", "\x1f"

History = tuple[tuple[str, str, str], ...]


def group_history(repo: RenderedRepo, head: str, policy: str | None, group: str) -> History:
    """(when, commit, what) of the last commits that changed ``group``'s file at ``head``, newest first:
    the message's lines that name the group, or its first line; () when there is nothing to read."""
    try:
        path = layout.group_file(policy, group)
    except (ValueError, errors.NovaError):
        return ()
    if not head:
        return ()
    log = f"--format=%H{FIELD}%cI{FIELD}%B{RECORD}"
    try:
        result = repo.git.run("log", log, f"-n{MAX_COMMITS}", head, "--", path, check=False)
    except errors.NovaError:
        return ()
    if result.status != 0:
        return ()
    found = []
    for record in result.stdout.decode(errors="replace").split(RECORD):
        parts = record.strip("\n").split(FIELD)
        if len(parts) != 3:
            continue
        commit, when, body = parts
        lines = body.splitlines()
        naming = [line for line in lines[1:] if group in line.replace(":", " ").split()]
        for line in naming or lines[:1]:
            found.append((shown(when.replace("T", " ")[:19]), shown(commit[:12]), shown(line)))
    return tuple(found)


def attach(view: uistate.FleetView, controller: looping.Controller) -> None:
    """Let ``view`` read groups' histories from ``controller``'s rendered repository, when it has one."""
    publisher = controller.publisher
    if isinstance(publisher, GitPublisher):
        repo = publisher.repo

        def read(head: str, policy: str | None, group: str) -> Sequence[tuple[str, str, str]]:
            return group_history(repo, head, policy, group)

        view.history = read
