"""Loading a source with agents' reports: what ``render``, ``publish`` and the controller's reconcile share.

A report is a Cluster object (``status/<cluster>.yaml``, or a control plane's Cluster CR with agents'
fields); it replaces the source's Cluster of the same name, being newer than whatever the source says of
the cluster. The documents then go through one validation (``validated``): every problem of every file in
one ``InputError``, or the source set with the reading's warnings.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

from nova_gitops.api import inputs
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import Problem, errors
from nova_gitops.errors import InputError
from nova_gitops.sources.parsecache import ParseCache

CLUSTER_GROUP = "cluster.elotl.co/"


def is_cluster(document: Document) -> bool:
    body = document.body
    return (
        isinstance(body, dict)
        and body.get("kind") == "Cluster"
        and str(body.get("apiVersion", "")).startswith(CLUSTER_GROUP)
    )


def name_of(document: Document) -> object:
    metadata = document.body.get("metadata") if isinstance(document.body, dict) else None
    return metadata.get("name") if isinstance(metadata, dict) else None


def without_clusters(documents: Iterable[Document], names: Collection[object]) -> list[Document]:
    """``documents`` less the Clusters named ``names`` (the reports that replace them)."""
    return [document for document in documents if not (is_cluster(document) and name_of(document) in names)]


def validated(
    documents: Sequence[Document],
    *,
    texts: Mapping[str, str],
    problems: Sequence[Problem],
    namespace: str | None,
    parse_cache: ParseCache | None,
) -> inputs.SourceSet:
    """The source set of ``documents`` with the reading's ``problems`` as warnings; ``InputError`` with
    every problem (the reading's and the validation's, sorted, once each) when any is an error. The parse
    cache's memo spares validating documents it holds; the cache is saved either way."""
    memo = parse_cache.memo if parse_cache is not None else None
    try:
        if errors(list(problems)):
            found = list(problems)
            try:
                inputs.build_source_set(documents, texts=texts, namespace=namespace, memo=memo)
            except InputError as more:
                found += more.problems
            unique = dict.fromkeys(found)
            raise InputError(sorted(unique, key=lambda problem: (problem.location, problem.message)))
        built = inputs.build_source_set(documents, texts=texts, namespace=namespace, memo=memo)
        return inputs.with_warnings(built, problems)
    finally:
        if parse_cache is not None:
            parse_cache.save()
