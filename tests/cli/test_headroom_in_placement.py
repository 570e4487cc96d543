"""PLACEMENT.md's *Failover headroom* section, asked for with ``render --headroom``, ``publish --headroom``
and the controller's ``--headroom-in-placement`` (docs/headroom.md, "In operation").

Behaviours covered (clusters ``big`` (8 cpu) and ``small`` (2 cpu) labelled with a zone, ``web`` on either):
- ``render --headroom`` writes one line per cluster: losing ``big`` strands web's group with what it needs,
  losing ``small`` strands nothing; without the flag the section is absent; ``--headroom-domain zone``
  names the losses ``zone=one`` and ``zone=two``;
- ``publish --headroom`` commits the same PLACEMENT.md as ``render --headroom`` (but the source line); the
  section alone changing makes no commit (as the capacity table alone does not); the next commit without
  the flag has no section, the next with it has it again (an incremental publish re-emits the root's
  files); the controller's ``--once --headroom-in-placement`` commits the same bytes as publish;
- ``--headroom-domain`` without ``--headroom``, or a domain no cluster has, exits 2 naming the flag.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from nova_gitops.cli.main import cli
from tests.builders import cluster, deployment, policy

FLEET = [
    cluster("big", cpu="8", labels={"zone": "one"}),
    cluster("small", cpu="2", labels={"zone": "two"}),
    policy("web", resourceSelectors={"labelSelectors": [{"matchLabels": {"app": "web"}}]}),
]


def web(cpu: str) -> dict[str, Any]:
    return deployment("web", cpu=cpu, labels={"app": "web"})


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(autouse=True)
def _caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def source(root: Path, *documents: dict[str, Any]) -> Path:
    root.mkdir(exist_ok=True)
    (root / "source.yaml").write_text(yaml.safe_dump_all([*FLEET, *documents], sort_keys=False))
    return root


def section(page: str) -> list[str]:
    if "## Failover headroom" not in page:
        return []
    return [line for line in page[page.index("## Failover headroom") :].splitlines() if line.startswith("- ")]


def rendered(tmp_path: Path, root: Path, *flags: str) -> str:
    output = tmp_path / "rendered"
    code, _, stderr = run("render", str(root), "-o", str(output), "-q", *flags)
    assert code == 0, stderr
    return (output / "PLACEMENT.md").read_text()


def remote(tmp_path: Path, name: str) -> str:
    path = tmp_path / name
    git("init", "--quiet", "--bare", "--initial-branch=main", str(path), cwd=tmp_path)
    return f"file://{path}"


def committed(url: str) -> str:
    return git("show", "main:PLACEMENT.md", cwd=Path(url.removeprefix("file://")))


def test_render_headroom_says_what_each_loss_strands(tmp_path: Path) -> None:
    root = source(tmp_path / "src", web("3"))
    told = section(rendered(tmp_path, root, "--headroom"))
    assert len(told) == 2
    assert told[0].startswith("- losing `big` strands `web-")
    assert told[0].endswith("`: needs 3000m cpu, 2000m free elsewhere")
    assert told[1] == "- losing `small` strands nothing"
    assert section(rendered(tmp_path, root)) == []
    page = rendered(tmp_path, root, "--headroom", "--headroom-domain", "zone")
    assert "What losing every cluster with each value of `zone` would strand" in page
    assert [line.split("`")[1] for line in section(page)] == ["zone=one", "zone=two"]


def publish(root: Path, url: str, cache: Path, *flags: str) -> str:
    code, _, stderr = run("publish", str(root), "--repo", url, "--cache-dir", str(cache), "-q", *flags)
    assert code == 0, stderr
    return stderr


def test_publish_commits_what_render_writes_and_drops_the_section_without_the_flag(tmp_path: Path) -> None:
    root = source(tmp_path / "src", web("3"))
    url = remote(tmp_path, "rendered.git")
    publish(root, url, tmp_path / "cache", "--headroom")
    page = committed(url)
    assert section(page) == section(rendered(tmp_path, root, "--headroom"))
    assert section(page)[0].startswith("- losing `big` strands `web-")
    # the section alone changing makes no commit, as the capacity table alone does not
    assert "nothing to publish" in publish(root, url, tmp_path / "cache")
    source(root, web("2"))
    publish(root, url, tmp_path / "cache")
    assert section(committed(url)) == []
    source(root, web("1"))
    publish(root, url, tmp_path / "cache", "--headroom")
    assert section(committed(url)) == [
        "- losing `big` strands nothing and moves 1 group",
        "- losing `small` strands nothing",
    ]
    assert committed(url).split("\n", 3)[3] == rendered(tmp_path, root, "--headroom").split("\n", 3)[3]


def test_bad_headroom_flags_exit_2(tmp_path: Path) -> None:
    root = source(tmp_path / "src", web("3"))
    code, _, stderr = run("render", str(root), "-o", str(tmp_path / "out"), "--headroom-domain", "zone")
    assert code == 2
    assert "--headroom-domain only applies with --headroom" in stderr
    args = ["--headroom", "--headroom-domain", "region"]
    code, _, stderr = run("render", str(root), "-o", str(tmp_path / "out"), *args)
    assert code == 2
    assert "--headroom-domain region: no cluster has the label region" in stderr
