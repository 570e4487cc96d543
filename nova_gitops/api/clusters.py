"""Cluster (``cluster.elotl.co/v1alpha1``) as validated data: labels, readiness and per-node capacity.

What a Cluster says about its nodes is checked as the API server checks a Node: a node name is a DNS-1123
subdomain, a taint's key a qualified name and its value a label value (node labels are labels). A source's
Cluster and every agent's status report go through here, and these strings reach reasons, warnings,
PLACEMENT.md and terminals: text Kubernetes would refuse (an ESC sequence, a bidi override) is a problem at
its file and line, and a report carrying it is refused, never shown as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from nova_gitops.api import labels as labels_module
from nova_gitops.api import names, selectors, statusreports
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import Problem, SourceLocation, described, excerpt, name_subject
from nova_gitops.api.quantities import ResourceList, parse_resource_list
from nova_gitops.api.selectors import label_value_errors

TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: TaintEffect


@dataclass(frozen=True, slots=True)
class Node:
    """One node's capacity. ``available`` is allocatable minus requests of pods nova-gitops does not
    manage."""

    name: str
    allocatable: ResourceList
    available: ResourceList
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    # False when the cluster reports no ``status.nodeLabels`` (Nova's Cluster CR has none): the node's labels
    # are unknown, so nodeSelector and required node affinity cannot be checked there (docs/design.md §3)
    labels_known: bool = True


@dataclass(frozen=True, slots=True)
class Cluster:
    name: str
    location: SourceLocation
    labels: Mapping[str, str]  # includes kubernetes.io/metadata.name=<name> and the nova.elotl.co/cluster.*
    ready: bool | None  # the Ready condition: True, False, or None when absent/Unknown
    standby: bool
    autoscaled: bool
    nodes: tuple[Node, ...]  # sorted by name; a cluster reporting only totals has one pseudo-node
    idle: bool | None = None  # Nova's Idle condition (shown, not used to place): None when absent/Unknown
    kubernetes_cluster: str = ""  # Nova's spec.kubernetescluster: the cluster's name where it runs

    @property
    def node_labels_known(self) -> bool:
        """The cluster reports its nodes' labels (the agent does; Nova's Cluster CR does not)."""
        return all(node.labels_known for node in self.nodes)

    @property
    def is_candidate(self) -> bool:
        """Ready is not False, or the cluster is on Standby: docs/design.md §3 "a Standby cluster is a
        candidate (placing there wakes it)", whatever its Ready condition says while it sleeps."""
        return self.ready is not False or self.standby

    @property
    def cordoned(self) -> bool:
        """Labelled ``nova.elotl.co/cordoned: "true"``: no new or moved group goes there
        (docs/design.md §3)."""
        return self.labels.get(labels_module.CORDONED) == "true"


def parse_cluster(document: Document, problems: list[Problem]) -> Cluster | None:
    """Validate a Cluster document (a Nova Cluster CR, or an agent's ``status/<cluster>.yaml``).

    Appends a Problem per defect and a warning per unknown field; returns None when the cluster cannot be
    used. Labels gain the implied ``kubernetes.io/metadata.name`` and the ``nova.elotl.co/cluster.*`` labels
    derived from ``spec``; capacity is read per node, or from cluster totals as one pseudo-node. What a
    Cluster exported from Nova carries besides (``spec.kubernetescluster``, ``spec.novacreated``,
    ``status.nodeGroupsConfigs``, the Idle condition, every condition field) is known. Each problem names
    the cluster (``Cluster wlc-1: ...``).
    """
    mark = len(problems)
    cluster = _parse(document, problems)
    body = document.body if isinstance(document.body, dict) else {}
    metadata = body.get("metadata")
    name_subject(problems, mark, "Cluster", metadata.get("name") if isinstance(metadata, dict) else None)
    return cluster


def _parse(document: Document, problems: list[Problem]) -> Cluster | None:
    check = names.Fields(document.location, problems)
    body = document.body if isinstance(document.body, dict) else {}
    check.unknown(body, "", _TOP_FIELDS)
    metadata = check.mapping(body.get("metadata"), "metadata", required=True) or {}
    check.unknown(metadata, "metadata", names.OBJECT_META_FIELDS)
    name = _cluster_name(metadata.get("name"), check)
    if metadata.get("namespace") not in (None, ""):
        check.warning("metadata.namespace", "a Cluster is cluster-scoped; the namespace is ignored")
    check.annotations(metadata.get("annotations"), "metadata.annotations")
    spec = check.mapping(body.get("spec"), "spec") or {}
    labels = _labels(metadata, spec, name, check)
    kubernetes_cluster = check.text(spec.get("kubernetescluster"), "spec.kubernetescluster") or ""
    novacreated = spec.get("novacreated")
    if novacreated is not None and not isinstance(novacreated, bool):
        check.warning("spec.novacreated", f"must be true or false, got {described(novacreated)}; ignored")
    status = check.mapping(body.get("status"), "status")
    has_status = status is not None
    if status is None:
        status = {}
        if body.get("status") is None:
            check.warning("status", _NO_CAPACITY)
    check.unknown(status, "status", _STATUS_FIELDS)
    ready, idle, standby = _conditions(status.get("conditions"), check)
    autoscaled = status.get("autoscaled", False)
    if not isinstance(autoscaled, bool):
        check.error("status.autoscaled", f"must be true or false, got {described(autoscaled)}")
    nodes = _nodes(status, name or "", check) if has_status else ()
    if not check.ok or name is None:
        return None
    return Cluster(
        name=name,
        location=document.location,
        labels=labels,
        ready=ready,
        standby=standby,
        autoscaled=autoscaled is True,
        nodes=nodes,
        idle=idle,
        kubernetes_cluster=kubernetes_cluster,
    )


_REPORT_FIELDS = statusreports.REPORT_FIELDS
"""What the agent adds to a Cluster in its status report: accepted without an unknown-field warning."""
_TOP_FIELDS = ("apiVersion", "kind", "metadata", "spec", "status", *_REPORT_FIELDS)
_SPEC_FIELDS = ("name", "provider", "region", "zone", "kubernetesversion", "kubernetescluster", "novacreated")
_STATUS_FIELDS = (
    "conditions",
    "capacityResources",
    "availableResources",
    "nodeLabels",
    "nodeTaints",
    "autoscaled",
    "nodeGroupsConfigs",  # Nova's node groups (for its own autoscaling): known, not used to place
    *_REPORT_FIELDS,
)
_DERIVED_LABELS = (
    ("provider", labels_module.CLUSTER_PROVIDER),
    ("region", labels_module.CLUSTER_REGION),
    ("zone", labels_module.CLUSTER_ZONE),
    ("kubernetesversion", labels_module.CLUSTER_VERSION),
)
_NO_CAPACITY = "has no capacity in status; only objects without resource requests can be placed there"
_CONDITION_STATUS = {"True": True, "False": False, "Unknown": None, True: True, False: False}
_TAINT_EFFECTS: tuple[TaintEffect, ...] = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def is_cluster_name(text: str) -> bool:
    """A name a cluster may have: a DNS-1123 subdomain, or any label value without ``..`` (see below)."""
    return selectors.is_dns1123_subdomain(text) or bool(
        text and ".." not in text and not label_value_errors(text)
    )


def _cluster_name(raw: object, check: names.Fields) -> str | None:
    """metadata.name: a DNS-1123 subdomain, or (with a warning) any valid label value without ``..``.

    Nova's own examples name clusters ``onprem-cluster-oregon-A``; the API server would refuse that as an
    object name, but Nova uses it, so a user copying them is warned rather than stuck. It must still be a
    label value, because it becomes the ``kubernetes.io/metadata.name`` label that cluster selectors match,
    and a single safe path segment, because it names the cluster's directory under ``clusters/``.
    """
    field = "metadata.name"
    text = check.text(raw, field, required=True)
    if text is None:
        return None
    if selectors.is_dns1123_subdomain(text):
        return text
    if is_cluster_name(text):
        check.warning(
            field,
            f"Cluster name {excerpt(text)} is not a valid Kubernetes object name (DNS-1123); "
            "it is used as is, as Nova's examples do",
        )
        return text
    check.error(field, f"{excerpt(text)} is not a valid name: {names.DNS1123_SUBDOMAIN_RULE}")
    return None


def _labels(
    metadata: dict[Any, Any], spec: dict[Any, Any], name: str | None, check: names.Fields
) -> dict[str, str]:
    """metadata.labels, plus the labels Nova derives from spec, plus the implied name label."""
    labels = check.labels(metadata.get("labels"), "metadata.labels")
    check.unknown(spec, "spec", _SPEC_FIELDS)
    spec_name = spec.get("name")
    if name is not None and spec_name not in (None, "", name):
        check.warning(
            "spec.name", f"differs from metadata.name {excerpt(name)}, which names the cluster; ignored"
        )
    for key, label in _DERIVED_LABELS:
        value = check.text(spec.get(key), f"spec.{key}")
        if not value or label in labels:
            continue
        reasons = label_value_errors(value)
        if reasons:
            check.error(f"spec.{key}", f"{excerpt(value)} cannot be the label {label}: {'; '.join(reasons)}")
            continue
        labels[label] = value
    if name is not None:
        given = labels.get(labels_module.METADATA_NAME)
        if given not in (None, name):
            check.warning(
                names.child("metadata.labels", labels_module.METADATA_NAME),
                f"is always the cluster's name {excerpt(name)}; {excerpt(given)} ignored",
            )
        labels[labels_module.METADATA_NAME] = name
    return labels


def _conditions(raw: object, check: names.Fields) -> tuple[bool | None, bool | None, bool]:
    """(Ready, Idle: True/False/None, Standby) from status.conditions. Nova's other condition fields
    (reason, message, lastTransitionTime, lastHeartbeatTime, observedGeneration) are accepted as they are."""
    ready: bool | None = None
    idle: bool | None = None
    standby = False
    for index, entry in enumerate(check.sequence(raw, "status.conditions", "{type, status}")):
        where = names.child("status.conditions", index)
        condition = check.mapping(entry, where, required=True)
        if condition is None:
            continue
        kind = check.text(condition.get("type"), f"{where}.type", required=True)
        value = condition.get("status")
        if (
            not isinstance(value, str | bool) or value not in _CONDITION_STATUS
        ):  # a list is unhashable; 1 == True
            check.error(f"{where}.status", f"must be True, False or Unknown, got {described(value)}")
            continue
        if kind == "Ready":
            ready = _CONDITION_STATUS[value]
        elif kind == "Idle":
            idle = _CONDITION_STATUS[value]
        elif kind == "Standby":
            standby = _CONDITION_STATUS[value] is True
    return ready, idle, standby


def _nodes(status: dict[Any, Any], cluster: str, check: names.Fields) -> tuple[Node, ...]:
    field = "status.capacityResources"
    if status.get("capacityResources") is None:
        check.warning(field, _NO_CAPACITY)
        return ()
    capacity = _resource_lists(status["capacityResources"], field, cluster, check)
    if capacity is None:
        return ()
    if not capacity:
        check.warning(field, _NO_CAPACITY)
    available_raw = status.get("availableResources")
    available = (
        {}
        if available_raw is None
        else _resource_lists(available_raw, "status.availableResources", cluster, check, allow_negative=True)
    )
    node_labels = _per_node(status.get("nodeLabels"), "status.nodeLabels", capacity, check)
    labels_known = bool(status.get("nodeLabels"))  # absent, null or {}: no node labels reported
    node_taints = _per_node(status.get("nodeTaints"), "status.nodeTaints", capacity, check)
    for node in sorted(set(available or {}) - set(capacity)):
        check.warning(
            names.child("status.availableResources", node), "node has no capacityResources entry; ignored"
        )
    return tuple(
        Node(
            name=node,
            allocatable=capacity[node],
            available={
                **capacity[node],
                **{resource: max(amount, 0) for resource, amount in (available or {}).get(node, {}).items()},
            },
            labels=check.labels(node_labels.get(node), names.child("status.nodeLabels", node)),
            taints=_taints(node_taints.get(node), names.child("status.nodeTaints", node), check),
            labels_known=labels_known,
        )
        for node in sorted(capacity)
    )


def _resource_lists(
    raw: object,
    field: str,
    cluster: str,
    check: names.Fields,
    *,
    allow_negative: bool = False,
) -> dict[str, dict[str, int]] | None:
    """Per node ``{node: ResourceList}`` (a node whose name is not valid is an error, and left out), or
    cluster totals ``{cpu: "8"}`` as one node named after the cluster. ``allow_negative`` for available
    figures: an overcommitted node reports less than nothing."""
    mapping = check.mapping(raw, field)
    if mapping is None:
        return None
    nested = [isinstance(value, dict) or value is None for value in mapping.values()]
    mark = len(check.problems)
    result: dict[str, dict[str, int]] | None
    if all(nested):
        result = {
            str(node): parse_resource_list(
                resources,
                check.location,
                names.child(field, str(node)),
                check.problems,
                allow_negative=allow_negative,
            )
            for node, resources in mapping.items()
            if _node_name(node, field, check)
        }
    elif not any(nested):
        result = {
            cluster: parse_resource_list(
                mapping, check.location, field, check.problems, allow_negative=allow_negative
            )
        }
    else:
        check.error(field, "mixes per-node resource lists with cluster totals; use one form")
        result = None
    check.note_errors_since(mark)
    return result


def _per_node(raw: object, field: str, nodes: Mapping[str, object], check: names.Fields) -> dict[str, Any]:
    mapping = check.mapping(raw, field) or {}
    valid = {node: value for node, value in mapping.items() if _node_name(node, field, check)}
    for node in valid:
        if node not in nodes:
            check.warning(names.child(field, str(node)), "node has no capacityResources entry; ignored")
    return {str(node): value for node, value in valid.items()}


def _node_name(raw: object, field: str, check: names.Fields) -> bool:
    """Whether a key of a per-node map names a node as Kubernetes allows (a DNS-1123 subdomain); an error
    at ``field`` when it does not."""
    name = str(raw)
    if selectors.is_dns1123_subdomain(name):
        return True
    where = names.child(field, name)
    check.error(where, f"{excerpt(name)} is not a valid node name: {names.DNS1123_SUBDOMAIN_RULE}")
    return False


def _taints(raw: object, field: str, check: names.Fields) -> tuple[Taint, ...]:
    taints: list[Taint] = []
    for index, entry in enumerate(check.sequence(raw, field, "{key, value, effect}")):
        where = names.child(field, index)
        item = check.mapping(entry, where, required=True)
        if item is None:
            continue
        check.unknown(item, where, ("key", "value", "effect", "timeAdded"))
        key = check.text(item.get("key"), f"{where}.key", required=True)
        value = check.text(item.get("value"), f"{where}.value") or ""
        if key is not None and (key_errors := selectors.qualified_name_errors(key)):
            check.error(f"{where}.key", f"{excerpt(key)} is not a valid taint key: {'; '.join(key_errors)}")
            key = None
        if value_errors := label_value_errors(value):
            check.error(
                f"{where}.value", f"{excerpt(value)} is not a valid taint value: {'; '.join(value_errors)}"
            )
            key = None
        effect = next((known for known in _TAINT_EFFECTS if known == item.get("effect")), None)
        if effect is None:
            got = described(item.get("effect"))
            check.error(f"{where}.effect", f"must be NoSchedule, PreferNoSchedule or NoExecute, got {got}")
        elif key is not None:
            taints.append(Taint(key, value, effect))
    return tuple(taints)
