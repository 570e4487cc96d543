"""What is ours in delegated mode: the objects of this cluster's directory that the orchestrator applied.

With ``--no-orchestration-enabled`` another tool (Argo CD, Flux, a CI job) applies the cluster's directory of
the rendered repository, so there is no inventory and no repository label. The agent still reads that
directory (at the head of ``--branch``, as a sync would, signature checked when asked, nothing applied) and
reports the live objects labelled ``nova.elotl.co/schedule: "true"`` *whose identity is one of the
directory's objects*: a second fleet's workloads on the same cluster, under the same cluster name, are in
another repository and are not reported. Which commit the orchestrator applied is not known to the agent, so
``revision`` is empty and health follows each kind's own rule. When the directory cannot be read, the last
set read stands (none before the first read) and the error is the pass's.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from nova_agent.desired import load_desired
from nova_agent.gitrepos import GitUnavailable, RepoCache
from nova_agent.owned import OwnedObject
from nova_agent.resources import Body, BodyError, ObjectKey, ref_of
from nova_agent.settings import AgentSettings

DELEGATED_REF = "refs/nova/rendered"
DEFAULT_NAMESPACE = "default"


def rendered_keys(repo: RepoCache, settings: AgentSettings) -> frozenset[ObjectKey]:
    """The identities of the objects in this cluster's directory at the head of the branch. The kinds
    delegated mode reports are all namespaced: a manifest without a namespace lands in ``default``."""
    revision = repo.fetch(settings.source_branch, DELEGATED_REF)
    if revision is None:
        raise GitUnavailable(f"the rendered repository has no branch {settings.source_branch!r} (yet)")
    if settings.allowed_signers is not None:
        repo.verify_signature(revision, settings.allowed_signers)
    desired, _ = load_desired(repo.read_tree(revision, settings.directory), settings.cluster)
    return frozenset(
        (group, kind, namespace or DEFAULT_NAMESPACE, name)
        for group, kind, namespace, name in (item.ref.key for item in desired)
    )


def rendered_only(live: Iterable[Body], keys: Collection[ObjectKey]) -> list[OwnedObject]:
    """The live objects whose identity is one of ``keys``."""
    owned: list[OwnedObject] = []
    for body in live:
        try:
            if ref_of(body).key in keys:
                owned.append(OwnedObject(body))
        except BodyError:
            continue
    return owned
