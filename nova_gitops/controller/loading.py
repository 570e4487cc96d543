"""The controller's load: a source snapshot and the status branch's reports → one validated source set.

A report's Cluster replaces the source's Cluster of the same name (``workflows.loading``, as ``render``
and ``publish`` do). The controller's load adds what only it sees: a control plane's Cluster CRs that carry
agents' fields are reports too, and each text read gets a digest, which the incremental render knows an
object's bytes by.
"""

from __future__ import annotations

import hashlib
from collections import ChainMap
from collections.abc import Mapping
from dataclasses import dataclass

from nova_gitops.api import inputs
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import Problem
from nova_gitops.controller import statusreading
from nova_gitops.controller.ports import ClusterReport, SourceSnapshot
from nova_gitops.sources import directory
from nova_gitops.sources.parsecache import ParseCache
from nova_gitops.workflows import loading


@dataclass(frozen=True, slots=True)
class Loaded:
    source_set: inputs.SourceSet
    reports: dict[str, ClusterReport]  # the status branch's and the source's own reporting Clusters
    refused: tuple[Problem, ...]  # reports refused (their Clusters left out of the inventory)
    digests: dict[str, str]  # file → digest of its text, for the incremental render (files only)


def source_set(
    snapshot: SourceSnapshot, reports: Mapping[str, ClusterReport], *, namespace: str | None = None
) -> tuple[inputs.SourceSet, dict[str, ClusterReport], tuple[Problem, ...]]:
    """``load`` without a parse cache: the source set, every report, and the refused ones."""
    loaded = load(snapshot, reports, namespace=namespace)
    return loaded.source_set, loaded.reports, loaded.refused


def load(
    snapshot: SourceSnapshot,
    reports: Mapping[str, ClusterReport],
    *,
    namespace: str | None = None,
    parse_cache: ParseCache | None = None,
) -> Loaded:
    """Validate the snapshot with the reports' Clusters replacing the source's Clusters of the same name;
    ``InputError`` lists every problem of the source. Also returns every report: the status branch's, plus
    the source's own Clusters that carry agents' fields (a control plane's Cluster CRs, whose status agents
    write), so reschedule requests and workload health are read in both modes.

    Such a Cluster is an agent's report as much as a status file is: one that is invalid, or whose content
    makes the parser raise, is refused like a status file (left out of the inventory, its problems returned
    third) rather than failing the reconcile of every other cluster.

    ``parse_cache`` skips parsing a directory's files whose bytes it has seen. ``digests`` holds, for each
    file read (not built by kustomize) and each report, a digest of its text: what the incremental render
    knows an object's bytes by. A control plane's listed documents have none (their objects are always
    re-emitted), and neither has a report whose file name a source file also has."""
    read = _read(snapshot, parse_cache)
    every_report = dict(reports)
    documents, refused = _source_reports(read.documents, reports, every_report)
    texts, digests = read.texts, read.digests
    sourced = set(texts)  # names only: a lazy mapping's keys are known without reading
    for name in sorted(reports):
        documents.append(reports[name].document)
        file = reports[name].document.location.file
        texts[file] = reports[name].text
        if file in sourced:  # two texts under one name: no digest says which an object came from
            digests.pop(file, None)
        else:
            digests[file] = _digest(reports[name].text)
    built = loading.validated(
        documents, texts=texts, problems=read.problems, namespace=namespace, parse_cache=parse_cache
    )
    return Loaded(built, every_report, refused, digests)


@dataclass(frozen=True, slots=True)
class _Read:
    documents: list[Document]
    texts: ChainMap[str, str]  # file → text, for problems' lines; a directory's are read only when needed
    problems: list[Problem]
    digests: dict[str, str]


def _read(snapshot: SourceSnapshot, parse_cache: ParseCache | None) -> _Read:
    """The snapshot's documents: a directory's files read (through the parse cache), or a control plane's
    listed documents."""
    texts: ChainMap[str, str] = ChainMap({}, dict(snapshot.texts))
    if snapshot.root is None:
        return _Read(list(snapshot.documents or ()), texts, [], {})
    files = directory.read_source(snapshot.root, cache=parse_cache, save_cache=False)
    texts.maps.insert(1, files.texts)  # type: ignore[arg-type]
    # not of files a kustomize build made: their objects have no own bytes
    return _Read(list(files.documents), texts, list(files.problems), dict(files.digests))


def _source_reports(
    documents: list[Document], reports: Mapping[str, ClusterReport], every_report: dict[str, ClusterReport]
) -> tuple[list[Document], tuple[Problem, ...]]:
    """The documents less the Clusters that ``reports`` replace and the source's own reporting Clusters
    (added to ``every_report``, or refused: their problems returned second)."""
    reported = set(reports)
    refused: list[Problem] = []
    unreadable: set[int] = set()
    for document in documents:
        if (
            loading.is_cluster(document)
            and loading.name_of(document) not in reported
            and statusreading.has_report_fields(document)
        ):
            report, found = statusreading.report_from_document(document)
            if report is not None:
                every_report[report.name] = report
            else:
                refused += found
                unreadable.add(id(document))
    kept = [
        document
        for document in loading.without_clusters(documents, reported)
        if id(document) not in unreadable
    ]
    return kept, tuple(refused)


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()
