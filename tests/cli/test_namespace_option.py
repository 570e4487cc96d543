"""``-n/--namespace NS`` on every command that reads a source, as ``kubectl apply -n`` (issue 10).

Behaviours covered:
- ``render -n shop`` puts objects that name no namespace under ``clusters/<c>/shop/`` with
  ``metadata.namespace: shop``; an object's own namespace wins; ``NOVA_GITOPS_NAMESPACE`` does the same;
- ``validate``, ``explain`` and ``get`` see the objects in NS (``explain deployment/shop/web``), and
  ``explain`` says which scope was assumed for a custom resource without its CRD;
- ``diff --source``, ``publish`` and ``controller --once`` accept ``-n`` and their renders carry it;
- an NS that is not a DNS-1123 label exits 2 naming the rule, before anything is read or written.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from nova_gitops.cli.main import cli
from tests.builders import cluster, policy


def untagged_deployment(name: str, namespace: str | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "labels": {"app": "demo"}}
    if namespace:
        metadata["namespace"] = namespace
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata,
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "demo"}},
            "template": {
                "metadata": {"labels": {"app": "demo"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }


def widget() -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "labels": {"app": "demo"}},
    }


def write(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    documents = [
        cluster("c1"),
        policy("p", resourceSelectors={}),
        untagged_deployment("web"),
        untagged_deployment("api", namespace="backend"),
        widget(),
    ]
    (root / "source.yaml").write_text(yaml.safe_dump_all(documents, sort_keys=False))
    return root


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_render_places_objects_without_a_namespace_in_the_given_one(tmp_path: Path) -> None:
    source = write(tmp_path / "src")
    code, _, stderr = run("render", str(source), "-o", str(tmp_path / "out"), "-n", "shop")
    assert code == 0, stderr
    web = yaml.safe_load((tmp_path / "out/clusters/c1/shop/deployment-web.yaml").read_text())
    assert web["metadata"]["namespace"] == "shop"
    assert (tmp_path / "out/clusters/c1/backend/deployment-api.yaml").is_file()
    assert (tmp_path / "out/clusters/c1/shop/widget-w.yaml").is_file()
    assert (tmp_path / "out/clusters/c1/_cluster/namespace-shop.yaml").is_file()
    assert not (tmp_path / "out/clusters/c1/default").exists()


def test_the_environment_variable_sets_the_namespace(tmp_path: Path) -> None:
    source = write(tmp_path / "src")
    env = {"NOVA_GITOPS_NAMESPACE": "shop"}
    code, _, stderr = run("render", str(source), "-o", str(tmp_path / "out"), env=env)
    assert code == 0, stderr
    assert (tmp_path / "out/clusters/c1/shop/deployment-web.yaml").is_file()


def test_an_invalid_namespace_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    source = write(tmp_path / "src")
    code, _, stderr = run("render", str(source), "-o", str(tmp_path / "out"), "-n", "Shop_1")
    assert code == 2
    assert "'Shop_1' is not a namespace name" in stderr
    assert not (tmp_path / "out").exists()
    assert run("validate", str(source), "--namespace", "-x")[0] == 2


def test_validate_explain_and_get_see_the_given_namespace(tmp_path: Path) -> None:
    source = write(tmp_path / "src")
    code, stdout, stderr = run("validate", str(source), "-n", "shop")
    assert code == 0, stderr
    assert "3 objects" in stdout
    code, stdout, _ = run("explain", str(source), "deployment/shop/web", "-n", "shop")
    assert code == 0, stdout
    assert stdout.startswith("Object:     Deployment.apps/shop/web")
    assert run("explain", str(source), "deployment/default/web", "-n", "shop")[0] == 2
    code, stdout, _ = run("explain", str(source), "widget/w", "-n", "shop", "-o", "json")
    explanation = json.loads(stdout)
    assert "namespaced assumed" in explanation["scope"] and "--namespace" in explanation["scope"]
    code, stdout, _ = run("explain", str(source), "widget/w")
    assert "Scope:      Widget.example.com has no CustomResourceDefinition" in stdout
    code, stdout, _ = run("get", "placements", str(source), "-n", "shop", "-o", "json")
    assert code == 0
    namespaces = {item["name"]: item["namespace"] for item in json.loads(stdout)["items"]}
    assert namespaces["web"] == "shop" and namespaces["api"] == "backend"


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout


def test_diff_publish_and_controller_accept_and_pass_the_namespace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source = write(tmp_path / "src")
    git("init", "--quiet", "--initial-branch=main", cwd=source)
    git("-c", "user.name=t", "-c", "user.email=t@e", "add", "-A", cwd=source)
    git("-c", "user.name=t", "-c", "user.email=t@e", "commit", "--quiet", "-m", "fleet", cwd=source)
    code, stdout, _ = run("diff", "--source", str(source), "--base", "main", "-n", "shop", "--format", "json")
    assert code == 0, stdout  # both sides of the diff are rendered with -n shop
    (source / "extra.yaml").write_text(yaml.safe_dump(untagged_deployment("extra")))
    code, stdout, _ = run("diff", "--source", str(source), "--base", "main", "-n", "shop", "--format", "json")
    assert code == 1, stdout
    assert "clusters/c1/shop/deployment-extra.yaml" in stdout
    (source / "extra.yaml").unlink()
    assert run("diff", str(tmp_path), str(tmp_path), "-n", "shop")[0] == 2  # renders are not sources
    remote = tmp_path / "rendered.git"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(remote), cwd=tmp_path)
    url = f"file://{remote}"
    code, _, stderr = run(
        "publish", str(source), "--repo", url, "-n", "shop", "--cache-dir", str(tmp_path / "c")
    )
    assert code == 0, stderr
    files = git("ls-tree", "-r", "--name-only", "main", cwd=remote).split()
    assert "clusters/c1/shop/deployment-web.yaml" in files
    remote2 = tmp_path / "rendered2.git"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(remote2), cwd=tmp_path)
    args = ["controller", "--source", str(source), "--repo", f"file://{remote2}", "--once", "-n", "team-a"]
    code, _, stderr = run(*args, "--cache-dir", str(tmp_path / "c2"))
    assert code == 0, stderr
    files = git("ls-tree", "-r", "--name-only", "main", cwd=remote2).split()
    assert "clusters/c1/team-a/deployment-web.yaml" in files
