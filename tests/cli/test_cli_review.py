"""CLI behaviours found in review, as users run them:

- `get placements -o yaml|json` omits `namespace` for cluster-scoped objects, as placement.yaml does; the
  table prints an empty cell;
- `get clusters` prints Nova's columns in `kubectl get clusters` order (NAME K8S-VERSION K8S-CLUSTER REGION
  ZONE READY IDLE STANDBY), then PROVIDER, AUTOSCALED, NODES and capacity;
- `validate --strict` that fails says why on a last stderr line (how many warnings of which kinds) and calls
  the source "valid, but not strict"; without --strict, or when nothing fails it, it stays "valid".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from nova_gitops.cli.main import cli
from tests.builders import cluster, deployment, policy


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def write_source(root: Path, *documents: dict[str, Any]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "source.yaml").write_text(yaml.dump_all(documents, Dumper=yaml.CSafeDumper, sort_keys=False))
    return root


def cluster_role(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": {"app": "demo"}},
        "rules": [],
    }


def test_cluster_scoped_placements_have_no_namespace_key(tmp_path: Path) -> None:
    source = write_source(tmp_path / "src", cluster("c1"), policy("p"), deployment("web"), cluster_role("r"))
    code, stdout, stderr = run("get", "placements", str(source), "-o", "json")
    assert code == 0, stderr
    items = {item["name"]: item for item in json.loads(stdout)["items"]}
    assert "namespace" not in items["r"]
    assert items["web"]["namespace"] == "demo"
    code, stdout, _ = run("get", "placements", str(source), "-o", "yaml")
    assert code == 0 and "namespace: ''" not in stdout
    code, stdout, _ = run("get", "placements", str(source))
    header, *rows = stdout.splitlines()
    role = _cells(header, next(row for row in rows if row.startswith("ClusterRole")))
    assert role["NAMESPACE"] == "" and role["NAME"] == "r" and role["CLUSTERS"] == "c1"


def test_get_clusters_prints_novas_columns_first(tmp_path: Path) -> None:
    source = write_source(tmp_path / "src", cluster("c1", standby=True, provider="gcp"), policy("p"))
    code, stdout, stderr = run("get", "clusters", str(source))
    assert code == 0, stderr
    header, row = stdout.splitlines()[:2]
    assert header.split()[:10] == [
        "NAME",
        "K8S-VERSION",
        "K8S-CLUSTER",
        "REGION",
        "ZONE",
        "READY",
        "IDLE",
        "STANDBY",
        "PROVIDER",
        "AUTOSCALED",
    ]
    cells = _cells(header, row)
    assert cells["NAME"] == "c1" and cells["K8S-CLUSTER"] == "c1"
    assert cells["REGION"] == "us-east-1" and cells["READY"] == "True"
    assert cells["IDLE"] == "-" and cells["STANDBY"] == "True" and cells["PROVIDER"] == "gcp"


def _cells(header: str, row: str) -> dict[str, str]:
    """A table row's cells by column, read at the header's offsets (cells may be empty)."""
    starts = [index for index, char in enumerate(header) if char != " " and header[index - 1 : index] in " "]
    bounds = [*starts, max(len(row), len(header)) + 1]
    return {
        name: row[start:end].strip()
        for name, start, end in zip(header.split(), bounds, bounds[1:], strict=False)
    }


def test_validate_strict_says_which_warnings_fail_it(tmp_path: Path) -> None:
    unknown = deployment("web")
    unknown["metadata"]["colour"] = "blue"
    unknown["metadata"]["flavour"] = "mint"
    huge = deployment("huge", cpu="64")
    namespaced_cluster = cluster("c1")
    namespaced_cluster["metadata"]["namespace"] = "nova"
    source = write_source(tmp_path / "src", namespaced_cluster, policy("a"), policy("b"), unknown, huge)
    code, stdout, stderr = run("validate", str(source))
    assert code == 0 and ": valid: " in stdout and "strict" not in stderr
    code, stdout, stderr = run("validate", str(source), "--strict")
    assert code == 1
    assert ": valid, but not strict: " in stdout
    assert stderr.splitlines()[-1] == (
        "strict: 6 warnings fail --strict: 2 unknown fields, 1 other input warning, 2 policy overlaps, "
        "1 unscheduled object"
    )


def test_validate_strict_passes_quietly_on_a_clean_source(tmp_path: Path) -> None:
    source = write_source(tmp_path / "src", cluster("c1"), policy("p"), deployment("web"))
    code, stdout, stderr = run("validate", str(source), "--strict")
    assert code == 0 and ": valid: " in stdout and "strict" not in stderr
