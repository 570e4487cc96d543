"""The names a source holds, as shell completion offers them: policies, clusters and objects from its
documents as read (an invalid source still has them), ScheduleGroups from its plan (only a source that
validates has one).

Nothing here reads more than a source's own files; deciding whether a directory is worth reading at all (Tab
pressed in a home directory) is the caller's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nova_gitops.sources import directory

INPUT_KINDS = {("policy.elotl.co", "SchedulePolicy"), ("cluster.elotl.co", "Cluster")}


def documents(root: Path) -> list[dict[str, Any]]:
    """The source's documents as read, those that parse as mappings."""
    files = directory.read_source(root)
    return [document.body for document in files.documents if isinstance(document.body, dict)]


def kind_name(body: dict[str, Any]) -> tuple[str, str, str, str]:
    """(apiVersion group, kind, namespace, name) of a raw document, "" where missing."""
    metadata = body.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    api_version = str(body.get("apiVersion") or "")
    group = api_version.rpartition("/")[0]
    return (
        group,
        str(body.get("kind") or ""),
        str(metadata.get("namespace") or ""),
        str(metadata.get("name") or ""),
    )


def policy_names(root: Path) -> list[str]:
    return sorted(
        {
            name
            for group, kind, _, name in map(kind_name, documents(root))
            if kind == "SchedulePolicy" and group == "policy.elotl.co" and name
        }
    )


def cluster_names(root: Path) -> list[str]:
    return sorted(
        {
            name
            for group, kind, _, name in map(kind_name, documents(root))
            if kind == "Cluster" and group == "cluster.elotl.co" and name
        }
    )


def object_references(root: Path) -> list[str]:
    """``kind/namespace/name`` (``kind/name`` when cluster-scoped or unnamespaced), kind lower-cased, as
    ``explain`` and ``pin`` take them."""
    references = set()
    for group, kind, namespace, name in map(kind_name, documents(root)):
        if kind and name and (group, kind) not in INPUT_KINDS:
            references.add("/".join(part for part in (kind.lower(), namespace, name) if part))
    return sorted(references)
