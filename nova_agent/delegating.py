"""What is ours in delegated mode, and which commit it reflects: proved from the live objects, not assumed.

With ``--no-orchestration-enabled`` another tool (Argo CD, Flux, a CI job) applies the cluster's directory of
the rendered repository, so there is no inventory and no repository label. The agent still reads that
directory (at the head of ``--branch``, or of the cluster's release branch with ``--follow-release``;
signature checked when asked, nothing applied) and reports the live objects labelled
``nova.elotl.co/schedule: "true"`` whose identity is one of the directory's objects: a second fleet's
workloads on the same cluster, under the same cluster name, are in another repository and are not reported.

Which commit the orchestrator applied is not taken on its word: a workload **reflects** the commit read when
its live object holds every field that commit's manifest sets (:func:`drifting.departures`; a resource
quantity the server normalised, ``0.5`` read back as ``500m``, is the same value; ``spec.replicas`` of what a
HorizontalPodAutoscaler scales is the autoscaler's). Its ``revision`` is then that commit, and its health is
judged for it (``observedGeneration`` must have caught up with the live generation). The cluster's
``syncedRevision`` is the commit read once *every* workload of its directory that delegated mode watches is
live and reflects it; empty until then. So a rollout's gate (docs/rollouts.md) passes for a cluster that Flux
or Argo CD applies exactly as for one nova-agent applies, and a Healthy left from the previous commit never
stands for the new one. Objects of kinds the agent does not watch (ConfigMaps, Services, …) are not proved:
the agent's read-only role cannot list them all, and the orchestrator's own status covers them.

When the directory cannot be read, the last one read stands (none before the first read) and the error is
the pass's.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from nova_agent import drifting
from nova_agent.desired import load_desired, read_cluster_files
from nova_agent.gitrepos import GitUnavailable, RepoCache
from nova_agent.owned import OwnedObject, generation_of
from nova_agent.resources import Body, BodyError, ObjectKey, labels_of, ref_of
from nova_agent.settings import AgentSettings
from nova_gitops.api import labels as nova_labels
from nova_gitops.api.quantities import QuantityError, parse_quantity

DELEGATED_REF = "refs/nova/rendered"
DEFAULT_NAMESPACE = "default"
QUANTITY_MAPS: Final = frozenset({"requests", "limits", "capacity", "hard", "min", "max", "default"})
"""Keys whose values are resource quantities (``resources.requests``, a PVC's ``resources.requests``,
LimitRange and ResourceQuota maps): the server may store them in another spelling."""


@dataclass(frozen=True, slots=True)
class RenderedDirectory:
    """The cluster's directory at one commit: each manifest by the identity its live object has."""

    revision: str = ""
    manifests: Mapping[ObjectKey, Body] = field(default_factory=dict)


def read_directory(repo: RepoCache, settings: AgentSettings) -> RenderedDirectory:
    """The objects of this cluster's directory at the head of the branch followed. The kinds delegated mode
    reports are all namespaced: a manifest without a namespace lands in ``default``."""
    revision = repo.fetch(settings.source_branch, DELEGATED_REF)
    if revision is None:
        raise GitUnavailable(f"the rendered repository has no branch {settings.source_branch!r} (yet)")
    if settings.allowed_signers is not None:
        repo.verify_signature(revision, settings.allowed_signers)
    desired, _ = load_desired(read_cluster_files(repo, revision, settings), settings.cluster)
    manifests: dict[ObjectKey, Body] = {}
    for item in desired:
        group, kind, namespace, name = item.ref.key
        manifests[(group, kind, namespace or DEFAULT_NAMESPACE, name)] = item.body
    return RenderedDirectory(revision, manifests)


def delegated_owned(
    live: Iterable[Body],
    directory: RenderedDirectory,
    watched: Collection[tuple[str, str]],
    autoscaled: Collection[tuple[str, str, str]] = (),
) -> tuple[list[OwnedObject], str]:
    """The live objects of ``directory``, each with the commit it reflects ("" when it does not hold that
    commit's manifest), and the cluster's synced revision: the directory's commit when every manifest of a
    ``watched`` (group, kind) labelled for scheduling is live and reflects it, else ""."""
    owned: list[OwnedObject] = []
    reflecting: set[ObjectKey] = set()
    for body in live:
        try:
            key = ref_of(body).key
        except BodyError:
            continue
        manifest = directory.manifests.get(key)
        if manifest is None:
            continue
        if reflects(manifest, body, autoscaled):
            reflecting.add(key)
            owned.append(OwnedObject(body, directory.revision, generation_of(body)))
        else:
            owned.append(OwnedObject(body))
    expected = [
        key
        for key, manifest in directory.manifests.items()
        if (key[0], key[1]) in watched and labels_of(manifest).get(nova_labels.SCHEDULE) == "true"
    ]
    synced = directory.revision if all(key in reflecting for key in expected) else ""
    return owned, synced


def reflects(manifest: Body, live: Body, autoscaled: Collection[tuple[str, str, str]] = ()) -> bool:
    """Whether ``live`` holds every field ``manifest`` sets (see the module docstring)."""
    metadata = live.get("metadata")
    if not isinstance(metadata, dict):
        return False
    if (metadata.get("namespace"), live.get("kind"), metadata.get("name")) in autoscaled:
        manifest = drifting.with_live_replicas(manifest, live)
    wanted = drifting.comparable_manifest(manifest)
    return next(drifting.departures(wanted, live, alike=same_quantity), None) is None


def same_quantity(path: str, desired: object, live: object) -> bool:
    """Two spellings of one resource quantity (``0.5`` and ``500m``, ``1024Mi`` and ``1Gi``) under a map of
    quantities."""
    if _parent_key(path) not in QUANTITY_MAPS or isinstance(desired, bool) or isinstance(live, bool):
        return False
    try:
        return parse_quantity(desired) == parse_quantity(live)
    except QuantityError:
        return False


def _parent_key(path: str) -> str:
    """The key of the map holding the field at ``path`` (``requests`` for ``…requests.cpu`` and for
    ``…requests[nvidia.com/gpu]``)."""
    head = path[: path.rindex("[")] if path.endswith("]") and "[" in path else path.rpartition(".")[0]
    return head.rpartition(".")[2]
