"""Validation and defaulting of built-in kinds: the subset of kube-apiserver's checks a GitOps agent meets.

Names (DNS-1123 subdomain for most kinds, DNS-1123 label for namespaces, DNS-1035 label for services, path
segments for RBAC), label keys and values, the fields without which the real server refuses a workload
(containers, images, selectors matching template labels, a Job's restartPolicy, a Service's ports), immutable
selectors, and the defaults a real server adds (replicas, pod template defaults, Service type, the namespace
name label), so that a client comparing what it sent with what it reads back meets the same drift as on a
real cluster. Not a full port of upstream validation: fields the fake does not know are stored as sent.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

Problem = tuple[str, str]

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")

SUBDOMAIN_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MESSAGE = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1035_MESSAGE = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
    "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)

_PATH_SEGMENT_KINDS = frozenset({"Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"})
_WORKLOAD_KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"})


def _invalid(value: Any, message: str) -> str:
    return f"Invalid value: {json.dumps(value, separators=(',', ':'))}: {message}"  # Go's compact JSON


def name_problems(kind: str, name: str) -> list[Problem]:
    if kind in _PATH_SEGMENT_KINDS:
        if name in (".", "..") or "/" in name or "%" in name:
            return [
                ("metadata.name", _invalid(name, "may not contain '/' or '%' and may not be '.' or '..'"))
            ]
        return []
    if kind == "Namespace":
        pattern, limit, message = _DNS1123_LABEL, 63, LABEL_MESSAGE
    elif kind == "Service":
        pattern, limit, message = _DNS1035_LABEL, 63, DNS1035_MESSAGE
    else:
        pattern, limit, message = _DNS1123_SUBDOMAIN, 253, SUBDOMAIN_MESSAGE
    problems = []
    if len(name) > limit:
        problems.append(("metadata.name", _invalid(name, f"must be no more than {limit} characters")))
    if not pattern.fullmatch(name):
        problems.append(("metadata.name", _invalid(name, message)))
    return problems


def _qualified_key_problems(field: str, key: str) -> list[Problem]:
    prefix, _, name = key.rpartition("/")
    ok = (
        bool(_QUALIFIED_NAME.fullmatch(name))
        and len(name) <= 63
        and (not prefix or (bool(_DNS1123_SUBDOMAIN.fullmatch(prefix)) and len(prefix) <= 253))
    )
    if ok:
        return []
    return [
        (
            field,
            _invalid(
                key,
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
                "start and end with an alphanumeric character",
            ),
        )
    ]


def metadata_problems(metadata: dict[str, Any]) -> list[Problem]:
    problems: list[Problem] = []
    labels = metadata.get("labels") or {}
    for key, value in labels.items():
        problems += _qualified_key_problems("metadata.labels", key)
        if not isinstance(value, str) or len(value) > 63 or not _LABEL_VALUE.fullmatch(value):
            problems.append(
                (
                    f"metadata.labels.{key}",
                    _invalid(
                        value,
                        "a valid label must be an empty string or "
                        "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                        "alphanumeric character",
                    ),
                )
            )
    for key in metadata.get("annotations") or {}:
        problems += _qualified_key_problems("metadata.annotations", key)
    return problems


def _pod_spec_problems(spec: Any, field: str) -> list[Problem]:
    """A pod spec is a struct, not a pointer: a missing one is an empty one, whose containers are missing
    (``spec.template.spec.containers: Required value``, as kube-apiserver says)."""
    if not isinstance(spec, dict):
        spec = {}
    containers = spec.get("containers")
    if not containers:
        return [(f"{field}.containers", "Required value")]
    problems: list[Problem] = []
    for index, container in enumerate(containers):
        where = f"{field}.containers[{index}]"
        if not container.get("name"):
            problems.append((f"{where}.name", "Required value"))
        elif not _DNS1123_LABEL.fullmatch(container["name"]):
            problems.append((f"{where}.name", _invalid(container["name"], LABEL_MESSAGE)))
        if not container.get("image"):
            problems.append((f"{where}.image", "Required value"))
        for number, port in enumerate(container.get("ports") or []):
            if isinstance(port, dict) and not port.get("containerPort"):
                problems.append((f"{where}.ports[{number}].containerPort", "Required value"))
    return problems


def _selector_matches(selector: dict[str, Any], labels: dict[str, Any]) -> bool:
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        present, values = expression.get("key") in labels, expression.get("values") or []
        operator = expression.get("operator")
        if (
            (operator == "In" and labels.get(expression.get("key")) not in values)
            or (operator == "NotIn" and labels.get(expression.get("key")) in values)
            or (operator == "Exists" and not present)
            or (operator == "DoesNotExist" and present)
        ):
            return False
    return True


def kind_problems(kind: str, obj: dict[str, Any]) -> list[Problem]:
    """Problems the real server reports for this kind's spec (422); changes to immutable fields are
    `immutability`'s."""
    spec = obj.get("spec")
    if kind == "Pod":
        return _pod_spec_problems(spec, "spec")
    if kind in _WORKLOAD_KINDS or kind == "Job":
        spec = spec if isinstance(spec, dict) else {}
        template = spec.get("template") or {}
        problems: list[Problem] = []  # in kube-apiserver's order: the selector, then the pod template
        selector = spec.get("selector")
        if kind == "Job":
            pass
        elif not isinstance(selector, dict) or not (
            selector.get("matchLabels") or selector.get("matchExpressions")
        ):
            problems.append(("spec.selector", "Required value"))
        elif not _selector_matches(selector, (template.get("metadata") or {}).get("labels") or {}):
            labels = (template.get("metadata") or {}).get("labels") or None  # none at all: Go's nil map
            problems.append(
                (
                    "spec.template.metadata.labels",
                    _invalid(labels, "`selector` does not match template `labels`"),
                )
            )
        problems += _pod_spec_problems(template.get("spec"), "spec.template.spec")
        if kind == "Job" and (template.get("spec") or {}).get("restartPolicy") not in ("OnFailure", "Never"):
            problems.append(
                ("spec.template.spec.restartPolicy", 'Required value: valid values: "OnFailure", "Never"')
            )
        return problems
    if kind == "Service":
        spec = spec if isinstance(spec, dict) else {}
        headless = spec.get("clusterIP") == "None"
        if spec.get("type") != "ExternalName" and not headless and not spec.get("ports"):
            return [("spec.ports", "Required value")]
    return []


def _default_pod_spec(spec: dict[str, Any]) -> None:
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    for container in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
        if not isinstance(container, dict):
            continue
        image = str(container.get("image", ""))
        tagged = ":" in image.rsplit("/", 1)[-1] and not image.endswith(":latest")
        container.setdefault("imagePullPolicy", "IfNotPresent" if tagged or "@" in image else "Always")
        container.setdefault("terminationMessagePath", "/dev/termination-log")
        container.setdefault("terminationMessagePolicy", "File")
        container.setdefault("resources", {})
        for port in container.get("ports") or []:
            if isinstance(port, dict):
                port.setdefault("protocol", "TCP")


def fold_string_data(obj: dict[str, Any]) -> None:
    """A Secret's `stringData` is write-only: conversion folds it into `data` (base64, winning over a
    `data` key of the same name) and it is never stored or served."""
    string_data = obj.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        data = obj.get("data") if isinstance(obj.get("data"), dict) else {}
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()
        obj["data"] = data


def apply_defaults(kind: str, obj: dict[str, Any], cluster_ip: str) -> None:
    """Fill in what the real server's defaulting fills in (a useful subset)."""
    if kind == "Secret":
        fold_string_data(obj)
        obj.setdefault("type", "Opaque")
    spec = obj.get("spec")
    metadata = obj.setdefault("metadata", {})
    if kind == "Namespace":
        metadata.setdefault("labels", {})["kubernetes.io/metadata.name"] = metadata.get("name")
        obj.setdefault("spec", {"finalizers": ["kubernetes"]})
    if not isinstance(spec, dict):
        return
    if kind == "Pod":
        _default_pod_spec(spec)
    elif kind in _WORKLOAD_KINDS or kind == "Job":
        if kind != "DaemonSet" and kind != "Job":
            spec.setdefault("replicas", 1)
        if kind in ("Deployment", "StatefulSet", "DaemonSet"):
            spec.setdefault("revisionHistoryLimit", 10)
        if kind == "Deployment":
            spec.setdefault("progressDeadlineSeconds", 600)
            spec.setdefault(
                "strategy",
                {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
            )
        if kind == "Job":
            _default_job(spec)
        template = spec.get("template")
        if isinstance(template, dict) and isinstance(template.get("spec"), dict):
            _default_pod_spec(template["spec"])
    elif kind == "Service":
        spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        if spec["type"] != "ExternalName":
            if not spec.get("clusterIP"):  # an update that omits or empties it keeps the allocated one
                spec["clusterIP"] = cluster_ip
            if not spec.get("clusterIPs"):
                spec["clusterIPs"] = [spec["clusterIP"]]
        for port in spec.get("ports") or []:
            if isinstance(port, dict):
                port.setdefault("protocol", "TCP")
                port.setdefault("targetPort", port.get("port"))


def _default_job(spec: dict[str, Any]) -> None:
    """SetDefaults_Job: one completion and parallelism 1 when neither is set, backoffLimit 6, NonIndexed,
    not suspended, pods replaced once terminating or failed. (Upstream also copies the template's labels to
    a Job without labels, at decoding; not modelled: it would copy the generated ones on every update.)"""
    if "completions" not in spec and "parallelism" not in spec:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 2147483647 if "backoffLimitPerIndex" in spec else 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault(
        "podReplacementPolicy", "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed"
    )


def generate_job_selector(job: dict[str, Any]) -> None:
    """The Job strategy's PrepareForCreate (unless manualSelector): the template gets the job-name and
    controller-uid labels (legacy and batch.kubernetes.io/ keys) and the selector matches the uid, so an
    update that drops them changes the immutable template or selector, as on a real cluster."""
    spec = job.get("spec")
    if not isinstance(spec, dict) or spec.get("manualSelector") is True:
        return
    template = spec.setdefault("template", {})
    if not isinstance(template, dict):
        return
    labels = template.setdefault("metadata", {}).setdefault("labels", {})
    name, uid = job["metadata"]["name"], job["metadata"]["uid"]
    for key, value in (
        ("job-name", name),
        ("batch.kubernetes.io/job-name", name),
        ("controller-uid", uid),
        ("batch.kubernetes.io/controller-uid", uid),
    ):
        labels.setdefault(key, value)
    selector = spec.get("selector") if isinstance(spec.get("selector"), dict) else {}
    spec["selector"] = selector
    selector.setdefault("matchLabels", {}).setdefault("batch.kubernetes.io/controller-uid", uid)
