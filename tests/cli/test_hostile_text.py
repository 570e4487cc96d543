"""Text from data never reaches a terminal or a pull request as what it is (issue 21, item 8).

Hostile strings carry what a terminal acts on — a clear screen, an OSC 0 title, an OSC 52 clipboard write,
an 8-bit CSI — and a U+202E bidi override, with Markdown a comment would act on (a mention, a tracking
pixel, a link, HTML). They come in as a source file's name and line, a Cluster's free-text field, a rendered
repository's placement.yaml and manifests (diff of two directories), and an agent's report (a workload's
condition message, as rollout status shows it).

Behaviours covered, through click's runner and a real ``nova-gitops`` process:
- validate, explain, get, diff (text, coloured text, Markdown, JSON) and rollout status (table, JSON, YAML)
  write no control, bidi or invisible character of the data, on stdout or stderr: each shows as its
  ``\\uXXXX`` escape, so a reviewer sees it; our own colours and rich styling still work;
- the machine formats stay exact: JSON and YAML read back to the very strings the data held;
- diff's Markdown makes no link, image, HTML, mention or reference of the data (read by a CommonMark parser);
- a taint key with an ESC sequence is a problem with file and line, and the source is invalid; an agent's
  report naming one is refused, and rollout status says so, escaped;
- our own styling (diff and edit colours, rich) still reaches the terminal as styling;
- a newline in a table cell (a reason) forges no row, nor does one in the reason a paused rollout shows.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from nova_gitops.api import texts
from nova_gitops.cli.main import cli
from nova_gitops.clients import terminals
from tests.controller.helpers import Fleet, cluster_report, deployment, policy
from tests.controller.test_rollouts import SPREAD, STRATEGY, WallClock, healthy_report
from tests.unit.rendering import markdowncheck

CLEAR = "\x1b[2J\x1b[H"
TITLE = "\x1b]0;pwned\x07"
CLIPBOARD = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
HOSTILE = (
    f"{CLEAR}{TITLE}{CLIPBOARD}\u202eevil\x9b31m @alice ![t](https://t.example/p.png) "
    "[ok](https://evil.example) <b>x</b>"
)
FILE_NAME = f"evil{TITLE}\u202e.yaml"
STYLE = re.compile(r"\x1b\[[0-9;]*m")  # our own colours and rich's bold: SGR only


def hidden(text: str, *, styled: bool = False) -> list[str]:
    """The hidden characters in ``text`` (but newlines and tabs), after our own SGR styling if ``styled``."""
    shown = STYLE.sub("", text) if styled else text
    return sorted({char for char in shown if texts.has_hidden(char)})


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), env=env or {}, catch_exceptions=False)


def process(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, **(env or {})}
    environment.pop(terminals.FORCE_TERMINAL, None)
    if env and terminals.FORCE_TERMINAL in env:
        environment[terminals.FORCE_TERMINAL] = env[terminals.FORCE_TERMINAL]
    return subprocess.run(
        [sys.executable, "-m", "nova_gitops.cli", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=environment,
        check=False,
    )


def code(result: Result | subprocess.CompletedProcess[str]) -> int:
    return result.exit_code if isinstance(result, Result) else result.returncode


def write(path: Path, *documents: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))


def workload(name: str = "web", **annotations: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "shop", "labels": {"app": name}, "annotations": annotations},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "1"}}}]
                },
            },
        },
    }


def cluster(name: str = "wlc-1", **status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "cluster.elotl.co/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name},
        "spec": {"kubernetescluster": f"k8s-{HOSTILE}"},
        "status": {
            "conditions": [{"type": "Ready", "status": "True"}],
            "capacityResources": {"node-1": {"cpu": "4", "memory": "8Gi"}},
            **status,
        },
    }


SHOP_POLICY = {
    "apiVersion": "policy.elotl.co/v1alpha1",
    "kind": "SchedulePolicy",
    "metadata": {"name": "shop"},
    "spec": {"resourceSelectors": {"labelSelectors": [{"matchLabels": {"app": "web"}}]}},
}


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A valid source whose Deployment sits in a file with a hostile name, and whose Cluster names the
    Kubernetes cluster it runs in with a hostile text (``spec.kubernetescluster`` is free text)."""
    root = tmp_path / "source"
    write(root / FILE_NAME, workload())
    write(root / "clusters.yaml", cluster())
    write(root / "policy.yaml", SHOP_POLICY)
    return root


def test_validate_shows_a_hostile_file_name_and_line_escaped(tmp_path: Path) -> None:
    root = tmp_path / "source"
    write(root / FILE_NAME, {**cluster(), f"x{HOSTILE}": 1})  # an unknown field: a warning quoting its line
    for result in (run("validate", str(root)), process("validate", str(root))):
        assert code(result) == 0, result.stderr
        out, err = result.stdout, result.stderr
        assert hidden(out) == hidden(err) == [], (out, err)
        assert "evil\\u001b]0;pwned\\u0007\\u202e.yaml" in err
        assert "\\u202eevil\\u009b31m @alice" in err  # the field, escaped


def test_a_taint_key_with_an_escape_sequence_is_a_problem_with_file_and_line(tmp_path: Path) -> None:
    root = tmp_path / "source"
    taints = {"node-1": [{"key": f"gpu{CLEAR}", "value": "x\u202ey", "effect": "NoSchedule"}]}
    write(root / "clusters.yaml", cluster(nodeTaints=taints))
    write(root / "web.yaml", workload())
    write(root / "policy.yaml", SHOP_POLICY)
    for result in (run("validate", str(root)), process("validate", str(root))):
        assert code(result) == 2, result.stderr
        assert hidden(result.stdout) == hidden(result.stderr) == []
        taint = r"clusters\.yaml:\d+:\d+: Cluster wlc-1: status\.nodeTaints\.node-1\[0\]"
        assert re.search(rf"{taint}\.key: 'gpu\\x1b\[2J\\x1b\[H' is not a valid taint key", result.stderr)
        assert re.search(rf"{taint}\.value: 'x\\u202ey' is not a valid taint value", result.stderr)


@pytest.mark.parametrize("terminal", [False, True], ids=["plain", "terminal"])
def test_explain_and_get_show_hostile_text_escaped(source: Path, terminal: bool) -> None:
    env = {terminals.FORCE_TERMINAL: "1"} if terminal else {}
    for args in (["explain", str(source), "deployment/shop/web"], ["get", "clusters", str(source)]):
        for result in (run(*args, env=env), process(*args, env=env)):
            assert code(result) == 0, result.stderr
            assert hidden(result.stdout, styled=terminal) == [], result.stdout
            assert hidden(result.stderr, styled=terminal) == [], result.stderr
            shown = STYLE.sub("", result.stdout)
            assert "\\u001b]0;pwned\\u0007" in shown
            if terminal:
                assert STYLE.search(result.stdout)  # rich still styles what is ours


@pytest.fixture
def renders(tmp_path: Path) -> tuple[Path, Path]:
    """Two render directories; the new one, as a hand-pushed branch could hold it, names a group, a
    warning, an unscheduled object's reason and a manifest with hostile text."""
    old, new = tmp_path / "old", tmp_path / "new"
    head = {"apiVersion": "gitops.nova.elotl.co/v1alpha1", "kind": "Placement", "source": {"repo": "s"}}
    write(old / "placement.yaml", {**head, "groups": [], "unscheduled": [], "warnings": [], "clusters": []})
    write(
        new / "placement.yaml",
        {
            **head,
            "groups": [{"name": f"web-{HOSTILE}", "clusters": ["wlc-1", f"wlc-{HOSTILE}"], "objects": []}],
            "unscheduled": [
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "namespace": "shop",
                    "name": "cm",
                    "reason": HOSTILE,
                }
            ],
            "warnings": [HOSTILE],
            "clusters": [],
        },
    )
    config = {
        "apiVersion": "v1",
        "kind": f"ConfigMap{TITLE}",
        "metadata": {"name": "cm", "namespace": "shop"},
        "data": {"note": HOSTILE},
    }
    write(new / "clusters" / "wlc-1" / "configmap-cm.yaml", config)
    return old, new


@pytest.mark.parametrize("colour", ["--no-color", "--color"])
def test_diff_text_shows_hostile_text_escaped(renders: tuple[Path, Path], colour: str) -> None:
    old, new = renders
    for result in (run("diff", str(old), str(new), colour), process("diff", str(old), str(new), colour)):
        assert code(result) == 1, result.stderr
        assert hidden(result.stdout, styled=colour == "--color") == [], result.stdout
        assert hidden(result.stderr) == []
        assert f"warning: {texts.one_line(HOSTILE)}" in STYLE.sub("", result.stdout)
        assert ("\x1b[32m" in result.stdout) is (colour == "--color")  # our colours are still ours


def test_diff_markdown_makes_nothing_of_hostile_text(renders: tuple[Path, Path]) -> None:
    old, new = renders
    args = ("diff", str(old), str(new), "--format", "markdown")
    for result in (run(*args), process(*args)):
        markdown = result.stdout
        assert hidden(markdown) == [] and hidden(result.stderr) == []
        assert markdowncheck.active_parts(markdown) == []
        assert texts.one_line(HOSTILE) in markdowncheck.shown_text(markdown)  # said, not done


def test_diff_json_reads_back_to_the_very_strings(renders: tuple[Path, Path]) -> None:
    old, new = renders
    result = process("diff", str(old), str(new), "--format", "json")
    assert hidden(result.stdout) == []
    document = json.loads(result.stdout)
    assert document["newWarnings"] == [HOSTILE]
    assert document["groups"][0]["name"] == f"web-{HOSTILE}"
    assert document["files"][0]["object"] == f"ConfigMap{TITLE} shop/cm"


@pytest.fixture
def degraded(tmp_path: Path) -> Fleet:
    """A rollout whose canary's agent reports its workload Degraded with a hostile condition message, as
    an admission webhook or an operator can write one; the other agent's report names a hostile taint
    key, which Kubernetes would refuse: it is refused."""
    fleet = Fleet(tmp_path)
    fleet.write_source("policy.yaml", policy(spreadConstraints=SPREAD))
    fleet.write_source("web.yaml", deployment())
    fleet.write_source("rollout.yaml", STRATEGY)
    fleet.report(cluster_report("wlc-1", labels={"tier": "canary"}), cluster_report("wlc-2"))
    clock = WallClock()
    clock.now = datetime.now(UTC).replace(microsecond=0)
    fleet.controller(wall_clock=clock).reconcile_once()  # the canary is released
    report = healthy_report(
        "wlc-1",
        fleet.head(),
        labels={"tier": "canary"},
        healthy=False,
        condition="ReplicaFailure",
        reason="FailedCreate",
        message=HOSTILE,
    )
    refused = cluster_report("wlc-2")
    refused["status"]["nodeTaints"] = {"wlc-2-node-0": [{"key": f"k{TITLE}", "effect": "NoSchedule"}]}
    fleet.report(report, refused)
    return fleet


def test_rollout_status_shows_a_hostile_condition_message_escaped(degraded: Fleet) -> None:
    where = [
        "--repo",
        degraded.url,
        "--source",
        str(degraded.source),
        "--cache-dir",
        str(degraded.root / "c"),
    ]
    for env in ({}, {terminals.FORCE_TERMINAL: "1"}):
        styled = bool(env)
        for result in (
            run("rollout", "status", *where, env=env),
            process("rollout", "status", *where, env=env),
        ):
            assert code(result) == 0, result.stderr
            assert hidden(result.stdout, styled=styled) == [] and hidden(result.stderr, styled=styled) == []
            assert "\\u001b]0;pwned\\u0007" in STYLE.sub("", result.stdout)
            assert "report refused" in result.stderr and "is not a valid taint key" in result.stderr
    as_json = json.loads(process("rollout", "status", *where, "-o", "json").stdout)
    as_yaml = yaml.safe_load(process("rollout", "status", *where, "-o", "yaml").stdout)
    for found in (as_json, as_yaml):
        [canary] = [item for item in found["clusters"] if item["name"] == "wlc-1"]
        assert HOSTILE[:40] in canary["reason"]  # exact, read back from the escapes


def test_an_edits_coloured_diff_keeps_our_colours(tmp_path: Path) -> None:
    """The guard shows the data's escape sequences; the colours of our own diff still reach the terminal."""
    root = tmp_path / "source"
    write(root / "web.yaml", workload())
    write(root / "clusters.yaml", {**cluster(), "spec": {}}, {**cluster("wlc-2"), "spec": {}})
    write(root / "policy.yaml", SHOP_POLICY)
    args = ("pin", "deployment/shop/web", "wlc-2", "--source", str(root), "--dry-run", "--color")
    for result in (run(*args), process(*args)):
        assert code(result) == 0, result.stderr
        assert "\x1b[1mPlacement changes:\x1b[0m" in result.stdout
        assert hidden(result.stdout, styled=True) == [] and "\\u001b" not in result.stdout


def test_a_newline_in_a_table_cell_forges_no_row() -> None:
    from nova_gitops.cli import output

    forged = "Degraded\nwlc-2   canary   abc1234   abc1234   healthy   all good"
    shown = output.table(["NAME", "REASON"], [["wlc-1", forged]])
    assert shown.splitlines() == ["NAME    REASON", f"wlc-1   {texts.one_line(forged)}"]


def test_a_newline_in_a_reported_message_forges_no_line_of_rollout_status(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path)
    fleet.write_source("policy.yaml", policy(spreadConstraints=SPREAD))
    fleet.write_source("web.yaml", deployment())
    fleet.write_source("rollout.yaml", {**STRATEGY, "spec": {**STRATEGY["spec"], "onFailure": "pause"}})
    fleet.report(cluster_report("wlc-1", labels={"tier": "canary"}), cluster_report("wlc-2"))
    clock = WallClock()
    clock.now = datetime.now(UTC).replace(microsecond=0)
    controller = fleet.controller(wall_clock=clock)
    controller.reconcile_once()
    forged = "boom\nrollout of 0000000: complete\nwlc-9   canary   forged"
    report = healthy_report(
        "wlc-1", fleet.head(), labels={"tier": "canary"}, healthy=False, condition="Failed", message=forged
    )
    fleet.report(report, cluster_report("wlc-2"))
    controller.reconcile_once()  # the failure pauses the rollout: its reason is the headline's second line
    where = ["--repo", fleet.url, "--source", str(fleet.source), "--cache-dir", str(tmp_path / "c")]
    result = run("rollout", "status", *where)
    assert code(result) == 0, result.stderr
    lines = result.stdout.splitlines()
    assert not any(line.startswith(("wlc-9", "rollout of 0000000")) for line in lines), result.stdout
    assert any("boom\\u000arollout of 0000000" in line for line in lines), result.stdout
