"""`validate --strict`: a source that fails it says why on a last stderr line (how many warnings of which
kinds) and is called "valid, but not strict"; without --strict, or when nothing fails it, it stays "valid".
"""

from __future__ import annotations

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
