"""``publish`` and the controller commit a render the one way (``workflows.committing``).

Behaviour covered: the same source and the same agents' reports, published by ``nova-gitops publish`` to one
rendered repository and reconciled by the controller onto another, give commits with the same tree and the
same message — the first render of an empty branch, then a workload edited and one added (incremental
renders onto each one's head), then a hand edit of each branch (a head nobody here rendered, compared whole
and repaired); and so again with PLACEMENT.md's failover headroom asked of both (``publish --headroom``,
the controller's ``--headroom-in-placement``). A change of how a render is committed made on one road only
fails here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from nova_gitops.scheduling.plans import PlanSettings
from nova_gitops.workflows import publishing, renderers
from nova_gitops.workflows.publishing import Outcome
from tests.controller.helpers import Fleet, cluster_report, deployment, git, policy


def tree_and_message(remote: Path) -> tuple[str, str]:
    """The branch head's tree id and commit message: what a commit says apart from who made it, when."""
    return git(remote, "rev-parse", "main^{tree}"), git(remote, "log", "-1", "--format=%B", "main")


def hand_edit(remote: Path, work: Path) -> None:
    """Someone commits to the rendered branch by hand: a stray file, and one rendered file removed."""
    if not work.exists():
        git(remote.parent, "clone", "--quiet", str(remote), str(work))
    git(work, "pull", "--quiet", "origin", "main")
    (work / "stray.txt").write_text("left by hand\n")
    placed = sorted(path for path in work.glob("clusters/*/*/*.yaml") if path.name != "kustomization.yaml")
    placed[0].unlink()
    git(work, "add", "-A")
    git(work, "-c", "user.name=hand", "-c", "user.email=hand@example.com", "commit", "--quiet", "-m", "hand")
    git(work, "push", "--quiet", "origin", "HEAD:main")


@pytest.fixture
def fleet(tmp_path: Path) -> Fleet:
    fleet = Fleet(tmp_path)
    selectors = {"labelSelectors": [{"matchLabels": {"app": "web"}}]}
    fleet.write_source("policy.yaml", policy("web-policy", resourceSelectors=selectors))
    fleet.write_source("web.yaml", deployment("web"))
    fleet.write_source("api.yaml", deployment("api", cpu="1"))
    fleet.report(cluster_report("wlc-1", cpu="8"), cluster_report("wlc-2", cpu="8"))
    git(fleet.status_work, "pull", "--quiet", "origin", "nova-status")
    return fleet


@pytest.mark.parametrize("headroom", [False, True], ids=["plain", "headroom-in-placement"])
def test_publish_and_a_reconcile_make_the_same_commit(fleet: Fleet, tmp_path: Path, headroom: bool) -> None:
    published = tmp_path / "published.git"
    git(tmp_path, "init", "--quiet", "--bare", "--initial-branch=main", str(published))
    render = renderers.default_render(
        PlanSettings(headroom=headroom), fleet.status_work / "status", cache_dir=tmp_path / "publish-cache"
    )
    controller = fleet.controller(headroom_in_placement=headroom)

    def both() -> None:
        result = publishing.publish(
            str(fleet.source), f"file://{published}", render=render, cache_dir=tmp_path / "publish-cache"
        )
        outcome = controller.reconcile_once()
        assert result.outcome is Outcome.PUBLISHED
        assert outcome.outcome is Outcome.PUBLISHED
        assert result.message == outcome.message
        assert tree_and_message(published) == tree_and_message(fleet.remote)
        assert ("## Failover headroom" in fleet.show("PLACEMENT.md")) is headroom

    steps: list[Callable[[], None]] = [
        lambda: None,
        lambda: fleet.write_source("web.yaml", deployment("web", cpu="2")),
        lambda: fleet.write_source("shop.yaml", deployment("shop", namespace="shop")),
        lambda: (hand_edit(published, tmp_path / "work-p"), hand_edit(fleet.remote, tmp_path / "work-c")),
    ]
    for step in steps:
        step()
        both()
