"""Permission messages: a 403 names the verb, resource, namespace and the RBAC object of deploy/agent that
grants it, read from kube-apiserver's wording (or from what the agent was doing when the server said less).
The table of grants is checked against the YAML in deploy/agent, so the messages cannot name a role that does
not grant what they say; delegated mode keeps every grant it relies on (the observe role)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from nova_agent import permissions
from nova_agent.kubeports import Resource
from nova_agent.permissions import APPLY, APPLY_VERBS, GRANTS, OBSERVE, Grant, PermissionDenied
from nova_gitops.clients.kuberest import KubeApiError

ROOT = Path(__file__).resolve().parents[2]
CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap", True)
REAL_403 = (
    'configmaps "nova-agent-inventory-c1" is forbidden: User "system:serviceaccount:nova-agent:nova-agent" '
    'cannot get resource "configmaps" in API group "" in the namespace "nova-agent"'
)


def rbac_object(grant: Grant) -> dict[str, Any]:
    documents = [d for d in yaml.safe_load_all((ROOT / grant.file).read_text()) if d]
    found = [d for d in documents if d["kind"] == grant.kind and d["metadata"]["name"] == grant.name]
    assert len(found) == 1, f"{grant.file} has no {grant.kind} {grant.name}"
    return found[0]


def grants(role: dict[str, Any], group: str, resource: str, verb: str) -> bool:
    return any(
        (group in rule["apiGroups"] or "*" in rule["apiGroups"])
        and (resource in rule["resources"] or "*" in rule["resources"])
        and (verb in rule["verbs"] or "*" in rule["verbs"])
        for rule in role["rules"]
    )


@pytest.mark.parametrize(("key", "grant"), sorted(GRANTS.items(), key=lambda item: item[0]))
def test_every_grant_in_the_table_is_in_deploy_agent(key: tuple[str, str, str], grant: Grant) -> None:
    group, resource, verb = key
    assert grants(rbac_object(grant), group, resource, verb)


def test_the_apply_role_grants_every_verb_on_every_resource() -> None:
    role = rbac_object(APPLY)
    assert all(grants(role, "example.com", "widgets", verb) for verb in APPLY_VERBS)


def test_the_delegated_overlay_keeps_the_observe_role() -> None:
    overlay = yaml.safe_load((ROOT / "deploy/agent/delegated/kustomization.yaml").read_text())
    deleted = {
        (patch["kind"], patch["metadata"]["name"])
        for entry in overlay["patches"]
        if "$patch: delete" in entry["patch"]
        for patch in [yaml.safe_load(entry["patch"])]
    }
    assert (OBSERVE.kind, OBSERVE.name) not in deleted
    assert (APPLY.kind, APPLY.name) in deleted  # delegated mode never applies, so never needs it


def test_a_real_servers_refusal_names_verb_resource_namespace_and_the_role() -> None:
    message = permissions.explain(REAL_403, "nova-agent")
    assert message.startswith("nova-agent may not get configmaps in namespace nova-agent")
    assert "system:serviceaccount:nova-agent:nova-agent" in message
    role = "Role nova-agent-inventory in namespace nova-agent (deploy/agent/base/rbac-inventory.yaml)"
    assert role in message


def test_a_cluster_scoped_refusal_names_the_observe_role() -> None:
    message = permissions.explain(
        'nodes is forbidden: User "u" cannot list resource "nodes" in API group "" at the cluster scope',
        "nova-agent",
    )
    assert message.startswith("nova-agent may not list nodes cluster-wide (as u)")
    assert "ClusterRole nova-agent-observe (deploy/agent/base/rbac-observe.yaml)" in message


def test_configmaps_outside_the_agents_namespace_are_the_apply_roles() -> None:
    message = permissions.explain(REAL_403.replace('"nova-agent"', '"shop"'), "nova-agent")
    assert "in namespace shop" in message and "ClusterRole nova-agent-apply" in message


def test_a_403_not_worded_as_rbac_names_the_attempt_and_no_role() -> None:
    terminating = (
        'configmaps "inv" is forbidden: unable to create new content in namespace ops because it is being '
        "terminated"
    )
    with pytest.raises(PermissionDenied) as raised, permissions.explained("patch", CONFIGMAPS, "ops", "ops"):
        raise KubeApiError(403, "Forbidden", terminating)
    assert str(raised.value) == f"nova-agent was refused to patch configmaps in namespace ops: {terminating}"
    assert raised.value.status == 403


def test_other_errors_pass_through_unchanged() -> None:
    with pytest.raises(KubeApiError) as raised, permissions.explained("get", CONFIGMAPS, "ops", "ops"):
        raise KubeApiError(500, "InternalError", "etcd")
    assert not isinstance(raised.value, PermissionDenied)
