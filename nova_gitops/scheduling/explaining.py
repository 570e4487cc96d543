"""``explain``: everything the plan decided about one object, gathered into one structure.

Pure, like the rest of ``scheduling``: it reads a loaded ``SourceSet`` and a ``Plan`` and returns plain data
(and its text form); the CLI loads, plans and prints."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nova_gitops.api import policies, quantities
from nova_gitops.api.inputs import SourceSet
from nova_gitops.api.objects import Manifest
from nova_gitops.api.policies import SchedulePolicy
from nova_gitops.errors import UserError
from nova_gitops.scheduling import candidates, demand, matching
from nova_gitops.scheduling.planparts import GroupPlan
from nova_gitops.scheduling.plans import Plan

SHORT_KINDS = {
    "deploy": "deployment",
    "svc": "service",
    "cm": "configmap",
    "ns": "namespace",
    "sts": "statefulset",
    "ds": "daemonset",
    "rs": "replicaset",
    "cj": "cronjob",
    "po": "pod",
    "sa": "serviceaccount",
    "pvc": "persistentvolumeclaim",
    "ing": "ingress",
    "crd": "customresourcedefinition",
}


def _kind_matches(wanted: str, manifest: Manifest) -> bool:
    kind, _, group = wanted.lower().partition(".")
    kind = SHORT_KINDS.get(kind, kind)
    names = {manifest.kind.lower(), manifest.kind.lower() + "s", manifest.kind.lower() + "es"}
    return kind in names and (not group or group == manifest.group.lower())


def find_object(source_set: SourceSet, reference: str) -> Manifest:
    """The object named ``KIND/[NAMESPACE/]NAME`` (kind case-insensitive, plural or short name allowed)."""
    parts = reference.split("/")
    if len(parts) not in (2, 3) or not all(parts):
        raise UserError(f"{reference!r} is not KIND/NAME or KIND/NAMESPACE/NAME (e.g. deployment/shop/web)")
    kind, name = parts[0], parts[-1]
    namespace = parts[1] if len(parts) == 3 else None
    found = [
        manifest
        for manifest in source_set.workloads
        if _kind_matches(kind, manifest)
        and manifest.name == name
        and (namespace is None or manifest.namespace == namespace)
    ]
    if not found:
        raise UserError(f"no object {reference} in the source (try `nova-gitops get placements SOURCE`)")
    if len(found) > 1:
        choices = ", ".join(str(manifest.key) for manifest in found)
        raise UserError(f"{reference} is ambiguous: {choices}; give the namespace (KIND/NAMESPACE/NAME)")
    return found[0]


def _resources(need: dict[str, int]) -> str:
    return ", ".join(
        f"{quantities.format_quantity(res, amount)} {res}" for res, amount in sorted(need.items())
    )


def explain(source_set: SourceSet, plan: Plan, reference: str) -> dict[str, Any]:
    manifest = find_object(source_set, reference)
    ordered = sorted(source_set.policies, key=matching.precedence)
    matched = [p.name for p in ordered if policies.selects(p, manifest, source_set.namespace_labels)]
    group = next(
        (group for group in plan.groups for item in group.objects if item.manifest.key == manifest.key), None
    )
    unscheduled = next((entry for entry in plan.unscheduled if entry.key == manifest.key), None)
    pods = demand.pod_demands(manifest.body, shapes=source_set.pod_shapes)
    unknown = demand.unknown_reason(manifest.body, source_set.pod_shapes)
    result: dict[str, Any] = {
        "object": str(manifest.key),
        "source": str(manifest.location),
        "scope": manifest.scope_note,
        "matchingPolicies": matched,
        "policy": group.policy if group else (unscheduled.policy if unscheduled else None),
        "demand": {
            "pods": sum(pod.count for pod in pods),
            "requests": _resources(demand.total_requests(pods)) or "none",
            **({"unknown": f"demand unknown: {unknown}"} if unknown else {}),
        },
    }
    if group is not None:
        result.update(_placed(source_set, group, manifest, ordered, unknown))
    if unscheduled is not None:
        result["unscheduled"] = unscheduled.reason
    usage = {entry.cluster: entry for entry in plan.clusters}
    result["capacity"] = {
        name: {
            "available": _resources(dict(entry.available)) or "none",
            "placedByThisRender": _resources(dict(entry.placed)) or "none",
        }
        for name, entry in usage.items()
        if group is not None and name in group.clusters
    }
    return result


def _placed(
    source_set: SourceSet,
    group: GroupPlan,
    manifest: Manifest,
    ordered: Sequence[SchedulePolicy],
    unknown: str | None,
) -> dict[str, Any]:
    """What ``explain`` says of a placed object's group: its policy's candidates, the group, the decision,
    the object's copies and the group's warnings."""
    placed: dict[str, Any] = {}
    object_plan = next(item for item in group.objects if item.manifest.key == manifest.key)
    policy = next((p for p in ordered if p.name == group.policy), None)
    if policy is not None:
        chosen = candidates.candidates(policy, source_set.clusters)
        placed["candidates"] = {
            "selection": chosen.description,
            "tiers": [[cluster.name for cluster in tier] for tier in chosen.tiers],
            "notReady": list(chosen.not_ready),
        }
    placed["group"] = {
        "name": group.name,
        "groupBy": f"{group.group_by[0]}={group.group_by[1]}" if group.group_by else None,
        "objects": len(group.objects),
        "mode": group.mode,
        "status": group.status,
    }
    placed["decision"] = [line.strip() + ";" for line in group.reason.split(";") if line.strip()]
    if unknown is not None:  # fit counted what it could read: do not claim the cluster has room
        placed["decision"] = [
            line.replace("because it has enough resources", "but demand unknown")
            for line in placed["decision"]
        ]
    placed["clusters"] = {
        copy.cluster: {
            "replicas": copy.replicas,
            "overrides": [f"{field.path} = {field.value!r}" for field in copy.overrides],
        }
        for copy in object_plan.copies
    }
    placed["warnings"] = list(group.warnings)
    return placed


def as_text(explanation: dict[str, Any]) -> str:
    lines = [f"Object:     {explanation['object']}  ({explanation['source']})"]
    if explanation.get("scope"):
        lines.append(f"Scope:      {explanation['scope']}")
    matched = explanation["matchingPolicies"]
    lines.append(
        f"Policy:     {explanation['policy'] or '<none>'}"
        + (f"  (matching: {', '.join(matched)})" if len(matched) > 1 else "")
    )
    if "group" in explanation:
        group = explanation["group"]
        by = f", groupBy {group['groupBy']}" if group["groupBy"] else ""
        lines.append(
            f"Group:      {group['name']} ({group['objects']} objects{by}), mode {group['mode']}, "
            f"{group['status']}"
        )
    demand_ = explanation["demand"]
    lines.append(f"Demand:     {demand_['pods']} pods, {demand_['requests']}")
    if "candidates" in explanation:
        chosen = explanation["candidates"]
        tiers = " > ".join(",".join(tier) for tier in chosen["tiers"]) or "<none>"
        lines.append(f"Candidates: {tiers}  ({chosen['selection']})")
        if chosen["notReady"]:
            lines.append(f"Not ready:  {', '.join(chosen['notReady'])}")
    if "decision" in explanation:
        lines.append("Decision:")
        lines += [f"  {line}" for line in explanation["decision"]]
    if explanation.get("clusters"):
        lines.append("Placed on:")
        for cluster, copy in explanation["clusters"].items():
            replicas = f" replicas={copy['replicas']}" if copy["replicas"] is not None else ""
            overrides = f" overrides: {'; '.join(copy['overrides'])}" if copy["overrides"] else ""
            lines.append(f"  {cluster}{replicas}{overrides}")
    if explanation.get("unscheduled"):
        lines.append(f"Unscheduled: {explanation['unscheduled']}")
    for warning in explanation.get("warnings", []):
        lines.append(f"Warning:    {warning}")
    return "\n".join(lines)
