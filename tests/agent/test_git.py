"""Git boundary (real repositories over file://): the agent reads a cluster directory from the resolved
commit's tree (a push that lands afterwards does not leak into it; a directory the commit does not have is
DirectoryMissing, not an empty list); reads commit trailers; an unreachable
remote, a missing branch, or a fetch that fails after the branch was listed is GitUnavailable (so the loop
backs off as for an unreachable remote: exit 4, not a refusal); status reports from two agents racing on one
branch both land, each agent rebuilding its one-file commit on the moved head; publishing unchanged bytes
makes no commit."""

from __future__ import annotations

from pathlib import Path

import pytest

from nova_agent.clocks import FakeClock
from nova_agent.gitrepos import DirectoryMissing, GitUnavailable, RepoCache
from nova_agent.running import EXIT_UNREACHABLE
from nova_agent.statuspushing import StatusBranch
from tests.agent.conftest import AgentFactory
from tests.agent.gitrepos_helpers import RenderedRepo, git


def cm(name: str) -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: ns\n"


def test_reads_the_directory_of_the_resolved_commit_only(tmp_path: Path) -> None:
    repo = RenderedRepo(tmp_path)
    first = repo.commit(
        {"clusters/c1/ns/configmap-a.yaml": cm("a"), "clusters/c2/ns/configmap-b.yaml": cm("b")}
    )
    cache = RepoCache(repo.url, tmp_path / "cache")
    assert cache.fetch("main", "refs/nova/rendered") == first
    repo.commit({"clusters/c1/ns/configmap-a.yaml": None, "clusters/c1/ns/configmap-z.yaml": cm("z")})
    files = cache.read_tree(first, "clusters/c1")
    assert [(f.path, f.data.decode()) for f in files] == [("clusters/c1/ns/configmap-a.yaml", cm("a"))]
    with pytest.raises(DirectoryMissing, match="clusters/c3/ does not exist in commit"):
        cache.read_tree(first, "clusters/c3")  # git keeps no empty directory: missing, never empty


def test_trailers(tmp_path: Path) -> None:
    repo = RenderedRepo(tmp_path)
    sha = repo.commit(
        {"a": "x"}, "render abc: -9 objects", "Nova-Source-Revision: abc\nNova-Allow-Mass-Prune: true"
    )
    cache = RepoCache(repo.url, tmp_path / "cache")
    cache.fetch("main", "refs/nova/rendered")
    assert cache.trailers(sha) == {"Nova-Source-Revision": ["abc"], "Nova-Allow-Mass-Prune": ["true"]}


def test_unreachable_remote_and_missing_branch(tmp_path: Path) -> None:
    with pytest.raises(GitUnavailable, match="check the URL"):
        RepoCache(f"file://{tmp_path}/nowhere.git", tmp_path / "cache").fetch("main", "refs/nova/rendered")
    repo = RenderedRepo(tmp_path)
    repo.commit({"a": "x"})
    assert RepoCache(repo.url, tmp_path / "cache").fetch("nope", "refs/nova/rendered") is None


def test_a_fetch_failing_after_the_listing_is_unavailable(
    rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    rendered.commit({"clusters/c1/ns/configmap-a.yaml": cm("a")})
    loose_objects = list((rendered.remote / "objects").glob("[0-9a-f][0-9a-f]/*"))
    assert loose_objects  # a small push is unpacked into loose objects
    for loose in loose_objects:
        loose.unlink()  # the refs still list the branch; its objects cannot be sent
    with pytest.raises(GitUnavailable, match="cannot fetch 'main'"):
        RepoCache(rendered.url, rendered.remote.parent / "cache").fetch("main", "refs/nova/rendered")
    agent = make_agent(report_enabled=False)
    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_UNREACHABLE, outcome.message
    assert agent.state.consecutive_errors == 1


def test_two_agents_racing_on_the_status_branch_both_land(tmp_path: Path) -> None:
    repo = RenderedRepo(tmp_path)
    repo.commit({"clusters/c1/x.yaml": cm("x")})
    clock = FakeClock()
    one = StatusBranch(RepoCache(repo.url, tmp_path / "cache-1"), "nova-status", clock)
    two = StatusBranch(RepoCache(repo.url, tmp_path / "cache-2"), "nova-status", clock)
    head_one, head_two = one.read("status/c1.yaml"), two.read("status/c2.yaml")
    assert head_one.commit is None and head_two.commit is None
    assert one.publish("status/c1.yaml", b"one: 1\n", "status c1", head_one)
    assert two.publish(
        "status/c2.yaml", b"two: 2\n", "status c2", head_two
    )  # stale head: rebuilt and retried
    assert len(clock.sleeps) == 1
    assert repo.show("nova-status", "status/c1.yaml") == "one: 1"
    assert repo.show("nova-status", "status/c2.yaml") == "two: 2"
    assert git(repo.remote, "rev-list", "--count", "nova-status") == "2"
    again = one.read("status/c1.yaml")
    assert again.current == b"one: 1\n"
    assert not one.publish("status/c1.yaml", b"one: 1\n", "status c1", again)
    assert git(repo.remote, "rev-list", "--count", "nova-status") == "2"
    assert repo.show("main", "clusters/c1/x.yaml") == cm("x").strip()


def test_signature_verification_with_an_ssh_allowed_signers_file(tmp_path: Path) -> None:
    import subprocess

    from nova_agent.gitrepos import GitError

    key = tmp_path / "signing-key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"nova-test@example.invalid {key.with_suffix('.pub').read_text()}")
    repo = RenderedRepo(tmp_path)
    unsigned = repo.commit({"a": "x"})
    (repo.work / "b").write_text("y")
    git(repo.work, "add", "-A")
    git(
        repo.work,
        "-c",
        "gpg.format=ssh",
        "-c",
        f"user.signingkey={key}",
        "commit",
        "-q",
        "-S",
        "-m",
        "signed",
    )
    git(repo.work, "push", "-q", "origin", "HEAD:main")
    signed = git(repo.work, "rev-parse", "HEAD")
    cache = RepoCache(repo.url, tmp_path / "cache")
    assert cache.fetch("main", "refs/nova/rendered") == signed
    cache.verify_signature(signed, allowed)
    git(cache.path, "fetch", "-q", repo.url, unsigned)
    with pytest.raises(GitError, match="no valid signature"):
        cache.verify_signature(unsigned, allowed)
