"""``workflows.publishing.publish`` against real bare repositories over file://.

Behaviours covered:
- the first publish commits the whole render plus README.md and .gitattributes, with the contract subject
  ``render <sha7>: +A ~C -D objects, N groups moved`` and the Nova-Source-Repo/-Revision trailers;
- publishing the same source again makes no commit; a new source revision that renders the same objects
  makes no commit either (only the recorded revision would differ);
- a change to one workload touches only its files (and placement.yaml), and the message lists moved groups
  and replica changes;
- the previous render's placement.yaml on the branch head is handed to the renderer (stickiness);
- a render that fails, or a source that cannot be read, commits nothing;
- the mass-delete guard refuses deleting more than --max-delete-percent (or all) of a cluster's objects,
  and --allow-mass-delete publishes with the Nova-Allow-Mass-Prune trailer;
- --pull-request pushes nova/render-<sha7> on top of the target branch, leaves the branch alone and returns
  a Markdown body; a re-run for the same source revision pushes nothing (the PR branch already holds that
  render on that base) but still returns the body, a re-run after the target branch moved refreshes the PR
  branch, and a render with no changes returns a "No placement changes" body and pushes no branch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nova_gitops import errors
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.scheduling.plans import PreviousPlacement
from nova_gitops.workflows import publishing
from nova_gitops.workflows.publishing import Outcome, PublishOptions
from tests.publishing.conftest import SourceRepo, fake_render, git, workload


def branch_head(url: str, branch: str = "main") -> str | None:
    out = git("ls-remote", url, f"refs/heads/{branch}")
    return out.split("\t")[0] if out else None


def remote_git(url: str, *args: str) -> str:
    return git("--git-dir", url.removeprefix("file://"), *args)


def publish(source: str, remote: str, cache: Path, **options: Any) -> publishing.PublishResult:
    return publishing.publish(
        source, remote, render=fake_render, cache_dir=cache, options=PublishOptions(**options)
    )


@pytest.fixture
def two_clusters(source_repo: SourceRepo) -> str:
    return source_repo.commit(
        {
            "c1/web.yaml": workload("web", 2),
            "c1/api.yaml": workload("api"),
            "c1/auth.yaml": workload("auth"),
            "c1/mail.yaml": workload("mail"),
            "c2/db.yaml": workload("db"),
            "c2/cache.yaml": workload("cache"),
            "c2/queue.yaml": workload("queue"),
        }
    )


def test_first_publish_commits_everything_with_subject_and_trailers(
    source_repo: SourceRepo, two_clusters: str, rendered_remote: str, cache_dir: Path
) -> None:
    result = publish(source_repo.url, rendered_remote, cache_dir)
    assert result.outcome is Outcome.PUBLISHED
    assert branch_head(rendered_remote) == result.commit
    message = remote_git(rendered_remote, "log", "-1", "--format=%B", "main")
    assert message.splitlines()[0] == f"render {two_clusters[:7]}: +7 ~0 -0 objects, 0 groups moved"
    assert f"Nova-Source-Repo: {source_repo.url}" in message
    assert message.rstrip().endswith(f"Nova-Source-Revision: {two_clusters}")
    files = remote_git(rendered_remote, "ls-tree", "-r", "--name-only", "main").splitlines()
    assert {"README.md", ".gitattributes", "placement.yaml", "clusters/c1/default/web.yaml"} <= set(files)
    readme = remote_git(rendered_remote, "show", "main:README.md")
    assert "do not edit" in readme and source_repo.url in readme


def test_same_source_twice_makes_no_commit(
    source_repo: SourceRepo, two_clusters: str, rendered_remote: str, cache_dir: Path
) -> None:
    first = publish(source_repo.url, rendered_remote, cache_dir)
    second = publish(source_repo.url, rendered_remote, cache_dir)
    assert second.outcome is Outcome.UNCHANGED
    assert branch_head(rendered_remote) == first.commit


def test_new_revision_with_identical_render_makes_no_commit(
    source_repo: SourceRepo, two_clusters: str, rendered_remote: str, cache_dir: Path
) -> None:
    first = publish(source_repo.url, rendered_remote, cache_dir)
    source_repo.commit({"README.txt": "docs only\n"})
    assert publish(source_repo.url, rendered_remote, cache_dir).outcome is Outcome.UNCHANGED
    assert branch_head(rendered_remote) == first.commit


def test_one_workload_change_touches_only_its_files(
    source_repo: SourceRepo, two_clusters: str, rendered_remote: str, cache_dir: Path
) -> None:
    first = publish(source_repo.url, rendered_remote, cache_dir)
    revision = source_repo.commit({"c1/web.yaml": workload("web", 5)})
    result = publish(source_repo.url, rendered_remote, cache_dir)
    assert result.outcome is Outcome.PUBLISHED
    touched = remote_git(rendered_remote, "diff", "--name-only", first.commit or "", "main").splitlines()
    assert touched == ["clusters/c1/default/web.yaml", "placement.yaml", "placement/p/web.yaml"]
    message = remote_git(rendered_remote, "log", "-1", "--format=%B", "main")
    assert message.splitlines()[0] == f"render {revision[:7]}: +0 ~1 -0 objects, 0 groups moved"
    assert "replicas Deployment default/web on c1: 2 → 5" in message


def test_moved_group_is_counted_and_listed(
    source_repo: SourceRepo, two_clusters: str, rendered_remote: str, cache_dir: Path
) -> None:
    publish(source_repo.url, rendered_remote, cache_dir)
    source_repo.commit({"c1/api.yaml": None, "c2/api.yaml": workload("api")})
    publish(source_repo.url, rendered_remote, cache_dir)
    message = remote_git(rendered_remote, "log", "-1", "--format=%B", "main")
    assert message.splitlines()[0].endswith(": +1 ~0 -1 objects, 1 groups moved")
    assert "group api moved c1 → c2" in message


def test_groups_placed_and_removed_are_listed_in_the_commit(
    source_repo: SourceRepo, two_clusters: str, rendered_remote: str, cache_dir: Path
) -> None:
    publish(source_repo.url, rendered_remote, cache_dir)
    source_repo.commit({"c1/mail.yaml": None, "c2/search.yaml": workload("search")})
    publish(source_repo.url, rendered_remote, cache_dir)
    message = remote_git(rendered_remote, "log", "-1", "--format=%B", "main")
    assert message.splitlines()[0].endswith(": +1 ~0 -1 objects, 0 groups moved")  # the subject: moves only
    assert "- group mail removed (was on c1)" in message.splitlines()
    assert "- group search placed on c2 (new)" in message.splitlines()


def test_previous_placement_comes_from_the_branch_head(
    source_repo: SourceRepo, two_clusters: str, rendered_remote: str, cache_dir: Path
) -> None:
    seen: list[PreviousPlacement] = []

    def recording(root: Path, source: SourceInfo, previous: PreviousPlacement) -> dict[str, bytes]:
        seen.append(previous)
        return fake_render(root, source, previous)

    for _ in range(2):
        publishing.publish(source_repo.url, rendered_remote, render=recording, cache_dir=cache_dir)
    assert seen[0].groups == {}
    assert seen[1].groups["web"] == ("c1",) and seen[1].groups["db"] == ("c2",)


def test_failed_render_commits_nothing(
    source_repo: SourceRepo, two_clusters: str, rendered_remote: str, cache_dir: Path
) -> None:
    first = publish(source_repo.url, rendered_remote, cache_dir)
    source_repo.commit({"BROKEN": "yes\n"})
    with pytest.raises(errors.InputError):
        publish(source_repo.url, rendered_remote, cache_dir)
    assert branch_head(rendered_remote) == first.commit


def test_unreadable_source_commits_nothing(rendered_remote: str, cache_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(errors.RepoError, match="cannot fetch the source"):
        publish(f"file://{tmp_path}/missing.git", rendered_remote, cache_dir)
    assert branch_head(rendered_remote) is None


def test_unknown_ref_is_a_clear_error(
    source_repo: SourceRepo, two_clusters: str, rendered_remote: str, cache_dir: Path
) -> None:
    with pytest.raises(errors.RepoError, match="no ref 'nope'"):
        publish(f"{source_repo.url}@nope", rendered_remote, cache_dir)


@pytest.mark.parametrize(
    ("deleted", "max_percent", "refused"),
    [
        (["c2/db.yaml"], 30, True),  # 1 of 3 = 33% > 30%
        (["c2/db.yaml"], 40, False),
        (
            ["c1/web.yaml", "c1/api.yaml", "c1/auth.yaml", "c1/mail.yaml"],
            100,
            True,
        ),  # all of a cluster, whatever the percentage
    ],
)
def test_mass_delete_guard(
    source_repo: SourceRepo,
    two_clusters: str,
    rendered_remote: str,
    cache_dir: Path,
    deleted: list[str],
    max_percent: int,
    refused: bool,
) -> None:
    first = publish(source_repo.url, rendered_remote, cache_dir)
    source_repo.commit(dict.fromkeys(deleted))
    if refused:
        with pytest.raises(errors.SafetyError, match="--allow-mass-delete"):
            publish(source_repo.url, rendered_remote, cache_dir, max_delete_percent=max_percent)
        assert branch_head(rendered_remote) == first.commit
        allowed = publish(
            source_repo.url,
            rendered_remote,
            cache_dir,
            max_delete_percent=max_percent,
            allow_mass_delete=True,
        )
        assert "Nova-Allow-Mass-Prune: true" in allowed.message
    else:
        result = publish(source_repo.url, rendered_remote, cache_dir, max_delete_percent=max_percent)
        assert "Nova-Allow-Mass-Prune" not in result.message


def test_pull_request_branch(
    source_repo: SourceRepo, two_clusters: str, rendered_remote: str, cache_dir: Path
) -> None:
    first = publish(source_repo.url, rendered_remote, cache_dir)
    revision = source_repo.commit({"c1/api.yaml": None, "c2/api.yaml": workload("api")})
    result = publish(source_repo.url, rendered_remote, cache_dir, pull_request=True)
    assert result.branch == f"nova/render-{revision[:7]}"
    assert branch_head(rendered_remote) == first.commit  # the target branch is untouched
    assert branch_head(rendered_remote, result.branch) == result.commit
    assert remote_git(rendered_remote, "rev-parse", f"{result.commit}^") == first.commit
    assert result.pull_request_body is not None
    assert "| `c2` | 1 | 0 | 0 |" in result.pull_request_body
    assert "`api`: **c1 → c2**" in result.pull_request_body
    again = publishing.publish(  # another CI run: its commit would differ in identity, not in content
        source_repo.url,
        rendered_remote,
        render=fake_render,
        cache_dir=cache_dir,
        options=PublishOptions(pull_request=True),
        environ={"GIT_AUTHOR_NAME": "another CI run"},
    )
    assert again.outcome is Outcome.UNCHANGED and again.commit == result.commit  # no new force-push
    assert branch_head(rendered_remote, result.branch) == result.commit
    assert again.pull_request_body == result.pull_request_body  # the PR body is still there to update


def test_pull_request_branch_is_refreshed_when_the_target_branch_moved(
    source_repo: SourceRepo, two_clusters: str, rendered_remote: str, cache_dir: Path
) -> None:
    publish(f"{source_repo.url}@{two_clusters}", rendered_remote, cache_dir)
    revision = source_repo.commit({"c1/api.yaml": None, "c2/api.yaml": workload("api")})
    first = publish(source_repo.url, rendered_remote, cache_dir, pull_request=True)
    source_repo.commit({"c2/db.yaml": workload("db", 2)})
    moved = publish(source_repo.url, rendered_remote, cache_dir)  # someone merged another change first
    again = publish(f"{source_repo.url}@{revision}", rendered_remote, cache_dir, pull_request=True)
    assert again.outcome is Outcome.PUBLISHED and again.commit != first.commit
    assert remote_git(rendered_remote, "rev-parse", f"{again.commit}^") == moved.commit


def test_pull_request_without_changes_still_has_a_body(
    source_repo: SourceRepo, two_clusters: str, rendered_remote: str, cache_dir: Path
) -> None:
    publish(source_repo.url, rendered_remote, cache_dir)
    result = publish(source_repo.url, rendered_remote, cache_dir, pull_request=True)
    assert result.outcome is Outcome.UNCHANGED
    assert git("ls-remote", rendered_remote, "refs/heads/nova/*") == ""  # no PR branch for nothing
    assert result.pull_request_body is not None and "No placement changes" in result.pull_request_body
