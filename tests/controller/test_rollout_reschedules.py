"""A reschedule during a rollout (issue 12 item 4): the move is remedial — its commit says so — and is
released at once to the cluster it touches that already runs the rollout, while a cluster whose wave has not
come keeps waiting, and the rollout goes on rather than starting over."""

from __future__ import annotations

from pathlib import Path

import yaml

from nova_gitops.controller.rolloutstep import RECORD_PATH, ROLLOUT_BRANCH
from tests.controller.helpers import Fleet, cluster_report, deployment, git, policy, reschedule_request
from tests.controller.test_reconciling import git_source
from tests.controller.test_rollouts import SPREAD, STRATEGY, WallClock, released


def selecting(app: str) -> dict[str, object]:
    return {"labelSelectors": [{"matchLabels": {"app": app}}]}


def test_a_reschedule_is_released_at_once_and_the_rollout_goes_on(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path)
    fleet.write_source(
        "platform.yaml", policy("platform", spreadConstraints=SPREAD, resourceSelectors=selecting("base"))
    )
    fleet.write_source("web-policy.yaml", policy("web", resourceSelectors=selecting("web")))
    fleet.write_source("base.yaml", deployment("base", cpu="100m"))
    fleet.write_source("web.yaml", deployment("web"))
    fleet.write_source("rollout.yaml", STRATEGY)
    fleet.report(cluster_report("wlc-1", labels={"tier": "canary"}), cluster_report("wlc-2", cpu="8"))
    source, _ = git_source(fleet, tmp_path)
    controller = fleet.controller(source=source, wall_clock=WallClock())
    outcome = controller.reconcile_once()
    first = fleet.head()
    assert released(fleet) == {"wlc-1": first}  # the canary runs the rollout; wlc-2 waits for its wave
    started = yaml.safe_load(git(fleet.remote, "show", f"{ROLLOUT_BRANCH}:{RECORD_PATH}"))["startedAt"]
    assert outcome.plan is not None
    (web,) = [group for group in outcome.plan.groups if group.policy == "web"]
    assert web.clusters == ("wlc-2",)
    fleet.report(
        cluster_report("wlc-1", labels={"tier": "canary"}),
        cluster_report("wlc-2", cpu="8", requests=[reschedule_request(web.name)]),
    )
    controller.reconcile_once()
    second = fleet.head()
    assert "Nova-Remedial: true" in fleet.message()
    assert released(fleet) == {"wlc-1": second}  # remedial: at once to the canary, which gets the group
    record = yaml.safe_load(git(fleet.remote, "show", f"{ROLLOUT_BRANCH}:{RECORD_PATH}"))
    assert record["target"] == second
    assert record["startedAt"] == started  # the same rollout goes on: a remedial commit does not restart it
