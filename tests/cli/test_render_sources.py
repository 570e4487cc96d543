"""What `render` reads as its source, as users run it (review findings on sources and loading):

- YAML that is valid but not Kubernetes data (``!!binary``, ``!!set``) fails the render with exit 2 and a
  ``file:line`` problem, instead of crashing the emitter; unquoted timestamps and dates reach the rendered
  manifest as the exact strings written, and reading the rendered file back gives those strings;
- rendering into a subdirectory of the source (``-o src/rendered``) works again and again with the same
  output: the previous render is not read back as source, while a user's own directory holding a
  ``placement.yaml`` of another kind next to ``clusters/`` is still read, and kustomization.yaml is skipped;
- a single YAML file given as SOURCE (relative or absolute) is read as manifests, not fetched as a git URL.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from nova_gitops.cli.main import cli
from tests.builders import cluster, deployment, policy


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()
    }


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
    assert "binary.yaml:8:6: !!binary is not Kubernetes data (use a string)" in stderr
    assert "set.yaml:8:6: !!set is not Kubernetes data (use a string)" in stderr
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


def test_rendering_into_a_subdirectory_of_the_source_can_be_repeated(tmp_path: Path) -> None:
    source = write_source(tmp_path / "src", yaml.dump(deployment("web"), Dumper=yaml.CSafeDumper))
    (source / "kustomization.yaml").write_text("resources: [source.yaml]\n")
    out = source / "rendered"
    code, stderr = run("render", str(source), "-o", str(out))
    assert code == 0, stderr
    first = tree(out)
    assert "clusters/c1/demo/deployment-web.yaml" in first
    for _ in range(2):
        code, stderr = run("render", str(source), "-o", str(out))
        assert code == 0, stderr
        assert "0 written" in stderr
        assert tree(out) == first


def test_a_users_own_placement_directory_is_still_read(tmp_path: Path) -> None:
    source = write_source(tmp_path / "src")
    own = source / "team"
    (own / "clusters").mkdir(parents=True)
    (own / "placement.yaml").write_text(
        "# not a render\n" + yaml.dump(deployment("web"), Dumper=yaml.CSafeDumper, sort_keys=False)
    )
    out = tmp_path / "out"
    code, stderr = run("render", str(source), "-o", str(out))
    assert code == 0, stderr
    assert (out / "clusters/c1/demo/deployment-web.yaml").exists()


@pytest.mark.parametrize("relative", [True, False])
def test_a_single_yaml_file_is_a_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, relative: bool
) -> None:
    monkeypatch.chdir(tmp_path)
    write_source(tmp_path / "path/to", yaml.dump(deployment("web"), Dumper=yaml.CSafeDumper))
    single = (tmp_path / "path/to/source.yaml").rename(tmp_path / "path/to/deploy.yaml")
    code, stderr = run("render", "path/to/deploy.yaml" if relative else str(single), "-o", "out")
    assert code == 0, stderr
    assert "cannot fetch" not in stderr
    assert (tmp_path / "out/clusters/c1/demo/deployment-web.yaml").exists()
