"""Turning a request body into the object to store: decoding checks (400), server-owned metadata on create
and update, status kept apart for resources with a status subresource, and the version an object is served in.
"""

from __future__ import annotations

import copy
import datetime
import json
import re
import secrets
import uuid
from dataclasses import dataclass, field
from typing import Any

from tests.fakekube import statuses
from tests.fakekube.resources import ResourceType


def now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class Target:
    """What a request addresses: a resource type, a namespace ("" when none), a name and a subresource."""

    resource_type: ResourceType
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    query: dict[str, str] = field(default_factory=dict)

    @property
    def dry_run(self) -> bool:
        return self.query.get("dryRun") == "All"


def present(resource_type: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """An object as served in the version asked for (custom resources are stored once for all versions)."""
    return {
        "apiVersion": resource_type.api_version,
        "kind": resource_type.kind,
        **{key: value for key, value in obj.items() if key not in ("apiVersion", "kind")},
    }


def spec_view(obj: dict[str, Any], has_status: bool) -> dict[str, Any]:
    return {
        key: value
        for key, value in obj.items()
        if key not in ("metadata", "apiVersion", "kind") and not (has_status and key == "status")
    }


def decode(target: Target, body: Any, url_name: str | None) -> dict[str, Any]:
    resource_type = target.resource_type
    if not isinstance(body, dict):
        raise statuses.bad_request(f"the body of the request is not a {resource_type.kind} object")
    if resource_type.custom and not body.get("kind"):
        raise statuses.bad_request("Object 'Kind' is missing in '" + json.dumps(body)[:200] + "'")
    if body.get("kind", resource_type.kind) != resource_type.kind:
        raise statuses.bad_request(
            f"the kind in the data ({body['kind']}) does not match the expected kind ({resource_type.kind})"
        )
    if body.get("apiVersion", resource_type.api_version) != resource_type.api_version:
        raise statuses.bad_request(
            f"the API version in the data ({body['apiVersion']}) does not match the "
            f"expected API version ({resource_type.api_version})"
        )
    metadata = body.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise statuses.bad_request("metadata must be an object")
    obj = copy.deepcopy(body)
    metadata = obj.setdefault("metadata", {})
    if url_name is not None and metadata.get("name", url_name) != url_name:
        raise statuses.bad_request(
            f"the name of the object ({metadata['name']}) does not match the name on the URL ({url_name})"
        )
    if resource_type.namespaced:
        if metadata.get("namespace", target.namespace) != target.namespace:
            raise statuses.bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        metadata["namespace"] = target.namespace
    else:
        metadata.pop("namespace", None)
    if resource_type.kind == "ConfigMap":
        for key, value in (obj.get("data") or {}).items():
            if not isinstance(value, str):
                raise statuses.bad_request(
                    f"json: cannot unmarshal {type(value).__name__} into Go struct field "
                    f"ConfigMap.data of type string (key {key!r})"
                )
    if resource_type.kind == "Lease" and resource_type.group == "coordination.k8s.io":
        _check_micro_times(resource_type, obj.get("spec"))
    obj["apiVersion"], obj["kind"] = resource_type.api_version, resource_type.kind
    return obj


_MICRO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})")
MICRO_TIME_LAYOUT = "2006-01-02T15:04:05.000000Z07:00"


def _check_micro_times(resource_type: ResourceType, spec: Any) -> None:
    """A Lease's acquireTime/renewTime are metav1.MicroTime, which decodes only RFC 3339 with exactly six
    fractional digits; anything else fails decoding, before validation, as a 400 (Go's time.Parse error;
    its "cannot parse ... as" part is exact for values that do not start like a year)."""
    if not isinstance(spec, dict):
        return
    for key in ("acquireTime", "renewTime"):
        value = spec.get(key)
        if value is None or (isinstance(value, str) and _MICRO_TIME.fullmatch(value)):
            continue
        kind, version = resource_type.kind, resource_type.version
        raise statuses.bad_request(
            f'{kind} in version "{version}" cannot be handled as a {kind}: parsing time '
            f'{json.dumps(value)} as "{MICRO_TIME_LAYOUT}": cannot parse {json.dumps(value)} as "2006"'
        )


def new_object(target: Target, obj: dict[str, Any]) -> dict[str, Any]:
    metadata = obj["metadata"]
    if not metadata.get("name") and metadata.get("generateName"):
        metadata["name"] = metadata["generateName"] + "".join(
            secrets.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5)
        )
    if not metadata.get("name"):
        raise statuses.invalid(
            target.resource_type,
            "",
            [("metadata.name", "Required value: name or generateName is required")],
        )
    for server_field in ("resourceVersion", "generation", "managedFields", "deletionTimestamp", "uid"):
        metadata.pop(server_field, None)
    metadata["uid"] = str(uuid.uuid4())
    metadata["creationTimestamp"] = now()
    if target.resource_type.has_status:
        obj.pop("status", None)
        if target.resource_type.kind == "Pod":
            obj["status"] = {"phase": "Pending", "qosClass": "BestEffort"}
        elif target.resource_type.kind == "Namespace":
            obj["status"] = {"phase": "Active"}
    return obj


def updated_object(target: Target, old: dict[str, Any], incoming: dict[str, Any]) -> dict[str, Any]:
    if target.subresource == "status":
        new = copy.deepcopy(old)
        new.pop("status", None)
        if "status" in incoming:
            new["status"] = incoming["status"]
        return new
    new = incoming
    for server_field in (
        "uid",
        "creationTimestamp",
        "generation",
        "managedFields",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "resourceVersion",
    ):
        if server_field in old["metadata"]:
            new["metadata"][server_field] = copy.deepcopy(old["metadata"][server_field])
        else:
            new["metadata"].pop(server_field, None)
    if target.resource_type.has_status:
        new.pop("status", None)
        if "status" in old:
            new["status"] = copy.deepcopy(old["status"])
    return new


def load_apply_body(raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw)
    except ValueError:
        import yaml  # an apply body may be YAML; the kubernetes client sends JSON, kubectl sends YAML

        try:
            body = yaml.load(raw, Loader=yaml.CSafeLoader)
        except yaml.YAMLError as error:
            raise statuses.bad_request(f"error decoding YAML: {error}") from error
    if not isinstance(body, dict):
        raise statuses.bad_request("the body of an apply request must be an object")
    return body
