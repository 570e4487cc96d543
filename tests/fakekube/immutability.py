"""Fields of built-in kinds that kube-apiserver refuses to change once set (422 Invalid), in its wording.

An applier that rewrites such a field (a Job's completions, a Service's clusterIP, an immutable ConfigMap's
data) meets these errors only on a real cluster unless the fake refuses them too; the usual answer is to
delete and recreate the object, which tests can only exercise if the refusal happens here. Values are shown
as compact JSON, as recent upstream versions print them; the PVC message's diff, which upstream prints of Go
struct fields, is a unified diff of the spec's JSON here: compare its first line only.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

Problem = tuple[str, str]

IMMUTABLE = "field is immutable"
WHEN_SET = "Forbidden: field is immutable when `immutable` is set"
PVC_SPEC = (
    "Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName "
    "for bound claims"
)
STATEFULSET_SPEC = (
    "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
    "'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' "
    "are forbidden"
)
_SELECTOR_IMMUTABLE = frozenset({"Deployment", "ReplicaSet", "DaemonSet"})
_STATEFULSET_MUTABLE = frozenset(
    {
        "replicas",
        "ordinals",
        "template",
        "updateStrategy",
        "revisionHistoryLimit",
        "persistentVolumeClaimRetentionPolicy",
        "minReadySeconds",
    }
)


def _shown(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _changed(field: str, old: Any, new: Any) -> list[Problem]:
    if old == new:
        return []
    return [(field, f"Invalid value: {_shown(new)}: {IMMUTABLE}")]


def _spec(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _job_problems(new: dict[str, Any], old: dict[str, Any]) -> list[Problem]:
    """ValidateJobSpecUpdate: selector, template and completions are fixed (completions may move with
    parallelism only for an Indexed Job: elastic indexed jobs), and so is completionMode."""
    spec, before = _spec(new), _spec(old)
    problems = _changed("spec.selector", before.get("selector"), spec.get("selector"))
    elastic = (
        spec.get("completionMode") == "Indexed"
        and spec.get("completions") == spec.get("parallelism")
        and before.get("completions") == before.get("parallelism")
    )
    if not elastic:
        problems += _changed("spec.completions", before.get("completions"), spec.get("completions"))
    problems += _changed("spec.completionMode", before.get("completionMode"), spec.get("completionMode"))
    problems += _changed("spec.template", before.get("template"), spec.get("template"))
    return problems


def _service_problems(new: dict[str, Any], old: dict[str, Any]) -> list[Problem]:
    """ValidateServiceUpdate: an allocated cluster IP stays (clusterIPs[0], normalized from a changed
    clusterIP; clusterIP itself only when the IPs do not say it)."""
    spec, before = _spec(new), _spec(old)
    if "ExternalName" in (spec.get("type"), before.get("type")):
        return []
    problems: list[Problem] = []
    old_ips, new_ips = before.get("clusterIPs") or [], spec.get("clusterIPs") or []
    if spec.get("clusterIP") != before.get("clusterIP") and new_ips == old_ips and spec.get("clusterIP"):
        new_ips = [spec["clusterIP"]]  # upstream normalizes clusterIPs to a changed clusterIP first
    if old_ips and new_ips and old_ips[0] != new_ips[0]:
        shown = _shown(new_ips)
        problems.append(("spec.clusterIPs[0]", f"Invalid value: {shown}: may not change once set"))
    if before.get("clusterIP") and not problems:  # v1.36 names clusterIPs[0] alone when both moved
        problems += _changed("spec.clusterIP", before.get("clusterIP"), spec.get("clusterIP"))
    return problems


def _data_problems(kind: str, new: dict[str, Any], old: dict[str, Any]) -> list[Problem]:
    """ValidateConfigMapUpdate / ValidateSecretUpdate: `immutable: true` freezes data (and itself)."""
    problems: list[Problem] = []
    if kind == "Secret":
        problems += _changed("type", old.get("type"), new.get("type"))
    if old.get("immutable") is not True:
        return problems
    if new.get("immutable") is not True:
        problems.append(("immutable", WHEN_SET))
    for key in ("data", "binaryData") if kind == "ConfigMap" else ("data",):
        if (old.get(key) or {}) != (new.get(key) or {}):
            problems.append((key, WHEN_SET))
    return problems


def _claim_problems(new: dict[str, Any], old: dict[str, Any]) -> list[Problem]:
    """ValidatePersistentVolumeClaimUpdate: only a bound claim's storage request (expansion) and the
    volume attributes class may change; volumeName may be set once (binding)."""
    spec, before = dict(_spec(new)), dict(_spec(old))
    for key in ("volumeAttributesClassName",):
        spec.pop(key, None)
        before.pop(key, None)
    if not before.get("volumeName"):
        before.pop("volumeName", None)
        spec.pop("volumeName", None)
    if (old.get("status") or {}).get("phase") == "Bound":
        for claim in (spec, before):
            requests = ((claim.get("resources") or {}).get("requests") or {}).copy()
            requests.pop("storage", None)
            claim["resources"] = {**(claim.get("resources") or {}), "requests": requests}
    if spec == before:
        return []
    diff = difflib.unified_diff(_lines(before), _lines(spec), lineterm="")
    return [("spec", PVC_SPEC + "\n" + "\n".join(list(diff)[2:]))]


def _lines(spec: dict[str, Any]) -> list[str]:
    return json.dumps(spec, indent=1, sort_keys=True).splitlines()


def _statefulset_problems(new: dict[str, Any], old: dict[str, Any]) -> list[Problem]:
    spec, before = _spec(new), _spec(old)
    fixed = {key: value for key, value in spec.items() if key not in _STATEFULSET_MUTABLE}
    fixed_before = {key: value for key, value in before.items() if key not in _STATEFULSET_MUTABLE}
    return [] if fixed == fixed_before else [("spec", STATEFULSET_SPEC)]


def update_problems(kind: str, new: dict[str, Any], old: dict[str, Any] | None) -> list[Problem]:
    """What an update of `old` to `new` (both defaulted) changes that the real server refuses to change."""
    if old is None:
        return []
    if kind == "Job":
        return _job_problems(new, old)
    if kind in _SELECTOR_IMMUTABLE:
        return _changed("spec.selector", _spec(old).get("selector"), _spec(new).get("selector"))
    if kind == "StatefulSet":
        return _statefulset_problems(new, old)
    if kind == "Service":
        return _service_problems(new, old)
    if kind in ("ConfigMap", "Secret"):
        return _data_problems(kind, new, old)
    if kind == "PersistentVolumeClaim":
        return _claim_problems(new, old)
    return []
