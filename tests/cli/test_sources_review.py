"""What `render` reads as its source, as users run it (review findings on sources and loading):

- YAML that is valid but not Kubernetes data (``!!binary``, ``!!set``) fails the render with exit 2 and a
  ``file:line`` problem, instead of crashing the emitter; unquoted timestamps and dates reach the rendered
  manifest as the exact strings written, and reading the rendered file back gives those strings.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from nova_gitops.cli.main import cli
from tests.builders import cluster, policy


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stderr


def write_source(root: Path, extra: str = "") -> Path:
    """A source with one cluster, a policy selecting app=demo, and ``extra`` YAML appended."""
    root.mkdir(parents=True, exist_ok=True)
    text = yaml.dump_all([cluster("c1"), policy("p")], Dumper=yaml.CSafeDumper, sort_keys=False)
    (root / "source.yaml").write_text(text + ("---\n" + extra if extra else ""))
    return root


CONFIG_MAP = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: demo\n  labels: {app: demo}\n"
)


def test_binary_and_set_values_fail_the_render_at_their_line(tmp_path: Path) -> None:
    source = write_source(tmp_path / "src")
    (source / "binary.yaml").write_text(CONFIG_MAP + "binaryData:\n  x: !!binary aGVsbG8=\n")
    (source / "set.yaml").write_text(CONFIG_MAP + "data:\n  x: !!set {a, b}\n")
    code, stderr = run("render", str(source), "-o", str(tmp_path / "out"))
    assert code == 2, stderr
    assert "binary.yaml:8: !!binary is not Kubernetes data (use a string)" in stderr
    assert "set.yaml:8: !!set is not Kubernetes data (use a string)" in stderr
    assert not (tmp_path / "out").exists()


def test_unquoted_timestamps_and_dates_render_as_the_strings_written(tmp_path: Path) -> None:
    source = write_source(
        tmp_path / "src", CONFIG_MAP + "data:\n  at: 2024-01-01T00:00:00Z\n  day: 2024-01-01\n"
    )
    out = tmp_path / "out"
    code, stderr = run("render", str(source), "-o", str(out))
    assert code == 0, stderr
    rendered = (out / "clusters/c1/demo/configmap-settings.yaml").read_text()
    assert "2024-01-01T00:00:00Z" in rendered and "+00:00" not in rendered
    data = yaml.load(rendered, Loader=yaml.CSafeLoader)["data"]
    assert data == {"at": "2024-01-01T00:00:00Z", "day": "2024-01-01"}
