"""A commit message shows data's control and bidi characters as escapes (issue 21, follow-up of item 8).

Reasons reach the rendered repository's commit messages from places nobody here controls: an agent's
reschedule request (its ``reason``, quoted in the controller's note and in the scheduler's reason for a
group it cannot place), a render's "newly unscheduled" lines. Written raw, an ESC sequence in one of them
clears the screen of whoever runs ``git log`` without a pager, sets the terminal's title or plants a link,
and U+202E reverses what the line appears to say; a newline forges a line of the message (a trailer such as
``Nova-Allow-Mass-Prune: true`` in the last paragraph is what agents read).

Behaviours covered (each message read back from real git):
- an agent's reason with ESC sequences and U+202E, moved by the controller: the commit holds ``\\u001b``
  and ``\\u202e`` where the characters were, and none of them raw (its newline the controller folds);
- a "newly unscheduled" line, a note and a replica line with the same: escaped, each on its own line;
  the trailers stay the last paragraph and read back as they were.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from nova_gitops.publishing import messages
from nova_gitops.rendering.diffs import RenderDiff, ReplicaChange
from tests.controller.helpers import Fleet, cluster_report, deployment, policy, reschedule_request

HOSTILE = "\x1b]0;owned\x07\x1b[2J\u202eesrever\nNova-Allow-Mass-Prune: true"
SHOWN = "\\u001b]0;owned\\u0007\\u001b[2J\\u202eesrever\\u000aNova-Allow-Mass-Prune: true"
RAW = ("\x1b", "\x07", "\u202e")
NEWLINE = "\\u000a"


def git(cwd: Path, *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, input=stdin, capture_output=True, text=True, check=True, encoding="utf-8"
    )
    return done.stdout


def committed(tmp_path: Path, message: str) -> str:
    """``message`` committed with real git, and read back as ``git log`` shows it."""
    repo = tmp_path / "repo"
    git(tmp_path, "init", "--quiet", str(repo))
    tree = git(repo, "write-tree").strip()
    environment = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    commit = git(repo, *environment, "commit-tree", tree, "-F", "-", stdin=message).strip()
    return git(repo, "log", "-1", "--format=%B", commit)


def test_an_agent_s_reason_is_escaped_in_the_controller_s_commit(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path)
    fleet.write_source("policy.yaml", policy())
    fleet.write_source("web.yaml", deployment())
    fleet.report(cluster_report("wlc-1", cpu="4"), cluster_report("wlc-2", cpu="8"))
    controller = fleet.controller()
    first = controller.reconcile_once()
    assert first.plan is not None
    (group,) = [group.name for group in first.plan.groups if group.policy == "demo-policy"]
    request = {**reschedule_request(group), "reason": HOSTILE}
    fleet.report(cluster_report("wlc-2", cpu="8", requests=[request]))
    outcome = controller.reconcile_once()
    assert [exclusion.cluster for exclusion in outcome.rescheduled] == ["wlc-2"]
    message = git(fleet.remote, "log", "-1", "--format=%B", "main")
    (note,) = [line for line in message.splitlines() if line.startswith("- rescheduled ")]
    # the controller folds the reason's whitespace when it reads the request; the rest is shown escaped
    folded = SHOWN.replace(NEWLINE, " ")
    assert note.endswith(f'cluster wlc-2 reported "{folded}"')
    assert not any(char in message for char in RAW)
    assert messages.trailers(message)["Nova-Source-Revision"] == "none"  # still the last paragraph


def test_unscheduled_lines_notes_and_replica_lines_are_escaped(tmp_path: Path) -> None:
    diff = RenderDiff(
        replicas=(ReplicaChange("g", f"Deployment shop/{HOSTILE}", "wlc-1", 2, 3),),
        newly_unscheduled=(f"Deployment shop/web: {HOSTILE}",),
    )
    message = messages.commit_message(
        diff,
        source_repo="https://example.com/src.git",
        source_revision="a" * 40,
        notes=[f"kept g: {HOSTILE}"],
    )
    shown = committed(tmp_path, message)
    assert not any(char in shown for char in RAW)
    body = shown.split("\n\n")[1].splitlines()
    assert body == [
        f"- replicas Deployment shop/{SHOWN} on wlc-1: 2 → 3",
        f"- newly unscheduled: Deployment shop/web: {SHOWN}",
        f"- kept g: {SHOWN}",
    ]
    assert messages.trailers(shown) == {
        "Nova-Source-Repo": "https://example.com/src.git",
        "Nova-Source-Revision": "a" * 40,
    }
