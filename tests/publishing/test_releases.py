"""Release refs (``nova/clusters/<cluster>``) on a real bare remote over file://.

Covers: the agent's ``--follow-release`` branch is the one moved here; reading ``main`` and every release
ref in one fetch, with and without release refs and before anything was published; an atomic move of
several refs (created, advanced, deleted); two controllers racing — one wins, the other's whole batch is
refused as LOST (checked by the client's lease, and by the remote's own ref lock); creating a ref that
already exists elsewhere is LOST, one already at the target counts as moved; a rollback moves a ref
backwards; releasing a commit that is not on main, a malformed name or an abbreviated id is refused; a
push refused by a hook is an error naming branch protection; which clusters a change touches (changed,
unchanged, added, removed, absent from both, never released); the workloads rendered for each cluster,
read as the agent reads its directory (for the gate, docs/rollouts.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from nova_agent import settings as agent_settings
from nova_gitops import errors
from nova_gitops.publishing import gitwriting
from nova_gitops.publishing import releases as releases_module
from nova_gitops.publishing.releases import MoveOutcome, RefMove, Releases, ReleaseState, release_ref
from tests.publishing.conftest import SourceRepo, git


class Rendered(SourceRepo):
    """A rendered remote and a work tree whose commits go to its ``main``."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, "rendered")

    def commit(
        self, files: Mapping[str, str | None], message: str = "render", *, allow_empty: bool = True
    ) -> str:
        return super().commit(files, message, allow_empty=allow_empty)

    def refs(self) -> dict[str, str]:
        listed = git("--git-dir", str(self.bare), "for-each-ref", "--format=%(refname) %(objectname)")
        return dict(line.split(" ") for line in listed.splitlines())

    def set_ref(self, cluster: str, commit: str) -> None:
        git("--git-dir", str(self.bare), "update-ref", release_ref(cluster), commit)


def releases_of(rendered: Rendered, cache: Path) -> Releases:
    return Releases(gitwriting.RenderedRepo(cache / "repo", rendered.url))


@pytest.fixture
def rendered(tmp_path: Path) -> Rendered:
    return Rendered(tmp_path)


def test_the_agent_follows_the_branch_the_controller_moves() -> None:
    assert releases_module.RELEASE_BRANCH_PREFIX == agent_settings.RELEASE_BRANCH_PREFIX


def test_state_before_anything_is_published(rendered: Rendered, tmp_path: Path) -> None:
    assert releases_of(rendered, tmp_path / "c").read_state() == ReleaseState(None, {})


def test_state_with_and_without_release_refs(rendered: Rendered, tmp_path: Path) -> None:
    first = rendered.commit({"clusters/a/x.yaml": "1"})
    releases = releases_of(rendered, tmp_path / "c")
    assert releases.read_state() == ReleaseState(first, {})
    second = rendered.commit({"clusters/a/x.yaml": "2"})
    rendered.set_ref("a", first)
    rendered.set_ref("b", second)
    git("--git-dir", str(rendered.bare), "update-ref", "refs/heads/nova/clusters/Not_A_Cluster", first)
    assert releases.read_state() == ReleaseState(second, {"a": first, "b": second})
    git("--git-dir", str(rendered.bare), "update-ref", "-d", release_ref("b"))
    assert releases.read_state() == ReleaseState(second, {"a": first}), "a deleted ref is pruned"


def test_an_atomic_move_creates_advances_and_deletes(rendered: Rendered, tmp_path: Path) -> None:
    first = rendered.commit({"clusters/a/x.yaml": "1"})
    second = rendered.commit({"clusters/a/x.yaml": "2"})
    rendered.set_ref("gone", first)
    rendered.set_ref("a", first)
    releases = releases_of(rendered, tmp_path / "c")
    state = releases.read_state()
    moves = {
        "a": RefMove(state.released["a"], second),
        "b": RefMove(None, second),
        "gone": RefMove(first, None),
        "same": RefMove(first, first),  # already there: left out
    }
    assert releases.move(moves) is MoveOutcome.MOVED
    assert releases.read_state() == ReleaseState(second, {"a": second, "b": second})
    assert releases.move({"a": RefMove(second, second)}) is MoveOutcome.NOTHING


def test_racing_controllers_one_wins_and_nothing_of_the_other_batch_lands(
    rendered: Rendered, tmp_path: Path
) -> None:
    first = rendered.commit({"clusters/a/x.yaml": "1"})
    second = rendered.commit({"clusters/a/x.yaml": "2"})
    third = rendered.commit({"clusters/a/x.yaml": "3"})
    for cluster in ("a", "b", "c"):
        rendered.set_ref(cluster, first)
    one, other = releases_of(rendered, tmp_path / "one"), releases_of(rendered, tmp_path / "other")
    assert one.read_state() == other.read_state()
    assert one.move({"a": RefMove(first, second), "b": RefMove(first, second)}) is MoveOutcome.MOVED
    late = {"b": RefMove(first, third), "c": RefMove(first, third)}
    assert other.move(late) is MoveOutcome.LOST
    assert other.read_state().released == {"a": second, "b": second, "c": first}, "c did not move"
    assert other.move({"b": RefMove(second, third), "c": RefMove(first, third)}) is MoveOutcome.MOVED


def test_a_race_lost_at_the_remote_ref_lock_is_lost_for_the_whole_batch(
    rendered: Rendered, tmp_path: Path
) -> None:
    """The client's lease check passed, but a concurrent push holds one ref while ours arrives."""
    first = rendered.commit({"clusters/a/x.yaml": "1"})
    second = rendered.commit({"clusters/a/x.yaml": "2"})
    rendered.set_ref("a", first)
    rendered.set_ref("b", first)
    releases = releases_of(rendered, tmp_path / "c")
    releases.read_state()
    lock = rendered.bare / "refs" / "heads" / "nova" / "clusters" / "b.lock"
    lock.write_text(f"{second}\n")  # as a concurrent receive-pack does
    assert releases.move({"a": RefMove(first, second), "b": RefMove(first, second)}) is MoveOutcome.LOST
    lock.unlink()
    assert releases.read_state().released == {"a": first, "b": first}


def test_creating_a_ref_that_someone_else_created_is_lost(rendered: Rendered, tmp_path: Path) -> None:
    first = rendered.commit({"clusters/a/x.yaml": "1"})
    second = rendered.commit({"clusters/a/x.yaml": "2"})
    releases = releases_of(rendered, tmp_path / "c")
    releases.read_state()
    rendered.set_ref("a", first)
    assert releases.move({"a": RefMove(None, second), "b": RefMove(None, second)}) is MoveOutcome.LOST
    assert release_ref("b") not in rendered.refs()


def test_a_ref_someone_else_moved_to_the_same_target_counts_as_moved(
    rendered: Rendered, tmp_path: Path
) -> None:
    """git skips a ref already at its target without checking the lease: the state decided is there, and
    the ref was updated once (by the other controller), so it is not a lost race."""
    first = rendered.commit({"clusters/a/x.yaml": "1"})
    second = rendered.commit({"clusters/a/x.yaml": "2"})
    rendered.set_ref("a", first)
    releases = releases_of(rendered, tmp_path / "c")
    releases.read_state()
    rendered.set_ref("a", second)
    assert releases.move({"a": RefMove(first, second), "b": RefMove(None, second)}) is MoveOutcome.MOVED
    assert releases.read_state().released == {"a": second, "b": second}


def test_a_rollback_moves_a_ref_backwards(rendered: Rendered, tmp_path: Path) -> None:
    first = rendered.commit({"clusters/a/x.yaml": "1"})
    second = rendered.commit({"clusters/a/x.yaml": "2"})
    rendered.set_ref("a", second)
    releases = releases_of(rendered, tmp_path / "c")
    releases.read_state()
    assert releases.move({"a": RefMove(second, first)}) is MoveOutcome.MOVED
    assert rendered.refs()[release_ref("a")] == first
    assert rendered.refs()["refs/heads/main"] == second, "main is never touched"


def test_only_commits_of_main_are_released(rendered: Rendered, tmp_path: Path) -> None:
    first = rendered.commit({"clusters/a/x.yaml": "1"})
    git("checkout", "--quiet", "-b", "side", cwd=rendered.work)
    (rendered.work / "clusters/a/x.yaml").write_text("side")
    git("commit", "--quiet", "-am", "side", cwd=rendered.work)
    side = git("rev-parse", "HEAD", cwd=rendered.work)
    git("push", "--quiet", rendered.url, "HEAD:side", cwd=rendered.work)
    releases = releases_of(rendered, tmp_path / "c")
    releases.read_state()
    releases.repo.git.run("fetch", "--quiet", rendered.url, "side")
    with pytest.raises(errors.RepoError, match="not a commit of main"):
        releases.move({"a": RefMove(None, side)})
    with pytest.raises(ValueError, match="not a cluster name"):
        releases.move({"a/b": RefMove(None, first)})
    with pytest.raises(ValueError, match="not a full commit id"):
        releases.move({"a": RefMove(None, first[:7])})
    assert release_ref("a") not in rendered.refs()


def test_a_move_refused_by_a_hook_is_an_error(rendered: Rendered, tmp_path: Path) -> None:
    first = rendered.commit({"clusters/a/x.yaml": "1"})
    hook = rendered.bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'protected branch' >&2\nexit 1\n")
    hook.chmod(0o755)
    releases = releases_of(rendered, tmp_path / "c")
    releases.read_state()
    with pytest.raises(errors.RepoError, match="branch protection"):
        releases.move({"a": RefMove(None, first), "b": RefMove(None, first)})


def test_changed_clusters_compares_cluster_trees(rendered: Rendered, tmp_path: Path) -> None:
    released = rendered.commit(
        {"clusters/changed/x.yaml": "1", "clusters/same/x.yaml": "1", "clusters/removed/x.yaml": "1"}
    )
    new = rendered.commit(
        {
            "clusters/changed/x.yaml": "2",
            "clusters/added/x.yaml": "1",
            "clusters/removed/x.yaml": None,
            "placement.yaml": "elsewhere: not a cluster directory",
        }
    )
    releases = releases_of(rendered, tmp_path / "c")
    releases.read_state()
    names = ("changed", "same", "added", "removed", "absent")
    assert releases.changed_clusters(released, new, names) == {"changed", "added", "removed"}
    assert releases.changed_clusters(new, new, names) == frozenset()
    assert releases.changed_clusters(None, new, names) == {"changed", "same", "added"}
    assert set(releases.cluster_trees(new)) == {"changed", "same", "added"}


def manifest(api_version: str, kind: str, name: str, namespace: str | None = None) -> str:
    where = f", namespace: {namespace}" if namespace else ""
    return f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: {name}{where}}}\n"


RENDERED_FILES = {
    "clusters/wlc-1/kustomization.yaml": "resources: [shop/web.yaml]\n",
    "clusters/wlc-1/shop/web.yaml": manifest("apps/v1", "Deployment", "web", "shop"),
    "clusters/wlc-1/shop/jobs.yml": (
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate, namespace: shop}\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\n---\n"
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\n"  # no namespace: default
    ),
    "clusters/wlc-1/shop/widget.json": '{"apiVersion": "example.com/v1", "kind": "Deployment",'
    ' "metadata": {"name": "web", "namespace": "shop"}}',
    "clusters/wlc-1/_cluster/namespace-shop.yaml": manifest("v1", "Namespace", "shop"),
    "clusters/wlc-1/notes.txt": manifest("apps/v1", "Deployment", "not-read", "shop"),
    "clusters/wlc-2/shop/api.yaml": manifest("apps/v1", "StatefulSet", "api", "shop"),
}


def test_the_rendered_workloads_are_read_as_the_agent_reads_the_directory(
    rendered: Rendered, tmp_path: Path
) -> None:
    """Every manifest file below ``clusters/<cluster>/`` (not kustomization.yaml, not other suffixes, not
    symlinks), the kinds an agent reports as workloads by API group, ``default`` for no namespace; a
    cluster without a directory has none; a one-file change is read again, the rest is kept."""
    (rendered.work / "clusters" / "wlc-1").mkdir(parents=True)
    (rendered.work / "clusters" / "wlc-1" / "linked.yaml").symlink_to("../wlc-2/shop/api.yaml")
    first = rendered.commit(RENDERED_FILES)
    releases = releases_of(rendered, tmp_path)
    releases.read_state()
    found = releases.rendered_workloads(first, ["wlc-1", "wlc-2", "wlc-3"])
    assert found == {
        "wlc-1": {
            ("apps", "Deployment", "shop", "web"),
            ("batch", "Job", "shop", "migrate"),
            ("", "PersistentVolumeClaim", "default", "data"),
        },
        "wlc-2": {("apps", "StatefulSet", "shop", "api")},
        "wlc-3": frozenset(),
    }
    second = rendered.commit({"clusters/wlc-1/shop/jobs.yml": None})
    releases.read_state()
    assert releases.rendered_workloads(second, ["wlc-1"]) == {
        "wlc-1": {("apps", "Deployment", "shop", "web")}
    }
    assert releases.rendered_workloads(second, ["wlc-2"]) == {"wlc-2": found["wlc-2"]}


def test_the_rendered_workloads_are_whole_when_their_cache_fills(
    rendered: Rendered, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review of issue 21: when the cache of directories (by tree id) was full, it was cleared before the
    directories not read yet were added, and the directories of the same call read before were gone, so a
    long-running controller's step raised KeyError. Every call answers for every cluster it is asked, and
    the cache never holds more than its bound."""
    monkeypatch.setattr(releases_module, "WORKLOADS_KEPT", 3)
    web = {
        f"clusters/c{index}/web.yaml": manifest("apps/v1", "Deployment", f"web{index}") for index in range(3)
    }
    first = rendered.commit(web)
    releases = releases_of(rendered, tmp_path)
    releases.read_state()
    names = ["c0", "c1", "c2"]
    expected = {f"c{index}": {("apps", "Deployment", "default", f"web{index}")} for index in range(3)}
    assert releases.rendered_workloads(first, names) == expected
    second = rendered.commit({"clusters/c0/web.yaml": manifest("apps/v1", "Deployment", "web0", "shop")})
    releases.read_state()
    assert releases.rendered_workloads(second, names) == {
        **expected,
        "c0": {("apps", "Deployment", "shop", "web0")},
    }
    more = rendered.commit(
        {f"clusters/d{index}/web.yaml": manifest("apps/v1", "Job", f"d{index}") for index in range(5)}
    )
    releases.read_state()
    found = releases.rendered_workloads(more, [*names, *(f"d{index}" for index in range(5))])
    assert found["c1"] == expected["c1"] and found["d4"] == frozenset()  # apps/v1 Job: not a workload
    assert len(releases._directories) <= 3
