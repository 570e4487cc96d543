"""CustomResourceDefinitions: what the real server refuses (422), and the resource types an Established CRD
serves (one per served version, with its schema and whether it has a status subresource).
"""

from __future__ import annotations

from typing import Any

from tests.fakekube.resources import ResourceType

Problem = tuple[str, str]


def definition_problems(crd: dict[str, Any]) -> list[Problem]:
    raw_spec, raw_names = crd.get("spec"), (crd.get("spec") or {}).get("names")
    spec: dict[str, Any] = raw_spec if isinstance(raw_spec, dict) else {}
    names: dict[str, Any] = raw_names if isinstance(raw_names, dict) else {}
    problems: list[Problem] = []
    group, plural = spec.get("group"), names.get("plural")
    if not group:
        problems.append(("spec.group", "Required value"))
    elif "." not in str(group):
        problems.append(("spec.group", f'Invalid value: "{group}": should be a domain with at least one dot'))
    if not plural:
        problems.append(("spec.names.plural", "Required value"))
    if not names.get("kind"):
        problems.append(("spec.names.kind", "Required value"))
    if not names.get("listKind") and not names.get("kind"):
        problems.append(("spec.names.listKind", "Required value"))
    name = crd.get("metadata", {}).get("name")
    if group and plural and name != f"{plural}.{group}":
        problems.append(
            ("metadata.name", f'Invalid value: "{name}": must be spec.names.plural+"."+spec.group')
        )
    if spec.get("scope") not in ("Namespaced", "Cluster"):
        problems.append(
            (
                "spec.scope",
                f'Unsupported value: "{spec.get("scope", "")}": supported values: "Cluster", "Namespaced"',
            )
        )
    versions = spec.get("versions") or []
    if not versions:
        problems.append(
            ("spec.versions", "Invalid value: null: must have exactly one version marked as storage version")
        )
    elif sum(1 for version in versions if version.get("storage")) != 1:
        problems.append(
            ("spec.versions", "Invalid value: must have exactly one version marked as storage version")
        )
    for index, version in enumerate(versions):
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        if not version.get("name"):
            problems.append((f"spec.versions[{index}].name", "Required value"))
        if not isinstance(schema, dict):
            problems.append(
                (f"spec.versions[{index}].schema.openAPIV3Schema", "Required value: schemas are required")
            )
        elif schema.get("type") != "object":
            problems.append(
                (
                    f"spec.versions[{index}].schema.openAPIV3Schema.type",
                    'Unsupported value: "": supported values: "object"',
                )
            )
    return problems


def served_types(crd: dict[str, Any]) -> list[ResourceType]:
    spec = crd["spec"]
    names = spec["names"]
    types = []
    for version in spec["versions"]:
        if not version.get("served", True):
            continue
        subresources = version.get("subresources") or {}
        types.append(
            ResourceType(
                group=spec["group"],
                version=version["name"],
                plural=names["plural"],
                kind=names["kind"],
                namespaced=spec["scope"] == "Namespaced",
                short_names=tuple(names.get("shortNames") or ()),
                has_status="status" in subresources,
                schema=version["schema"]["openAPIV3Schema"],
                custom=True,
            )
        )
    return types


def established_status(crd: dict[str, Any], now: str) -> dict[str, Any]:
    spec = crd["spec"]
    names = dict(spec["names"])
    names.setdefault("singular", names["kind"].lower())
    names.setdefault("listKind", names["kind"] + "List")
    conditions = [
        {
            "type": "NamesAccepted",
            "status": "True",
            "lastTransitionTime": now,
            "reason": "NoConflicts",
            "message": "no conflicts found",
        },
        {
            "type": "Established",
            "status": "True",
            "lastTransitionTime": now,
            "reason": "InitialNamesAccepted",
            "message": "the initial names have been accepted",
        },
    ]
    stored = [version["name"] for version in spec["versions"] if version.get("storage")]
    return {"acceptedNames": names, "conditions": conditions, "storedVersions": stored}
