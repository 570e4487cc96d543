"""``nova-gitops whatif`` and ``nova-gitops headroom`` on the bundled example (examples/repo-layout), as users
run them:

- ``headroom`` lists every loss worst first (wlc-gpu strands both GPU groups), exits 1 when a loss strands a
  group and 0 when every stranded group is ``--ignore``d; ``--domain`` loses a region at once; JSON and
  Markdown carry the same losses;
- ``whatif`` prints diff's placement changes, what becomes unschedulable and the capacity after, in text,
  Markdown and JSON; exits 1 when something becomes unschedulable, 0 when all stays placed; a new Cluster
  file can take what a lost cluster held;
- bad input exits 2 with the flag or the file and line named: an unknown cluster or workload, a malformed
  percentage, a file that is not a Cluster, a label no cluster has, an ``--ignore`` naming nothing, no
  change at all.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from nova_gitops.cli.main import cli
from tests.builders import cluster

ROOT = Path(__file__).resolve().parents[2]
SOURCE = str(ROOT / "examples" / "repo-layout" / "source")
RENDERED = str(ROOT / "examples" / "repo-layout" / "rendered")


@pytest.fixture(autouse=True)
def _caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_headroom_lists_the_worst_loss_first_and_fails_the_gate() -> None:
    code, stdout, _ = run("headroom", SOURCE, "--previous", RENDERED)
    assert code == 1
    rows = [line.split()[0] for line in stdout.splitlines()[3:9]]
    assert rows == [
        "wlc-gpu",
        "wlc-aws-east-1",
        "wlc-burst",
        "wlc-aws-east-2",
        "wlc-gcp-central",
        "wlc-onprem",
    ]
    assert (
        "losing wlc-gpu strands gpu-training-36755b20 (policy gpu-training; Job.batch/ml/finetune-llm)"
        in stdout
    )
    assert "0 nvidia.com/gpu free elsewhere" in stdout
    assert stdout.rstrip().endswith("some loss strands a group.")


def test_headroom_passes_when_every_stranded_group_is_accepted() -> None:
    ignored = ("--ignore", "gpu-training", "--ignore", "batch-fill-and-spill", "--ignore", "annotation-*")
    code, stdout, _ = run("headroom", SOURCE, *ignored)
    assert code == 0, stdout
    assert "Accepted (--ignore):" in stdout and stdout.rstrip().endswith("no loss strands a group.")


def test_headroom_json_and_markdown_carry_the_losses() -> None:
    code, stdout, _ = run("headroom", SOURCE, "-o", "json")
    assert code == 1
    report = json.loads(stdout)
    assert report["strands"] is True and report["clusters"] == 6
    gpu = report["losses"][0]
    assert gpu["name"] == "wlc-gpu" and gpu["clusters"] == ["wlc-gpu"]
    assert gpu["shortfall"] == {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "4"}
    assert {item["why"] for item in gpu["stranded"]} == {"no-candidate"}
    assert gpu["stranded"][0]["freeElsewhere"]["nvidia.com/gpu"] == "0"
    onprem = next(loss for loss in report["losses"] if loss["name"] == "wlc-onprem")
    assert onprem["scaleUps"] == ["batch-fill-and-spill-91fee4fe"]  # placed on wlc-burst, which must grow
    assert {move["kind"] for move in onprem["moved"]} == {"moved"}
    code, stdout, _ = run("headroom", SOURCE, "-o", "markdown")
    assert code == 1
    assert stdout.startswith("### Failover headroom\n")
    assert "| :x: `wlc-gpu` | 0 | 2 |" in stdout and "#### Stranded" in stdout


def test_headroom_by_domain_loses_a_region_at_once() -> None:
    code, stdout, _ = run("headroom", SOURCE, "--domain", "nova.elotl.co/cluster.region", "-o", "json")
    assert code == 1
    losses = {loss["name"]: loss["clusters"] for loss in json.loads(stdout)["losses"]}
    assert losses["nova.elotl.co/cluster.region=us-east-1"] == ["wlc-aws-east-1", "wlc-aws-east-2"]
    assert losses["nova.elotl.co/cluster.region=us-central1"] == ["wlc-gcp-central", "wlc-gpu"]


def test_whatif_shows_the_diff_what_is_stranded_and_the_capacity_after() -> None:
    code, stdout, _ = run("whatif", SOURCE, "--without", "wlc-gpu", "--previous", RENDERED)
    assert code == 1
    assert stdout.startswith("What if --without wlc-gpu\n\nPlacement changes:\n")
    assert "  group gpu-training-36755b20 moved wlc-gpu → (none)\n" in stdout
    assert "  wlc-gpu: +0 ~0 -9\n" in stdout
    assert "Becomes unschedulable:\n  gpu-training-36755b20 (policy gpu-training;" in stdout
    capacity = stdout.split("Capacity after (used / free):\n")[1].splitlines()
    assert capacity[0].split()[:2] == ["CLUSTER", "GROUPS"]
    assert [line.split()[:2] for line in capacity if "wlc-gpu" in line] == [["wlc-gpu", "lost"]]


def test_whatif_json_and_markdown() -> None:
    args = ("whatif", SOURCE, "--capacity", "wlc-aws-east-1=40", "--scale", "deployment/web/storefront=40")
    code, stdout, _ = run(*args, "-o", "json")
    document = json.loads(stdout)
    assert code == (1 if document["unschedulable"] else 0)
    assert document["changes"] == ["--capacity wlc-aws-east-1=40", "--scale deployment/web/storefront=40"]
    assert {"summary", "groups", "replicas", "newlyUnscheduled", "files", "capacity"} <= document.keys()
    east = next(row for row in document["capacity"] if row["cluster"] == "wlc-aws-east-1")
    assert east["lost"] is False and "cpu" in east["freeToday"]
    code, stdout, _ = run(*args, "-o", "markdown")
    assert stdout.startswith("### What if --capacity wlc-aws-east-1=40 --scale deployment/web/storefront=40")
    assert "#### Capacity after (used / free)" in stdout


def test_a_new_cluster_takes_what_a_lost_one_held(tmp_path: Path) -> None:
    new = cluster(
        "wlc-gpu-2",
        nodes={"gpu-node": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8"}},
        labels={"env": "prod", "accelerator": "nvidia"},
    )
    path = tmp_path / "gpu-2.yaml"
    path.write_text(yaml.safe_dump(new))
    code, stdout, _ = run("whatif", SOURCE, "--without", "wlc-gpu", "--add-cluster", str(path))
    assert code == 0, stdout
    assert "group gpu-training-36755b20 moved wlc-gpu → wlc-gpu-2" in stdout
    assert "Becomes unschedulable" not in stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--without", "nope"), "error: --without nope: no cluster nope in the inventory"),
        (("--capacity", "wlc-gpu=half"), "error: --capacity wlc-gpu=half: give CLUSTER=PERCENT"),
        (("--capacity", "wlc-gpu=5000"), "a whole percentage from 0 to 1000"),
        (("--scale", "deployment/shop/nope=3"), "error: --scale deployment/shop/nope=3: no object"),
        (("--scale", "deployment/web/storefront"), "give KIND/[NAMESPACE/]NAME=REPLICAS"),
        (("--scale", "configmap/shop/blue-frontend-config=3"), "has no replica count to scale"),
        (("--add-cluster", "missing.yaml"), "error: --add-cluster missing.yaml: not a file"),
        ((), "give at least one change"),
    ],
)
def test_bad_changes_exit_2_naming_the_flag(args: tuple[str, ...], message: str) -> None:
    code, stdout, stderr = run("whatif", SOURCE, *args)
    assert code == 2 and stdout == ""
    assert message in stderr


def test_a_cluster_file_with_another_kind_is_refused_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "extra.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    code, _, stderr = run("whatif", SOURCE, "--add-cluster", str(path))
    assert code == 2
    assert f"{path}:1: --add-cluster takes Cluster documents" in stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--domain", "rack"), "error: --domain rack: no cluster has the label rack"),
        (("--ignore", "nope"), "error: --ignore nope: no group or policy of that name"),
    ],
)
def test_bad_headroom_flags_exit_2(args: tuple[str, ...], message: str) -> None:
    code, stdout, stderr = run("headroom", SOURCE, *args)
    assert code == 2 and stdout == ""
    assert message in stderr


def test_headroom_is_the_same_whatever_the_processes() -> None:
    one = run("headroom", SOURCE, "-o", "json", "-j", "1")
    assert one == run("headroom", SOURCE, "-o", "json", "-j", "3")
    assert one[0] == 1
