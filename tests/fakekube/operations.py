"""The verbs (get, list, create, update, patch, apply, delete) on stored objects, without HTTP.

Each write goes through the same steps as in kube-apiserver's generic registry: decode and check the body
(400), carry server-owned metadata over, keep status for resources with a status subresource, default,
validate (422), check preconditions (409), track managed fields, bump generation on spec changes, and store
under a new resourceVersion — unless nothing changed, in which case nothing is written (no new
resourceVersion, no watch event), as upstream. `dryRun=All` runs every step but the last.
"""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

from tests.fakekube import (
    applying,
    collecting,
    crds,
    fields,
    immutability,
    namespaces,
    patching,
    preparing,
    schemas,
    selecting,
    statuses,
    validation,
)
from tests.fakekube.preparing import Target
from tests.fakekube.resources import ResourceTable, ResourceType
from tests.fakekube.statuses import ApiError
from tests.fakekube.store import ObjectStore

IMMORTAL = frozenset({"default", "kube-system", "kube-public"})
"""Namespaces kube-apiserver's NamespaceLifecycle admission refuses to delete."""
ROOT_CA = "kube-root-ca.crt"
"""The ConfigMap kube-controller-manager's root CA publisher puts in every namespace."""
DESCRIPTION = "kubernetes.io/description"
ROOT_CA_DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such "
    "as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions "
    "of Kubernetes clusters."
)
RETURNS_DELETED_OBJECT = frozenset(
    {"pods", "services", "serviceaccounts", "storageclasses", "namespaces", "customresourcedefinitions"}
)
KINDS_WITH_GENERATION = frozenset(
    {
        "Deployment",
        "StatefulSet",
        "DaemonSet",
        "ReplicaSet",
        "ReplicationController",
        "Job",
        "CronJob",
        "CustomResourceDefinition",
        "PodDisruptionBudget",
        "NetworkPolicy",
        "Ingress",
    }
)
PATCH_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
)


class Operations:
    def __init__(
        self,
        store: ObjectStore,
        table: ResourceTable,
        crd_established_delay: float = 0.0,
        namespace_deletion_delay: float = 0.0,
        garbage_collection_delay: float = 0.0,
    ) -> None:
        self.store = store
        self.table = table
        self.crds = crds.CrdLifecycle(store, table, crd_established_delay)
        self.namespaces = namespaces.NamespaceLifecycle(store, namespace_deletion_delay)
        self.collector = collecting.GarbageCollector(store, garbage_collection_delay)
        self._next_cluster_ip = 1

    def stop(self) -> None:
        self.crds.stop()
        self.namespaces.stop()
        self.collector.stop()

    # ----- reading

    def _existing(self, target: Target) -> dict[str, Any]:
        obj = self.store.get(target.resource_type.store_key, target.namespace, target.name)
        if obj is None:
            raise statuses.not_found(target.resource_type, target.name)
        return obj

    def get(self, target: Target) -> dict[str, Any]:
        return preparing.present(target.resource_type, self._existing(target))

    def list_collection(self, target: Target) -> dict[str, Any]:
        resource_type, query = target.resource_type, target.query
        by_labels = selecting.label_selector(query.get("labelSelector"))
        by_fields = selecting.field_selector(
            query.get("fieldSelector"), resource_type.group, resource_type.plural
        )
        with self.store.lock:
            items = self.store.list_objects(resource_type.store_key, target.namespace or None)
            list_rv = self.store.current_rv
        items = [obj for obj in items if by_labels(obj["metadata"].get("labels") or {}) and by_fields(obj)]
        metadata: dict[str, Any] = {"resourceVersion": str(list_rv)}
        if query.get("continue"):
            try:
                token = json.loads(base64.urlsafe_b64decode(query["continue"]))
                after = (str(token["start"][0]), str(token["start"][1]))
            except (ValueError, KeyError, TypeError, IndexError) as error:
                raise statuses.bad_request(f"invalid continue token: {error}") from error
            items = [obj for obj in items if self._key(obj) > after]
        limit = int(query.get("limit") or 0)
        if 0 < limit < len(items):
            remaining = len(items) - limit
            items = items[:limit]
            start = self._key(items[-1])
            metadata["continue"] = base64.urlsafe_b64encode(
                json.dumps({"rv": list_rv, "start": start}).encode()
            ).decode()
            metadata["remainingItemCount"] = remaining
        served = [
            preparing.present(resource_type, obj)
            if resource_type.custom
            else {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
            for obj in items
        ]
        return {
            "kind": f"{resource_type.kind}List",
            "apiVersion": resource_type.api_version,
            "metadata": metadata,
            "items": served,
        }

    @staticmethod
    def _key(obj: dict[str, Any]) -> tuple[str, str]:
        return (str(obj["metadata"].get("namespace", "")), str(obj["metadata"]["name"]))

    # ----- decoding and preparing

    def _cluster_ip(self) -> str:
        self._next_cluster_ip += 1
        return f"10.96.{self._next_cluster_ip // 250}.{self._next_cluster_ip % 250 + 1}"

    def _finish(
        self, resource_type: ResourceType, old: dict[str, Any] | None, new: dict[str, Any]
    ) -> list[str]:
        """Default, prune, validate (422) and set generation; returns warnings (pruned unknown fields)."""
        validation.apply_defaults(
            resource_type.kind,
            new,
            self._cluster_ip() if old is None else (old.get("spec") or {}).get("clusterIP", ""),
        )
        if old is None and resource_type.kind == "Job" and not resource_type.custom:
            validation.generate_job_selector(new)
        warnings: list[str] = []
        problems = validation.name_problems(resource_type.kind, str(new["metadata"].get("name", "")))
        problems += validation.metadata_problems(new["metadata"])
        problems += validation.kind_problems(resource_type.kind, new)
        if not resource_type.custom:
            problems += immutability.update_problems(resource_type.kind, new, old)
        if resource_type.custom and resource_type.schema is not None:
            pruned, dropped = schemas.prune(new, resource_type.schema)
            new.clear()
            new.update(pruned)
            warnings = [f'unknown field "{path}"' for path in dropped]
            problems += schemas.validation_problems(new, resource_type.schema)
        if resource_type.kind == "CustomResourceDefinition":
            problems += crds.definition_problems(new)
        if problems:
            raise statuses.invalid(resource_type, str(new["metadata"].get("name", "")), problems)
        has_generation = resource_type.custom or resource_type.kind in KINDS_WITH_GENERATION
        if old is None:
            if has_generation:
                new["metadata"]["generation"] = 1
        elif "generation" in old["metadata"]:
            changed = preparing.spec_view(old, resource_type.has_status) != preparing.spec_view(
                new, resource_type.has_status
            )
            new["metadata"]["generation"] = old["metadata"]["generation"] + (1 if changed else 0)
        return warnings

    def _check_namespace(self, target: Target, name: str) -> None:
        """NamespaceLifecycle admission, before validation as upstream: 404 for a missing namespace, 403 for
        a create into one being terminated."""
        if not target.resource_type.namespaced:
            return
        namespace = self.store.get(("", "namespaces"), "", target.namespace)
        if namespace is None:
            raise statuses.namespace_not_found(target.namespace)
        if namespaces.terminating(namespace):
            raise namespaces.being_terminated(target.resource_type, name, target.namespace)

    def _check_precondition(self, target: Target, old: dict[str, Any], incoming: dict[str, Any]) -> None:
        wanted = incoming.get("metadata", {}).get("resourceVersion")
        if wanted and wanted != old["metadata"]["resourceVersion"]:
            raise statuses.stale_conflict(target.resource_type, target.name)

    def _store(self, target: Target, old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
        if target.dry_run:
            return preparing.present(target.resource_type, new)
        if old is not None and new == old:
            return preparing.present(target.resource_type, old)
        store_key = target.resource_type.store_key
        stored = self.store.put(store_key, new)
        if "deletionTimestamp" in stored["metadata"] and not stored["metadata"].get("finalizers"):
            stored = self.store.remove(store_key, stored)
            self.collector.owner_gone(stored)
        elif target.resource_type.kind == "CustomResourceDefinition":
            self.crds.changed(stored)
        elif old is None and target.resource_type.store_key == ("", "namespaces"):
            self._publish_root_ca(stored["metadata"]["name"])
        return preparing.present(target.resource_type, stored)

    def _publish_root_ca(self, namespace: str) -> None:
        """The root CA publisher (kube-controller-manager) puts ``kube-root-ca.crt`` in every namespace as
        it is created; a real namespace is never empty."""
        configmaps = self.table.find_any_version("", "configmaps")
        assert configmaps is not None
        self.create(
            Target(configmaps, namespace, query={}),
            {
                "metadata": {"name": ROOT_CA, "annotations": {DESCRIPTION: ROOT_CA_DESCRIPTION}},
                "data": {"ca.crt": ""},
            },
            "kube-controller-manager",
        )

    # ----- writing

    def create(self, target: Target, body: Any, manager: str) -> tuple[dict[str, Any], list[str]]:
        obj = preparing.new_object(target, preparing.decode(target, body, None))
        target = Target(target.resource_type, target.namespace, obj["metadata"]["name"], "", target.query)
        with self.store.lock:
            self._check_namespace(target, target.name)
            warnings = self._finish(target.resource_type, None, obj)
            if self.store.get(target.resource_type.store_key, target.namespace, target.name) is not None:
                raise statuses.already_exists(target.resource_type, target.name)
            fields.track_update(
                None,
                obj,
                manager,
                target.resource_type.api_version,
                "",
                self._scope(target),
                preparing.now(),
                applying.list_resolver(target.resource_type),
            )
            return self._store(target, None, obj), warnings

    def _scope(self, target: Target) -> str:
        if target.subresource == "status":
            return "status"
        return "main" if target.resource_type.has_status else "all"

    def update(self, target: Target, body: Any, manager: str) -> tuple[dict[str, Any], list[str]]:
        incoming = preparing.decode(target, body, target.name)
        with self.store.lock:
            old = self._existing(target)
            self._check_precondition(target, old, incoming)
            new = preparing.updated_object(target, old, incoming)
            warnings = self._finish(target.resource_type, old, new)
            fields.track_update(
                old,
                new,
                manager,
                target.resource_type.api_version,
                target.subresource,
                self._scope(target),
                preparing.now(),
                applying.list_resolver(target.resource_type),
            )
            return self._store(target, old, new), warnings

    def patch(
        self, target: Target, raw: bytes, content_type: str, manager: str
    ) -> tuple[int, dict[str, Any], list[str]]:
        if content_type not in PATCH_TYPES:
            raise statuses.unsupported_media_type(content_type)
        if content_type == "application/apply-patch+yaml":
            return self.apply(target, raw)
        try:
            patch = json.loads(raw or b"null")
        except ValueError as error:
            raise statuses.bad_request(f"error decoding patch: {error}") from error
        with self.store.lock:
            old = self._existing(target)
            current = preparing.present(target.resource_type, copy.deepcopy(old))
            if content_type == "application/json-patch+json":
                patched = patching.json_patch(current, patch)
            elif not isinstance(patch, dict):
                raise statuses.bad_request(
                    "json: cannot unmarshal array into Go value of type map[string]interface {}"
                )
            elif content_type == "application/merge-patch+json":
                patched = patching.merge_patch(current, patch)
            else:
                patched = patching.strategic_merge_patch(current, patch)
            obj, warnings = self.update(target, patched, manager)
            return 200, obj, warnings

    def apply(self, target: Target, raw: bytes) -> tuple[int, dict[str, Any], list[str]]:
        resource_type = target.resource_type
        manager = target.query.get("fieldManager", "")
        if not manager:  # kube-apiserver validates the PatchOptions: 422, not 400
            required = "Required value: is required for apply patch"
            raise ApiError(
                422,
                "Invalid",
                f'PatchOptions.meta.k8s.io "" is invalid: fieldManager: {required}',
                {
                    "group": "meta.k8s.io",
                    "kind": "PatchOptions",
                    "causes": [
                        {"reason": "FieldValueRequired", "message": required, "field": "fieldManager"}
                    ],
                },
            )
        force = target.query.get("force", "false") == "true"
        body = preparing.load_apply_body(raw)
        applied = preparing.decode(target, body, target.name)
        if not body.get("kind") or not body.get("apiVersion"):
            raise statuses.bad_request(
                "invalid object type: apiVersion and kind are required for apply requests"
            )
        applied["metadata"].setdefault("name", target.name)
        problems = applying.key_problems(body, (), applying.list_resolver(resource_type))
        if resource_type.custom and resource_type.schema is not None:
            problems = schemas.typed_patch_problems(body, resource_type.schema) + problems
        if problems:
            where = f"{target.namespace}/{target.name}" if target.namespace else target.name
            raise statuses.internal(
                f"failed to create typed patch object ({where}; {resource_type.api_version}, "
                f"Kind={resource_type.kind}): {', '.join(problems)}"
            )
        with self.store.lock:
            old = self.store.get(resource_type.store_key, target.namespace, target.name)
            if old is None:
                if target.subresource:
                    raise statuses.not_found(resource_type, target.name)
                live = {
                    "apiVersion": resource_type.api_version,
                    "kind": resource_type.kind,
                    "metadata": {
                        "name": target.name,
                        **({"namespace": target.namespace} if resource_type.namespaced else {}),
                    },
                }
                result = applying.apply(live, applied, resource_type, manager, force, "", preparing.now())
                managed = result["metadata"].get("managedFields")
                new = preparing.new_object(target, result)
                if managed:
                    new["metadata"]["managedFields"] = managed
                self._check_namespace(target, target.name)
                warnings = self._finish(resource_type, None, new)
                return 201, self._store(target, None, new), warnings
            self._check_precondition(target, old, applied)
            result = applying.apply(
                preparing.present(resource_type, copy.deepcopy(old)),
                applied,
                resource_type,
                manager,
                force,
                target.subresource,
                preparing.now(),
            )
            managed = result["metadata"].get("managedFields")
            new = preparing.updated_object(target, old, result)
            new["metadata"].pop("managedFields", None)
            if managed:
                new["metadata"]["managedFields"] = managed
            warnings = self._finish(resource_type, old, new)
            return 200, self._store(target, old, new), warnings

    def delete(self, target: Target, options: Any) -> dict[str, Any]:
        resource_type = target.resource_type
        propagation = collecting.policy(options, target.query)
        with self.store.lock:
            old = self._existing(target)
            if resource_type.plural == "namespaces" and not resource_type.group and target.name in IMMORTAL:
                raise statuses.immortal_namespace(target.name)
            preconditions = (options or {}).get("preconditions") or {} if isinstance(options, dict) else {}
            if preconditions.get("uid") not in (None, old["metadata"].get("uid")):
                raise statuses.precondition_failed(
                    resource_type, target.name, "UID", preconditions["uid"], old["metadata"].get("uid")
                )
            if preconditions.get("resourceVersion") not in (None, old["metadata"]["resourceVersion"]):
                raise statuses.precondition_failed(
                    resource_type,
                    target.name,
                    "ResourceVersion",
                    preconditions["resourceVersion"],
                    old["metadata"]["resourceVersion"],
                )
            if target.dry_run or "deletionTimestamp" in old["metadata"]:
                return preparing.present(resource_type, old)
            if resource_type.plural == "namespaces" and not resource_type.group:
                return preparing.present(resource_type, self.namespaces.delete(old))
            if propagation == "Foreground":
                return preparing.present(
                    resource_type, self.collector.foreground(resource_type.store_key, old)
                )
            if propagation == "Orphan":
                self.collector.orphan(old)
            if old["metadata"].get("finalizers"):
                marked = copy.deepcopy(old)
                marked["metadata"].update(deletionTimestamp=preparing.now(), deletionGracePeriodSeconds=0)
                return preparing.present(resource_type, self.store.put(resource_type.store_key, marked))
            if resource_type.kind == "CustomResourceDefinition":
                self.crds.removed(old)
            final = self.store.remove(resource_type.store_key, old)
            self.collector.owner_gone(final)
        if resource_type.custom or resource_type.plural in RETURNS_DELETED_OBJECT:
            return preparing.present(resource_type, final)
        details = {"name": target.name, "kind": resource_type.plural, "uid": old["metadata"].get("uid")}
        if resource_type.group:
            details["group"] = resource_type.group
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}
