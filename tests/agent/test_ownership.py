"""Pure ownership decisions: an object that did not exist is created (unless another manager raced us to it),
one that existed is adopted; a recorded uid decides whether a live object is the one we created; what keeps a
Namespace from being deleted (anything not ours, but not Kubernetes' defaults, events, objects being deleted,
dependents of our objects or of objects gone); inventory entries keep their ownership and uid through the
ConfigMap; Secret values never survive into a server message we report; a Secret whose values are not strings
is refused without quoting them."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nova_agent import inventories, ownership, redacting
from nova_agent.desired import secret_problems
from nova_agent.inventories import Inventory, InventoryEntry
from nova_agent.ownership import Ownership
from nova_agent.resources import ObjectRef
from nova_gitops.api import labels as nova_labels


def obj(
    kind: str, name: str, *, uid: str = "", owners: tuple[str, ...] = (), **metadata: Any
) -> dict[str, Any]:
    api_version = "apps/v1" if kind in ("Deployment", "ReplicaSet") else "v1"
    meta: dict[str, Any] = {"name": name, "namespace": "team", "uid": uid or f"uid-{kind}-{name}", **metadata}
    if owners:
        meta["ownerReferences"] = [
            {"uid": owner, "kind": "X", "name": "x", "apiVersion": "v1"} for owner in owners
        ]
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}


def managed(*managers: str) -> dict[str, Any]:
    return {
        "metadata": {"uid": "u1", "managedFields": [{"manager": m, "operation": "Apply"} for m in managers]}
    }


def test_created_when_absent_and_no_other_manager_wrote_first() -> None:
    assert ownership.ownership_after_apply(None, False, None, managed("nova-agent")) is Ownership.CREATED
    raced = managed("nova-agent", "kubectl-create")
    assert ownership.ownership_after_apply(None, False, None, raced) is Ownership.ADOPTED


def test_adopted_when_it_existed_and_kept_when_it_is_the_same_object() -> None:
    live = {"metadata": {"uid": "u1"}}
    assert ownership.ownership_after_apply(None, True, live, live) is Ownership.ADOPTED
    assert ownership.ownership_after_apply(Ownership.CREATED, False, live, live) is Ownership.CREATED


@pytest.mark.parametrize(
    ("owner", "uid", "live_uid", "labelled", "same"),
    [
        (Ownership.CREATED, "u1", "u1", True, True),
        (Ownership.CREATED, "u1", "u2", True, False),  # re-created by someone else
        (Ownership.CREATED, "", "u2", True, True),  # a pending creation that did reach the server
        (Ownership.CREATED, "", "u2", False, False),  # pending, and someone else's object
        (Ownership.UNKNOWN, "", "u2", False, True),  # an older agent's entry, taken at its word
    ],
)
def test_same_object(owner: Ownership, uid: str, live_uid: str, labelled: bool, same: bool) -> None:
    labels = {nova_labels.TARGET_CLUSTER: "c1"} if labelled else {}
    live = {"metadata": {"uid": live_uid, "labels": labels}}
    assert ownership.is_same_object(owner, uid, live, "c1") is same
    assert ownership.adopts(owner, uid, live, "c1") is not same
    assert ownership.adopts(None, "", live, "c1") and not ownership.adopts(None, "", None, "c1")


def test_protected_namespaces() -> None:
    for name in ("default", "kube-system", "kube-public", "kube-node-lease", "nova-agent"):
        assert ownership.protected_namespace(ObjectRef("v1", "Namespace", "", name), "nova-agent")
    assert not ownership.protected_namespace(ObjectRef("v1", "Namespace", "", "team"), "nova-agent")
    assert not ownership.protected_namespace(ObjectRef("v1", "ConfigMap", "default", "x"), "nova-agent")


def test_deletion_blockers_ignore_defaults_events_ours_and_their_dependents() -> None:
    deployment = obj("Deployment", "web")
    replicaset = obj("ReplicaSet", "web-1", owners=(deployment["metadata"]["uid"],))
    pod = obj("Pod", "web-1-a", owners=(replicaset["metadata"]["uid"],))
    slice_of_deleted_service = obj("EndpointSlice", "api-x", owners=("uid-Service-api",))
    items = [
        obj("ServiceAccount", "default"),
        obj("ConfigMap", "kube-root-ca.crt"),
        obj("Event", "web.17a"),
        obj("ConfigMap", "leaving", deletionTimestamp="2026-11-23T10:00:00Z"),
        obj("Service", "web"),
        obj("Endpoints", "web"),
        obj("Endpoints", "api"),  # its Service was deleted a moment ago
        slice_of_deleted_service,
        deployment,
        replicaset,
        pod,
    ]
    deleted = {
        ObjectRef("apps/v1", "Deployment", "team", "web").key: deployment["metadata"]["uid"],
        ObjectRef("v1", "Service", "team", "web").key: "uid-Service-web",
        ObjectRef("v1", "Service", "team", "api").key: "uid-Service-api",
    }
    assert ownership.deletion_blockers(items, deleted) == []


def test_deletion_blockers_name_what_is_not_ours_and_its_dependents() -> None:
    users = obj("Deployment", "theirs")
    their_replicaset = obj("ReplicaSet", "theirs-1", owners=(users["metadata"]["uid"],))
    owned_elsewhere = obj("ConfigMap", "by-a-clusterrole", owners=("uid-of-a-live-clusterrole",))
    recreated = obj("ConfigMap", "web", uid="someone-elses")  # same name as ours, another uid
    items = [
        obj("ConfigMap", "precious"),
        obj("PersistentVolumeClaim", "data-0"),
        users,
        their_replicaset,
        owned_elsewhere,
        recreated,
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}},
    ]
    deleted = {ObjectRef("v1", "ConfigMap", "team", "web").key: "uid-ours"}
    blockers = ownership.deletion_blockers(items, deleted)
    assert {f"{ref.kind} {ref.name}" for ref in blockers} == {
        "ConfigMap precious",
        "PersistentVolumeClaim data-0",
        "Deployment theirs",
        "ReplicaSet theirs-1",
        "ConfigMap by-a-clusterrole",
        "ConfigMap web",
        "ConfigMap (unnamed)",
    }
    message = ownership.describe_blockers(ObjectRef("v1", "Namespace", "", "team"), blockers)
    assert "ConfigMap team/precious" in message and "deletes everything in it" in message


def test_ownership_cycles_end_and_block() -> None:
    first, second = (
        obj("ConfigMap", "a", uid="ua", owners=("ub",)),
        obj("ConfigMap", "b", uid="ub", owners=("ua",)),
    )
    assert [ref.name for ref in ownership.deletion_blockers([first, second], {})] == ["a", "b"]


@given(
    st.lists(
        st.builds(
            InventoryEntry,
            st.builds(
                ObjectRef,
                st.sampled_from(["v1", "apps/v1"]),
                st.sampled_from(["ConfigMap", "Namespace"]),
                st.sampled_from(["", "ns"]),
                st.text("abc-", min_size=1, max_size=5),
            ),
            st.sampled_from(["", "d1"]),
            st.sampled_from(list(Ownership)),
            st.sampled_from(["", "u-1"]),
        ),
        max_size=6,
    )
)
def test_inventory_keeps_ownership_and_uid(entries: list[InventoryEntry]) -> None:
    inventory = Inventory("rev", {entry.ref.key: entry for entry in entries})
    decoded, problems = inventories.decode_inventory(inventories.encode_inventory(inventory))
    assert problems == [] and decoded == inventory


def test_an_older_agents_inventory_reads_as_unknown_ownership() -> None:
    line = '{"apiVersion":"v1","digest":"d","kind":"Namespace","name":"team","namespace":""}\n'
    decoded, _ = inventories.decode_inventory({"revision": "r", "objects": line})
    (entry,) = decoded.entries.values()
    assert entry.owner is Ownership.UNKNOWN and entry.uid == ""


def secret(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "ns"}, **fields}


@pytest.mark.parametrize(
    "message",
    [
        'Secret "s" is invalid: data[token]: Invalid value: "hunter2-long-token": a valid value',
        "failed to create typed patch object (/v1, Kind=Secret) ns/s: .stringData.token: expected string, "
        "got &value.valueUnstructured{Value:hunter2-long-token}",
        "something quoted hunter2-long-token and aHVudGVyMi1sb25nLXRva2Vu verbatim",
    ],
)
def test_secret_values_are_redacted_from_server_messages(message: str) -> None:
    body = secret(data={"b64": "aHVudGVyMi1sb25nLXRva2Vu"}, stringData={"token": "hunter2-long-token"})
    redacted = redacting.redact_server_message(message, body)
    assert "hunter2" not in redacted and "aHVudGVy" not in redacted and redacting.REDACTED in redacted


def test_other_kinds_messages_are_left_as_they_are() -> None:
    message = 'ConfigMap "c" is invalid: data[x]: Invalid value: "visible"'
    assert redacting.redact_server_message(message, {"apiVersion": "v1", "kind": "ConfigMap"}) == message


def test_secret_shapes_are_checked_without_quoting_values() -> None:
    body = secret(
        data={"ok": "aGk=", "bad64": "not base64!!", "num": 12345678},
        stringData={"nested": {"value": "s3cr3t-value"}, "bad key": "x"},
    )
    problems = secret_problems(body)
    assert {p.split(":")[0] for p in problems} == {
        "data.bad64",
        "data.num",
        "stringData.nested",
        "stringData[bad key]",
    }
    assert not any("s3cr3t" in p or "12345678" in p for p in problems)
    assert secret_problems(secret(data={"a": "aGk="}, stringData={"b": "plain"})) == []
    (not_a_map,) = secret_problems(secret(stringData="just a string"))
    assert not_a_map.startswith("stringData: must be a mapping") and "just a string" not in not_a_map


@pytest.mark.parametrize(
    "message",
    [
        'Secret "s" is invalid: stringData[token]: "aHVudGVyMi1sb25nLXRva2Vu" seen base64-encoded',
        'Secret "s" is invalid: data[k]: Invalid value: "caf\u00e9\\nline": Go %q keeps non-ASCII letters',
        'admission webhook "x" denied the request: value "any-other-quoted-text" not allowed',
    ],
)
def test_any_quoted_text_but_names_and_keys_is_redacted_for_a_secret(message: str) -> None:
    body = secret(data={"k": "Y2Fmw6kKbGluZQ=="}, stringData={"token": "hunter2-long-token"})
    redacted = redacting.redact_server_message(message, body)
    assert "aHVudGVy" not in redacted and "caf" not in redacted and "any-other" not in redacted
    assert redacted.startswith('Secret "s"') or redacted.startswith("admission webhook")


def test_a_crd_is_listed_through_a_version_it_serves() -> None:
    crd = {
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [
                {"name": "v1alpha1", "served": False, "storage": True},
                {"name": "v1", "served": True, "storage": False},
            ],
        }
    }
    served = ownership.crd_resource(crd)
    assert served is not None and (served.version, served.plural, served.namespaced) == (
        "v1",
        "widgets",
        True,
    )
    crd["spec"]["versions"][1]["served"] = False  # type: ignore[index]
    assert ownership.crd_resource(crd) is None
