"""The rollout record (``rollout/record.yaml`` on the status branch) on a real bare remote over file://.

Covers: no branch and no record read as None; write then read (by another controller's cache); writing the
same bytes again is no commit; a record changed since it was read is refused and left as the other writer
left it; an agent pushing its status between our fetch and our push makes us rebuild on its head, and both
land; agents pushing in a loop while a controller writes the record many times lose nothing on either side;
an oversized record is refused on read and on write.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path

import pytest

from nova_agent.clocks import FakeClock
from nova_agent.gitrepos import RepoCache
from nova_agent.statuspushing import StatusBranch
from nova_gitops import errors
from nova_gitops.publishing import gitwriting
from nova_gitops.publishing.gitwriting import TreeChanges
from nova_gitops.publishing.rolloutrecords import MAX_RECORD_BYTES, RECORD_PATH, RolloutRecords, WriteOutcome
from tests.publishing.conftest import git, make_bare

BRANCH = "nova-status"


def records_of(
    url: str, cache: Path, repo_class: type[gitwriting.RenderedRepo] = gitwriting.RenderedRepo
) -> RolloutRecords:
    return RolloutRecords(repo_class(cache / "status", url), BRANCH, pause=lambda seconds: None)


def agent_push(url: str, cache: Path, cluster: str, text: str) -> None:
    """As an agent reports, but retrying at once (a fake clock) and more often than its default 6 times."""
    branch = StatusBranch(RepoCache(url, cache), BRANCH, FakeClock(), attempts=50)
    path = f"status/{cluster}.yaml"
    branch.publish(path, text.encode(), f"status {cluster}", branch.read(path))


def file_at_head(bare: Path, path: str) -> str:
    return git("--git-dir", str(bare), "show", f"{BRANCH}:{path}")


@pytest.fixture
def status(tmp_path: Path) -> tuple[Path, str]:
    bare = tmp_path / "status.git"
    return bare, make_bare(bare)


def test_no_branch_no_record_then_written_and_read_back(status: tuple[Path, str], tmp_path: Path) -> None:
    bare, url = status
    records = records_of(url, tmp_path / "one")
    assert records.read_record() is None
    agent_push(url, tmp_path / "agent", "wlc-1", "report 1")
    assert records.read_record() is None
    assert records.write_record(b"wave: 1\n", None, "rollout: wave 1") is WriteOutcome.WRITTEN
    assert records_of(url, tmp_path / "other").read_record() == b"wave: 1\n"
    assert file_at_head(bare, "status/wlc-1.yaml") == "report 1", "the agent's report is kept"
    head = git("--git-dir", str(bare), "rev-parse", BRANCH)
    assert records.write_record(b"wave: 1\n", b"wave: 1\n", "again") is WriteOutcome.UNCHANGED
    assert git("--git-dir", str(bare), "rev-parse", BRANCH) == head


def test_a_record_changed_under_us_is_refused(status: tuple[Path, str], tmp_path: Path) -> None:
    bare, url = status
    one, other = records_of(url, tmp_path / "one"), records_of(url, tmp_path / "other")
    assert one.read_record() is None and other.read_record() is None
    assert one.write_record(b"paused: true\n", None, "pause") is WriteOutcome.WRITTEN
    assert other.write_record(b"wave: 2\n", None, "promote") is WriteOutcome.CHANGED
    assert file_at_head(bare, RECORD_PATH) == "paused: true"
    assert other.write_record(b"wave: 2\n", b"paused: true\n", "promote") is WriteOutcome.WRITTEN


def test_an_agent_pushing_between_our_fetch_and_push_makes_us_rebuild_on_its_head(
    status: tuple[Path, str], tmp_path: Path
) -> None:
    bare, url = status
    agent_push(url, tmp_path / "agent", "wlc-1", "report 1")
    commits: list[str] = []

    class AgentPushesFirst(gitwriting.RenderedRepo):
        def commit(
            self, parent: str | None, changes: TreeChanges, message: str, *, environ: Mapping[str, str]
        ) -> str:
            commit = super().commit(parent, changes, message, environ=environ)
            commits.append(commit)
            if len(commits) == 1:
                agent_push(url, tmp_path / "agent", "wlc-1", "report 2")
            return commit

    records = records_of(url, tmp_path / "one", AgentPushesFirst)
    assert records.write_record(b"wave: 1\n", None, "rollout: wave 1") is WriteOutcome.WRITTEN
    assert len(commits) == 2, "the first push lost its lease to the agent's"
    assert file_at_head(bare, "status/wlc-1.yaml") == "report 2"
    assert file_at_head(bare, RECORD_PATH) == "wave: 1"


def test_agents_and_a_controller_writing_together_lose_nothing(
    status: tuple[Path, str], tmp_path: Path
) -> None:
    bare, url = status
    rounds = 6

    def agent(cluster: str) -> None:
        for number in range(rounds):
            agent_push(url, tmp_path / cluster, cluster, f"report {number}")

    agents = [threading.Thread(target=agent, args=(f"wlc-{n}",)) for n in range(2)]
    for thread in agents:
        thread.start()
    records = RolloutRecords(gitwriting.RenderedRepo(tmp_path / "controller", url), BRANCH, attempts=50)
    previous: bytes | None = None
    for number in range(rounds):
        data = f"step: {number}\n".encode()
        assert records.write_record(data, previous, f"step {number}") is WriteOutcome.WRITTEN
        previous = data
    for thread in agents:
        thread.join()
    assert file_at_head(bare, RECORD_PATH) == f"step: {rounds - 1}"
    for n in range(2):
        assert file_at_head(bare, f"status/wlc-{n}.yaml") == f"report {rounds - 1}"


def test_an_oversized_record_is_refused(status: tuple[Path, str], tmp_path: Path) -> None:
    _, url = status
    records = records_of(url, tmp_path / "one")
    with pytest.raises(ValueError, match="over the"):
        records.write_record(b"x" * (MAX_RECORD_BYTES + 1), None, "too big")
    work = tmp_path / "work"
    git("init", "--quiet", "--initial-branch", BRANCH, str(work))
    (work / "rollout").mkdir()
    (work / RECORD_PATH).write_bytes(b"x" * (MAX_RECORD_BYTES + 1))
    git("add", "-A", cwd=work)
    git("commit", "--quiet", "-m", "an agent's credentials writing where they should not", cwd=work)
    git("push", "--quiet", url, f"HEAD:{BRANCH}", cwd=work)
    with pytest.raises(errors.RepoError, match="not a record a controller wrote"):
        records.read_record()
