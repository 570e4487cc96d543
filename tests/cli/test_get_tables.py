"""`get placements` and `get clusters` as users read them:

- `get placements -o yaml|json` omits `namespace` for cluster-scoped objects, as the group files do; the
  table prints an empty cell;
- `get clusters` prints Nova's columns in `kubectl get clusters` order (NAME K8S-VERSION K8S-CLUSTER REGION
  ZONE READY IDLE STANDBY), then PROVIDER, AUTOSCALED, NODES and capacity.
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
