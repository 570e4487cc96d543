"""Which rendered repository an object belongs to: the repository label, and the refusal to adopt another's.

Two fleets may share a workload cluster (or a test install may sit beside a real one), even under the same
cluster name, so the target-cluster label cannot say whose an object is. Every object the agent applies
carries ``gitops.nova.elotl.co/repository: <id>``, where the id is the first 16 hex digits of
sha256(normalised repository URL + "\\n" + the cluster's directory). The agent stamps it while applying, so
the rendered bytes in git do not change; a value a render sets itself is overridden (only the applying agent
knows which repository it applies from).

A live object carrying another repository's id is another fleet's: the agent never applies it (a per-object
failure naming the other id and the fix), never adopts it and never deletes it. An object without the label
(applied by hand, or by an agent older than the label) is adopted or kept as before, and stamped by the apply.
The inventory ConfigMap records the id too, so two agents pointed at the same ``--namespace`` with the same
cluster name refuse to share one inventory.

URLs are normalised only where equality is certain: credentials (``user:token@``, which rotate) are dropped,
scheme and host are lower-cased, and a trailing ``/`` or ``.git`` is cut. ``git@host:org/repo`` and
``ssh://git@host/org/repo`` remain different ids (they are spelled differently on purpose or not at all).
A fleet whose repository moves (a new URL or directory) names its former ids (``--previous-repository``):
objects and an inventory carrying one of them are its own, and are stamped with the new id.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from nova_agent.desired import DesiredObject
from nova_agent.resources import ObjectRef, digest_of, labels_of
from nova_gitops.api import labels as nova_labels

ID_DIGITS: Final = 16
LABEL: Final = nova_labels.RENDERED_REPOSITORY


def normalised_url(url: str) -> str:
    """``url`` without credentials, trailing ``/`` or ``.git``, with scheme and host lower-cased."""
    text = url.strip()
    scheme, separator, rest = text.partition("://")
    if separator:
        authority, slash, path = rest.partition("/")
        text = f"{scheme.lower()}://{authority.rpartition('@')[2].lower()}{slash}{path}"
    else:
        host, colon, path = text.partition(":")
        if colon and "/" not in host:  # scp-like user@host:path
            text = f"{host.rpartition('@')[2].lower()}:{path}"
    text = text.rstrip("/")
    return text.removesuffix(".git").rstrip("/")


def repository_id(url: str, directory: str) -> str:
    """The label value naming the rendered repository ``url`` and the cluster's ``directory`` in it."""
    text = f"{normalised_url(url)}\n{directory.strip('/')}"
    return hashlib.sha256(text.encode()).hexdigest()[:ID_DIGITS]


@dataclass(frozen=True, slots=True)
class Repository:
    """This agent's repository id, and the former ids of the same fleet it also owns."""

    id: str
    previous: frozenset[str] = frozenset()

    @classmethod
    def of(cls, url: str, directory: str, previous: Iterable[str] = ()) -> Repository:
        return cls(repository_id(url, directory), frozenset(previous))

    def owns(self, value: str) -> bool:
        """Whether a repository id found on an object or an inventory is this fleet's."""
        return value == self.id or value in self.previous


def stamped(items: Sequence[DesiredObject], repository: str) -> list[DesiredObject]:
    """``items`` carrying the repository label (digests recomputed: the label is part of what is applied)."""
    result: list[DesiredObject] = []
    for item in items:
        metadata = dict(item.body.get("metadata") or {})
        metadata["labels"] = {**labels_of(item.body), LABEL: repository}
        body = {**item.body, "metadata": metadata}
        result.append(replace(item, body=body, digest=digest_of(body)))
    return result


def owner_of(body: Mapping[str, Any] | None) -> str:
    """The repository id a live object carries ("" when none)."""
    return str(labels_of(body or {}).get(LABEL) or "")


def is_foreign(body: Mapping[str, Any] | None, repository: Repository) -> bool:
    """Whether ``body`` belongs to another rendered repository (it carries an id not this fleet's)."""
    owner = owner_of(body)
    return bool(owner) and not repository.owns(owner)


def refusal(ref: ObjectRef, other: str, repository: str) -> str:
    return (
        f"{ref} belongs to another rendered repository ({LABEL}={other}; this agent's is {repository}): "
        "nova-agent never applies, adopts nor deletes another fleet's object; remove it from one of the two "
        "renders, or delete the live object so that this repository creates it (if this fleet's repository "
        f"moved: --previous-repository {other})"
    )


def refuse_foreign(
    items: Sequence[DesiredObject],
    before: Mapping[ObjectRef, Mapping[str, Any] | None],
    repository: Repository,
) -> tuple[list[DesiredObject], dict[ObjectRef, str]]:
    """The objects that may be applied, and a refusal for each whose live object another repository owns."""
    kept: list[DesiredObject] = []
    refused: dict[ObjectRef, str] = {}
    for item in items:
        live = before.get(item.ref)
        if is_foreign(live, repository):
            refused[item.ref] = refusal(item.ref, owner_of(live), repository.id)
        else:
            kept.append(item)
    return kept, refused


def inventory_refusal(recorded: str, repository: Repository, name: str) -> str | None:
    """Why an inventory may not be used by this agent: it was written for another repository."""
    if not recorded or repository.owns(recorded):
        return None
    return (
        f"the inventory ConfigMap {name} belongs to rendered repository {recorded}, not to this agent's "
        f"({repository.id}): two agents of different fleets share one --namespace and cluster name; give "
        f"each its own --namespace (or, if this fleet's repository moved, --previous-repository {recorded})"
    )
