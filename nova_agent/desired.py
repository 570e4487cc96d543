"""The desired state: the objects of one cluster's directory at one commit, parsed and checked.

A directory that does not parse is not applied at all (docs/design.md §7: never apply a partial commit): every
problem
is collected and reported, and the cluster stays as it is. Objects the server later rejects one by one are a
different matter; they are reported per object while the others are applied.

YAML is read by the renderer's own loader (``nova_gitops.api.loading.load_documents``): the C loader, only
JSON-compatible data, and bounded alias expansion, so a "billion laughs" file in the rendered repo
is a refused render with a clear message rather than seconds of CPU and an out-of-memory kill in the digest.

Two metadata fields are taken off every object before anything else (its digest included), whatever the
render says (:data:`NEVER_APPLIED`): the agent does not trust the rendered repository with the cluster's
garbage collector. An ``ownerReferences`` entry names an owner by uid, a relation between two objects of one
cluster; when the owner does not exist (a manifest copied from ``kubectl get -o yaml``, or a hostile one) or
is deleted later, the collector deletes the object — a user's adopted object with its data. A finalizer
nobody removes holds the object's every deletion (a prune, a replacement) forever. The agent sets neither
field itself; those on a live object that others set are left alone (server-side apply drops only what the
agent owns).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from nova_agent.gitrepos import MAX_FILE_BYTES, DirectoryMissing, RepoCache, TreeFile, redact
from nova_agent.resources import Body, BodyError, ObjectRef, digest_of, labels_of, ref_of
from nova_agent.settings import AgentSettings
from nova_gitops.api import labels as nova_labels
from nova_gitops.api import names, secrets
from nova_gitops.api.loading import load_documents
from nova_gitops.api.problems import SourceLocation

SKIPPED_FILES: Final = frozenset({"kustomization.yaml", "kustomization.yml", "Kustomization"})
MANIFEST_SUFFIXES: Final = (".yaml", ".yml", ".json")
NEVER_APPLIED: Final = ("finalizers", "ownerReferences")
"""Metadata the agent takes off every object before applying it (see the module docstring)."""


@dataclass(frozen=True, slots=True)
class DesiredObject:
    ref: ObjectRef
    body: Body
    digest: str
    path: str
    stripped: tuple[str, ...] = ()
    """The fields of :data:`NEVER_APPLIED` the render set and the agent took off (``metadata.<field>``)."""


def without_never_applied(body: Body) -> tuple[Body, tuple[str, ...]]:
    """``body`` without the metadata fields of :data:`NEVER_APPLIED` (``body`` itself when it has none), and
    those of them it set to something (``metadata.<field>``, sorted; null or empty ones go quietly)."""
    metadata = body.get("metadata")
    if not isinstance(metadata, dict) or not any(field in metadata for field in NEVER_APPLIED):
        return body, ()
    stripped = tuple(f"metadata.{field}" for field in NEVER_APPLIED if metadata.get(field))
    kept = {key: value for key, value in metadata.items() if key not in NEVER_APPLIED}
    return {**body, "metadata": kept}, stripped


def read_cluster_files(repo: RepoCache, revision: str, settings: AgentSettings) -> list[TreeFile]:
    """The files of this agent's directory in ``revision``. Raises :class:`DirectoryMissing` saying which
    directory, which commit and which option named it when the commit does not have it.

    A missing directory is an error, never an empty desired state: a wrong ``--path``, a cluster the fleet
    does not have (yet, or any more), a render that lost a cluster — none of them means "delete everything",
    and none may report the commit as synced. The renderer writes every cluster it knows a directory with a
    ``kustomization.yaml``, even when nothing is placed there, so an empty cluster is never a missing one."""
    try:
        return repo.read_tree(revision, settings.directory)
    except DirectoryMissing:
        named = (
            f"--path {settings.path} names it"
            if settings.path
            else f"it is cluster {settings.cluster}'s directory (--cluster)"
        )
        raise DirectoryMissing(
            f"{settings.directory}/ does not exist in commit {revision[:12]} of {redact(settings.repo)} "
            f"(branch {settings.source_branch}); {named}: nothing is applied nor pruned. The renderer gives "
            "every cluster of the fleet a directory (with a kustomization.yaml even when nothing is placed "
            "there): check --cluster and --path, and that the fleet has this cluster"
        ) from None


def secret_problems(body: Body) -> list[str]:
    """What makes a Secret's ``data``/``stringData`` unfit to send (the renderer's own check, which names
    keys, never values): the server would refuse it and quote the value back in its error."""
    if body.get("kind") != "Secret" or body.get("apiVersion") != "v1":
        return []
    check = names.Fields(SourceLocation("", 0), [])
    secrets.check_secret_data(body, check)
    return [f"{problem.field}: {problem.message}" for problem in check.problems]


def _labelled(body: Body, cluster: str) -> Body:
    """``body`` carrying our target-cluster label (the renderer sets it; hand-made repos may not)."""
    metadata = dict(body.get("metadata") or {})
    metadata["labels"] = {**(metadata.get("labels") or {}), nova_labels.TARGET_CLUSTER: cluster}
    return {**body, "metadata": metadata}


def load_desired(files: Sequence[TreeFile], cluster: str) -> tuple[list[DesiredObject], list[str]]:
    """The objects in ``files`` and a ``path: message`` line per problem (an empty list means usable)."""
    objects: list[DesiredObject] = []
    problems: list[str] = []
    seen: dict[tuple[str, str, str, str], str] = {}
    for file in sorted(files, key=lambda f: f.path):
        name = file.path.rsplit("/", 1)[-1]
        if name in SKIPPED_FILES or not name.endswith(MANIFEST_SUFFIXES):
            continue
        if len(file.data) > MAX_FILE_BYTES:
            problems.append(
                f"{file.path}: {len(file.data)} bytes is larger than the {MAX_FILE_BYTES} allowed"
            )
            continue
        try:
            text = file.data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            problems.append(f"{file.path}: not UTF-8 text (byte {error.start})")
            continue
        documents, load_problems = load_documents(file.path, text)
        problems += [str(problem) for problem in load_problems]
        for document in documents:
            body, where = document.body, str(document.location)
            try:
                ref = ref_of(body)
            except BodyError as error:
                problems.append(f"{where}: {error}")
                continue
            target = labels_of(body).get(nova_labels.TARGET_CLUSTER)
            if target is not None and target != cluster:
                problems.append(f"{where}: {ref} is labelled for cluster {target!r}, not {cluster!r}")
                continue
            if ref.key in seen:
                problems.append(f"{where}: {ref} is also defined in {seen[ref.key]}")
                continue
            seen[ref.key] = where
            body, stripped = without_never_applied(body)
            labelled = body if target == cluster else _labelled(body, cluster)
            objects.append(DesiredObject(ref, labelled, digest_of(labelled), file.path, stripped))
    return objects, problems
