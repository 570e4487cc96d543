"""The render/validate/explain/get commands as users run them:

- `render` on the bundled example reproduces the committed output byte for byte, and kubectl builds it;
- a re-render into the same directory writes nothing; a removed object is a removed file;
- invalid input exits 2, lists every problem as file:line: message, and writes nothing;
- `validate --strict` fails on overlapping policies; `explain` and `get` print what the plan decided;
- `nova-gitops --help` works as a real subprocess (the installed console script).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from nova_gitops.cli.main import cli
from tests.builders import cluster, deployment, policy

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "repo-layout"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()
    }


def write_source(root: Path, *documents: dict[str, object], name: str = "source.yaml") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(yaml.dump_all(documents, Dumper=yaml.CSafeDumper, sort_keys=False))
    return root


def test_example_renders_to_the_committed_bytes(tmp_path: Path) -> None:
    code, _, stderr = run("render", str(EXAMPLE / "source"), "-o", str(tmp_path / "out"))
    assert code == 0, stderr
    assert tree(tmp_path / "out") == tree(EXAMPLE / "rendered")


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_every_rendered_cluster_builds_with_kubectl_kustomize() -> None:
    for cluster_dir in sorted((EXAMPLE / "rendered" / "clusters").iterdir()):
        built = subprocess.run(["kubectl", "kustomize", str(cluster_dir)], capture_output=True, text=True)
        assert built.returncode == 0, built.stderr
        kinds = {doc["kind"] for doc in yaml.load_all(built.stdout, Loader=yaml.CSafeLoader)}
        assert "SchedulePolicy" not in kinds and "Cluster" not in kinds


def test_rerender_writes_nothing_and_removed_objects_lose_their_files(tmp_path: Path) -> None:
    source = write_source(tmp_path / "src", cluster("c1"), policy("p"), deployment("web"), deployment("api"))
    out = tmp_path / "out"
    assert run("render", str(source), "-o", str(out))[0] == 0
    code, _, stderr = run("render", str(source), "-o", str(out))
    assert code == 0 and "0 written" in stderr
    write_source(tmp_path / "src", cluster("c1"), policy("p"), deployment("web"))
    assert run("render", str(source), "-o", str(out))[0] == 0
    assert (out / "clusters/c1/demo/deployment-web.yaml").exists()
    assert not (out / "clusters/c1/demo/deployment-api.yaml").exists()


def test_every_group_of_a_longest_policy_name_keeps_its_own_file(tmp_path: Path) -> None:
    name = ("p" * 63 + ".") * 3 + "q" * 61  # 253 characters: each group's file name is shortened
    teams = ("v51707", "v132617")  # their files shared one name when 32 bits of a digest told them apart
    workloads = (deployment(f"w{team}", labels={"app": "demo", "team": team}) for team in teams)
    grouped = policy(name, groupBy={"labelKey": "team"})
    source = write_source(tmp_path / "src", cluster("c1"), grouped, *workloads)
    out = tmp_path / "out"
    code, _, stderr = run("render", str(source), "-o", str(out))
    assert code == 0, stderr
    files = sorted((out / "placement" / name).glob("*.yaml"))
    documents = [yaml.load(path.read_text(), Loader=yaml.CSafeLoader) for path in files]
    assert sorted(document["groupBy"]["value"] for document in documents) == sorted(teams)


def test_invalid_input_lists_every_problem_and_writes_nothing(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n")
    (source / "b.yaml").write_text(
        "apiVersion: policy.elotl.co/v1alpha1\nkind: SchedulePolicy\nmetadata:\n  name: p\nspec:\n"
        "  spreadConstraints:\n    spreadMode: Divide\n    topologyKey: region\n    percentageSplit:\n"
        "    - topologyValue: a\n      percentage: 70\n    - topologyValue: b\n      percentage: 20\n"
    )
    (source / "c.yaml").write_text("key: [unclosed\n")
    out = tmp_path / "out"
    code, _, stderr = run("render", str(source), "-o", str(out))
    assert code == 2
    lines = [line for line in stderr.splitlines() if line and not line.startswith("error:")]
    assert any(line.startswith("a.yaml:4:3: ") and "Bad_Name" in line for line in lines), stderr
    assert "\n      name: Bad_Name\n      ^\n" in stderr  # the line quoted, a caret under the column
    assert any(line.startswith("b.yaml:") and "100" in line for line in lines), stderr
    assert any(line.startswith("c.yaml:") and "invalid YAML" in line for line in lines), stderr
    assert not out.exists()


def test_a_failed_render_leaves_the_previous_output_untouched(tmp_path: Path) -> None:
    source = write_source(tmp_path / "src", cluster("c1"), policy("p"), deployment("web"))
    out = tmp_path / "out"
    assert run("render", str(source), "-o", str(out))[0] == 0
    before = tree(out)
    (source / "broken.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n")
    assert run("render", str(source), "-o", str(out))[0] == 2
    assert tree(out) == before


def test_validate_strict_fails_on_overlapping_policies(tmp_path: Path) -> None:
    source = write_source(tmp_path / "src", cluster("c1"), policy("a"), policy("b"), deployment("web"))
    assert run("validate", str(source))[0] == 0
    code, _, stderr = run("validate", str(source), "--strict")
    assert code == 1
    assert "matches several SchedulePolicies (a, b)" in stderr
    assert run("validate", str(EXAMPLE / "source"), "--strict")[0] == 0


def test_explain_names_policy_group_candidates_and_choice() -> None:
    code, stdout, _ = run("explain", str(EXAMPLE / "source"), "job/ml/finetune-llm")
    assert code == 0
    assert "Policy:     gpu-training" in stdout
    assert "Picked cluster wlc-gpu because it has enough resources;" in stdout
    code, stdout, _ = run("explain", str(EXAMPLE / "source"), "deploy/web/storefront", "-o", "json")
    explanation = json.loads(stdout)
    assert sum(copy["replicas"] for copy in explanation["clusters"].values()) == 10
    assert run("explain", str(EXAMPLE / "source"), "deployment/nope")[0] == 2


def test_get_prints_tables_json_and_jsonpath() -> None:
    code, stdout, _ = run("get", "schedulegroups", str(EXAMPLE / "source"))
    assert code == 0
    assert stdout.splitlines()[0].split()[:2] == ["NAME", "NOVA"]
    code, stdout, _ = run("get", "placements", str(EXAMPLE / "source"), "-o", "json")
    items = json.loads(stdout)["items"]
    assert {item["name"] for item in items} >= {"storefront", "finetune-llm"}
    code, stdout, _ = run("get", "clusters", str(EXAMPLE / "source"), "-o", "jsonpath={.items[*].name}")
    assert stdout.split() == [
        "wlc-aws-east-1",
        "wlc-aws-east-2",
        "wlc-burst",
        "wlc-gcp-central",
        "wlc-gpu",
        "wlc-onprem",
    ]


def test_console_script_runs_as_a_subprocess(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "nova_gitops.cli", "--help"], capture_output=True, text=True, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert "render" in result.stdout and "explain" in result.stdout
    missing = subprocess.run(
        [
            sys.executable,
            "-m",
            "nova_gitops.cli",
            "render",
            str(tmp_path / "nope"),
            "-o",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
    )
    assert missing.returncode == 2
    assert "does not exist" in missing.stderr


def test_render_from_a_git_url_records_url_and_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repository = write_source(tmp_path / "repo", cluster("c1"), policy("p"), deployment("web"))
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repository, check=True)
    subprocess.run(["git", "add", "-A"], cwd=repository, check=True)
    subprocess.run(["git", "commit", "-qm", "policies"], cwd=repository, check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repository, capture_output=True, text=True).stdout
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    code, _, stderr = run("render", f"file://{repository}@main", "-o", str(tmp_path / "out"))
    assert code == 0, stderr
    source = yaml.load((tmp_path / "out" / "placement.yaml").read_text(), Loader=yaml.CSafeLoader)["source"]
    assert source == {"repo": f"file://{repository}", "revision": head.strip()}
    assert (tmp_path / "out/clusters/c1/demo/deployment-web.yaml").exists()
