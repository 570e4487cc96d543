"""The simulated cluster's kube-scheduler: which node a pod fits on, or why no node does.

Pure functions over plain node and pod dicts, so the decision is easy to test and the same every run. It
follows kube-scheduler's default profile where our tests depend on it: a pod fits a node when the node is
Ready and schedulable, the pod's nodeSelector and required node affinity match the node's labels, the pod
tolerates the node's NoSchedule/NoExecute taints, and the node's allocatable minus the requests of the pods
already bound there covers the pod's requests (including one of the node's `pods` slots). Among fitting nodes
the least allocated wins (NodeResourcesFit's default LeastAllocated score over cpu and memory), then the name.
When nothing fits, the message is kube-scheduler v1.36's: "0/2 nodes are available: 2 Insufficient cpu. no new
claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling." (a
taint is not named: "1 node(s) had untolerated taint(s)").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from nova_gitops.api import quantities

Resources = dict[str, int]
"""Resource name → exact milli-units (`pods` counts 1000 per pod)."""

NOT_READY_TAINT = "node.kubernetes.io/not-ready"
SCORED_RESOURCES = ("cpu", "memory")


def _milli(value: Any) -> int | None:
    try:
        return quantities.parse_quantity(value)
    except (quantities.QuantityError, ValueError, TypeError):
        return None


def resource_list(raw: Any) -> Resources:
    if not isinstance(raw, Mapping):
        return {}
    parsed = {str(name): _milli(value) for name, value in raw.items()}
    return {name: value for name, value in parsed.items() if value is not None}


def _container_requests(container: Mapping[str, Any]) -> Resources:
    resources = container.get("resources") or {}
    requests = resource_list(resources.get("requests"))
    for name, value in resource_list(resources.get("limits")).items():
        requests.setdefault(name, value)  # a limit without a request is the request, as the API defaults
    return requests


def pod_requests(pod: Mapping[str, Any]) -> Resources:
    """What the scheduler reserves: max(sum of containers, largest init container) + overhead + one pod."""
    spec = pod.get("spec") or {}
    total: Resources = {}
    for container in spec.get("containers") or []:
        for name, value in _container_requests(container).items():
            total[name] = total.get(name, 0) + value
    for container in spec.get("initContainers") or []:
        for name, value in _container_requests(container).items():
            total[name] = max(total.get(name, 0), value)
    for name, value in resource_list(spec.get("overhead")).items():
        total[name] = total.get(name, 0) + value
    total["pods"] = total.get("pods", 0) + 1000
    return total


@dataclass(slots=True)
class NodeState:
    """One node as the scheduler sees it; `used` grows as pods are bound during one scheduling round."""

    name: str
    labels: Mapping[str, str]
    taints: tuple[Mapping[str, Any], ...]
    allocatable: Resources
    ready: bool
    unschedulable: bool
    used: Resources = field(default_factory=dict)

    def free(self, resource: str) -> int:
        return self.allocatable.get(resource, 0) - self.used.get(resource, 0)

    def reserve(self, requests: Mapping[str, int]) -> None:
        for name, value in requests.items():
            self.used[name] = self.used.get(name, 0) + value


def _node_ready(node: Mapping[str, Any]) -> bool:
    for condition in (node.get("status") or {}).get("conditions") or []:
        if isinstance(condition, Mapping) and condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False


def node_states(nodes: Iterable[Mapping[str, Any]], pods: Iterable[Mapping[str, Any]]) -> list[NodeState]:
    """Nodes sorted by name, with the requests of the unfinished pods bound to each already reserved."""
    states = {
        str(node["metadata"]["name"]): NodeState(
            name=str(node["metadata"]["name"]),
            labels=dict(node["metadata"].get("labels") or {}),
            taints=tuple((node.get("spec") or {}).get("taints") or ()),
            allocatable=resource_list((node.get("status") or {}).get("allocatable")),
            ready=_node_ready(node),
            unschedulable=bool((node.get("spec") or {}).get("unschedulable")),
        )
        for node in nodes
    }
    for pod in pods:
        node_name = (pod.get("spec") or {}).get("nodeName")
        phase = (pod.get("status") or {}).get("phase")
        if node_name in states and phase not in ("Succeeded", "Failed"):
            states[node_name].reserve(pod_requests(pod))
    return [states[name] for name in sorted(states)]


def _expression_matches(expression: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, operator = expression.get("key"), expression.get("operator")
    values = [str(value) for value in expression.get("values") or []]
    present = key in labels
    value = labels.get(str(key))
    if operator == "In":
        return present and value in values
    if operator == "NotIn":
        return not present or value not in values
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt") and present and values:
        try:
            left, right = int(str(value)), int(values[0])
        except ValueError:
            return False
        return left > right if operator == "Gt" else left < right
    return False


def matches_node(pod_spec: Mapping[str, Any], labels: Mapping[str, str], name: str = "") -> bool:
    """nodeSelector, and required node affinity (any term; every expression of a term, and its
    `matchFields` on `metadata.name`, which DaemonSet pods use to target their node)."""
    for key, value in (pod_spec.get("nodeSelector") or {}).items():
        if labels.get(key) != value:
            return False
    required = (
        ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        or {}
    ).get("nodeSelectorTerms")
    if not required:
        return True
    fields = {"metadata.name": name}
    return any(
        all(_expression_matches(expression, labels) for expression in term.get("matchExpressions") or [])
        and all(_expression_matches(expression, fields) for expression in term.get("matchFields") or [])
        for term in required
    )


def tolerates(tolerations: Sequence[Mapping[str, Any]], taint: Mapping[str, Any]) -> bool:
    for toleration in tolerations:
        if toleration.get("effect") and toleration.get("effect") != taint.get("effect"):
            continue
        if toleration.get("operator") == "Exists":
            if not toleration.get("key") or toleration.get("key") == taint.get("key"):
                return True
        elif toleration.get("key") == taint.get("key") and (toleration.get("value") or "") == (
            taint.get("value") or ""
        ):
            return True
    return False


def untolerated_taint(pod_spec: Mapping[str, Any], node: NodeState) -> Mapping[str, Any] | None:
    tolerations = pod_spec.get("tolerations") or []
    taints = list(node.taints)
    if not node.ready:
        taints.append({"key": NOT_READY_TAINT, "effect": "NoSchedule"})
    for taint in taints:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(tolerations, taint):
            return taint
    return None


def misfits(pod: Mapping[str, Any], node: NodeState, requests: Mapping[str, int]) -> list[str]:
    """Why the pod does not fit this node, in kube-scheduler's words; empty when it fits."""
    spec = pod.get("spec") or {}
    if node.unschedulable:
        return ["node(s) were unschedulable"]
    taint = untolerated_taint(spec, node)
    if taint is not None:
        return ["node(s) had untolerated taint(s)"]
    if not matches_node(spec, node.labels, node.name):
        return ["node(s) didn't match Pod's node affinity/selector"]
    reasons = []
    for name in sorted(requests):
        if requests[name] > node.free(name):
            reasons.append("Too many pods" if name == "pods" else f"Insufficient {name}")
    return reasons


def _score(node: NodeState, requests: Mapping[str, int]) -> Fraction:
    """LeastAllocated: the mean free fraction over cpu and memory after placing the pod."""
    fractions = [
        Fraction(node.free(name) - requests.get(name, 0), node.allocatable[name])
        for name in SCORED_RESOURCES
        if node.allocatable.get(name)
    ]
    return sum(fractions, Fraction(0)) / len(fractions) if fractions else Fraction(0)


@dataclass(frozen=True, slots=True)
class Decision:
    node: str | None
    message: str = ""


def schedule(pod: Mapping[str, Any], nodes: Sequence[NodeState]) -> Decision:
    """Pick the node for a pod and reserve its requests there, or say why none fits."""
    requests = pod_requests(pod)
    counts: Counter[str] = Counter()
    fitting: list[NodeState] = []
    for node in nodes:
        reasons = misfits(pod, node, requests)
        if reasons:
            counts.update(reasons)
        else:
            fitting.append(node)
    if fitting:
        best = min(fitting, key=lambda node: (-_score(node, requests), node.name))
        best.reserve(requests)
        return Decision(best.name)
    if not nodes:
        return Decision(None, "no nodes available to schedule pods")
    listed = ", ".join(f"{count} {reason}" for reason, count in sorted(counts.items()))
    count = len(nodes)
    preemption = (
        f"preemption: 0/{count} nodes are available: {count} Preemption is not helpful for scheduling."
    )
    return Decision(
        None, f"0/{count} nodes are available: {listed}. no new claims to deallocate, {preemption}"
    )
