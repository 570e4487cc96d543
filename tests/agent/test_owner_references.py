"""The agent never applies ``metadata.ownerReferences`` nor ``metadata.finalizers`` (issue 21 item 1), on the
fake API server and on a real cluster (NOVA_TEST_KUBECONFIG), where the garbage collector really runs:

- a user's ConfigMap ``precious`` that the render names with an owner reference (copied from ``kubectl get
  -o yaml``, or hostile) is adopted without the reference: when that owner is deleted, the garbage
  collector deletes the owner's real dependents and leaves ``precious`` as it was — same uid, same data;
- the issue's own reproduction (real cluster only: the fake's collector acts only on deletions it saw): an
  owner reference to a uid that never existed, which kube-controller-manager's collector acts on at once;
- an object the agent creates gets neither field either, and a later prune is not held by a finalizer the
  render slipped in;
- the result names each stripped object and field once; the next pass sees no drift and sends nothing;
- an owner reference an older agent applied (the nova-agent field manager owns it) goes at the next pass.

Waiting for the collector is a condition, never a bare sleep: a *witness* ConfigMap the test itself makes
with the same owner reference is deleted by the collector; once the witness is gone, the collector has had
its moment for everything that named that owner.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from kubernetes import client

from nova_agent import running
from nova_agent.inventories import Inventory, InventoryEntry
from nova_agent.kubeports import Resource
from nova_agent.ownership import Ownership
from nova_agent.resources import ObjectRef
from nova_agent.running import EXIT_OK
from nova_agent.syncing import write_inventory
from tests.agent.conftest import AgentFactory
from tests.agent.gitrepos_helpers import RenderedRepo
from tests.agent.manifests import configmap, layout
from tests.fakekube.fixtures import KubeTarget

CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap", True)
GC_TIMEOUT = 90.0  # seconds: kube-controller-manager's collector acts within a few; this only bounds a hang


def _core(kube: KubeTarget) -> Any:
    return client.CoreV1Api(kube.api_client)


def _create(kube: KubeTarget, name: str, data: dict[str, str], owners: Sequence[dict[str, Any]] = ()) -> Any:
    metadata = client.V1ObjectMeta(name=name, owner_references=list(owners) or None)
    body = client.V1ConfigMap(metadata=metadata, data=data)
    return _core(kube).create_namespaced_config_map(kube.namespace, body, field_manager="kubectl-create")


def _live(kube: KubeTarget, name: str) -> dict[str, Any] | None:
    try:
        found: dict[str, Any] = kube.api_client.sanitize_for_serialization(
            _core(kube).read_namespaced_config_map(name, kube.namespace)
        )
    except client.ApiException as error:
        if error.status == 404:
            return None
        raise
    return found


def _eventually(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + GC_TIMEOUT
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {GC_TIMEOUT:.0f} s: {what}")
        time.sleep(0.1)


def _reference(name: str, uid: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _collector_has_acted(kube: KubeTarget, reference: dict[str, Any]) -> None:
    """Make a witness that names ``reference`` as its owner and wait until the collector deleted it."""
    witness = f"witness-{secrets.token_hex(3)}"
    _create(kube, witness, {"w": "1"}, [reference])
    _eventually(lambda: _live(kube, witness) is None, f"the garbage collector deletes {witness}")


def _hostile(ns: str, name: str, reference: dict[str, Any], *finalizers: str) -> dict[str, Any]:
    """The rendered object with an owner reference (and finalizers nobody will ever remove)."""
    body = configmap("c1", ns, name, value="mine")
    body["metadata"]["ownerReferences"] = [reference]
    if finalizers:
        body["metadata"]["finalizers"] = list(finalizers)
    return body


def _assert_precious_kept(kube: KubeTarget, uid: str) -> None:
    live = _live(kube, "precious")
    assert live is not None, "the garbage collector deleted the user's ConfigMap"
    assert live["metadata"]["uid"] == uid, "precious was deleted and re-created: the user's data is gone"
    assert "deletionTimestamp" not in live["metadata"], "the garbage collector is deleting precious"
    assert live["data"] == {"v": "mine", "diary": "years of notes"}
    assert "ownerReferences" not in live["metadata"] and "finalizers" not in live["metadata"]


def test_an_adopted_object_survives_the_deletion_of_the_owner_the_render_names(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    owner = _create(kube, "owner", {"o": "1"})
    reference = _reference("owner", owner.metadata.uid)
    precious = _create(kube, "precious", {"v": "mine", "diary": "years of notes"})
    witness = _create(kube, "witness", {"w": "1"}, [reference])  # a real dependent of owner
    made = _hostile(ns, "made", reference, "example.com/never-released")
    rendered.commit(layout("c1", _hostile(ns, "precious", reference), made))
    agent = make_agent(report_enabled=False)

    first = agent.pass_once()
    assert first.exit_code == EXIT_OK, first.message
    assert first.sync is not None
    assert first.sync.adopted == [ObjectRef("v1", "ConfigMap", ns, "precious")]
    assert first.sync.stripped == {
        ObjectRef("v1", "ConfigMap", ns, "made"): ("metadata.finalizers", "metadata.ownerReferences"),
        ObjectRef("v1", "ConfigMap", ns, "precious"): ("metadata.ownerReferences",),
    }
    note = running.stripped_applied(first.sync)  # the one warning line the pass logs
    assert note.startswith("applied 2 object(s) without the metadata.finalizers and metadata.ownerReferences")
    assert f"ConfigMap {ns}/made, ConfigMap {ns}/precious" in note
    live_made = _live(kube, "made")
    assert live_made is not None and "ownerReferences" not in live_made["metadata"]
    assert "finalizers" not in live_made["metadata"]

    _core(kube).delete_namespaced_config_map("owner", ns)
    _eventually(lambda: _live(kube, witness.metadata.name) is None, "the collector deletes owner's dependent")
    if kube.fake is None:  # the real collector's next moment: owner is absent now (the fake collects at once)
        _collector_has_acted(kube, reference)
    _assert_precious_kept(kube, precious.metadata.uid)
    assert _live(kube, "made") is not None

    second = agent.pass_once()
    assert second.exit_code == EXIT_OK, second.message
    assert second.sync is not None and second.sync.applied == [] and second.sync.drifted == []
    assert running.stripped_applied(second.sync) == ""  # said when applied, not at every pass
    _assert_precious_kept(kube, precious.metadata.uid)

    prune = {f"clusters/c1/{ns}/configmap-made.yaml": None}  # a prune no finalizer holds
    rendered.commit(prune, trailers="Nova-Allow-Mass-Prune: true")
    third = agent.pass_once()
    assert third.exit_code == EXIT_OK, third.message
    assert third.sync is not None and third.sync.pruned == [ObjectRef("v1", "ConfigMap", ns, "made")]
    assert _live(kube, "made") is None


def test_an_owner_reference_to_a_uid_that_never_existed_deletes_nothing(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    if kube.fake is not None:
        pytest.skip("the fake's garbage collector acts only on deletions it saw; this is the real one's case")
    ns = kube.namespace
    reference = _reference("gone", "3f1c6a5e-0000-4000-8000-00000000dead")
    precious = _create(kube, "precious", {"v": "mine", "diary": "years of notes"})
    rendered.commit(layout("c1", _hostile(ns, "precious", reference, "example.com/never-released")))
    agent = make_agent(report_enabled=False)

    first = agent.pass_once()
    assert first.exit_code == EXIT_OK, first.message
    assert first.sync is not None and first.sync.adopted == [ObjectRef("v1", "ConfigMap", ns, "precious")]
    for _ in range(3):  # a few of the collector's moments, each after the agent's apply
        _collector_has_acted(kube, reference)
        _assert_precious_kept(kube, precious.metadata.uid)
        again = agent.pass_once()
        assert again.exit_code == EXIT_OK, again.message
        assert again.sync is not None and again.sync.applied == [] and again.sync.drifted == []


def test_an_owner_reference_an_older_agent_applied_goes_at_the_next_pass(
    kube: KubeTarget, rendered: RenderedRepo, make_agent: AgentFactory
) -> None:
    ns = kube.namespace
    owner = _create(kube, "owner", {"o": "1"})
    hostile = _hostile(ns, "app", _reference("owner", owner.metadata.uid))
    agent = make_agent(report_enabled=False)
    applied = agent.kube.apply(CONFIGMAPS, hostile, force=False)  # as an agent before issue 21 applied it
    ref = ObjectRef("v1", "ConfigMap", ns, "app")
    entry = InventoryEntry(ref, "digest-with-the-reference", Ownership.CREATED, applied["metadata"]["uid"])
    write_inventory(agent.kube, agent.settings, Inventory("old", {ref.key: entry}))
    rendered.commit(layout("c1", hostile))

    outcome = agent.pass_once()
    assert outcome.exit_code == EXIT_OK, outcome.message
    assert outcome.sync is not None and outcome.sync.applied == [ref]
    live = _live(kube, "app")
    assert live is not None and live["metadata"]["uid"] == applied["metadata"]["uid"]
    assert "ownerReferences" not in live["metadata"]
    again = agent.pass_once()
    assert again.sync is not None and again.sync.applied == [] and again.sync.drifted == []
