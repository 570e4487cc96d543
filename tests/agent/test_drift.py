"""Drift (issue 11 item 1), against the fake API server or a real cluster: an object edited by hand
(``kubectl edit``: an update by another field manager) or scaled is put back on the next pass and reported
with the fields that drifted and when the drift was first seen; ``--drift warn`` and the per-object annotation
report without writing; ``ignore`` does not even look; a pass over objects in sync writes nothing (not even
a dry run); ``spec.replicas`` of a Deployment a HorizontalPodAutoscaler scales is the autoscaler's, not
drift, and a changed manifest does not scale it back."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from nova_agent.clocks import FakeClock
from nova_agent.drifting import DRIFT_ANNOTATION, DriftMode
from nova_agent.running import EXIT_OK
from tests.agent.conftest import AgentFactory
from tests.agent.gitrepos_helpers import RenderedRepo
from tests.agent.manifests import configmap, deployment, layout
from tests.fakekube.fixtures import KubeTarget


def edit_configmap(kube: KubeTarget, name: str, **data: str) -> None:
    """What ``kubectl edit`` does: read, change, update (PUT) under its own field manager."""
    api = client.CoreV1Api(kube.api_client)
    live = api.read_namespaced_config_map(name, kube.namespace)
    live.data = {**(live.data or {}), **data}
    api.replace_namespaced_config_map(name, kube.namespace, live, field_manager="kubectl-edit")


def scale_deployment(kube: KubeTarget, name: str, replicas: int) -> None:
    """Read, change, update (PUT) the replica count under its own field manager; read again on a 409
    Conflict, as client-go's RetryOnConflict does: on a real cluster the Deployment controller writes the
    status between the read and the update."""
    api = client.AppsV1Api(kube.api_client)
    for attempt in range(5):
        live = api.read_namespaced_deployment(name, kube.namespace)
        live.spec.replicas = replicas
        try:
            api.replace_namespaced_deployment(name, kube.namespace, live, field_manager="kubectl-scale")
            return
        except client.ApiException as error:
            if error.status != 409 or attempt == 4:
                raise


def live_configmap(kube: KubeTarget, name: str) -> dict[str, str]:
    found = client.CoreV1Api(kube.api_client).read_namespaced_config_map(name, kube.namespace)
    return dict(found.data or {})


def live_replicas(kube: KubeTarget, name: str) -> int:
    found = client.AppsV1Api(kube.api_client).read_namespaced_deployment(name, kube.namespace)
    return int(found.spec.replicas)


def test_an_edited_configmap_and_a_scaled_deployment_are_put_back_and_reported(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    rendered.commit(layout("c1", configmap("c1", ns, "settings", "1"), deployment("c1", ns, "web", 2)))
    clock = FakeClock()
    agent = make_agent(clock=clock, report_enabled=False)
    assert agent.pass_once().exit_code == EXIT_OK
    edit_configmap(kube, "settings", v="edited", extra="kept")
    scale_deployment(kube, "web", 5)
    first_seen = clock.now()
    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_OK, outcome.message
    assert outcome.sync is not None
    drifted = {found.ref.name: found for found in outcome.sync.drifted}
    assert drifted["settings"].fields == ("data.v",)
    assert drifted["web"].fields == ("spec.replicas",)
    assert all(found.corrected and found.first_seen == first_seen for found in drifted.values())
    assert sorted(ref.name for ref in outcome.sync.applied) == ["settings", "web"]
    assert live_configmap(kube, "settings") == {"v": "1", "extra": "kept"}  # another manager's key stays
    assert live_replicas(kube, "web") == 2
    clock.advance(30)
    if kube.fake is not None:
        kube.fake.requests.clear()
    again = agent.pass_once()
    assert again.sync is not None and again.sync.drifted == [] and again.sync.applied == []
    if kube.fake is not None:
        assert kube.fake.write_requests() == []  # in sync: no apply, no dry run


def test_warn_reports_without_writing_and_keeps_the_first_sighting(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    rendered.commit(layout("c1", configmap("c1", ns, "settings", "1")))
    clock = FakeClock()
    agent = make_agent(clock=clock, report_enabled=False, drift=DriftMode.WARN)
    agent.pass_once()
    edit_configmap(kube, "settings", v="edited")
    first_seen = clock.now()
    agent.pass_once()
    clock.advance(300)
    outcome = agent.pass_once()
    assert outcome.sync is not None
    (found,) = outcome.sync.drifted
    assert (found.fields, found.corrected, found.first_seen) == (("data.v",), False, first_seen)
    assert found.as_dict()["action"] == "warn"
    assert live_configmap(kube, "settings") == {"v": "edited"}


def test_the_annotation_overrides_the_agents_mode_per_object(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    ignored, warned, corrected = (configmap("c1", ns, name, "1") for name in ("ignored", "warned", "fixed"))
    ignored["metadata"]["annotations"] = {DRIFT_ANNOTATION: "ignore"}
    warned["metadata"]["annotations"] = {DRIFT_ANNOTATION: "warn"}
    corrected["metadata"]["annotations"] = {DRIFT_ANNOTATION: "correct"}
    rendered.commit(layout("c1", ignored, warned, corrected))
    agent = make_agent(report_enabled=False, drift=DriftMode.OFF)
    agent.pass_once()
    for name in ("ignored", "warned", "fixed"):
        edit_configmap(kube, name, v="edited")
    outcome = agent.pass_once()
    assert outcome.sync is not None
    assert {found.ref.name: found.corrected for found in outcome.sync.drifted} == {
        "warned": False,
        "fixed": True,
    }
    assert [live_configmap(kube, name)["v"] for name in ("ignored", "warned", "fixed")] == [
        "edited",
        "edited",
        "1",
    ]


def hpa(namespace: str, target: str) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": target, "namespace": namespace},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "minReplicas": 1,
            "maxReplicas": 10,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
                }
            ],
        },
    }


def test_replicas_of_an_autoscaled_deployment_are_the_autoscalers(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    client.AutoscalingV2Api(kube.api_client).create_namespaced_horizontal_pod_autoscaler(ns, hpa(ns, "web"))
    body = deployment("c1", ns, "web", 2)
    rendered.commit(layout("c1", body))
    agent = make_agent(report_enabled=False)
    assert agent.pass_once().exit_code == EXIT_OK
    assert live_replicas(kube, "web") == 2  # created at git's count
    scale_deployment(kube, "web", 7)  # as the autoscaler does
    outcome = agent.pass_once()
    assert outcome.sync is not None and outcome.sync.drifted == []
    body["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.example/app:2"
    rendered.commit(layout("c1", body))
    changed = agent.pass_once()
    assert changed.sync is not None and [ref.name for ref in changed.sync.applied] == ["web"]
    assert live_replicas(kube, "web") == 7  # the new image, at the autoscaler's count


def test_drift_of_an_adopted_object_held_by_another_manager_is_reported_not_forced(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    """The agent never takes fields over from other managers on an object it adopted: the drift is reported
    with the fix (annotate adopt: force), and the object keeps its value."""
    ns = kube.namespace
    mine = configmap("c1", ns, "settings", "1")
    hand_made = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings"},
        "data": {"v": "1"},
    }
    client.CoreV1Api(kube.api_client).create_namespaced_config_map(
        ns, hand_made, field_manager="kubectl-create"
    )
    rendered.commit(layout("c1", mine))
    agent = make_agent(report_enabled=False)
    first = agent.pass_once()
    assert first.sync is not None and [ref.name for ref in first.sync.adopted] == ["settings"]
    edit_configmap(kube, "settings", v="edited")
    outcome = agent.pass_once()
    assert outcome.sync is not None
    (found,) = outcome.sync.drifted
    assert (found.fields, found.corrected, found.mode) == (("data.v",), False, DriftMode.WARN)
    (message,) = outcome.sync.failed.values()
    assert "drifted, not put back: 409" in message and "gitops.nova.elotl.co/adopt: force" in message
    assert live_configmap(kube, "settings") == {"v": "edited"}
