"""A fleet whose placement is past the loader's 8 MiB limit publishes, diffs and re-renders with --previous
from a cold cache (issue 24).

The single-file placement.yaml broke at ~160 clusters (``bench/fleet.py`` at K = 2: 10.8 MB): a publish with
a fresh ``--cache-dir`` (every CI runner, a restarted controller), ``diff --base`` and ``render --previous``
refused it. The fleet here is shaped to get there cheaply: 600 clusters and 1,700 workloads of one policy,
each its own group, whose reasons name every candidate (~5 KB each), so its placement is ~9 MB while it
renders ~4,300 files. Through the CLI, each command with a cache directory of its own:

- the first publish, and a publish of a one-replica change from a cold cache, which commits that
  workload's group file, its policy's page, the index and summary, and its one cluster file;
- ``diff --source --base --head`` of the change: exit 1, the replica line;
- ``render --previous <rendered repository>@main`` keeps every group where the branch has it;
- no rendered file comes near the loader's limit (the largest is the policy's page, ~120 KB), though the
  placement they record, as one file, would be over it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from nova_gitops.api import loading
from nova_gitops.cli.main import cli
from nova_gitops.rendering import layout
from tests import placements
from tests.builders import cluster, deployment, policy
from tests.publishing.conftest import SourceRepo, git, make_bare

CLUSTERS = 600
WORKLOADS = 1700


def source_documents(changed_replicas: int = 1) -> str:
    documents = [cluster(f"wlc-{index:03d}", cpu="64") for index in range(CLUSTERS)] + [policy("p")]
    documents += [
        deployment(f"w{index:04d}", cpu="10m", replicas=changed_replicas if index == 7 else 1)
        for index in range(WORKLOADS)
    ]
    return yaml.dump_all(documents, Dumper=yaml.CSafeDumper, sort_keys=False)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.slow
def test_a_fleet_past_the_old_limit_publishes_diffs_and_rerenders_from_cold_caches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))  # render --previous URL's clone cache
    source = SourceRepo(tmp_path)
    source.commit({"source.yaml": source_documents()})
    remote = make_bare(tmp_path / "rendered.git")
    bare = str(tmp_path / "rendered.git")
    code, _, stderr = run("publish", source.url, "--repo", remote, "--cache-dir", str(tmp_path / "cache-1"))
    assert code == 0, stderr

    listing = git("--git-dir", bare, "ls-tree", "-r", "-l", "main").splitlines()
    sizes = {line.split("\t")[1]: int(line.split()[3]) for line in listing}
    placement = sum(size for path, size in sizes.items() if layout.is_group_file(path))
    assert placement > loading.MAX_FILE_BYTES  # as one file, the old layout refused it
    assert max(sizes.values()) < loading.MAX_FILE_BYTES // 32

    revision = source.commit({"source.yaml": source_documents(changed_replicas=3)})
    code, _, stderr = run("publish", source.url, "--repo", remote, "--cache-dir", str(tmp_path / "cache-2"))
    assert code == 0, stderr
    changed = git("--git-dir", bare, "diff", "--name-only", "main^", "main").split()
    [group_file] = [path for path in changed if layout.is_group_file(path)]
    assert sorted(set(changed) - {group_file}) == sorted(
        ["PLACEMENT.md", "placement.yaml", "placement/p/README.md", *[p for p in changed if "w0007" in p]]
    )
    subject = git("--git-dir", bare, "log", "-1", "--format=%s", "main")
    assert subject.startswith(f"render {revision[:7]}: +0 ~1 -0 objects")

    code, stdout, stderr = run(
        "diff", "--source", str(source.work), "--base", "HEAD~1", "--head", "HEAD", "--no-color"
    )
    assert code == 1, stderr
    assert "Deployment demo/w0007" in stdout and "1 → 3" in stdout

    output = tmp_path / "again"
    code, _, stderr = run("render", str(source.work), "-o", str(output), "--previous", f"{remote}@main")
    assert code == 0, stderr
    assert placed(placements.read(output)) == placed(placements.from_files(branch_files(bare)))


def branch_files(bare: str) -> dict[str, bytes]:
    """The placement files at the branch head."""
    listed = git("--git-dir", bare, "ls-tree", "-r", "--name-only", "main").split()
    return {
        path: git("--git-dir", bare, "show", f"main:{path}").encode() + b"\n"
        for path in listed
        if path == "placement.yaml" or layout.is_group_file(path)
    }


def placed(decisions: dict[str, Any]) -> dict[str, list[str]]:
    return {group["name"]: group["clusters"] for group in decisions["groups"]}
