"""``nova-gitops diff OLD_DIR NEW_DIR`` through click: exit codes, formats, secrets, usage errors.

Behaviours covered:
- exit 0 and "No changes" for identical renders; exit 1 when a file changed; exit 2 for a missing
  directory or a bad combination of arguments;
- all three formats print placement changes and the manifest diff; JSON parses;
- Secret values never appear in any format;
- two renders that differ only in the volatile bookkeeping of placement.yaml (source revision, cluster
  capacity in ``clusters:``) and PLACEMENT.md exit 0 with "No changes", as publish makes no commit for them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from nova_gitops.cli.diff import diff_command

SECRET = (
    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: shop\ndata:\n  password: {value}\n"
)


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.fixture
def renders(tmp_path: Path) -> tuple[Path, Path]:
    old = write(
        tmp_path / "old",
        {
            "clusters/c1/shop/secret-db.yaml": SECRET.format(value="b2xkLXZhbHVl"),
            "clusters/c1/shop/deployment-web.yaml": "kind: Deployment\nspec:\n  replicas: 1\n",
        },
    )
    new = write(
        tmp_path / "new",
        {
            "clusters/c1/shop/secret-db.yaml": SECRET.format(value="bmV3LXZhbHVl"),
            "clusters/c1/shop/deployment-web.yaml": "kind: Deployment\nspec:\n  replicas: 2\n",
        },
    )
    return old, new


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(diff_command, list(args))
    return result.exit_code, result.output


def test_no_change_exits_0(renders: tuple[Path, Path]) -> None:
    old, _ = renders
    assert run(str(old), str(old)) == (0, "No changes.\n")


@pytest.mark.parametrize("output_format", ["text", "markdown", "json"])
def test_changes_exit_1_in_every_format_without_secret_values(
    renders: tuple[Path, Path], output_format: str
) -> None:
    old, new = renders
    code, output = run(str(old), str(new), "--format", output_format)
    assert code == 1
    assert "b2xkLXZhbHVl" not in output and "bmV3LXZhbHVl" not in output
    assert "replicas: 2" in output
    if output_format == "json":
        assert json.loads(output)["summary"]["changed"] == 2


@pytest.mark.parametrize(
    "args",
    [["only-one"], ["--base", "main"], ["a", "b", "--source", "."], ["a", "b", "--head", "x"]],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    assert run(*args)[0] == 2


def test_missing_directory_exits_2(tmp_path: Path) -> None:
    code, output = run(str(tmp_path / "nope"), str(tmp_path))
    assert code == 2 and "is not a directory holding a render" in output


PLACEMENT = (
    "apiVersion: gitops.nova.elotl.co/v1alpha1\nkind: Placement\n"
    "source:\n  repo: src\n  revision: {revision}\n"
    "groups:\n- name: web\n  policy: p\n  clusters:\n  - c1\nunscheduled: []\nwarnings: []\n"
    "clusters:\n- name: c1\n  available:\n    cpu: {cpu}\n"
)


@pytest.mark.parametrize("output_format", ["text", "markdown", "json"])
def test_capacity_figures_alone_are_no_change_as_for_publish(tmp_path: Path, output_format: str) -> None:
    manifest = {"clusters/c1/shop/deployment-web.yaml": "kind: Deployment\nspec:\n  replicas: 1\n"}
    old = write(
        tmp_path / "old",
        {
            **manifest,
            "placement.yaml": PLACEMENT.format(revision="a" * 40, cpu="1500m"),
            "PLACEMENT.md": "1500m\n",
        },
    )
    new = write(
        tmp_path / "new",
        {
            **manifest,
            "placement.yaml": PLACEMENT.format(revision="b" * 40, cpu="3500m"),
            "PLACEMENT.md": "3500m\n",
        },
    )
    code, output = run(str(old), str(new), "--format", output_format)
    assert code == 0, output
    if output_format == "json":
        assert json.loads(output)["summary"]["changes"] is False
