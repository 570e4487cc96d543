"""When a real cluster has reacted to what an agent applied: the real loop's counterpart of the simulated
cluster's ``step()`` (which runs its controllers to a fixed point), for the demo on real clusters.

A real cluster's controllers, scheduler and kubelet act in their own time, so the loop waits for a
condition instead: every workload nova-gitops placed there has *settled*, meaning nothing more will happen
until something changes (a push, a node filling up, the clock passing a deadline):

- its controller has observed its current spec (``observedGeneration``);
- no pod of it is on its way somewhere: each is Running and Ready, or **stuck** — Pending with
  ``PodScheduled=False`` (``Unschedulable``: no node fits it) or with a container waiting in a reason waiting
  does not cure (``CrashLoopBackOff``, ``ImagePullBackOff``, ...: ``health.FAILED_WAITING_REASONS``); a pod
  being deleted, created but not yet scheduled, or bound but not yet running is on its way;
- and it is complete (every replica updated, ready, and no old one left) or one of its pods is stuck (its
  rollout waits for what only a change or a deadline brings);
- and no Namespace placed there is being deleted (an agent's prune of a Namespace ends when the namespace
  controller has emptied it; re-creating it before then fails).

Deployments and DaemonSets, the kinds the demo's stories place. Pure: takes the live objects, returns what
still moves (an empty list: settled), so a timeout can say what it waited for.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from nova_agent.health import FAILED_WAITING_REASONS
from nova_agent.selecting import selector_matches

Body = Mapping[str, Any]


def moving(workloads: Iterable[Body], pods: Sequence[Body], namespaces: Iterable[Body] = ()) -> list[str]:
    """What has not settled yet, one line each (empty: the cluster settled)."""
    found = [
        f"namespace {namespace['metadata']['name']} is being deleted"
        for namespace in namespaces
        if namespace["metadata"].get("deletionTimestamp")
    ]
    for workload in workloads:
        why = workload_moving(workload, pods)
        if why:
            metadata = workload["metadata"]
            found.append(f"{workload['kind']} {metadata.get('namespace', '')}/{metadata['name']}: {why}")
    return found


def workload_moving(workload: Body, pods: Sequence[Body]) -> str:
    """Why a Deployment or DaemonSet has not settled ('' when it has)."""
    metadata, spec = workload["metadata"], workload.get("spec") or {}
    status = workload.get("status") or {}
    if int(status.get("observedGeneration") or 0) < int(metadata.get("generation") or 1):
        return "its controller has not observed its spec yet"
    own = [
        pod
        for pod in pods
        if pod["metadata"].get("namespace") == metadata.get("namespace")
        and selector_matches(spec.get("selector"), pod["metadata"].get("labels") or {})
        and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
    ]
    on_the_way = [pod["metadata"]["name"] for pod in own if not is_ready(pod) and not is_stuck(pod)]
    if on_the_way:
        return f"pod {on_the_way[0]} is on its way" + (
            f" (and {len(on_the_way) - 1} more)" if len(on_the_way) > 1 else ""
        )
    if any(is_stuck(pod) for pod in own) or complete(workload, len(own)):
        return ""
    return "not every replica is updated and ready yet"


def complete(workload: Body, pods: int) -> bool:
    """Every replica updated and ready, and no other pod left (an old one being replaced)."""
    spec, status = workload.get("spec") or {}, workload.get("status") or {}
    if workload.get("kind") == "DaemonSet":
        wanted = int(status.get("desiredNumberScheduled") or 0)
        counts = (
            status.get("updatedNumberScheduled"),
            status.get("numberReady"),
            status.get("numberAvailable"),
        )
    else:
        wanted = int(spec.get("replicas", 1))
        counts = (
            status.get("updatedReplicas"),
            status.get("readyReplicas"),
            status.get("availableReplicas"),
            status.get("replicas"),
        )
    return all(int(count or 0) == wanted for count in counts) and pods == wanted


def is_ready(pod: Body) -> bool:
    status = pod.get("status") or {}
    return (
        status.get("phase") == "Running"
        and not pod["metadata"].get("deletionTimestamp")
        and any(
            condition.get("type") == "Ready" and condition.get("status") == "True"
            for condition in status.get("conditions") or []
        )
    )


def is_stuck(pod: Body) -> bool:
    """Unschedulable, or a container waiting in a reason waiting does not cure (and not being deleted)."""
    if pod["metadata"].get("deletionTimestamp"):
        return False
    status = pod.get("status") or {}
    if status.get("phase", "Pending") == "Pending" and any(
        condition.get("type") == "PodScheduled"
        and condition.get("status") == "False"
        and condition.get("reason") == "Unschedulable"
        for condition in status.get("conditions") or []
    ):
        return True
    containers = [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]
    return any(
        ((container.get("state") or {}).get("waiting") or {}).get("reason") in FAILED_WAITING_REASONS
        for container in containers
    )
