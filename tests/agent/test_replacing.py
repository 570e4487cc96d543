"""Immutable fields (issue 11 item 2): when the server refuses a change as immutable, a Job the agent created
(and any object annotated ``gitops.nova.elotl.co/replace: "true"``) is deleted and created again from git;
anything else keeps failing with the reason and the fix; an adopted object is never deleted; replacements
count against the mass-prune budget. Every refusal is the server's own (a Job's completions, a
Deployment's selector), on the fake and on a real kube-apiserver alike (injected into the fake before issue
23)."""

from __future__ import annotations

from typing import Any

from nova_agent.kubeports import Resource
from nova_agent.ownership import uid_of
from nova_agent.replacing import REPLACE_ANNOTATION
from nova_agent.running import EXIT_OBJECT_FAILURES, EXIT_OK
from tests.agent.conftest import AgentFactory
from tests.agent.gitrepos_helpers import RenderedRepo
from tests.agent.manifests import configmap, deployment, layout, rendered
from tests.fakekube.fixtures import KubeTarget

JOBS = Resource("batch", "v1", "jobs", "Job", True)
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment", True)


def job(namespace: str, name: str, completions: int) -> dict[str, Any]:
    return rendered(
        "c1",
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "completions": completions,
                "parallelism": 1,
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "work", "image": "registry.example/work:1"}],
                    }
                },
            },
        },
    )


def with_selector(body: dict[str, Any], **labels: str) -> dict[str, Any]:
    """The Deployment selecting (and labelling its pods) with ``labels`` too: a selector change, which
    kube-apiserver refuses as immutable."""
    body["spec"]["selector"]["matchLabels"].update(labels)
    body["spec"]["template"]["metadata"]["labels"].update(labels)
    return body


def test_a_resplit_job_is_replaced(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    others = [configmap("c1", ns, f"cm-{index}") for index in range(3)]
    rendered.commit(layout("c1", job(ns, "train", 4), *others))
    agent = make_agent(report_enabled=False)
    assert agent.pass_once().exit_code == EXIT_OK
    old_uid = uid_of(agent.kube.get(JOBS, ns, "train"))
    rendered.commit(layout("c1", job(ns, "train", 3), *others))
    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_OK, outcome.message
    assert outcome.sync is not None and [ref.name for ref in outcome.sync.replaced] == ["train"]
    live = agent.kube.get(JOBS, ns, "train")
    assert live is not None and live["spec"]["completions"] == 3 and uid_of(live) != old_uid
    assert outcome.sync.failed == {}


def test_an_immutable_change_elsewhere_says_how_to_let_the_agent_replace(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    rendered.commit(layout("c1", deployment("c1", ns, "web", 1)))
    agent = make_agent(report_enabled=False)
    agent.pass_once()
    old_uid = uid_of(agent.kube.get(DEPLOYMENTS, ns, "web"))
    rendered.commit(layout("c1", with_selector(deployment("c1", ns, "web", 2), tier="front")))
    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_OBJECT_FAILURES and outcome.sync is not None
    (message,) = outcome.sync.failed.values()
    assert "field is immutable" in message
    assert f'annotate the manifest with {REPLACE_ANNOTATION}: "true" to let nova-agent replace it' in message
    assert uid_of(agent.kube.get(DEPLOYMENTS, ns, "web")) == old_uid  # untouched
    annotated = with_selector(deployment("c1", ns, "web", 3), tier="front")
    annotated["metadata"]["annotations"] = {REPLACE_ANNOTATION: "true"}
    rendered.commit(layout("c1", annotated))
    replaced = agent.pass_once()
    assert replaced.sync is not None and [ref.name for ref in replaced.sync.replaced] == ["web"]
    assert uid_of(agent.kube.get(DEPLOYMENTS, ns, "web")) != old_uid


def test_an_adopted_job_is_never_deleted_to_replace_it(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    agent = make_agent(report_enabled=False)
    mine = job(ns, "train", 4)
    del mine["metadata"]["labels"]  # a Job someone created by hand, before git had it
    agent.kube.apply(JOBS, mine, force=True)
    old_uid = uid_of(agent.kube.get(JOBS, ns, "train"))
    rendered.commit(layout("c1", job(ns, "train", 4)))
    agent.pass_once()
    rendered.commit(layout("c1", job(ns, "train", 3)))
    outcome = agent.pass_once()
    assert outcome.sync is not None and outcome.sync.replaced == []
    (message,) = outcome.sync.failed.values()
    assert "did not create Job" in message and "delete it by hand" in message
    assert uid_of(agent.kube.get(JOBS, ns, "train")) == old_uid


def test_replacements_count_against_the_mass_prune_budget(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    jobs = [job(ns, f"j{index}", 4) for index in range(3)]
    rendered.commit(layout("c1", *jobs))
    agent = make_agent(report_enabled=False, max_prune_percent=30)  # 3 objects: one replacement a pass
    agent.pass_once()
    rendered.commit(layout("c1", *(job(ns, f"j{index}", 3) for index in range(3))))
    outcome = agent.pass_once()
    assert outcome.sync is not None and len(outcome.sync.replaced) == 1
    assert len(outcome.sync.failed) == 2
    assert all("as many objects as --max-prune-percent allows" in m for m in outcome.sync.failed.values())


def test_a_job_resplit_by_the_planner_reaches_the_cluster(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    """The server's own refusal, unprompted: kube-apiserver (and the fake) refuse a Job's new completions."""
    ns = kube.namespace
    others = [configmap("c1", ns, f"cm-{index}") for index in range(3)]
    rendered.commit(layout("c1", job(ns, "resplit", 4), *others))
    agent = make_agent(report_enabled=False)
    assert agent.pass_once().exit_code == EXIT_OK
    old_uid = uid_of(agent.kube.get(JOBS, ns, "resplit"))
    rendered.commit(layout("c1", job(ns, "resplit", 2), *others))
    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_OK, outcome.message
    assert outcome.sync is not None and [ref.name for ref in outcome.sync.replaced] == ["resplit"]
    live = agent.kube.get(JOBS, ns, "resplit")
    assert live is not None and live["spec"]["completions"] == 2 and uid_of(live) != old_uid
    again = agent.pass_once()  # in sync afterwards: no drift from the server's generated selector and labels
    assert again.sync is not None and again.sync.drifted == [] and again.sync.applied == []
