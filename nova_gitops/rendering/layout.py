"""Where each rendered object lives in the rendered repository, and the kustomization that lists them.

The layout is a contract (docs/design.md §4) read by agents, Flux, Argo CD and reviewers:

    clusters/<cluster>/kustomization.yaml
    clusters/<cluster>/<namespace>/<kind>-<name>.yaml
    clusters/<cluster>/_cluster/<kind>-<name>.yaml      (cluster-scoped objects)
    placement/<policy>/<group>.yaml                     (one ScheduleGroup's decision)
    placement/<policy>/README.md                        (that policy's groups × clusters table)

``_annotations``, the folder of groups placed by an annotation rather than a policy, cannot collide with a
policy's folder for the same reason.
``_cluster`` cannot collide with a namespace: DNS-1123 names have no underscore. Two objects that would
share a file inside one directory (same kind and name, different API group: a core ``Event`` and an
``events.k8s.io`` ``Event``, or CRDs of two groups with one kind) both get their group in the file name,
``<kind>.<group>-<name>.yaml``, so the name of either file does not depend on whether the other exists in a
*different* directory.

Names reach this module already validated by the api layer; the checks here are a second line of defence,
because a name that becomes a path is a way out of the output directory (``..``, ``/``, NUL).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any, Final

CLUSTERS_DIR: Final = "clusters"
CLUSTER_SCOPED_DIR: Final = "_cluster"
PLACEMENT_DIR: Final = "placement"
ANNOTATIONS_FOLDER: Final = "_annotations"
"""The folder under ``placement/`` of groups placed by an annotation (a policy name has no underscore)."""
PAGE_FILE: Final = "README.md"
"""A policy folder's page: what a code host shows when one browses the folder."""
KUSTOMIZATION_FILE: Final = "kustomization.yaml"
KUSTOMIZATION_API_VERSION: Final = "kustomize.config.k8s.io/v1beta1"

_MAX_FILE_NAME_BYTES: Final = 255
"""NAME_MAX of ext4 and most file systems. Kubernetes names may be 253 characters, so with a kind and a
group in front a file name can exceed it; such names are shortened with a hash (``_fit_file_name``)."""


def check_segment(what: str, value: str) -> str:
    """``value`` when it is safe as one path segment; ValueError naming ``what`` otherwise."""
    if not value:
        raise ValueError(f"{what} is empty and cannot be part of a file path")
    if value in (".", ".."):
        raise ValueError(f"{what} {value!r} cannot be part of a file path")
    for forbidden, label in (("/", "'/'"), ("\\", "'\\'"), ("\x00", "NUL")):
        if forbidden in value:
            raise ValueError(f"{what} {value!r} contains {label} and cannot be part of a file path")
    return value


def cluster_dir(cluster: str) -> str:
    """``clusters/<cluster>``: the directory an agent or a Flux/Argo CD application reads."""
    return f"{CLUSTERS_DIR}/{check_segment('cluster name', cluster)}"


def placement_folder(policy: str | None) -> str:
    """``placement/<policy>``, or ``placement/_annotations`` for a group no policy placed."""
    folder = ANNOTATIONS_FOLDER if policy is None else check_segment("policy name", policy)
    return f"{PLACEMENT_DIR}/{folder}"


def group_file_name(group: str) -> str:
    """``<group>.yaml``; over 255 bytes, the name's first bytes, ``-``, 16 hex digits of the SHA-256 of the
    whole name and ``.yaml``. The cut removes the group's own hash (a policy name may be 253 characters),
    so the digest alone tells the groups of one policy apart: 64 bits, where 32 collided after 132,000
    label values. ``placementfiles`` still refuses two groups for one file."""
    file_name = f"{check_segment('group name', group)}.yaml"
    if len(file_name.encode()) <= _MAX_FILE_NAME_BYTES:
        return file_name
    digest = hashlib.sha256(group.encode()).hexdigest()[:16]
    room = _MAX_FILE_NAME_BYTES - len(f"-{digest}.yaml".encode())
    return f"{group.encode()[:room].decode(errors='ignore')}-{digest}.yaml"


def group_file(policy: str | None, group: str) -> str:
    """``placement/<policy>/<group>.yaml``: one ScheduleGroup's decision."""
    return f"{placement_folder(policy)}/{group_file_name(group)}"


def is_group_file(path: str) -> bool:
    """Whether ``path`` is a group's file (``placement/<folder>/<name>.yaml``), not a folder's page."""
    parts = path.split("/")
    return len(parts) == 3 and parts[0] == PLACEMENT_DIR and parts[2].endswith(".yaml")


def is_page(path: str) -> bool:
    """Whether ``path`` is a policy folder's page (``placement/<folder>/README.md``)."""
    parts = path.split("/")
    return len(parts) == 3 and parts[0] == PLACEMENT_DIR and parts[2] == PAGE_FILE


def object_file_name(kind: str, group: str, name: str, clash: bool) -> str:
    """``<kind>-<name>.yaml``, or ``<kind>.<group>-<name>.yaml`` when two groups clash in one directory."""
    check_segment("kind", kind)
    check_segment("name", name)
    stem = kind.lower()
    if clash and group:
        stem = f"{stem}.{check_segment('API group', group).lower()}"
    return _fit_file_name(stem, name)


def object_dir(namespace: str) -> str:
    """The directory of an object inside its cluster's directory: its namespace, or ``_cluster``."""
    return check_segment("namespace", namespace) if namespace else CLUSTER_SCOPED_DIR


def object_path(cluster: str, manifest_kind: str, group: str, namespace: str, name: str, clash: bool) -> str:
    """The path of one rendered object, relative to the root of the rendered repository.

    ``namespace`` is "" for cluster-scoped objects. ``clash`` says another object of the same kind and name
    but a different API group lands in the same directory (see ``clashing_groups``).
    """
    file_name = object_file_name(manifest_kind, group, name, clash)
    return f"{cluster_dir(cluster)}/{object_dir(namespace)}/{file_name}"


def clashing_groups(entries: Iterable[tuple[str, str, str, str]]) -> set[tuple[str, str, str, str]]:
    """Which ``(namespace, kind, group, name)`` entries of one cluster need their group in the file name.

    An entry clashes when another entry has the same directory, lower-cased kind and name but another group.
    """
    listed = list(entries)
    groups_by_file: dict[tuple[str, str, str], set[str]] = {}
    for namespace, kind, group, name in listed:
        groups_by_file.setdefault((namespace, kind.lower(), name), set()).add(group)
    return {
        (namespace, kind, group, name)
        for namespace, kind, group, name in listed
        if len(groups_by_file[(namespace, kind.lower(), name)]) > 1
    }


def kustomization(paths: Iterable[str]) -> dict[str, Any]:
    """The ``kustomization.yaml`` of a cluster directory: every file below it, relative to it, sorted.

    ``paths`` are relative to the cluster directory (``ns/deployment-web.yaml``); the kustomization file
    itself is never listed. An empty cluster gets ``resources: []``, which kustomize accepts.
    """
    resources = sorted({path for path in paths if path != KUSTOMIZATION_FILE})
    return {
        "apiVersion": KUSTOMIZATION_API_VERSION,
        "kind": "Kustomization",
        "resources": resources,
    }


def _fit_file_name(stem: str, name: str) -> str:
    """``<stem>-<name>.yaml``, shortened deterministically when longer than the file system allows."""
    file_name = f"{stem}-{name}.yaml"
    if len(file_name.encode()) <= _MAX_FILE_NAME_BYTES:
        return file_name
    digest = hashlib.sha256(file_name.encode()).hexdigest()[:8]
    room = _MAX_FILE_NAME_BYTES - len(f"-{digest}.yaml".encode())
    prefix = f"{stem}-{name}".encode()[:room].decode(errors="ignore")
    return f"{prefix}-{digest}.yaml"
