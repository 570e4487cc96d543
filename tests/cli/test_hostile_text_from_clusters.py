"""A condition message a cluster wrote reaches ``rollout status`` escaped (issue 21, item 8, the agent side).

The whole way, with real parts: a source with a RolloutStrategy, the controller releasing the canary, a
nova-agent following its release branch on a cluster (the fake API server, or a real kube-apiserver with
``NOVA_TEST_KUBECONFIG``), its report pushed to the status branch, and ``nova-gitops rollout status`` (click's
runner and a real process) reading it.

On a real cluster the message is the API server's own: a ValidatingAdmissionPolicy refuses the ReplicaSet's
pods with a ``messageExpression`` that quotes a pod annotation (any text, ESC sequences and bidi overrides
included), the ReplicaSet controller puts the refusal in the ReplicaFailure condition, and the agent reports
it as the workload's message. The fake API server has neither admission policies nor a ReplicaSet
controller: there the test writes that condition itself, as the controller would.

Behaviours covered:
- the agent reports the message exactly as the cluster holds it (a report is data, not a display);
- rollout status shows the canary failed with that message, every hidden character an escape, on stdout
  and stderr, plain and rich; ``-o json`` reads back to the very message.
"""

from __future__ import annotations

import json
import secrets
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from nova_agent.clocks import FakeClock
from nova_agent.kubeclient import ApiClientKube
from nova_agent.running import Agent
from nova_agent.settings import AgentSettings
from nova_gitops.clients import terminals
from tests.cli.test_hostile_text import CLIPBOARD, TITLE, code, hidden, process, run
from tests.controller.helpers import Fleet, cluster_report, policy
from tests.controller.test_rollouts import SPREAD, STRATEGY, WallClock
from tests.fakekube.fixtures import KubeTarget, fake_kube, kube  # noqa: F401
from tests.unit.rendering.test_hostile_text import clean

MESSAGE = f"{TITLE}{CLIPBOARD}\u202eevil\x9b31m @alice ![t](https://t.example/p.png)"
ANNOTATION = "nova-test/refusal"


def replicaset(namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web", "namespace": namespace, "labels": {"app": "web"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}, "annotations": {ANNOTATION: MESSAGE}},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]},
            },
        },
    }


def refuse_pods_quoting_their_annotation(target: KubeTarget) -> list[tuple[str, str]]:
    """A ValidatingAdmissionPolicy (and its binding, for the test's namespace) refusing every pod that
    carries ``ANNOTATION``, with the annotation's text as the refusal message. Returns what to delete."""
    from kubernetes import client

    admission = client.AdmissionregistrationV1Api(target.api_client)
    name = f"nova-test-refuse-{secrets.token_hex(3)}"
    admission.create_validating_admission_policy(
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {
                    "resourceRules": [
                        {
                            "apiGroups": [""],
                            "apiVersions": ["v1"],
                            "operations": ["CREATE"],
                            "resources": ["pods"],
                        }
                    ]
                },
                "validations": [
                    {
                        "expression": f"!has(object.metadata.annotations) || "
                        f"!('{ANNOTATION}' in object.metadata.annotations)",
                        "messageExpression": f"string(object.metadata.annotations['{ANNOTATION}'])",
                    }
                ],
            },
        }
    )
    admission.create_validating_admission_policy_binding(
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name},
            "spec": {
                "policyName": name,
                "validationActions": ["Deny"],
                "matchResources": {
                    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": target.namespace}}
                },
            },
        }
    )
    deadline = time.monotonic() + 60  # admission reads new policies from an informer: wait until it does
    while not refused(target) and time.monotonic() < deadline:
        time.sleep(0.5)
    return [("policy", name), ("binding", name)]


def refused(target: KubeTarget) -> bool:
    """Whether the API server now refuses a pod with the annotation (a server-side dry run)."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"generateName": "probe-", "annotations": {ANNOTATION: "probe"}},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]},
    }
    try:
        client.CoreV1Api(target.api_client).create_namespaced_pod(target.namespace, pod, dry_run="All")
    except ApiException as error:
        return error.status in (403, 422) and "probe" in str(error.body)
    return False


def remove(target: KubeTarget, made: list[tuple[str, str]]) -> None:
    from kubernetes import client

    admission = client.AdmissionregistrationV1Api(target.api_client)
    for kind, name in made:
        if kind == "binding":
            admission.delete_validating_admission_policy_binding(name)
        else:
            admission.delete_validating_admission_policy(name)


def replica_failure(target: KubeTarget) -> dict[str, Any] | None:
    from kubernetes import client

    body = client.AppsV1Api(target.api_client).read_namespaced_replica_set(
        "web", target.namespace, _preload_content=False
    )
    found = json.loads(body.data)
    conditions = (found.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c.get("type") == "ReplicaFailure"), None)


def write_replica_failure(target: KubeTarget) -> None:
    """What the ReplicaSet controller writes when admission refuses its pods (the fake runs none)."""
    from kubernetes import client

    refusal = (
        "pods \"web-x7k2p\" is forbidden: ValidatingAdmissionPolicy 'refuse' with binding 'refuse' "
        f"denied request: {MESSAGE}"
    )
    condition = {"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate", "message": refusal}
    client.AppsV1Api(target.api_client).patch_namespaced_replica_set_status(
        "web",
        target.namespace,
        {"status": {"replicas": 0, "observedGeneration": 1, "conditions": [condition]}},
    )


def test_a_condition_message_from_the_cluster_reaches_rollout_status_escaped(
    kube: KubeTarget,  # noqa: F811
    tmp_path: Path,
) -> None:
    fleet = Fleet(tmp_path)
    fleet.write_source("policy.yaml", policy(spreadConstraints=SPREAD))
    fleet.write_source("web.yaml", replicaset(kube.namespace))
    fleet.write_source("rollout.yaml", STRATEGY)
    fleet.report(cluster_report("wlc-1", labels={"tier": "canary"}), cluster_report("wlc-2"))
    clock = WallClock()
    clock.now = datetime.now(UTC).replace(microsecond=0)
    fleet.controller(wall_clock=clock, namespace_follow=False).reconcile_once()  # the canary is released
    target = fleet.head()

    made = [] if kube.fake is not None else refuse_pods_quoting_their_annotation(kube)
    try:
        settings = AgentSettings(
            cluster="wlc-1",
            repo=fleet.url,
            cache_dir=tmp_path / "agent-cache",
            namespace=kube.namespace,
            follow_release=True,
            cluster_labels={"tier": "canary"},
        )
        agent = Agent(settings, ApiClientKube(kube.api_client), FakeClock())
        first = agent.pass_once()
        assert first.sync is not None and first.sync.synced_revision == target, first.message
        if kube.fake is not None:
            write_replica_failure(kube)
        else:
            deadline = time.monotonic() + 90  # the ReplicaSet controller's first sync (a wait, not a figure)
            while replica_failure(kube) is None and time.monotonic() < deadline:
                time.sleep(0.5)
        condition = replica_failure(kube)
        assert condition is not None and MESSAGE in condition["message"], condition
        agent.pass_once()
    finally:
        remove(kube, made)

    report = yaml.safe_load(fleet.show("status/wlc-1.yaml", "nova-status"))
    [entry] = [w for w in report["status"]["workloads"] if w["kind"] == "ReplicaSet"]
    assert entry["message"] == condition["message"] and entry["revision"] == target  # exactly as held

    where = ["--repo", fleet.url, "--source", str(fleet.source), "--cache-dir", str(tmp_path / "cli")]
    for env in ({}, {terminals.FORCE_TERMINAL: "1"}):
        for result in (
            run("rollout", "status", *where, env=env),
            process("rollout", "status", *where, env=env),
        ):
            assert code(result) == 0, result.stderr
            assert hidden(result.stdout, styled=bool(env)) == [], result.stdout
            assert hidden(result.stderr, styled=bool(env)) == [], result.stderr
            assert "Degraded on wlc-1" in result.stdout and "\\u001b]0;pwned\\u0007" in result.stdout
    as_json = process("rollout", "status", *where, "-o", "json")
    assert clean(as_json.stdout)
    [canary] = [item for item in json.loads(as_json.stdout)["clusters"] if item["name"] == "wlc-1"]
    assert MESSAGE[:30] in canary["reason"]  # the very characters, read back from JSON's escapes
