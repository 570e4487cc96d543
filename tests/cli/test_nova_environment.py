"""A Nova user's environment changes nothing in any command's output (issue 22, item 1).

try-nova's README has a user ``export NOVA_NAMESPACE=elotl``, ``NOVA_CONTROLPLANE_CONTEXT=nova``,
``NOVA_WORKLOAD_CLUSTER_1=wlc-1``… before anything else; with it, ``render`` used to put every manifest naming
no namespace into ``elotl``. Behaviours covered:

- every ``nova-gitops`` command (each one of the group, checked against the group's list), run with Nova's
  documented environment and every other variable of try-nova's scripts, gives the same exit code, stdout,
  stderr and files (rendered directories, edited sources, pushed refs) as without it; ``render`` and
  ``validate`` also as real processes; ``nova-agent`` (a refused pass against the fake API server) too;
- the quickstart's namespace-less nginx rendered in that shell lands in ``default``, and no ``elotl``
  Namespace is rendered;
- a variable of ours by its old name (``NOVA_RENDER_OUTPUT``, ``NOVA_QUIET``, ``NOVA_FORCE_TERMINAL``) is
  ignored with one line naming its new name; the new names (``NOVA_GITOPS_*``) are read; ``NOVA_NAMESPACE``,
  though once ours, is Nova's and never mentioned;
- everything ``nova-gitops`` reads starts with ``NOVA_GITOPS_`` and everything ``nova-agent`` reads with
  ``NOVA_AGENT_``, none of them a name of Nova's; the deploy manifests name only variables their program
  reads.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from nova_agent.cli import main as agent_main
from nova_gitops.cli import variables
from nova_gitops.cli.controller import SECRET_ENVIRONMENT
from nova_gitops.cli.main import READ_BY_NAME, cli
from nova_gitops.clients import terminals
from nova_gitops.scheduling.grouping import fnv1_32
from tests.cli.test_nova_tutorials import nova_cluster, schedule_policy, workload

REPO = Path(__file__).resolve().parents[2]
NOVA_GITOPS = Path(sys.executable).parent / "nova-gitops"

NOVA_README = {  # try-nova's README, "Try Nova on KIND" and "Try Nova on vCluster"
    "NOVA_NAMESPACE": "elotl",
    "NOVA_CONTROLPLANE_CONTEXT": "nova",
    "K8S_CLUSTER_CONTEXT_1": "k8s-cluster-1",
    "K8S_CLUSTER_CONTEXT_2": "k8s-cluster-2",
    "K8S_HOSTING_CLUSTER_CONTEXT": "kind-hosting-cluster",
    "NOVA_WORKLOAD_CLUSTER_1": "wlc-1",
    "NOVA_WORKLOAD_CLUSTER_2": "wlc-2",
    "K8S_HOSTING_CLUSTER": "hosting-cluster",
    "VCLUSTER_1": "vcluster-1",
    "VCLUSTER_2": "vcluster-2",
}
NOVA_ENVIRONMENT = {
    **{name: "1" for name in variables.NOVA_VARIABLES},
    **NOVA_README,
    "NOVA_WORKLOAD_CLUSTER_3": "x",
}
"""The README's exports, and every other variable try-nova's scripts and Nova's docs set."""

GROUP = f"app-guestbook-{fnv1_32('redis')}"


def without_novas(environ: dict[str, str]) -> dict[str, str]:
    return {
        name: value for name, value in environ.items() if not name.startswith(("NOVA_", "K8S_", "VCLUSTER"))
    }


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout


def quickstart(root: Path) -> None:
    """try-nova's README quickstart as a source: wlc-1 and wlc-2, the 20:80 spread-group-policy selecting
    namespace default, and the nginx Deployment (10 replicas) naming no namespace; committed, then its
    replicas changed in the work tree; and a redis-leader its own policy places on one cluster. Beside it:
    two renders, and two empty rendered repositories."""
    source = root / "src"
    source.mkdir(parents=True)
    policy = schedule_policy(
        "spread-group-policy",
        {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "default"}},
            "groupBy": {"labelKey": "app"},
            "spreadConstraints": {
                "topologyKey": "kubernetes.io/metadata.name",
                "percentageSplit": [
                    {"topologyValue": "wlc-1", "percentage": 20},
                    {"topologyValue": "wlc-2", "percentage": 80},
                ],
            },
            "clusterSelector": {
                "matchExpressions": [
                    {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["wlc-1", "wlc-2"]}
                ]
            },
            "resourceSelectors": {"labelSelectors": [{"matchLabels": {"group-policy": "nginx-spread"}}]},
        },
    )
    nginx = workload("nginx", {"app": "nginx", "group-policy": "nginx-spread"}, replicas=10)
    guestbook = schedule_policy(
        "app-guestbook",
        {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "default"}},
            "groupBy": {"labelKey": "app"},
            "resourceSelectors": {"labelSelectors": [{"matchLabels": {"app": "redis"}}]},
        },
    )
    redis = workload("redis-leader", {"app": "redis"})
    documents = [nova_cluster("wlc-1"), nova_cluster("wlc-2"), policy, nginx, guestbook, redis]
    (source / "fleet.yaml").write_text(yaml.safe_dump_all(documents, sort_keys=False))
    git("init", "--quiet", "--initial-branch=main", cwd=source)
    git("add", "-A", cwd=source)
    git("commit", "--quiet", "-m", "quickstart", cwd=source)
    assert CliRunner().invoke(cli, ["render", str(source), "-o", str(root / "old")]).exit_code == 0
    nginx["spec"]["replicas"] = 5
    (source / "fleet.yaml").write_text(yaml.safe_dump_all(documents, sort_keys=False))
    assert CliRunner().invoke(cli, ["render", str(source), "-o", str(root / "new")]).exit_code == 0
    for name in ("rendered.git", "rendered2.git"):
        git("init", "--quiet", "--bare", "--initial-branch=main", str(root / name), cwd=root)


def url(name: str) -> str:
    return f"file://{Path.cwd() / name}"


def here(name: str) -> str:
    return str(Path.cwd() / name)


CASES: dict[str, Callable[[], list[list[str]]]] = {
    "render": lambda: [["render", "src", "-o", "out"], ["render", "src", "-o", "out", "--no-previous"]],
    "validate": lambda: [["validate", "src", "--strict"]],
    "explain": lambda: [
        ["explain", "src", "deployment/nginx"],
        ["explain", "src", "deployment/nginx", "-o", "json"],
    ],
    "get": lambda: [
        ["get", "schedulegroups", "src"],
        ["get", "placements", "src", "-o", "json"],
        ["get", "clusters", "src", "-o", "yaml"],
    ],
    "publish": lambda: [["publish", "src", "--repo", url("rendered.git"), "--cache-dir", here("cache")]],
    "diff": lambda: [
        ["diff", "old", "new"],
        ["diff", "--source", "src", "--base", "main", "--cache-dir", here("cache"), "--format", "json"],
    ],
    "controller": lambda: [
        [
            "controller",
            "--source",
            "src",
            "--repo",
            url("rendered2.git"),
            "--once",
            "--cache-dir",
            here("cache"),
        ]
    ],
    "rollout": lambda: [["rollout", "status", "--repo", url("rendered.git"), "--source", "src"]],
    "pin": lambda: [["pin", "deployment/nginx", "wlc-1", "--source", "src"]],
    "unpin": lambda: [["unpin", "deployment/nginx", "--source", "src", "--dry-run"]],
    "split": lambda: [["split", "spread-group-policy", "wlc-1=50", "wlc-2=50", "--source", "src"]],
    "move": lambda: [["move", GROUP, "wlc-2", "--source", "src", "--dry-run"]],
    "cordon": lambda: [["cordon", "wlc-1", "--source", "src"]],
    "uncordon": lambda: [["uncordon", "wlc-1", "--source", "src", "--dry-run"]],
    "completion": lambda: [["completion", "bash"], ["completion", "zsh"]],
    "whatif": lambda: [
        ["whatif", "src", "--without", "wlc-1"],
        ["whatif", "src", "--cordon", "wlc-2", "-o", "json"],
    ],
    "headroom": lambda: [["headroom", "src"], ["headroom", "src", "-o", "markdown"]],
    "report": lambda: [["report", "src", "-o", "fleet.html"]],
}
LOG_TIME = re.compile(r'"(?:time|ts|timestamp)": ?"[^"]*"|"duration": ?[0-9.e-]+')
"""What the controller's JSON log lines hold of the clock: left out of the comparison."""


def test_every_command_has_a_case() -> None:
    assert set(CASES) == set(cli.commands)


def snapshot(root: Path) -> dict[str, Any]:
    """Every file a command may write under ``root`` (git's own directories left out), and every ref of
    each repository with what it points at (pinned identities and dates: equal content, equal ids)."""
    files = {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
        and not {".git", "cache", "rendered.git", "rendered2.git"} & set(path.relative_to(root).parts)
    }
    refs = {name: git("for-each-ref", cwd=root / name) for name in ("src", "rendered.git", "rendered2.git")}
    return {"files": files, "refs": refs}


def ran(root: Path, pristine: Path, cases: Callable[[], list[list[str]]], env: dict[str, str]) -> list[Any]:
    """The commands of ``cases`` (made in ``root``, for its absolute paths) run in order in a fresh copy of
    ``pristine`` at ``root`` (the same path every time, so nothing differs but the environment), with
    ``env`` added to the process's environment."""
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(pristine, root, symlinks=True)
    results: list[Any] = []
    previous = Path.cwd()
    os.chdir(root)
    try:
        for command in cases():
            result = CliRunner().invoke(cli, command, env=env, catch_exceptions=False)
            results.append((command, result.exit_code, result.stdout, LOG_TIME.sub("TIME", result.stderr)))
    finally:
        os.chdir(previous)
    results.append(snapshot(root))
    return results


@pytest.fixture
def pristine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith(("NOVA_", "K8S_", "VCLUSTER")) and name != "NOVA_TEST_KUBECONFIG":
            monkeypatch.delenv(name)
    monkeypatch.setenv("GIT_AUTHOR_DATE", "2026-11-30T12:00:00Z")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-11-30T12:00:00Z")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    quickstart(tmp_path / "pristine")
    return tmp_path / "pristine"


@pytest.mark.parametrize("command", sorted(CASES))
def test_novas_environment_changes_nothing(command: str, pristine: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    plain = ran(work, pristine, CASES[command], {})
    with_novas = ran(work, pristine, CASES[command], NOVA_ENVIRONMENT)
    assert with_novas == plain
    assert not any(code == 3 for _, code, _, _ in plain[:-1]), plain  # each ran, none crashed
    assert not [path for path in with_novas[-1]["files"] if "elotl" in path]  # NOVA_NAMESPACE not read


def test_the_quickstart_in_novas_shell_renders_into_default(pristine: Path, tmp_path: Path) -> None:
    """The issue's reproduction: NOVA_NAMESPACE=elotl rendered nginx into clusters/wlc-1/elotl/."""
    result = CliRunner().invoke(
        cli, ["render", str(pristine / "src"), "-o", str(tmp_path / "out")], env=NOVA_ENVIRONMENT
    )
    assert result.exit_code == 0 and result.stderr.startswith(
        "rendered "
    )  # not a word about Nova's variables
    assert (tmp_path / "out/clusters/wlc-1/default/deployment-nginx.yaml").is_file()
    assert not list((tmp_path / "out").rglob("*elotl*"))


@pytest.mark.parametrize("args", [["render", "src", "-o", "out"], ["validate", "src"]])
def test_real_processes_too(args: list[str], pristine: Path, tmp_path: Path) -> None:
    runs = []
    work = tmp_path / "work"
    for extra in ({}, NOVA_ENVIRONMENT):
        if work.exists():
            shutil.rmtree(work)
        shutil.copytree(pristine, work, symlinks=True)
        environ = {**without_novas(dict(os.environ)), **extra}
        done = subprocess.run(
            [str(NOVA_GITOPS), *args], cwd=work, env=environ, capture_output=True, text=True, check=False
        )
        runs.append((done.returncode, done.stdout, done.stderr, snapshot(work)))
    assert runs[0] == runs[1] and runs[0][0] == 0
    assert not [path for path in runs[1][3]["files"] if "elotl" in path]


def test_an_old_name_of_ours_is_ignored_and_named(pristine: Path, tmp_path: Path) -> None:
    old = {"NOVA_RENDER_OUTPUT": str(tmp_path / "old-out"), "NOVA_QUIET": "1", "NOVA_FORCE_TERMINAL": "1"}
    result = CliRunner().invoke(cli, ["render", str(pristine / "src"), "-o", str(tmp_path / "out")], env=old)
    assert result.exit_code == 0
    assert result.stderr.splitlines()[:3] == [
        "warning: NOVA_FORCE_TERMINAL is ignored: nova-gitops reads NOVA_GITOPS_FORCE_TERMINAL (NOVA_ alone "
        "is Elotl Nova's)",
        "warning: NOVA_QUIET is ignored: nova-gitops reads NOVA_GITOPS_QUIET (NOVA_ alone is Elotl Nova's)",
        "warning: NOVA_RENDER_OUTPUT is ignored: nova-gitops reads NOVA_GITOPS_RENDER_OUTPUT (NOVA_ alone is "
        "Elotl Nova's)",
    ]
    assert not (tmp_path / "old-out").exists() and "\x1b" not in result.stderr  # neither read nor forced
    # another command never read NOVA_RENDER_OUTPUT: nothing said about it there
    result = CliRunner().invoke(cli, ["validate", str(pristine / "src")], env={"NOVA_RENDER_OUTPUT": "x"})
    assert result.exit_code == 0 and "NOVA_RENDER_OUTPUT" not in result.stderr


def test_the_new_names_are_read(pristine: Path, tmp_path: Path) -> None:
    new = {"NOVA_GITOPS_RENDER_OUTPUT": str(tmp_path / "out"), "NOVA_GITOPS_NAMESPACE": "web"}
    result = CliRunner().invoke(cli, ["render", str(pristine / "src")], env=new)
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "out/placement.yaml").is_file()
    assert "Deployment.apps/web/nginx is not scheduled" in result.stderr  # -n web, from the environment
    shown = CliRunner().invoke(
        cli, ["get", "clusters", str(pristine / "src")], env={terminals.FORCE_TERMINAL: "1"}
    )
    assert "─" in shown.stdout  # a rich table: decorated as on a terminal


def test_what_each_program_reads_is_its_own() -> None:
    ours = set(variables.read_by(cli, variables.PREFIX))
    ours |= {terminals.FORCE_TERMINAL, *SECRET_ENVIRONMENT.values()}
    ours |= {name for names in READ_BY_NAME.values() for name in names}
    assert all(name.startswith("NOVA_GITOPS_") for name in ours), sorted(ours)
    agents = set(variables.read_by(agent_main, "NOVA_AGENT")) | {terminals.AGENT_FORCE_TERMINAL}
    assert all(name.startswith("NOVA_AGENT_") for name in agents), sorted(agents)
    assert not [name for name in ours | agents if variables.is_novas(name)]
    # what was ours and is Nova's too is the one old name never mentioned
    olds = {variables.old_name(name) for name in ours}
    assert sorted(name for name in olds if name and variables.is_novas(name)) == ["NOVA_NAMESPACE"]


def test_the_deploy_manifests_name_only_what_their_program_reads() -> None:
    ours = set(variables.read_by(cli, variables.PREFIX)) | set(SECRET_ENVIRONMENT.values())
    agents = set(variables.read_by(agent_main, "NOVA_AGENT"))
    named = 0
    for path in sorted((REPO / "deploy").rglob("*.yaml")):
        for name in re.findall(r"\bNOVA_[A-Z0-9_]*[A-Z0-9](?![A-Z0-9_])", path.read_text()):
            named += 1
            assert name in (agents if "/agent/" in str(path) else ours), f"{path}: {name}"
    assert named >= 20
