"""Publishing with the real renderer is incremental, and commits exactly what a full render would.

Behaviours covered:
- a sequence of source changes (replicas, a new workload, a removed one, a new spread policy, a policy
  removed) published incrementally leaves the same tree after every step as publishing each with a full
  render, and says the same in its commit message (placement.yaml compared entry by entry);
- after a publish the render's index is cached under the new commit; the next publish uses it and a
  one-replica change commits one object file and the placement files;
- a branch head this machine did not publish (no index), and a damaged index, fall back to a full render
  with the same result;
- the mass-delete guard refuses an incremental render that empties clusters with the message a full render
  gets (it counts only the clusters the change reached, which hold every deletion);
- a small commit stays the pack fast-import wrote, and the small packs are rolled up past a limit: the
  cache keeps every object and reads the same trees.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from nova_gitops import errors
from nova_gitops.publishing import gitwriting, renderindex
from nova_gitops.publishing.gitwriting import RenderedRepo, TreeChanges
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.scheduling.plans import PlanSettings, PreviousPlacement
from nova_gitops.workflows import publishing, renderers
from tests.builders import cluster, deployment, policy
from tests.publishing.conftest import SourceRepo, git, make_bare


def dump(*documents: dict[str, Any]) -> str:
    return yaml.dump_all(documents, Dumper=yaml.CSafeDumper, sort_keys=False)


def tree(remote: Path) -> str:
    return git("--git-dir", str(remote), "rev-parse", "main^{tree}")


def full_render(settings: PlanSettings) -> renderers.RenderFiles:
    """The real renderer behind a plain function: publish cannot see it is incremental, so it renders all."""
    renderer = renderers.SourceRenderer(settings)

    def render(root: Path, source: SourceInfo, previous: PreviousPlacement) -> Any:
        return renderer(root, source, previous)

    return render


def spread(name: str) -> dict[str, Any]:
    return policy(
        name,
        resourceSelectors={"labelSelectors": [{"matchLabels": {"app": "spread"}}]},
        spreadConstraints={"topologyKey": "kubernetes.io/metadata.name", "spreadMode": "Divide"},
    )


STEPS: list[dict[str, str | None]] = [
    {
        "clusters.yaml": dump(cluster("a"), cluster("b"), cluster("c")),
        "policy.yaml": dump(policy("p")),
        "web.yaml": dump(deployment("web", replicas=2)),
        "api.yaml": dump(deployment("api")),
    },
    {"web.yaml": dump(deployment("web", replicas=3))},
    {"jobs.yaml": dump(deployment("worker", replicas=4))},
    {"api.yaml": None},
    {
        "spread.yaml": dump(spread("s")),
        "batch.yaml": dump(deployment("batch", replicas=5, labels={"app": "spread"})),
    },
    {"batch.yaml": dump(deployment("batch", replicas=7, labels={"app": "spread"}))},
    {"spread.yaml": None},
]


def test_incremental_publishes_leave_the_trees_full_renders_leave(tmp_path: Path) -> None:
    source = SourceRepo(tmp_path)
    incremental_remote, full_remote = make_bare(tmp_path / "a.git"), make_bare(tmp_path / "b.git")
    incremental = renderers.default_render(PlanSettings())
    options = publishing.PublishOptions(allow_mass_delete=True)
    for step in STEPS:
        source.commit(step)
        made = publishing.publish(
            source.url, incremental_remote, render=incremental, cache_dir=tmp_path / "ca", options=options
        )
        full = publishing.publish(
            source.url,
            full_remote,
            render=full_render(PlanSettings()),
            cache_dir=tmp_path / "cb",
            options=options,
        )
        assert tree(tmp_path / "a.git") == tree(tmp_path / "b.git")
        assert (made.message, made.diff) == (full.message, full.diff)  # groups moved, replicas, warnings
    assert list((tmp_path / "ca" / "render-index").glob("*.bin"))
    assert not (tmp_path / "cb" / "render-index").exists()


def test_a_one_replica_change_commits_one_object_file(tmp_path: Path) -> None:
    source = SourceRepo(tmp_path)
    remote = make_bare(tmp_path / "rendered.git")
    render = renderers.default_render(PlanSettings())
    source.commit(STEPS[0])
    first = publishing.publish(source.url, remote, render=render, cache_dir=tmp_path / "cache")
    assert first.commit is not None
    assert renderindex.load(tmp_path / "cache", first.commit) is not None

    source.commit(STEPS[1])
    second = publishing.publish(source.url, remote, render=render, cache_dir=tmp_path / "cache")
    changed = git("--git-dir", str(tmp_path / "rendered.git"), "diff", "--name-only", "main~1", "main")
    assert second.outcome is publishing.Outcome.PUBLISHED
    assert [path for path in changed.splitlines() if path.startswith("clusters/")] == [
        path for path in changed.splitlines() if path.endswith("deployment-web.yaml")
    ]
    assert len([path for path in changed.splitlines() if path.startswith("clusters/")]) == 1


def test_heads_without_a_usable_index_are_rendered_in_full(tmp_path: Path) -> None:
    source = SourceRepo(tmp_path)
    remote, reference = make_bare(tmp_path / "rendered.git"), make_bare(tmp_path / "reference.git")
    cache = tmp_path / "cache"
    render = renderers.default_render(PlanSettings())
    source.commit(STEPS[0])
    first = publishing.publish(source.url, remote, render=render, cache_dir=cache)
    assert first.commit is not None
    (cache / "render-index" / f"{first.commit}.bin").write_bytes(b"damaged")
    source.commit(STEPS[1])
    publishing.publish(source.url, remote, render=render, cache_dir=cache)
    publishing.publish(source.url, reference, render=full_render(PlanSettings()), cache_dir=tmp_path / "r")
    assert tree(tmp_path / "rendered.git") == tree(tmp_path / "reference.git")

    work = tmp_path / "hand"  # someone commits to the rendered branch by hand: no index for that head
    git("clone", "--quiet", remote, str(work))
    (work / "NOTES.md").write_text("hand-written\n")
    git("add", "NOTES.md", cwd=work)
    git(
        "-c", "user.name=x", "-c", "user.email=x@example.invalid", "commit", "--quiet", "-m", "hand", cwd=work
    )
    git("push", "--quiet", "origin", "HEAD:main", cwd=work)
    source.commit(STEPS[2])
    publishing.publish(source.url, remote, render=render, cache_dir=cache)
    publishing.publish(source.url, reference, render=full_render(PlanSettings()), cache_dir=tmp_path / "r")
    assert tree(tmp_path / "rendered.git") == tree(tmp_path / "reference.git")


def test_the_guard_refuses_an_incremental_mass_delete_as_it_refuses_a_full_one(tmp_path: Path) -> None:
    refusals = []
    for name, render in (
        ("incremental", renderers.default_render(PlanSettings())),
        ("full", full_render(PlanSettings())),
    ):
        source = SourceRepo(tmp_path, f"source-{name}")
        remote = make_bare(tmp_path / f"{name}.git")
        cache = tmp_path / f"cache-{name}"
        source.commit(STEPS[0])
        publishing.publish(source.url, remote, render=render, cache_dir=cache)
        source.commit({"web.yaml": None, "api.yaml": None})
        with pytest.raises(errors.SafetyError) as refused:
            publishing.publish(source.url, remote, render=render, cache_dir=cache)
        refusals.append(str(refused.value).replace(name, "NAME"))
    assert refusals[0] == refusals[1]
    assert "a: 2 of 2 objects (all)" in refusals[0]


def test_small_commits_stay_packed_and_are_rolled_up(tmp_path: Path) -> None:
    url = make_bare(tmp_path / "remote.git")
    repo = RenderedRepo(tmp_path / "cache.git", url)
    head = repo.commit(
        None, TreeChanges({f"clusters/a/f{i}.yaml": b"%d\n" % i for i in range(5)}, ()), "m", environ={}
    )
    for step in range(gitwriting.SMALL_PACKS_KEPT + 3):
        changes = TreeChanges(
            {"clusters/a/f1.yaml": b"step %d\n" % step}, ("clusters/a/f2.yaml",) if step == 0 else ()
        )
        head = repo.commit(head, changes, f"step {step}", environ={})
    assert head == git("--git-dir", str(tmp_path / "cache.git"), "rev-parse", gitwriting.STAGING_REF)
    objects = tmp_path / "cache.git" / "objects"
    assert len(list((objects / "pack").glob("*.pack"))) <= gitwriting.SMALL_PACKS_KEPT + 1
    assert not [path for path in objects.iterdir() if len(path.name) == 2]  # nothing loose
    git("--git-dir", str(tmp_path / "cache.git"), "fsck", "--full", "--no-dangling", "--strict")
    assert sorted(repo.listing(head)) == [f"clusters/a/f{i}.yaml" for i in (0, 1, 3, 4)]
    assert repo.read(head, "clusters/a/f1.yaml") == b"step %d\n" % (gitwriting.SMALL_PACKS_KEPT + 2)
    assert (
        len(git("--git-dir", str(tmp_path / "cache.git"), "rev-list", head).split())
        == gitwriting.SMALL_PACKS_KEPT + 4
    )
