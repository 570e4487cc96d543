"""Publish keeps each source's plan memory in its cache directory (``publishing.planmemory``).

Behaviours covered:
- publishing with the memory leaves the trees a full render leaves, after every change of a sequence;
- a change in one shard of a fleet writes that shard's component, not the others';
- a kept memory lists the parts it finds by their keys; a key that is not plain data is not kept;
- damaged parts, a part under another key's name and a memory made by other code are not used: the
  publish plans afresh and commits the same tree.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from nova_gitops.publishing import planmemory
from nova_gitops.scheduling.plans import PlanSettings
from nova_gitops.workflows import publishing, renderers
from tests.builders import cluster, deployment, policy
from tests.publishing.conftest import SourceRepo, git, make_bare
from tests.publishing.test_incremental_publish import STEPS, full_render


def dump(*documents: dict[str, Any]) -> str:
    return yaml.dump_all(documents, Dumper=yaml.CSafeDumper, sort_keys=False)


def tree(remote: Path) -> str:
    return git("--git-dir", str(remote), "rev-parse", "main^{tree}")


def shard(name: str, replicas: int = 1) -> dict[str, str | None]:
    selecting = {"labelSelectors": [{"matchLabels": {"shard": name}}]}
    return {
        f"{name}/clusters.yaml": dump(
            cluster(f"{name}1", labels={"shard": name}), cluster(f"{name}2", labels={"shard": name})
        ),
        f"{name}/policy.yaml": dump(
            policy(name, resourceSelectors=selecting, clusterSelector={"matchLabels": {"shard": name}})
        ),
        f"{name}/web.yaml": dump(deployment(f"{name}-web", replicas=replicas, labels={"shard": name})),
    }


def parts(cache: Path) -> dict[str, int]:
    """Every part file of the cache, by name, with its modification time."""
    return {path.name: path.stat().st_mtime_ns for path in (cache / "plan-memory").rglob("*.pickle")}


def publish(source: SourceRepo, remote: str, cache: Path) -> None:
    render = renderers.default_render(PlanSettings(), cache_dir=cache)
    options = publishing.PublishOptions(allow_mass_delete=True)
    publishing.publish(source.url, remote, render=render, cache_dir=cache, options=options)


def reference(source: SourceRepo, remote: str, cache: Path) -> None:
    options = publishing.PublishOptions(allow_mass_delete=True)
    publishing.publish(
        source.url, remote, render=full_render(PlanSettings()), cache_dir=cache, options=options
    )


def test_a_change_in_one_shard_writes_only_its_component(tmp_path: Path) -> None:
    source = SourceRepo(tmp_path)
    remote = make_bare(tmp_path / "rendered.git")
    cache = tmp_path / "cache"
    source.commit({**shard("east"), **shard("west")})
    publish(source, remote, cache)
    source.commit(shard("east", replicas=2))  # planned with the first render as the previous placement
    publish(source, remote, cache)
    before = parts(cache)
    assert len([name for name in before if name.startswith("component-")]) == 2
    source.commit(shard("east", replicas=3))
    publish(source, remote, cache)
    after = parts(cache)
    written = {name for name, mtime in after.items() if before.get(name) != mtime}
    assert len([name for name in written if name.startswith("component-")]) == 1  # east's, made again
    assert len([name for name in after if name.startswith("component-")]) == 2  # west's kept, east's old gone
    reference_remote = make_bare(tmp_path / "reference.git")
    reference(source, reference_remote, tmp_path / "r")
    assert tree(tmp_path / "rendered.git") == tree(tmp_path / "reference.git")


def test_a_damaged_or_misplaced_memory_is_not_used(tmp_path: Path) -> None:
    source = SourceRepo(tmp_path)
    remote, reference_remote = make_bare(tmp_path / "rendered.git"), make_bare(tmp_path / "reference.git")
    cache = tmp_path / "cache"
    source.commit({**shard("east"), **shard("west")})
    publish(source, remote, cache)
    files = sorted((cache / "plan-memory").rglob("component-*.pickle"))
    assert len(files) == 2
    files[0].write_bytes(files[1].read_bytes())  # another key's part under this name
    for measures in (cache / "plan-memory").rglob(planmemory.WORKLOADS):
        measures.write_bytes(b"damaged")
    source.commit(shard("east", replicas=2))
    publish(source, remote, cache)
    reference(source, reference_remote, tmp_path / "r")
    assert tree(tmp_path / "rendered.git") == tree(tmp_path / "reference.git")

    for part in (cache / "plan-memory").rglob("*.pickle"):
        part.write_bytes(b"\x80\x05damaged")
    source.commit(shard("west", replicas=2))
    publish(source, remote, cache)
    reference(source, reference_remote, tmp_path / "r")
    assert tree(tmp_path / "rendered.git") == tree(tmp_path / "reference.git")


def test_memory_of_other_planner_code_is_dropped(tmp_path: Path, monkeypatch: Any) -> None:
    source = SourceRepo(tmp_path)
    remote = make_bare(tmp_path / "rendered.git")
    cache = tmp_path / "cache"
    source.commit(STEPS[0])
    publish(source, remote, cache)
    older = {path.parent for path in (cache / "plan-memory").rglob("*.pickle")}
    planmemory.planner_digest.cache_clear()
    monkeypatch.setattr(planmemory, "planner_digest", lambda: "0" * 64)  # as after an upgrade
    source.commit(STEPS[1])
    publish(source, remote, cache)
    newer = {path.parent for path in (cache / "plan-memory").rglob("*.pickle")}
    assert newer and not newer & older
    assert not any(directory.exists() for directory in older)


def test_a_kept_memory_lists_the_parts_it_finds(tmp_path: Path) -> None:
    """A part file is found by a digest of its key, and still lists its key: each listed key finds its
    part, and a key that is not plain data is neither kept nor found (the plan makes that part afresh)."""
    source = SourceRepo(tmp_path)
    remote, cache = make_bare(tmp_path / "rendered.git"), tmp_path / "cache"
    source.commit({**shard("east"), **shard("west")})
    publish(source, remote, cache)
    memory = planmemory.load(cache, source.url)
    keys = list(memory.components)
    assert len(keys) == 2
    assert all(memory.components[key] is not None for key in keys)
    assert planmemory.encoded_key((object(),)) is None
    assert (object(),) not in memory.components
    planmemory.store(cache, source.url, replace(memory, components={(object(),): memory.components[keys[0]]}))
    assert list(planmemory.load(cache, source.url).components) == []
