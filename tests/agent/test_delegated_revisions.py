"""Delegated mode proves which commit the orchestrator applied from the live objects themselves: a workload
reflects the commit read when it holds every field that commit's manifest sets, and the cluster's
``syncedRevision`` is that commit once every watched workload of the directory does. So a rollout's gate
works for clusters Flux or Argo CD apply, and a Healthy left from the previous commit never stands for the
new one (docs/agent.md, "Delegated mode")."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client

from nova_agent.delegating import RenderedDirectory, delegated_owned, reflects, same_quantity
from nova_agent.kubeports import Resource
from nova_agent.observing import DELEGATED_KINDS
from nova_agent.running import EXIT_OK
from nova_gitops.api import labels as nova_labels
from tests.agent.conftest import AgentFactory
from tests.agent.gitrepos_helpers import RenderedRepo
from tests.agent.manifests import configmap, deployment, layout
from tests.agent.test_drift import hpa, scale_deployment
from tests.agent.test_reporting import status_of
from tests.fakekube.fixtures import KubeTarget

DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment", True)


def scheduled(body: dict[str, Any]) -> dict[str, Any]:
    body["metadata"]["labels"][nova_labels.SCHEDULE] = "true"
    return body


def revisions(repo: RenderedRepo) -> tuple[str, dict[str, str]]:
    status = status_of(repo)["status"]
    return status.get("syncedRevision", ""), {w["name"]: w.get("revision", "") for w in status["workloads"]}


def test_the_synced_revision_is_the_commit_the_orchestrator_applied(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    web = scheduled(deployment("c1", ns, "web", cpu="100m"))
    first = rendered.commit(layout("c1", web, configmap("c1", ns, "settings")))
    agent = make_agent(orchestration_enabled=False)
    kube_port = agent.kube
    kube_port.apply(DEPLOYMENTS, web, force=True)  # as Argo CD / Flux would
    assert agent.pass_once().exit_code == EXIT_OK
    assert revisions(rendered) == (first, {"web": first})

    web_v2 = scheduled(deployment("c1", ns, "web", cpu="200m"))
    second = rendered.commit(layout("c1", web_v2))
    assert agent.pass_once().exit_code == EXIT_OK
    assert revisions(rendered) == ("", {"web": ""})  # not applied yet: the old Healthy proves nothing

    kube_port.apply(DEPLOYMENTS, web_v2, force=True)
    assert agent.pass_once().exit_code == EXIT_OK
    assert revisions(rendered) == (second, {"web": second})

    api = scheduled(deployment("c1", ns, "api"))
    third = rendered.commit(layout("c1", web_v2, api))
    assert agent.pass_once().exit_code == EXIT_OK
    assert revisions(rendered) == ("", {"web": third})  # web holds the third commit too; api is missing
    kube_port.apply(DEPLOYMENTS, api, force=True)
    assert agent.pass_once().exit_code == EXIT_OK
    assert revisions(rendered) == (third, {"web": third, "api": third})


def test_the_autoscalers_replicas_do_not_hide_the_revision(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    web = scheduled(deployment("c1", ns, "web", 2))
    applied = rendered.commit(layout("c1", web))
    agent = make_agent(orchestration_enabled=False)
    agent.kube.apply(DEPLOYMENTS, web, force=True)
    scale_deployment(kube, "web", 7)
    assert agent.pass_once().exit_code == EXIT_OK
    assert revisions(rendered) == ("", {"web": ""})  # a hand-scaled count is not git's
    client.AutoscalingV2Api(kube.api_client).create_namespaced_horizontal_pod_autoscaler(ns, hpa(ns, "web"))
    assert agent.pass_once().exit_code == EXIT_OK
    assert revisions(rendered) == (applied, {"web": applied})  # the autoscaler's count is its own


def manifest(cpu: object, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "ns", "labels": {nova_labels.SCHEDULE: "true"}},
        "spec": {
            "template": {"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": cpu}}}]}},
            **extra,
        },
    }


def live(cpu: object, **extra: Any) -> dict[str, Any]:
    body = manifest(cpu, **extra)
    body["metadata"].update(generation=3, uid="u", labels={**body["metadata"]["labels"], "argocd": "x"})
    body["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = "IfNotPresent"
    return body


@pytest.mark.parametrize(
    ("wanted", "found", "holds"),
    [
        (manifest("100m"), live("100m"), True),  # fields the manifest does not set are not looked at
        (manifest(0.5), live("500m"), True),  # the server's spelling of the same quantity
        (manifest("1024Mi"), live("1Gi"), True),
        (manifest("100m"), live("200m"), False),
        (manifest("100m", replicas=2), live("100m", replicas=3), False),
        (manifest("100m", paused=False), live("100m"), False),  # a field the orchestrator has not applied
    ],
)
def test_a_live_object_reflects_a_manifest_when_it_holds_every_field(
    wanted: dict[str, Any], found: dict[str, Any], holds: bool
) -> None:
    assert reflects(wanted, found) is holds


def test_quantities_are_alike_only_under_a_map_of_quantities() -> None:
    assert same_quantity("spec.resources.requests.cpu", 0.5, "500m")
    assert same_quantity("spec.containers[0].resources.limits[nvidia.com/gpu]", 1, "1")
    assert not same_quantity("spec.template.spec.containers[0].image", "1", 1)
    assert not same_quantity("spec.resources.requests.cpu", True, "1")
    assert not same_quantity("spec.resources.requests.cpu", "lots", "lots of")


def test_synced_needs_every_watched_scheduled_workload_of_the_directory() -> None:
    web, unlabelled = manifest("100m"), manifest("100m")
    unlabelled["metadata"] = {"name": "plain", "namespace": "ns", "labels": {}}
    cfg = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}}
    directory = RenderedDirectory(
        "R1",
        {
            ("apps", "Deployment", "ns", "web"): web,
            ("apps", "Deployment", "ns", "plain"): unlabelled,  # never listed: not waited for
            ("", "ConfigMap", "ns", "c"): cfg,  # not a watched kind
        },
    )
    owned, synced = delegated_owned([live("100m")], directory, DELEGATED_KINDS)
    assert synced == "R1" and [(o.revision, o.generation) for o in owned] == [("R1", 3)]
    owned, synced = delegated_owned([live("300m")], directory, DELEGATED_KINDS)
    assert synced == "" and [(o.revision, o.generation) for o in owned] == [("", 0)]
    assert delegated_owned([], directory, DELEGATED_KINDS) == ([], "")
    assert delegated_owned([], RenderedDirectory(), DELEGATED_KINDS) == ([], "")
