"""`render/get/explain --previous`, as users run it: it takes a directory, a ref of the output's git
repository (`HEAD~1`, a branch, a commit; for get/explain the repository of the current directory), or
`git-url[@ref]`, and keeps the groups where that render's group files put them (a render made before the
per-group layout: its single placement.yaml); a ref that names nothing exits 2 naming it; a ref whose tree
has no placement is a first render; a bad placement.yaml or group file there is reported as REF:path.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from nova_gitops.cli.main import cli
from tests import placements
from tests.builders import cluster, deployment, policy


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def write_source(root: Path, *documents: dict[str, Any]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "source.yaml").write_text(yaml.dump_all(documents, Dumper=yaml.CSafeDumper, sort_keys=False))
    return root


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def placed_on(output: Path) -> dict[str, list[str]]:
    return {group["name"]: group["clusters"] for group in placements.read(output)["groups"]}


def rendered_history(tmp_path: Path, output: Path) -> tuple[Path, str]:
    """A rendered repository whose HEAD~1 placed the group on c1 and HEAD on c2; the source now offers both.
    Returns the source and the commit that placed on c1."""
    repository = output if (output / ".git").exists() else output.parent
    source = tmp_path / "src"
    write_source(source, cluster("c1"), policy("p"), deployment("web"))
    assert run("render", str(source), "-o", str(output))[0] == 0
    git(repository, "add", "-A")
    git(repository, "commit", "-qm", "render on c1")
    on_c1 = git(repository, "rev-parse", "HEAD")
    write_source(source, cluster("c2"), policy("p"), deployment("web"))
    assert run("render", str(source), "-o", str(output), "--no-previous")[0] == 0
    git(repository, "add", "-A")
    git(repository, "commit", "-qm", "render on c2")
    write_source(source, cluster("c1"), cluster("c2"), policy("p"), deployment("web"))
    return source, on_c1


@pytest.fixture
def rendered_repository(tmp_path: Path) -> Path:
    repository = tmp_path / "rendered"
    repository.mkdir()
    git(repository, "init", "-q", "-b", "main")
    return repository


def test_previous_ref_of_the_output_repository_gives_stickiness(
    tmp_path: Path, rendered_repository: Path
) -> None:
    output = rendered_repository
    source, _ = rendered_history(tmp_path, output)
    [(group, before)] = placed_on(output).items()
    assert before == ["c2"]
    code, _, stderr = run("render", str(source), "-o", str(output), "--previous", "HEAD~1")
    assert code == 0, stderr
    assert placed_on(output) == {group: ["c1"]}
    code, _, stderr = run("render", str(source), "-o", str(output), "--previous", "main")
    assert code == 0, stderr
    assert placed_on(output) == {group: ["c2"]}


def test_previous_ref_reads_placement_yaml_below_the_repository_top(
    tmp_path: Path, rendered_repository: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output = rendered_repository / "gitops"
    source, on_c1 = rendered_history(tmp_path, output)
    for previous, expected in ((on_c1[:10], "c1"), ("HEAD", "c2")):
        monkeypatch.chdir(tmp_path)
        code, stdout, stderr = run("get", "placements", str(source), "--previous", previous, "-o", "json")
        assert code == 2 and "not inside a git repository" in stderr
        monkeypatch.chdir(output)
        code, stdout, stderr = run("get", "placements", str(source), "--previous", previous, "-o", "json")
        assert code == 0, stderr
        assert json.loads(stdout)["items"][0]["clusters"] == [expected]
    code, _, stderr = run("render", str(source), "-o", str(output), "--previous", on_c1)
    assert code == 0, stderr
    assert list(placed_on(output).values()) == [["c1"]]


def test_previous_git_url_at_ref_is_read_through_the_clone_cache(
    tmp_path: Path, rendered_repository: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source, on_c1 = rendered_history(tmp_path, rendered_repository)
    elsewhere = tmp_path / "elsewhere"
    url = f"file://{rendered_repository}"
    for previous, expected in ((f"{url}@{on_c1}", "c1"), (url, "c2"), (f"{url}@main", "c2")):
        code, _, stderr = run("render", str(source), "-o", str(elsewhere), "--previous", previous)
        assert code == 0, stderr
        assert list(placed_on(elsewhere).values()) == [[expected]]
    code, stdout, stderr = run(
        "explain", str(source), "deploy/demo/web", "--previous", f"{url}@{on_c1}", "-o", "json"
    )
    assert code == 0, stderr
    assert list(json.loads(stdout)["clusters"]) == ["c1"]
    code, _, stderr = run("render", str(source), "-o", str(elsewhere), "--previous", f"{url}@nope")
    assert code == 2 and "nope" in stderr


def test_previous_ref_that_names_nothing_exits_2_naming_it(tmp_path: Path, rendered_repository: Path) -> None:
    source, _ = rendered_history(tmp_path, rendered_repository)
    before = (rendered_repository / "placement.yaml").read_bytes()
    code, _, stderr = run(
        "render", str(source), "-o", str(rendered_repository), "--previous", "no-such-branch"
    )
    assert code == 2
    assert "'no-such-branch'" in stderr and "no branch, tag or commit" in stderr
    assert (rendered_repository / "placement.yaml").read_bytes() == before


def test_previous_ref_without_placement_is_a_first_render_and_a_bad_one_is_named(
    tmp_path: Path, rendered_repository: Path
) -> None:
    (rendered_repository / "README.md").write_text("rendered manifests\n")
    git(rendered_repository, "add", "README.md")
    git(rendered_repository, "commit", "-qm", "empty")
    (rendered_repository / "placement.yaml").write_text("kind: Something\n")
    git(rendered_repository, "add", "placement.yaml")
    git(rendered_repository, "commit", "-qm", "not a placement")
    source = write_source(tmp_path / "src", cluster("c1"), policy("p"), deployment("web"))
    output = rendered_repository
    code, _, stderr = run("render", str(source), "-o", str(output), "--previous", "HEAD~1")
    assert code == 0, stderr
    assert list(placed_on(output).values()) == [["c1"]]
    code, _, stderr = run("render", str(source), "-o", str(output), "--previous", "HEAD")
    assert code == 2
    assert stderr.startswith("error: HEAD:placement.yaml: cannot read the previous placement: ")
    file = str(tmp_path / "src" / "source.yaml")
    code, _, stderr = run("get", "placements", str(source), "--previous", file)
    assert code == 2 and "is a file" in stderr


def test_previous_directory_still_works(tmp_path: Path) -> None:
    source = write_source(tmp_path / "src", cluster("c1"), policy("p"), deployment("web"))
    first = tmp_path / "first"
    assert run("render", str(source), "-o", str(first))[0] == 0
    write_source(
        source, cluster("c1"), cluster("c2", cpu="64", memory="256Gi"), policy("p"), deployment("web")
    )
    code, _, stderr = run("render", str(source), "-o", str(tmp_path / "second"), "--previous", str(first))
    assert code == 0, stderr
    assert placed_on(tmp_path / "second") == placed_on(first)
    code, _, stderr = run("render", str(source), "-o", str(tmp_path / "fresh"), "--no-previous")
    assert placed_on(tmp_path / "fresh") != placed_on(first)


def test_a_symbolic_link_under_placement_is_not_read(tmp_path: Path, rendered_repository: Path) -> None:
    # A render writes no links; one under placement/ (its target no placement) is ignored as publish ignores
    # it, in a directory and at a ref, and the next render into the directory removes it.
    source, _ = rendered_history(tmp_path, rendered_repository)
    [(group, before)] = placed_on(rendered_repository).items()
    (rendered_repository / "placement" / "p" / "linked.yaml").symlink_to("/etc/hostname")
    git(rendered_repository, "add", "-A")
    git(rendered_repository, "commit", "-qm", "a link")
    code, _, stderr = run("render", str(source), "-o", str(rendered_repository), "--previous", "HEAD")
    assert code == 0, stderr
    assert placed_on(rendered_repository) == {group: before}
    assert not (rendered_repository / "placement" / "p" / "linked.yaml").is_symlink()
    linked = tmp_path / "linked"
    shutil.copytree(rendered_repository, linked, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    (linked / "placement" / "p" / "linked.yaml").symlink_to("/etc/hostname")
    code, _, stderr = run("render", str(source), "-o", str(tmp_path / "from-dir"), "--previous", str(linked))
    assert code == 0, stderr
    assert placed_on(tmp_path / "from-dir") == {group: before}
