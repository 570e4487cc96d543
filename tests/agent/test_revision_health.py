"""Health keyed to the revision (issue 11, item 5): each workload in the report says which rendered commit it
reflects, and is healthy only for that commit's spec once observed.

- a Deployment updated by revision R2 whose status still shows R1's observedGeneration is reported
  ``revision: R2``, not healthy, ``ObservedGenerationStale``; healthy once its controller observed R2;
- an object R2 leaves unchanged reflects R2 (its spec is R2's);
- an object whose apply of the current revision failed says which older revision it reflects, not healthy;
- the inventory remembers each object's revision and generation, and inventories of older agents still load.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from nova_agent.health import Health, health_at_revision
from nova_agent.inventories import Inventory, InventoryEntry, decode_inventory, encode_inventory
from nova_agent.owned import mark_synced
from nova_agent.ownership import Ownership
from nova_agent.resources import ObjectRef
from nova_agent.running import EXIT_OBJECT_FAILURES, EXIT_OK
from tests.agent.conftest import AgentFactory
from tests.agent.gitrepos_helpers import RenderedRepo
from tests.agent.manifests import configmap, deployment, layout
from tests.fakekube.fixtures import KubeTarget
from tests.fakekube.simulation import SimulatedCluster


def workloads(repo: RenderedRepo) -> dict[str, dict[str, Any]]:
    status = yaml.safe_load(repo.show("nova-status", "status/c1.yaml"))["status"]
    return {workload["name"]: workload for workload in status["workloads"]}


def with_image(body: dict[str, Any], image: str) -> dict[str, Any]:
    body["spec"]["template"]["spec"]["containers"][0]["image"] = image
    return body


@pytest.mark.fake_only(
    "holds the Deployment controller back (a status of the previous generation while the agent reports): "
    "a real controller-manager observes at once"
)
def test_a_stale_healthy_never_stands_for_a_new_revision(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    assert kube.fake is not None
    ns = kube.namespace
    kube.fake.add_node("n1")
    cluster = SimulatedCluster(kube.fake)
    first = rendered.commit(layout("c1", deployment("c1", ns, "web"), deployment("c1", ns, "api")))
    agent = make_agent()
    assert agent.pass_once().exit_code == EXIT_OK
    cluster.step()
    assert agent.pass_once().exit_code == EXIT_OK
    web = workloads(rendered)["web"]
    assert (web["revision"], web["healthy"]) == (first, True)

    second = rendered.commit(
        layout(
            "c1",
            with_image(deployment("c1", ns, "web"), "registry.example/app:2"),
            deployment("c1", ns, "api"),
        )
    )
    assert agent.pass_once().exit_code == EXIT_OK  # applied; the Deployment controller has not run since
    web, api = workloads(rendered)["web"], workloads(rendered)["api"]
    assert web["revision"] == second and web["healthy"] is False
    assert web["reason"] == "ObservedGenerationStale"
    assert f"revision {second[:12]}'s spec" in web["message"]
    assert (api["revision"], api["healthy"]) == (second, True)  # unchanged by R2: its spec is R2's

    cluster.step()
    assert agent.pass_once().exit_code == EXIT_OK
    web = workloads(rendered)["web"]
    assert (web["revision"], web["healthy"]) == (second, True)


def test_an_object_whose_apply_failed_reflects_the_older_revision(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    first = rendered.commit(layout("c1", deployment("c1", ns, "web"), configmap("c1", ns, "cfg")))
    agent = make_agent()
    assert agent.pass_once().exit_code == EXIT_OK
    assert workloads(rendered)["web"]["revision"] == first
    broken = deployment("c1", ns, "web")
    broken["spec"]["template"]["metadata"]["labels"] = {
        "app": "other"
    }  # refused: the selector no longer matches
    second = rendered.commit(layout("c1", broken, configmap("c1", ns, "cfg", "2")))
    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_OBJECT_FAILURES, outcome.message
    status = yaml.safe_load(rendered.show("nova-status", "status/c1.yaml"))["status"]
    assert status["syncedRevision"] == second
    web = workloads(rendered)["web"]
    assert web["revision"] == first and web["healthy"] is False
    assert web["reason"] == "NotAppliedAtRevision" and first[:12] in web["message"]


def deployment_body(generation: int, observed: int | None, available: int = 1) -> dict[str, Any]:
    status: dict[str, Any] = {"replicas": 1, "updatedReplicas": 1, "availableReplicas": available}
    if observed is not None:
        status["observedGeneration"] = observed
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "ns", "generation": generation},
        "spec": {"replicas": 1},
        "status": status,
    }


@pytest.mark.parametrize(
    ("body", "revision", "applied", "reason"),
    [
        (deployment_body(2, 2), "R2", 2, "MinimumReplicasAvailable"),
        (deployment_body(2, 1), "R2", 2, "ObservedGenerationStale"),
        (deployment_body(2, None), "R2", 2, "ObservedGenerationStale"),  # no status yet: not observed
        (deployment_body(3, 2), "R2", 2, "ObservedGenerationBehind"),  # someone changed the spec since
        (deployment_body(2, 2), "R1", 1, "NotAppliedAtRevision"),
        (deployment_body(2, 2), "", 0, "NotAppliedAtRevision"),  # an older agent's entry, never synced since
        (deployment_body(2, 2, available=0), "R2", 2, "MinimumReplicasUnavailable"),
        (deployment_body(2, 2), "R2", 0, "MinimumReplicasAvailable"),  # generation not recorded: the rule
    ],
)
def test_health_for_the_synced_revision(
    body: dict[str, Any], revision: str, applied: int, reason: str
) -> None:
    verdict = health_at_revision(body, revision, applied, "R2")
    assert verdict is not None and verdict.reason == reason
    assert verdict.healthy is (reason == "MinimumReplicasAvailable")


def test_delegated_mode_has_no_revision_and_judges_by_the_rule() -> None:
    verdict = health_at_revision(deployment_body(2, 2), "", 0, "")
    assert verdict == Health(True, "Available", "MinimumReplicasAvailable")
    assert (
        health_at_revision({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}, "", 0, "")
        is None
    )


def test_inventory_remembers_revision_and_generation_and_reads_old_lines() -> None:
    ref = ObjectRef("apps/v1", "Deployment", "ns", "web")
    behind, unknown = ObjectRef("v1", "Pod", "ns", "behind"), ObjectRef("v1", "Pod", "ns", "unknown")
    entries = [
        InventoryEntry(ref, "d", Ownership.CREATED, "u", "R2", 3),
        InventoryEntry(behind, "d", Ownership.CREATED, "u2", "R1", 1),
        InventoryEntry(unknown, "d"),
    ]
    inventory = Inventory("R2", {entry.ref.key: entry for entry in entries}, "abc")
    data = encode_inventory(inventory)
    decoded, problems = decode_inventory(data)
    assert problems == [] and decoded == inventory
    assert data["objects"].count('"revision"') == 2  # the inventory's own revision is not repeated per line
    old_line = '{"apiVersion":"apps/v1","digest":"d","kind":"Deployment","name":"web","namespace":"ns"}\n'
    decoded, problems = decode_inventory({"revision": "R1", "objects": old_line})
    assert problems == [] and decoded.repository == ""
    assert decoded.entries[ref.key] == InventoryEntry(ref, "d")
    odd = old_line.replace('"digest"', '"generation":"7","revision":null,"digest"')
    assert decode_inventory({"objects": odd})[0].entries[ref.key] == InventoryEntry(ref, "d")


def test_mark_synced_moves_only_objects_that_reflect_the_revision() -> None:
    from nova_agent.desired import DesiredObject

    refs = [ObjectRef("v1", "ConfigMap", "ns", name) for name in ("same", "changed", "missing", "pending")]
    entries = [
        InventoryEntry(refs[0], "d0", revision="R1"),
        InventoryEntry(refs[1], "old", revision="R1"),
        InventoryEntry(refs[2], "d2", revision="R1"),
        InventoryEntry(refs[3], "", revision=""),
    ]
    inventory = Inventory("R1", {entry.ref.key: entry for entry in entries})
    desired = [DesiredObject(ref, {}, f"d{index}", "") for index, ref in enumerate(refs)]
    marked = mark_synced(inventory, desired, {refs[0].key, refs[1].key, refs[3].key}, set(), "R2")
    assert [marked.entries[ref.key].revision for ref in refs] == ["R2", "R1", "R1", ""]
