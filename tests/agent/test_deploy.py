"""deploy/agent: the base and the delegated overlay build with ``kubectl kustomize``
(skipped without kubectl).

Behaviours covered:
- the apply ClusterRole can create the RBAC a render commonly holds: ``escalate`` and ``bind`` on roles and
  clusterroles, which Kubernetes' escalation check requires of a subject granting rights it lacks;
- the pod runs as 65532 with ``fsGroup: 65532``, so the SSH key Secret mounted with mode 0400 is readable;
- the delegated overlay drops the apply and inventory rights and runs with orchestration disabled.
"""

from __future__ import annotations

from typing import Any

from nova_agent import cli
from tests import deploying

pytestmark = deploying.needs_kubectl


def build(directory: str) -> list[dict[str, Any]]:
    return deploying.build(f"agent/{directory}")


def named(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any] | None:
    return next((o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name), None)


def test_the_apply_role_may_create_common_rbac() -> None:
    role = named(build("base"), "ClusterRole", "nova-agent-apply")
    assert role is not None
    rbac_rules = [r for r in role["rules"] if "rbac.authorization.k8s.io" in r["apiGroups"]]
    granted = {(resource, verb) for r in rbac_rules for resource in r["resources"] for verb in r["verbs"]}
    assert {(res, verb) for res in ("roles", "clusterroles") for verb in ("escalate", "bind")} <= granted


def test_the_pod_can_read_its_mounted_ssh_key() -> None:
    deployment = named(build("base"), "Deployment", "nova-agent")
    assert deployment is not None
    pod = deployment["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsUser"] == 65532 and pod["securityContext"]["fsGroup"] == 65532
    (secret_volume,) = [v for v in pod["volumes"] if "secret" in v]
    assert secret_volume["secret"]["defaultMode"] == 0o400


def test_the_delegated_overlay_only_reads() -> None:
    objects = build("delegated")
    assert named(objects, "ClusterRole", "nova-agent-apply") is None
    assert named(objects, "Role", "nova-agent-inventory") is None
    deployment = named(objects, "Deployment", "nova-agent")
    assert deployment is not None
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    switches = [arg for arg in args if "orchestration" in arg]  # the others hold $(VARIABLES) of the pod
    context = cli.run.make_context("run", ["--cluster", "c", "--repo", "r", *switches])
    assert cli.settings_from(context.params).orchestration_enabled is False
