"""``nova-gitops rollout status|promote|pause|resume|abort`` against a rollout the controller is running,
with real git (a bare rendered repository, agents' reports on its status branch, a source directory).

Behaviours covered:
- status shows the canary released and the other wave pending, as a table, JSON and YAML (the same data),
  and pushes nothing;
- pause: the controller's next steps release nothing more, and status says paused, by whom and why;
  resume: the rollout continues;
- promote: the next wave is released at the next step without waiting for the bake; an unknown wave is
  refused listing the waves;
- abort: the canary's first release is rolled back (its branch deleted); a second abort has nothing to do
  and exits 2;
- every command is one commit of ``rollout/requests.yaml`` naming the command, authored by the user;
- a corrupted requests file promotes nothing and holds the rollout paused (issue 21: see
  test_rollout_requests_failsafe.py), and the next command replaces it with a clean file;
- a request written by someone else between a command's read and write is kept (compare-and-set, one
  re-read); a file that keeps changing is an error, never an overwrite;
- resume with nothing paused, and promote with no strategy, exit 2 and commit nothing; status without a
  strategy says there is no rollout;
- without ``GIT_AUTHOR_*``, git's ``user.name``/``user.email`` name the author.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from nova_gitops import errors
from nova_gitops.cli.main import cli
from nova_gitops.controller import rolloutcommands
from nova_gitops.controller.looping import Controller
from nova_gitops.controller.rolloutstep import REQUESTS_PATH, ROLLOUT_BRANCH
from nova_gitops.publishing.rolloutrecords import WriteOutcome
from nova_gitops.rollouts import requesting
from nova_gitops.rollouts.records import Requests
from tests.controller.helpers import Fleet, cluster_report, deployment, git, policy
from tests.controller.test_rollouts import SPREAD, STRATEGY, WallClock, healthy_report, released

CANARY = {"tier": "canary"}
HEAD = "apiVersion: gitops.nova.elotl.co/v1alpha1\nkind: RolloutRequests\n"


@pytest.fixture
def fleet(tmp_path: Path) -> Fleet:
    fleet = Fleet(tmp_path)
    fleet.write_source("policy.yaml", policy(spreadConstraints=SPREAD))
    fleet.write_source("web.yaml", deployment())
    fleet.write_source("rollout.yaml", STRATEGY)
    fleet.report(cluster_report("wlc-1", labels=CANARY), cluster_report("wlc-2"))
    return fleet


@pytest.fixture
def clock() -> WallClock:
    """The controller's clock, at the real time: the commands read the real clock."""
    clock = WallClock()
    clock.now = datetime.now(UTC).replace(microsecond=0)
    return clock


@pytest.fixture
def controller(fleet: Fleet, clock: WallClock) -> Controller:
    controller = fleet.controller(wall_clock=clock)
    controller.reconcile_once()  # the canary is released
    return controller


def rollout(fleet: Fleet, command: str, *args: str, author: str = "Alice", source: bool = True) -> Result:
    where = ["--repo", fleet.url, "--cache-dir", str(fleet.root / "cli-cache")]
    where += ["--source", str(fleet.source)] if source else []
    environment = {"GIT_AUTHOR_NAME": author, "GIT_AUTHOR_EMAIL": f"{author.lower()}@example.invalid"}
    return CliRunner().invoke(cli, ["rollout", command, *where, *args], env=environment)


def status(fleet: Fleet) -> dict[str, object]:
    result = rollout(fleet, "status", "-o", "json")
    assert result.exit_code == 0, result.output
    found: dict[str, object] = json.loads(result.output)
    return found


def without_times(found: dict[str, Any]) -> dict[str, Any]:
    """The status less what the real clock changes between two runs (waited and baked so far)."""
    waves = [{**wave, "reason": wave["reason"].split(",")[0], "baked": None} for wave in found["waves"]]
    return {**found, "waves": waves}


def refs(fleet: Fleet) -> str:
    return git(fleet.remote, "for-each-ref", "--format=%(refname) %(objectname)")


def test_status_shows_the_canary_released_and_the_rest_pending(fleet: Fleet, controller: Controller) -> None:
    target = fleet.head()
    before = refs(fleet)
    found = status(fleet)
    assert found["target"] == target and found["currentWave"] == "canary" and found["paused"] is False
    waves = {wave["name"]: wave for wave in found["waves"]}  # type: ignore[attr-defined]
    assert waves["canary"]["state"] == "waiting" and waves["canary"]["clusters"] == ["wlc-1"]
    assert waves["others"]["state"] == "pending" and waves["others"]["reason"] == "waits for wave canary"
    clusters = {item["name"]: item for item in found["clusters"]}  # type: ignore[attr-defined]
    assert clusters["wlc-1"]["released"] == target and clusters["wlc-1"]["health"] == "waiting"
    assert clusters["wlc-2"]["released"] is None and clusters["wlc-2"]["wave"] == "others"
    as_yaml = rollout(fleet, "status", "-o", "yaml")
    assert without_times(yaml.safe_load(as_yaml.output)) == without_times(found)
    table = rollout(fleet, "status")
    assert table.exit_code == 0, table.output
    lines = table.output.splitlines()
    assert lines[0] == f"rollout of {target[:12]}: progressing, current wave canary"
    assert any(line.split()[:3] == ["wlc-1", "canary", target[:7]] for line in lines)
    assert any(line.split()[:2] == ["others", "pending"] for line in lines)
    assert refs(fleet) == before  # read-only: nothing pushed


def test_pause_holds_the_next_wave_until_resume(
    fleet: Fleet, controller: Controller, clock: WallClock
) -> None:
    target = fleet.head()
    fleet.report(healthy_report("wlc-1", target, labels=CANARY), cluster_report("wlc-2"))
    controller.reconcile_once()  # healthy: the bake starts
    paused = rollout(fleet, "pause", "--reason", "change freeze", source=False)
    assert paused.exit_code == 0, paused.output
    assert "paused the rollout (Alice: change freeze)" in paused.output
    clock.advance(minutes=6)
    controller.reconcile_once()
    assert released(fleet) == {"wlc-1": target}  # the bake is over, but nothing more is released
    found = status(fleet)
    assert found["paused"] is True and found["pausedReason"] == "paused by request: Alice: change freeze"
    resumed = rollout(fleet, "resume")
    assert resumed.exit_code == 0, resumed.output
    controller.reconcile_once()
    assert released(fleet) == {"wlc-1": target, "wlc-2": target}


def test_promote_releases_the_next_wave_without_the_bake(fleet: Fleet, controller: Controller) -> None:
    target = fleet.head()
    promoted = rollout(fleet, "promote")  # the current wave: canary, not even healthy yet
    assert promoted.exit_code == 0, promoted.output
    assert f"promoted wave canary of {target[:12]}" in promoted.output
    assert "releases wave others" in promoted.output
    controller.reconcile_once()
    assert released(fleet) == {"wlc-1": target, "wlc-2": target}
    assert [wave["state"] for wave in status(fleet)["waves"]][:1] == ["passed"]  # type: ignore[attr-defined]


def test_promote_of_an_unknown_wave_lists_the_waves(fleet: Fleet, controller: Controller) -> None:
    result = rollout(fleet, "promote", "--wave", "prod")
    assert result.exit_code == 2
    assert "no wave 'prod'" in result.output and "the waves are canary, others" in result.output
    assert git(fleet.remote, "log", "--format=%s", ROLLOUT_BRANCH, "--", REQUESTS_PATH) == ""


def test_abort_rolls_the_canary_back(fleet: Fleet, controller: Controller) -> None:
    target = fleet.head()
    aborted = rollout(fleet, "abort")
    assert aborted.exit_code == 0, aborted.output
    assert "rolls back wlc-1 (its first release: branch deleted)" in aborted.output
    controller.reconcile_once()
    assert released(fleet) == {}  # a first release: the branch is deleted
    assert status(fleet)["outcome"] == "aborted"
    again = rollout(fleet, "abort")
    assert again.exit_code == 2
    assert f"nothing to abort: the rollout of {target[:12]} is aborted" in again.output


def test_each_command_is_one_commit_by_its_author(fleet: Fleet, controller: Controller) -> None:
    assert rollout(fleet, "pause", author="Alice", source=False).exit_code == 0
    assert rollout(fleet, "resume", author="Bob").exit_code == 0
    assert rollout(fleet, "promote", "--wave", "canary", author="Carol").exit_code == 0
    log = git(fleet.remote, "log", "--format=%an|%s", ROLLOUT_BRANCH, "--", REQUESTS_PATH).splitlines()
    target = fleet.head()[:12]
    assert log == [
        f"Carol|rollout promote: wave canary of {target}",
        f"Bob|rollout resume: {target}",
        "Alice|rollout pause: Alice",
    ]


def test_a_corrupted_requests_file_promotes_nothing_and_pauses(fleet: Fleet, controller: Controller) -> None:
    target = fleet.head()
    work = fleet.root / "requests-work"
    git(fleet.root, "clone", "--quiet", "--branch", ROLLOUT_BRANCH, fleet.url, str(work))
    (work / "rollout").mkdir(exist_ok=True)
    (work / REQUESTS_PATH).write_text(f"promote: {{revision: {target}, wave: canary}}\npaused: yes\n: [\n")
    git(work, "add", "-A")
    git(work, "commit", "--quiet", "-m", "hand edit")
    git(work, "push", "--quiet", "origin", f"HEAD:{ROLLOUT_BRANCH}")
    controller.reconcile_once()
    assert released(fleet) == {"wlc-1": target}  # nothing promoted
    assert status(fleet)["paused"] is True  # what it meant is unknown: it may have been a pause
    assert rollout(fleet, "pause", source=False).exit_code == 0
    data = yaml.safe_load(git(fleet.remote, "show", f"{ROLLOUT_BRANCH}:{REQUESTS_PATH}"))
    assert data == {
        "apiVersion": "gitops.nova.elotl.co/v1alpha1",
        "kind": "RolloutRequests",
        "paused": True,
        "pausedReason": "Alice",
    }


def push_requests(fleet: Fleet, text: str, name: str = "requests-work") -> None:
    """Someone else's commit of ``rollout/requests.yaml`` (another user, or a hand edit)."""
    work = fleet.root / name
    if not work.exists():
        git(fleet.root, "clone", "--quiet", "--branch", ROLLOUT_BRANCH, fleet.url, str(work))
    git(work, "pull", "--quiet", "--rebase", "origin", ROLLOUT_BRANCH)
    (work / "rollout").mkdir(exist_ok=True)
    (work / REQUESTS_PATH).write_text(text)
    git(work, "add", "-A")
    git(work, "commit", "--quiet", "-m", "someone else")
    git(work, "push", "--quiet", "origin", f"HEAD:{ROLLOUT_BRANCH}")


def test_a_request_written_meanwhile_is_kept(fleet: Fleet, controller: Controller) -> None:
    """The compare-and-set sees the other write, reads again and applies the request on top of it."""
    target = fleet.head()
    repo = rolloutcommands.rendered_repo(rolloutcommands.Where(fleet.url, "", fleet.root / "cli-cache"))
    calls: list[Requests] = []

    def promote(found: Requests) -> Requests:
        if not calls:  # between this command's read and its write, Bob pauses
            push_requests(fleet, f"{HEAD}paused: true\npausedReason: bob\n")
        calls.append(found)
        return requesting.promoted(found, target, "canary")

    written = rolloutcommands.write_requests(repo, promote, "rollout promote", environ={})
    assert written.outcome is WriteOutcome.WRITTEN and len(calls) == 2
    assert written.requests == Requests(True, "bob", None, frozenset({(target, "canary")}))
    data = yaml.safe_load(git(fleet.remote, "show", f"{ROLLOUT_BRANCH}:{REQUESTS_PATH}"))
    assert data["paused"] is True and data["promote"] == [{"revision": target, "wave": "canary"}]


def test_a_file_that_keeps_changing_is_an_error_not_an_overwrite(
    fleet: Fleet, controller: Controller
) -> None:
    repo = rolloutcommands.rendered_repo(rolloutcommands.Where(fleet.url, "", fleet.root / "cli-cache"))
    count = iter(range(10))

    def pause(found: Requests) -> Requests:
        push_requests(fleet, f"{HEAD}pausedReason: edit {next(count)}\n")
        return requesting.paused(found, "alice")

    with pytest.raises(errors.RepoError, match="run the command again"):
        rolloutcommands.write_requests(repo, pause, "rollout pause", environ={})
    shown = git(fleet.remote, "show", f"{ROLLOUT_BRANCH}:{REQUESTS_PATH}")
    assert shown == f"{HEAD}pausedReason: edit 1"  # the last edit stands


def test_resume_with_nothing_paused_commits_nothing(fleet: Fleet, controller: Controller) -> None:
    result = rollout(fleet, "resume")
    assert result.exit_code == 2
    assert "nothing to resume" in result.output
    assert git(fleet.remote, "log", "--format=%s", ROLLOUT_BRANCH, "--", REQUESTS_PATH) == ""


def test_the_author_is_the_users_git_identity(fleet: Fleet, controller: Controller) -> None:
    """Without GIT_AUTHOR_*, git's user.name/user.email (here from $HOME/.gitconfig) name the author."""
    git(fleet.root, "config", "--global", "user.name", "Dana Ops")
    git(fleet.root, "config", "--global", "user.email", "dana@example.invalid")
    where = ["--repo", fleet.url, "--cache-dir", str(fleet.root / "cli-cache")]
    unset = {"GIT_AUTHOR_NAME": None, "GIT_AUTHOR_EMAIL": None}
    result = CliRunner().invoke(cli, ["rollout", "pause", *where, "--reason", "incident"], env=unset)
    assert result.exit_code == 0, result.output
    author = git(fleet.remote, "log", "-1", "--format=%an <%ae>|%s", ROLLOUT_BRANCH)
    assert author == "Dana Ops <dana@example.invalid>|rollout pause: Dana Ops: incident"


def test_status_without_a_strategy_says_there_is_no_rollout(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path)
    fleet.write_source("policy.yaml", policy())
    fleet.write_source("web.yaml", deployment())
    fleet.report(cluster_report("wlc-1"))
    fleet.controller().reconcile_once()
    result = rollout(fleet, "status")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("no rollout:")
    assert json.loads(rollout(fleet, "status", "-o", "json").output)["target"] is None
    promoted = rollout(fleet, "promote")
    assert promoted.exit_code == 2 and "nothing to promote: no rollout" in promoted.output


def test_status_says_why_a_cluster_has_no_report(fleet: Fleet, controller: Controller) -> None:
    broken = cluster_report("wlc-1", labels=CANARY)
    broken["status"]["capacityResources"] = {"node-1": {"cpu": "lots"}}
    fleet.report(broken, cluster_report("wlc-2"))
    found = status(fleet)
    clusters = {item["name"]: item for item in found["clusters"]}  # type: ignore[attr-defined]
    assert "its report was refused: " in clusters["wlc-1"]["reason"]
    assert "lots" in clusters["wlc-1"]["reason"]
    [refused] = found["refusedReports"]  # type: ignore[misc]
    assert refused.startswith("status/wlc-1.yaml")
    table = rollout(fleet, "status")
    assert "warning: report refused: status/wlc-1.yaml" in table.stderr
