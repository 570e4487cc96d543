"""CustomResourceDefinitions: what the real server refuses (422), and the resource types an Established CRD
serves (one per served version, with its schema and whether it has a status subresource).
"""

from __future__ import annotations

import copy
import threading
from typing import Any

from tests.fakekube import preparing
from tests.fakekube.resources import ResourceTable, ResourceType
from tests.fakekube.store import ObjectStore

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


class CrdLifecycle:
    """Establishes CRDs (after a delay, as the real apiextensions controller does asynchronously) and adds or
    removes the resource types they serve."""

    def __init__(self, store: ObjectStore, table: ResourceTable, delay: float) -> None:
        self.store = store
        self.table = table
        self.delay = delay
        self._timers: list[threading.Timer] = []

    def stop(self) -> None:
        for timer in self._timers:
            timer.cancel()

    def changed(self, crd: dict[str, Any]) -> None:
        conditions = {
            c.get("type"): c.get("status") for c in (crd.get("status") or {}).get("conditions") or []
        }
        if conditions.get("Established") == "True":
            self._serve(crd)
            return
        if self.delay <= 0:
            self._establish(crd["metadata"]["name"])
            return
        timer = threading.Timer(self.delay, self._establish, (crd["metadata"]["name"],))
        timer.daemon = True
        self._timers.append(timer)
        timer.start()

    def _serve(self, crd: dict[str, Any]) -> None:
        self.table.remove_group_resource(crd["spec"]["group"], crd["spec"]["names"]["plural"])
        for resource_type in served_types(crd):
            self.table.add(resource_type)

    def _establish(self, name: str) -> None:
        with self.store.lock:
            crd = self.store.get(("apiextensions.k8s.io", "customresourcedefinitions"), "", name)
            if crd is None or "deletionTimestamp" in crd["metadata"]:
                return
            established = copy.deepcopy(crd)
            established["status"] = established_status(crd, preparing.now())
            self._serve(established)
            self.store.put(("apiextensions.k8s.io", "customresourcedefinitions"), established)

    def removed(self, crd: dict[str, Any]) -> None:
        group, plural = crd["spec"]["group"], crd["spec"]["names"]["plural"]
        self.table.remove_group_resource(group, plural)
        self.store.drop_resource((group, plural))
