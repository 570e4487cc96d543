"""``nova-gitops diff --source S --base REF --headroom``: what a change does to failover headroom, in review.

Behaviours covered (a real git repository; clusters ``big`` (8 cpu) and ``small`` (2 cpu), each labelled
with a zone, one policy placing ``web`` on either):
- a change that makes web need more than ``small`` has free says, in text, Markdown and JSON, that losing
  ``big`` now strands web's group, with what it needs and what is free elsewhere; the rest of the output is
  the diff without ``--headroom``;
- the reverse change says losing ``big`` no longer strands it; a change that leaves web unschedulable
  says so instead (no loss strands what nothing places, and that is no rescue);
- a change that alters no loss's outcome summarises every loss in one line;
- a change to capacity alone (nothing rendered changes) still shows the section: the reviewer learns the
  fleet can lose less;
- ``--headroom-domain`` loses a zone at once; a side whose clusters lack the label loses nothing (the
  change that labels them is compared, not refused);
- without ``--source``, or ``--headroom-domain`` without ``--headroom``, is a usage error (exit 2), and a
  domain no cluster has exits 2 naming the flag.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from nova_gitops.cli.diff import diff_command
from tests.builders import cluster, deployment, policy

WEB = policy("web", resourceSelectors={"labelSelectors": [{"matchLabels": {"app": "web"}}]})


def fleet(small_cpu: str = "2") -> list[dict[str, Any]]:
    return [
        cluster("big", cpu="8", labels={"zone": "one"}),
        cluster("small", cpu=small_cpu, labels={"zone": "two"}),
        WEB,
    ]


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def write(root: Path, documents: list[dict[str, Any]]) -> None:
    (root / "source.yaml").write_text(yaml.safe_dump_all(documents, sort_keys=False))


def repository(root: Path, documents: list[dict[str, Any]]) -> Path:
    """A source repository whose main holds ``documents``, with a pinned identity."""
    root.mkdir()
    git("init", "--quiet", "--initial-branch=main", cwd=root)
    git("config", "user.name", "Test", cwd=root)
    git("config", "user.email", "test@example.com", cwd=root)
    write(root, documents)
    git("add", "-A", cwd=root)
    git("commit", "--quiet", "-m", "base", cwd=root)
    return root


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def diff(root: Path, *options: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(
        diff_command, ["--source", str(root), "--base", "main", "--no-color", *options]
    )
    return result.exit_code, result.stdout, result.stderr


def web(cpu: str) -> dict[str, Any]:
    return deployment("web", cpu=cpu, labels={"app": "web"})


def section(text: str) -> list[str]:
    lines = text.splitlines()
    told = []
    for line in lines[lines.index("Failover headroom:") + 1 :]:
        if not line.startswith("  "):
            break
        told.append(line.strip())
    return told


def test_a_change_that_strands_a_group_on_a_loss_says_so_in_text(tmp_path: Path) -> None:
    root = repository(tmp_path / "source", [*fleet(), web("1")])
    write(root, [*fleet(), web("3")])
    code, stdout, _ = diff(root, "--headroom")
    assert code == 1
    told = section(stdout)
    assert len(told) == 2
    assert told[0].startswith("after this change, losing big strands web-")
    assert told[0].endswith(": needs 3000m cpu, 2000m free elsewhere")
    assert told[1] == "1 other loss unchanged"
    _, plain, _ = diff(root)
    assert "Failover headroom" not in plain
    assert (
        stdout.replace("".join(f"  {line}\n" for line in told), "").replace("Failover headroom:\n", "")
        == plain
    )


def test_the_markdown_and_json_say_the_same(tmp_path: Path) -> None:
    root = repository(tmp_path / "source", [*fleet(), web("1")])
    write(root, [*fleet(), web("3")])
    _, markdown, _ = diff(root, "--headroom", "--format", "markdown")
    assert "#### Failover headroom" in markdown
    line = next(line for line in markdown.splitlines() if "losing `big`" in line)
    assert line.startswith("- :x: after this change, losing `big` strands `web-")
    assert line.endswith("`: needs 3000m cpu, 2000m free elsewhere")
    assert "- 1 other loss unchanged" in markdown
    _, document, _ = diff(root, "--headroom", "--format", "json")
    data = json.loads(document)["headroom"]
    assert data["worse"] is True
    [change] = data["changes"]
    assert change["lost"] == "big"
    [group] = change["strands"]
    assert group["why"] == "no-room"
    assert group["requests"] == {"cpu": "3", "memory": "64Mi"}
    assert group["freeElsewhere"] == {"cpu": "2"}
    assert data["unchanged"] == 1


def test_a_change_that_rescues_a_group_says_it_is_no_longer_stranded(tmp_path: Path) -> None:
    root = repository(tmp_path / "source", [*fleet(), web("3")])
    write(root, [*fleet(), web("1")])
    _, stdout, _ = diff(root, "--headroom")
    [line, tail] = section(stdout)
    assert line.startswith("after this change, losing big no longer strands web-")
    assert tail == "1 other loss unchanged"
    _, markdown, _ = diff(root, "--headroom", "--format", "markdown")
    assert "- :white_check_mark: after this change, losing `big` no longer strands `web-" in markdown


def test_a_change_that_leaves_a_group_unschedulable_is_no_rescue(tmp_path: Path) -> None:
    # web needs more than any cluster has: no loss strands it on the head, as nothing places it at all
    root = repository(tmp_path / "source", [*fleet(), web("3")])
    write(root, [*fleet(), web("9")])
    _, stdout, _ = diff(root, "--headroom")
    [line, _] = section(stdout)
    assert line.startswith("after this change, losing big no longer strands web-")
    assert line.endswith(": unschedulable with this change")
    _, markdown, _ = diff(root, "--headroom", "--format", "markdown")
    assert ":white_check_mark:" not in markdown.split("#### Failover headroom")[1]


def test_a_change_that_alters_no_loss_is_one_line(tmp_path: Path) -> None:
    root = repository(tmp_path / "source", [*fleet(), web("1")])
    write(root, [*fleet(), web("1"), deployment("other", cpu="100m", labels={"app": "other"})])
    code, stdout, _ = diff(root, "--headroom")
    assert code == 1  # the new object is a change; headroom is not
    assert section(stdout) == ["2 losses unchanged"]


def test_a_capacity_change_alone_still_shows_what_it_does_to_headroom(tmp_path: Path) -> None:
    root = repository(tmp_path / "source", [*fleet(small_cpu="4"), web("3")])
    write(root, [*fleet(small_cpu="2"), web("3")])
    code, stdout, _ = diff(root, "--headroom")
    assert code == 0  # nothing rendered changes: publish would make no commit
    assert stdout.startswith("No changes.\n")
    assert section(stdout)[0].startswith("after this change, losing big strands web-")


def test_a_domain_loses_every_cluster_with_each_label_value(tmp_path: Path) -> None:
    root = repository(tmp_path / "source", [*fleet(), web("1")])
    write(root, [*fleet(), web("3")])
    _, stdout, _ = diff(root, "--headroom", "--headroom-domain", "zone")
    assert section(stdout)[0].startswith("after this change, losing zone=one strands web-")


def test_a_change_that_brings_the_domain_label_compares_with_no_loss(tmp_path: Path) -> None:
    # the pull request that labels the clusters (the first step of a region gate) has no region on its
    # base: the base loses nothing by it, which is no reason to fail the review
    unlabelled = [cluster("big", cpu="8"), cluster("small", cpu="2"), WEB, web("3")]
    root = repository(tmp_path / "source", unlabelled)
    write(root, [*fleet(), web("3")])
    code, stdout, stderr = diff(root, "--headroom", "--headroom-domain", "zone")
    assert code == 0, stderr  # labels alone render nothing else
    assert section(stdout)[0].startswith(
        "after this change, losing zone=one (a new value of zone) strands web-"
    )
    git("commit", "--quiet", "-am", "labelled", cwd=root)
    write(root, unlabelled)  # and the reverse: the head drops the label
    code, stdout, stderr = diff(root, "--headroom", "--headroom-domain", "zone")
    assert code == 0, stderr  # labels alone render nothing else
    assert section(stdout)[0].startswith("zone=one is gone with this change: losing it stranded web-")


def test_bad_combinations_and_an_unknown_domain_exit_2(tmp_path: Path) -> None:
    root = repository(tmp_path / "source", [*fleet(), web("1")])
    result = CliRunner().invoke(diff_command, [str(tmp_path), str(tmp_path), "--headroom"])
    assert result.exit_code == 2
    assert "--headroom only applies with --source" in result.stderr
    code, _, stderr = diff(root, "--headroom-domain", "zone")
    assert code == 2
    assert "--headroom-domain only applies with --headroom" in stderr
    code, _, stderr = diff(root, "--headroom", "--headroom-domain", "region")
    assert code == 2
    assert "--headroom-domain region: no cluster has the label region" in stderr
