"""Two fleets on one cluster do not see each other (issue 11, item 4): two agents of two rendered
repositories, under the same cluster name, on one cluster (the fake API server; a real one with
NOVA_TEST_KUBECONFIG).

- each stamps what it applies with its repository's label, and reports the health of its own objects only;
- neither adopts an object the other applied: the refusal names the other repository and the fix;
- neither prunes the other's object, even when its inventory lists it;
- a Pending workload of one fleet is a reschedule request in that fleet's report only;
- two agents of different repositories may not share one inventory (same --namespace and cluster name);
- a fleet whose repository moved names its former id and keeps its objects (restamped, not re-created);
- in delegated mode, each agent reports the objects of its own directory only.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from nova_agent import repositories
from nova_agent.clocks import FakeClock
from nova_agent.inventories import InventoryEntry
from nova_agent.kubeclient import ApiClientKube
from nova_agent.kubeports import Resource
from nova_agent.ownership import Ownership, uid_of
from nova_agent.resources import ObjectRef
from nova_agent.running import EXIT_OBJECT_FAILURES, EXIT_OK, EXIT_REFUSED, Agent
from nova_agent.settings import AgentSettings
from nova_agent.syncing import read_inventory, write_inventory
from nova_gitops.api import labels as nova_labels
from tests.agent.gitrepos_helpers import RenderedRepo
from tests.agent.manifests import configmap, deployment, layout
from tests.agent.pods import available, unschedulable
from tests.fakekube.fixtures import KubeTarget
from tests.realkube.kubelets import Kubelet

CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap", True)
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment", True)


class Fleet:
    """A rendered repository and the agent that applies its ``clusters/c1`` to the shared cluster."""

    def __init__(
        self, kube: KubeTarget, root: Path, inventory_namespace: str, clock: FakeClock, *previous: str
    ) -> None:
        root.mkdir()
        self.repo = RenderedRepo(root)
        settings = AgentSettings(
            cluster="c1",
            repo=self.repo.url,
            cache_dir=root / "cache",
            namespace=inventory_namespace,
            previous_repositories=previous,
        )
        self.agent = Agent(settings, ApiClientKube(kube.api_client), clock)
        self.id = repositories.repository_id(self.repo.url, settings.directory)

    def status(self) -> dict[str, Any]:
        document = yaml.safe_load(self.repo.show("nova-status", "status/c1.yaml"))
        return document["status"]  # type: ignore[no-any-return]

    def workloads(self) -> set[str]:
        return {workload["name"] for workload in self.status()["workloads"]}


@pytest.fixture
def second_namespace(kube: KubeTarget) -> Iterator[str]:
    """Where the second fleet's agent keeps its inventory (each install of nova-agent has its own)."""
    from kubernetes import client

    name = f"{kube.namespace}-b"
    core = client.CoreV1Api(kube.api_client)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    yield name
    if kube.fake is None:
        core.delete_namespace(name)


def fleets(
    kube: KubeTarget, tmp_path: Path, second: str, clock: FakeClock | None = None
) -> tuple[Fleet, Fleet]:
    clock = clock or FakeClock()
    return Fleet(kube, tmp_path / "a", kube.namespace, clock), Fleet(kube, tmp_path / "b", second, clock)


def test_two_fleets_on_one_cluster_do_not_see_each_other(
    kube: KubeTarget, tmp_path: Path, second_namespace: str
) -> None:
    ns = kube.namespace
    a, b = fleets(kube, tmp_path, second_namespace)
    assert a.id != b.id
    a.repo.commit(layout("c1", deployment("c1", ns, "web-a"), configmap("c1", ns, "contested", "a")))
    b.repo.commit(
        layout(
            "c1",
            deployment("c1", ns, "web-b"),
            configmap("c1", ns, "cfg-b"),
            configmap("c1", ns, "contested", "b"),
        )
    )
    assert a.agent.pass_once().exit_code == EXIT_OK
    outcome = b.agent.pass_once()

    contested = ObjectRef("v1", "ConfigMap", ns, "contested")
    assert outcome.exit_code == EXIT_OBJECT_FAILURES and outcome.sync is not None
    assert set(outcome.sync.failed) == {contested}
    refusal = outcome.sync.failed[contested]
    assert f"{nova_labels.RENDERED_REPOSITORY}={a.id}" in refusal and "never applies, adopts" in refusal
    live = b.agent.kube.get(CONFIGMAPS, ns, "contested")
    assert live is not None and live["data"] == {"v": "a"}  # left exactly as fleet A applied it
    assert live["metadata"]["labels"][nova_labels.RENDERED_REPOSITORY] == a.id
    [inventory_b, _] = read_inventory(b.agent.kube, b.agent.settings)
    assert contested.key not in inventory_b.entries  # not adopted, not even as pending
    assert inventory_b.repository == b.id

    assert a.agent.pass_once().exit_code == EXIT_OK  # A's next report, after B applied its objects
    assert a.workloads() == {"web-a"}
    assert b.workloads() == {"web-b"}
    assert contested.name in b.status()["lastError"]


def test_a_fleet_never_prunes_the_other_fleets_object(
    kube: KubeTarget, tmp_path: Path, second_namespace: str
) -> None:
    ns = kube.namespace
    a, b = fleets(kube, tmp_path, second_namespace)
    a.repo.commit(layout("c1", configmap("c1", ns, "contested", "a")))
    assert a.agent.pass_once().exit_code == EXIT_OK
    b.repo.commit(layout("c1", configmap("c1", ns, "cfg-b"), configmap("c1", ns, "contested", "b")))
    assert b.agent.pass_once().exit_code == EXIT_OBJECT_FAILURES
    # B's inventory lists A's object as created by B (a hand-edited or mixed-up inventory): the label still
    # keeps B from deleting it when B's render drops it
    kube_b = b.agent.kube
    live = kube_b.get(CONFIGMAPS, ns, "contested")
    inventory, _ = read_inventory(kube_b, b.agent.settings)
    forged = InventoryEntry(
        ObjectRef("v1", "ConfigMap", ns, "contested"), "d", Ownership.CREATED, uid_of(live)
    )
    write_inventory(kube_b, b.agent.settings, inventory.with_entries([forged]))
    b.repo.commit({f"clusters/c1/{ns}/configmap-contested.yaml": None}, "drop", "Nova-Allow-Mass-Prune: true")
    outcome = b.agent.pass_once()
    assert outcome.exit_code == EXIT_OK, outcome.message
    assert outcome.sync is not None and outcome.sync.pruned == []
    assert kube_b.get(CONFIGMAPS, ns, "contested") is not None
    inventory, _ = read_inventory(kube_b, b.agent.settings)
    assert forged.ref.key not in inventory.entries  # forgotten: another fleet's


def test_two_repositories_may_not_share_one_inventory(kube: KubeTarget, tmp_path: Path) -> None:
    ns = kube.namespace
    a, b = fleets(kube, tmp_path, ns)  # both agents keep their inventory in the same namespace
    a.repo.commit(layout("c1", configmap("c1", ns, "cfg-a")))
    b.repo.commit(layout("c1", configmap("c1", ns, "cfg-b")))
    assert a.agent.pass_once().exit_code == EXIT_OK
    outcome = b.agent.pass_once()
    assert outcome.exit_code == EXIT_REFUSED
    assert a.id in outcome.message and "its own --namespace" in outcome.message
    assert b.agent.kube.get(CONFIGMAPS, ns, "cfg-b") is None
    inventory, _ = read_inventory(a.agent.kube, a.agent.settings)
    assert inventory.repository == a.id and len(inventory) == 1


def test_reschedule_requests_stay_with_their_fleet(
    kube: KubeTarget, kubelet: Kubelet, tmp_path: Path, second_namespace: str
) -> None:
    ns = kube.namespace
    kubelet.add_node("n1")  # 4 cpu: room for web-a, none for web-b's 8-cpu pods
    a, b = fleets(kube, tmp_path, second_namespace, FakeClock(datetime.now(UTC) + timedelta(minutes=3)))
    a.repo.commit(layout("c1", deployment("c1", ns, "web-a", replicas=2)))
    b.repo.commit(layout("c1", deployment("c1", ns, "web-b", replicas=2, cpu="8")))
    assert a.agent.pass_once().exit_code == EXIT_OK
    assert b.agent.pass_once().exit_code == EXIT_OK
    kubelet.until(
        lambda: available(kube, "web-a") == 2 and unschedulable(kube, "web-b") == 2,
        "web-a running and web-b's pods Unschedulable",
    )
    assert a.agent.pass_once().exit_code == EXIT_OK
    assert b.agent.pass_once().exit_code == EXIT_OK
    assert a.status()["rescheduleRequests"] == []
    assert [request["name"] for request in b.status()["rescheduleRequests"]] == ["web-b"]
    assert a.workloads() == {"web-a"} and b.workloads() == {"web-b"}


def test_every_applied_object_carries_its_repository_label(kube: KubeTarget, tmp_path: Path) -> None:
    ns = kube.namespace
    a = Fleet(kube, tmp_path / "a", ns, FakeClock())
    forged = configmap("c1", ns, "forged")
    forged["metadata"]["labels"][nova_labels.RENDERED_REPOSITORY] = "0123456789abcdef"
    a.repo.commit(layout("c1", configmap("c1", ns, "plain"), forged))
    assert a.agent.pass_once().exit_code == EXIT_OK
    for name in (
        "plain",
        "forged",
    ):  # a render's own value is overridden: only the agent knows its repository
        live = a.agent.kube.get(CONFIGMAPS, ns, name)
        assert live is not None and live["metadata"]["labels"][nova_labels.RENDERED_REPOSITORY] == a.id
    assert a.repo.show("HEAD", f"clusters/c1/{ns}/configmap-plain.yaml").count("repository") == 0


def test_a_fleet_whose_repository_moved_keeps_its_objects(kube: KubeTarget, tmp_path: Path) -> None:
    ns = kube.namespace
    old = Fleet(kube, tmp_path / "old", ns, FakeClock())
    files = layout("c1", configmap("c1", ns, "cfg"))
    old.repo.commit(files)
    assert old.agent.pass_once().exit_code == EXIT_OK
    uid = uid_of(old.agent.kube.get(CONFIGMAPS, ns, "cfg"))

    moved = Fleet(kube, tmp_path / "moved", ns, FakeClock())  # same inventory, a new URL
    moved.repo.commit(files)
    refused = moved.agent.pass_once()
    assert refused.exit_code == EXIT_REFUSED and f"--previous-repository {old.id}" in refused.message

    moved = Fleet(kube, tmp_path / "moved-again", ns, FakeClock(), old.id)
    moved.repo.commit(files)
    outcome = moved.agent.pass_once()
    assert outcome.exit_code == EXIT_OK, outcome.message
    live = moved.agent.kube.get(CONFIGMAPS, ns, "cfg")
    assert live is not None and uid_of(live) == uid  # the same object, restamped
    assert live["metadata"]["labels"][nova_labels.RENDERED_REPOSITORY] == moved.id
    assert read_inventory(moved.agent.kube, moved.agent.settings)[0].repository == moved.id


def test_delegated_agents_report_only_their_directorys_objects(
    kube: KubeTarget, tmp_path: Path, second_namespace: str
) -> None:
    ns = kube.namespace
    a, b = fleets(kube, tmp_path, second_namespace)
    bodies = {name: deployment("c1", ns, name) for name in ("web-a", "web-b", "web-c")}
    for body in bodies.values():  # what Argo CD applied for both fleets (and a stray one of neither)
        body["metadata"]["labels"][nova_labels.SCHEDULE] = "true"
        a.agent.kube.apply(DEPLOYMENTS, body, force=True)
    a.repo.commit(layout("c1", bodies["web-a"]))
    b_head = b.repo.commit(layout("c1", bodies["web-b"]))
    for fleet in (a, b):
        delegated = replace(fleet.agent.settings, orchestration_enabled=False)
        fleet.agent = Agent(delegated, fleet.agent.kube, FakeClock())
        assert fleet.agent.pass_once().exit_code == EXIT_OK
    assert a.workloads() == {"web-a"}
    assert b.workloads() == {"web-b"}
    assert [w["revision"] for w in b.status()["workloads"]] == [b_head]  # Argo applied what b's head holds
