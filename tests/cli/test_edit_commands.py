"""The source-editing commands (``nova-gitops pin|unpin|split|move|cordon|uncordon``), on real files in real
git work trees:

- ``split web-spread us-east-1=70 us-central1=30`` in a clone of the example changes the two percentages
  and nothing else, and prints what ``diff --source . --base HEAD`` prints once the edit is made;
- ``split`` refuses a sum other than 100, a domain the policy's clusters do not have (with "did you mean"),
  an unknown policy (with "did you mean") and a policy that does not Divide; the file stays byte for byte;
- ``pin`` then ``unpin`` gives the file back byte for byte; ``pin`` to an unknown cluster suggests one;
  ``unpin`` of an object that is not pinned says so and changes nothing;
- ``--dry-run`` prints the diff and writes nothing;
- an edit whose result would not validate writes nothing (file unchanged byte for byte), and lists the
  problems with their line, column and caret;
- the edited file keeps its mode, and no temporary file is left beside it;
- ``cordon`` labels the Cluster, ``get clusters`` shows CORDONED True, a new object's reason says
  "cordoned", ``move`` onto it is refused, ``uncordon`` removes the label (and the labels it emptied);
- ``move GROUP CLUSTER`` pins every object of the group, which the diff shows moving;
- in a kustomize source, an object is edited in the file it came from (the base), and an object kustomize
  generated (a configMapGenerator's ConfigMap) is refused.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from nova_gitops.cli.main import cli
from nova_gitops.errors import InputError
from nova_gitops.workflows import editing
from tests.builders import cluster, deployment, policy

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "repo-layout" / "source"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def committed(root: Path) -> Path:
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "source")
    return root


def small_source(root: Path, *extra: dict[str, Any]) -> Path:
    """Two clusters, a policy, two Deployments of one group (``part-of: shop``), each file written by hand
    style: the workloads' file has a comment the edits must keep."""
    root.mkdir(parents=True)
    clusters = [cluster("c1", cpu="8"), cluster("c2", cpu="8")]
    (root / "clusters.yaml").write_text(yaml.dump_all(clusters, sort_keys=False))
    grouped = policy("p", groupBy={"labelKey": "part-of"})
    (root / "policy.yaml").write_text(yaml.dump_all([grouped, *extra], sort_keys=False))
    web = deployment("web", labels={"app": "demo", "part-of": "shop"})
    api = deployment("api", labels={"app": "demo", "part-of": "shop"})
    text = "# the shop's workloads: keep this comment\n" + yaml.dump_all([web, api], sort_keys=False)
    (root / "apps.yaml").write_text(text)
    return committed(root)


def test_split_in_a_clone_of_the_example_prints_what_diff_base_head_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = committed(Path(shutil.copytree(EXAMPLE, tmp_path / "source")))
    policy_file = source / "policies" / "web-spread.yaml"
    before = policy_file.read_text()
    monkeypatch.chdir(source)
    code, printed, stderr = run("split", "web-spread", "us-east-1=70", "us-central1=30")
    assert code == 0, stderr
    assert "edited policies/web-spread.yaml" in stderr
    assert policy_file.read_text() == before.replace("percentage: 60", "percentage: 70").replace(
        "percentage: 40", "percentage: 30"
    )
    code, expected, _ = run("diff", "--source", ".", "--base", "HEAD", "--no-color")
    assert code == 1 and printed == expected
    assert "Placement changes:" in printed and "replicas Deployment web/storefront" in printed


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["web-spread", "us-east-1=70", "us-central1=20"], "percentages must sum to 100, got 70 + 20 = 90"),
        (["web-spread", "us-east-1=70", "us-centrl1=30"], "did you mean us-central1"),
        (
            ["web-sprad", "us-east-1=70", "us-central1=30"],
            "no SchedulePolicy web-sprad in the source; did you mean web-spread?",
        ),
        (["batch-fill-and-spill", "us-east-1=100"], "has no spreadConstraints"),
        (["web-spread", "us-east-1"], "is not CLUSTER_OR_DOMAIN=PERCENT"),
    ],
)
def test_split_refusals_leave_the_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, arguments: list[str], message: str
) -> None:
    source = Path(shutil.copytree(EXAMPLE / "policies", tmp_path / "source" / "policies")).parent
    shutil.copytree(EXAMPLE / "clusters", source / "clusters")
    before = {path: path.read_bytes() for path in source.rglob("*.yaml")}
    code, _, stderr = run("split", "--source", str(source), *arguments)
    assert code == 2 and message in stderr
    assert {path: path.read_bytes() for path in source.rglob("*.yaml")} == before


def test_pin_then_unpin_gives_the_file_back_byte_for_byte(tmp_path: Path) -> None:
    source = small_source(tmp_path / "src")
    apps = source / "apps.yaml"
    os.chmod(apps, 0o640)
    original = apps.read_bytes()
    code, printed, stderr = run("pin", "deployment/demo/web", "c2", "--source", str(source))
    assert code == 0, stderr
    pinned = yaml.safe_load_all(apps.read_text())
    web = next(document for document in pinned if document["metadata"]["name"] == "web")
    assert web["metadata"]["annotations"] == {"nova.elotl.co/cluster": "c2"}
    assert apps.read_text().startswith("# the shop's workloads: keep this comment\n")
    assert stat.S_IMODE(apps.stat().st_mode) == 0o640
    assert sorted(path.name for path in source.iterdir()) == [
        ".git",
        "apps.yaml",
        "clusters.yaml",
        "policy.yaml",
    ]
    assert "Placement changes:" in printed
    code, _, stderr = run("unpin", "deploy/web", "--source", str(source))
    assert code == 0, stderr
    assert apps.read_bytes() == original
    code, printed, stderr = run("unpin", "deploy/web", "--source", str(source))
    assert code == 0 and "note: deployment/demo/web is not pinned" in stderr and printed == "No changes.\n"


def test_pin_names_what_it_does_not_know_with_suggestions(tmp_path: Path) -> None:
    source = small_source(tmp_path / "src")
    code, _, stderr = run("pin", "deployment/demo/web", "c-1", "--source", str(source))
    assert code == 2 and "no cluster c-1 in the source; did you mean c1?" in stderr
    code, _, stderr = run("pin", "deployment/demo/web", "wlc-9", "--source", str(source))
    assert code == 2 and "no cluster wlc-9 in the source; the source has c1, c2" in stderr
    code, _, stderr = run("pin", "deployment/demo/wbe", "c1", "--source", str(source))
    assert code == 2 and "did you mean deployment/demo/web" in stderr
    assert git(source, "status", "--porcelain") == ""


def test_dry_run_prints_the_diff_and_writes_nothing(tmp_path: Path) -> None:
    source = small_source(tmp_path / "src")
    code, printed, stderr = run("pin", "deployment/demo/web", "c2", "--dry-run", "--source", str(source))
    assert code == 0 and "would edit" in stderr and "Placement changes:" in printed
    assert git(source, "status", "--porcelain") == ""


def test_an_edit_that_would_not_validate_writes_nothing(tmp_path: Path) -> None:
    source = small_source(tmp_path / "src")
    before = (source / "apps.yaml").read_bytes()
    loaded = editing.load(source)

    def breaks(text: str) -> str:
        return text.replace("  name: web\n", "  name: Web_\n", 1)

    with pytest.raises(InputError) as raised:
        editing.edit(
            loaded,
            [editing.TextChange("apps.yaml", "Deployment web", breaks, {})],
            lambda _: None,
            dry_run=False,
        )
    (problem,) = raised.value.problems
    assert problem.pointed().splitlines()[1:] == ["      name: Web_", "      ^"]
    assert (source / "apps.yaml").read_bytes() == before


def test_cordon_shows_in_get_clusters_and_in_reasons_and_refuses_moves(tmp_path: Path) -> None:
    source = small_source(tmp_path / "src")
    clusters_file = source / "clusters.yaml"
    original = clusters_file.read_bytes()
    code, _, stderr = run("cordon", "c1", "--source", str(source))
    assert code == 0, stderr
    assert 'nova.elotl.co/cordoned: "true"' in clusters_file.read_text()
    code, table, _ = run("get", "clusters", str(source))
    header, first = table.splitlines()[:2]
    start = header.index("CORDONED")
    assert first[start : start + len("CORDONED")].strip() == "True"
    code, explained, _ = run("explain", str(source), "deployment/demo/web")
    assert "Cluster c1 skipped, cordoned;" in explained
    code, groups, _ = run("get", "schedulegroups", str(source), "-o", "json")
    group = yaml.safe_load(groups)["items"][0]["metadata"]["name"]
    code, _, stderr = run("move", group, "c1", "--source", str(source))
    assert code == 2 and "cluster c1 is cordoned" in stderr
    code, _, stderr = run("uncordon", "c1", "--source", str(source))
    assert code == 0, stderr
    # the builder wrote c1's labels as "{}": cordon made them a block, and uncordon removes the emptied one
    assert clusters_file.read_bytes() == original.replace(b"  labels: {}\n", b"", 1)


def test_move_pins_every_object_of_the_group(tmp_path: Path) -> None:
    source = small_source(tmp_path / "src")
    code, groups, _ = run("get", "schedulegroups", str(source), "-o", "json")
    (group,) = yaml.safe_load(groups)["items"]
    name, cluster_now = group["metadata"]["name"], group["metadata"]["labels"]["nova.elotl.co/target-cluster"]
    other = "c2" if cluster_now == "c1" else "c1"
    code, _, stderr = run("move", name + "x", other, "--source", str(source))
    assert code == 2 and f"did you mean {name}?" in stderr
    code, printed, stderr = run("move", name, other, "--source", str(source))
    assert code == 0, stderr
    pins = [d["metadata"]["annotations"] for d in yaml.safe_load_all((source / "apps.yaml").read_text())]
    assert pins == [{"nova.elotl.co/cluster": other}] * 2
    assert f"removed (was on {cluster_now})" in printed


@pytest.mark.skipif(
    shutil.which("kustomize") is None and shutil.which("kubectl") is None, reason="no kustomize to build with"
)
def test_a_kustomize_source_is_edited_in_its_files_never_in_generated_output(tmp_path: Path) -> None:
    source = committed(Path(shutil.copytree(EXAMPLE.parents[1] / "kustomize" / "source", tmp_path / "src")))
    code, printed, stderr = run("pin", "deployment/shop/web", "wlc-1", "--source", str(source))
    assert code == 0, stderr
    assert git(source, "status", "--porcelain").split() == ["M", "apps/web/base/deployment.yaml"]
    assert "group annotation-" in printed
    generated = next(
        item["name"]
        for item in yaml.safe_load(run("get", "placements", str(source), "-o", "json")[1])["items"]
        if item["kind"] == "ConfigMap"
    )
    code, _, stderr = run("pin", f"configmap/shop/{generated}", "wlc-1", "--source", str(source))
    assert code == 2 and "is generated by kustomize (apps/web/overlays/prod/kustomization.yaml)" in stderr
    assert git(source, "status", "--porcelain").split() == ["M", "apps/web/base/deployment.yaml"]
