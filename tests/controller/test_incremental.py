"""The controller's reconciles render only what changed, and commit exactly the tree a full render gives.

Behaviours covered:
- across a sequence of changes (a workload edited, added, removed and edited back to earlier bytes, a
  capacity report, a failback, a reschedule, a restart of the controller, a hand edit of the rendered
  branch), every commit the controller makes holds the tree ``renders.render`` gives for its plan, byte for
  byte, and a one-workload change emits a handful of files, not the whole render (the plans after the first
  are made from the memory of the last reconcile's plans, so their failbacks and reschedules are checked too);
- a head nobody here rendered (a hand edit) is rendered whole, and repaired;
- a git source (exported anew for each revision) is rendered incrementally too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nova_gitops.controller import loading, looping, statusreading
from nova_gitops.controller.ports import SourceReader
from nova_gitops.controller.reconciling import ReconcileOutcome
from nova_gitops.controller.sourcereading import DirectorySource, GitSource
from nova_gitops.rendering import increments, layout, renders
from nova_gitops.workflows import committing, rendering
from nova_gitops.workflows.publishing import Outcome
from tests.controller.helpers import (
    Fleet,
    cluster_report,
    clusters_of,
    deployment,
    git,
    policy,
    reschedule_request,
)

WEB = "demo/deployment-web.yaml"
API = "demo/deployment-api.yaml"
ONE_WORKLOAD = 6
"""Files a one-workload change emits: the workload's file on its cluster, its group's file and its policy's
page, and the root's three small files (placement.yaml, PLACEMENT.md, .gitattributes: emitted every time)."""
TIERS = {
    "matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["wlc-1", "wlc-2"]}
    ]
}


def full_render(
    fleet: Fleet, outcome: ReconcileOutcome, source: SourceReader | None = None
) -> dict[str, str]:
    """The tree (path → blob id) a full render of the outcome's plan gives, with the repository's files."""
    assert outcome.plan is not None
    status = statusreading.GitStatusReader(
        fleet.url, "nova-status", cache_dir=fleet.root / "oracle-cache"
    ).read()
    reader = source or DirectorySource(fleet.source, watch_changes=False)
    with reader.read() as snapshot:
        source_set, _, _ = loading.source_set(snapshot, status.reports)
    tree = renders.render(
        outcome.plan,
        outcome.source,
        policy_locations=rendering.policy_locations(source_set),
        waves=rendering.rollout_waves(source_set),
    )
    files = committing.with_repository_files(tree.files, outcome.source)
    return {path: increments.blob_id(data) for path, data in files.items()}


def committed_tree(fleet: Fleet) -> dict[str, str]:
    """The rendered branch's tree as path → blob id."""
    tree: dict[str, str] = {}
    for line in git(fleet.remote, "ls-tree", "-r", "main").splitlines():
        meta, path = line.split("\t", 1)
        tree[path] = meta.split()[2]
    return tree


def reconcile_and_check(
    fleet: Fleet, controller: looping.Controller, source: SourceReader | None = None
) -> ReconcileOutcome:
    """One reconcile; when it commits, the commit's tree must be the full render's."""
    before = git(fleet.remote, "for-each-ref", "--format=%(objectname)", "refs/heads/main") or None
    outcome = controller.reconcile_once()
    if outcome.outcome is Outcome.PUBLISHED:
        assert committed_tree(fleet) == full_render(fleet, outcome, source)
    else:
        assert fleet.head() == before
    return outcome


@pytest.fixture
def fleet(tmp_path: Path) -> Fleet:
    fleet = Fleet(tmp_path)
    for app in ("web", "api"):
        selectors = {"labelSelectors": [{"matchLabels": {"app": app}}]}
        fleet.write_source(
            f"{app}-policy.yaml",
            policy(f"{app}-policy", orderedClusterSelector=TIERS, resourceSelectors=selectors),
        )
    fleet.write_source("web.yaml", deployment("web"))
    fleet.write_source("api.yaml", deployment("api", cpu="1"))
    fleet.write_source("other.yaml", policy("other-policy"), deployment("worker", namespace="jobs"))
    namespaces = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}} for name in ("demo", "jobs")
    ]
    fleet.write_source("namespaces.yaml", *namespaces)
    return fleet


def report(fleet: Fleet, wlc1_available: str = "8", **wlc2: object) -> None:
    fleet.report(
        cluster_report("wlc-1", cpu="8", available=wlc1_available),
        cluster_report("wlc-2", cpu="8", **wlc2),  # type: ignore[arg-type]
    )


def group_of(outcome: ReconcileOutcome, policy_name: str) -> str:
    assert outcome.plan is not None
    (group,) = [group.name for group in outcome.plan.groups if group.policy == policy_name]
    return group


def test_every_commit_is_the_full_renders_tree(fleet: Fleet) -> None:
    report(fleet, wlc1_available="100m")  # the first tier is full: web and api spill to wlc-2
    controller = fleet.controller(failback_after=300.0, reschedule_cooldown=3600.0, allow_mass_delete=True)
    first = reconcile_and_check(fleet, controller)
    assert first.outcome is Outcome.PUBLISHED
    everything = len(committed_tree(fleet))
    assert clusters_of(fleet, WEB) == clusters_of(fleet, API) == ["wlc-2"]

    fleet.write_source("web.yaml", deployment("web", replicas=3))  # one workload changed
    assert controller.reconciler.plan_memory is not None  # every later plan here is made from memory
    edited = reconcile_and_check(fleet, controller)
    assert edited.outcome is Outcome.PUBLISHED
    assert edited.emitted == ONE_WORKLOAD < everything
    changed = git(fleet.remote, "diff", "--name-only", f"{fleet.head()}~1", fleet.head()).split()
    [group_file] = [path for path in changed if layout.is_group_file(path)]
    folder = group_file.rpartition("/")[0]  # its group's file and page, the summaries, its cluster's file
    assert sorted(path for path in changed if path != group_file) == sorted(
        ["PLACEMENT.md", f"clusters/wlc-2/{WEB}", "placement.yaml", f"{folder}/README.md"]
    )

    report(fleet)  # capacity: room in the first tier, but failback waits
    assert reconcile_and_check(fleet, controller).outcome is Outcome.UNCHANGED
    fleet.clock.advance(301)
    failed_back = reconcile_and_check(fleet, controller)
    assert failed_back.failed_back and failed_back.outcome is Outcome.PUBLISHED
    assert clusters_of(fleet, API) == ["wlc-1"]

    api = group_of(failed_back, "api-policy")
    fleet.report(
        cluster_report("wlc-1", cpu="8", requests=[reschedule_request(api, name="api")]),
        cluster_report("wlc-2", cpu="8"),
    )
    rescheduled = reconcile_and_check(fleet, controller)
    assert [exclusion.cluster for exclusion in rescheduled.rescheduled] == ["wlc-1"]
    assert clusters_of(fleet, API) == ["wlc-2"]

    fleet.write_source("batch.yaml", deployment("batch", namespace="jobs"))  # added
    assert reconcile_and_check(fleet, controller).outcome is Outcome.PUBLISHED
    (fleet.source / "api.yaml").unlink()  # removed
    assert reconcile_and_check(fleet, controller).outcome is Outcome.PUBLISHED
    assert clusters_of(fleet, API) == []
    assert reconcile_and_check(fleet, controller).outcome is Outcome.UNCHANGED
    fleet.write_source("web.yaml", deployment("web"))  # back to bytes parsed before
    assert reconcile_and_check(fleet, controller).outcome is Outcome.PUBLISHED

    restarted = fleet.controller(failback_after=300.0, reschedule_cooldown=3600.0, allow_mass_delete=True)
    fleet.write_source("web.yaml", deployment("web", replicas=4))
    after_restart = reconcile_and_check(fleet, restarted)  # the index of the head, from the cache directory
    assert after_restart.outcome is Outcome.PUBLISHED
    assert after_restart.emitted == ONE_WORKLOAD


def test_a_head_nobody_here_rendered_is_rendered_whole_and_repaired(fleet: Fleet, tmp_path: Path) -> None:
    report(fleet)
    controller = fleet.controller()
    first = reconcile_and_check(fleet, controller)
    work = tmp_path / "hand"
    git(tmp_path, "clone", "--quiet", fleet.url, str(work))
    (work / "clusters" / "wlc-1" / "stray.yaml").write_text("kind: ConfigMap\n")
    (work / "README.md").write_text("edited by hand\n")
    git(work, "add", "-A")
    git(
        work,
        "-c",
        "user.name=hand",
        "-c",
        "user.email=hand@example.invalid",
        "commit",
        "--quiet",
        "-m",
        "hand",
    )
    git(work, "push", "--quiet", "origin", "HEAD:main")
    repaired = reconcile_and_check(fleet, controller)
    assert repaired.outcome is Outcome.PUBLISHED
    assert repaired.emitted >= first.emitted  # no index of the hand-made head: every file rendered
    assert "clusters/wlc-1/stray.yaml" not in committed_tree(fleet)


def test_a_git_source_renders_incrementally(fleet: Fleet, tmp_path: Path) -> None:
    report(fleet)
    work = tmp_path / "source-work"
    bare = tmp_path / "source.git"
    git(tmp_path, "init", "--quiet", "--bare", "--initial-branch=main", str(bare))
    git(tmp_path, "clone", "--quiet", str(bare), str(work))
    for path in fleet.source.iterdir():
        (work / path.name).write_text(path.read_text())

    def push(message: str) -> None:
        git(work, "add", "-A")
        git(
            work,
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "commit",
            "--quiet",
            "-m",
            message,
        )
        git(work, "push", "--quiet", "origin", "HEAD:main")

    push("fleet")
    source = GitSource(f"file://{bare}", "main", cache_dir=tmp_path / "cache")
    oracle = GitSource(f"file://{bare}", "main", cache_dir=tmp_path / "oracle-source-cache")
    controller = fleet.controller(source=source)
    first = reconcile_and_check(fleet, controller, oracle)
    (work / "api.yaml").write_text((work / "api.yaml").read_text().replace("replicas: 2", "replicas: 5"))
    push("api: 5 replicas")
    changed = reconcile_and_check(fleet, controller, oracle)
    assert changed.outcome is Outcome.PUBLISHED
    assert changed.emitted == ONE_WORKLOAD < first.emitted
    source.close()
    oracle.close()
