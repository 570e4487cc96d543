"""Publishing with the real renderer caches the committed placement by its blob id:

- the cache entry equals what parsing the committed placement.yaml gives (so stickiness is unchanged);
- the next publish of the same source uses it and makes no commit;
- a corrupt cache entry is ignored (the file is parsed instead).
"""

from __future__ import annotations

from pathlib import Path

import yaml

from nova_gitops.publishing import placementcache
from nova_gitops.rendering import increments, reports
from nova_gitops.scheduling.plans import PlanSettings
from nova_gitops.workflows import publishing
from tests.builders import cluster, deployment, policy
from tests.publishing.conftest import SourceRepo, git, make_bare


def test_published_placement_is_cached_and_reused(tmp_path: Path) -> None:
    source = SourceRepo(tmp_path)
    documents = (cluster("a"), cluster("b"), policy("p"), deployment("web"), deployment("api"))
    source.commit({"source.yaml": yaml.dump_all(documents, Dumper=yaml.CSafeDumper, sort_keys=False)})
    remote = make_bare(tmp_path / "rendered.git")
    cache_dir = tmp_path / "cache"
    render = publishing.default_render(PlanSettings())

    first = publishing.publish(source.url, remote, render=render, cache_dir=cache_dir)
    assert first.outcome is publishing.Outcome.PUBLISHED
    text = git("--git-dir", str(tmp_path / "rendered.git"), "show", "main:placement.yaml") + "\n"
    blob = increments.blob_id(text.encode())
    assert placementcache.load(cache_dir, blob) == reports.parse_previous(text)

    again = publishing.publish(source.url, remote, render=render, cache_dir=cache_dir)
    assert again.outcome is publishing.Outcome.UNCHANGED

    (cache_dir / "placements" / f"{blob}.pickle").write_bytes(b"not a pickle")
    assert placementcache.load(cache_dir, blob) is None
    third = publishing.publish(source.url, remote, render=render, cache_dir=cache_dir)
    assert third.outcome is publishing.Outcome.UNCHANGED
