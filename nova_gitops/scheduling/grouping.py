"""ScheduleGroups: objects of one policy that are placed together (docs/design.md §2, §3 "Grouping").

With ``groupBy.labelKey``, objects carrying the label form one group per value; objects lacking the key,
and every object when no key is set, are groups of one.

A group's name is the one Nova gives it, ``<policy>-<8 hex digits of the 32-bit FNV-1 hash of the label
value>`` (Nova's tutorial: ``color=blue`` → ``demo-policy-4f068569``, ``green`` → ``demo-policy-f73297b2``),
because users grep for it and control-plane mode writes ScheduleGroups by it. Only the value is hashed, not
``key=value``, and FNV-1, not FNV-1a: those are the inputs that reproduce Nova's names. A group of one is
ours: ``<policy>-<first 8 hex of sha256("<group>/<kind>/<namespace>/<name>")>``.

Thirty-two bits can collide. Nova would then merge two label values into one group; we never do: of the
keys that share a name, a label value keeps it before a group of one, and the least value before the
others; each other is named by sha256 of ``"<labelKey>=<value>"`` (or of its identity) with the suffix
``-2``, ``-3``...
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from nova_gitops.api.objects import Manifest

ANNOTATION_GROUP_PREFIX = "annotation"
"""Group-name prefix of an object placed by a ``nova.elotl.co/cluster`` or ``spread-onto`` annotation."""


@dataclass(frozen=True, slots=True)
class Group:
    name: str
    owner: str  # the policy name, or ANNOTATION_GROUP_PREFIX
    group_by: tuple[str, str] | None
    members: tuple[Manifest, ...]  # sorted by key


_FNV32_OFFSET_BASIS = 0x811C9DC5
_FNV32_PRIME = 0x01000193


def fnv1_32(text: str) -> str:
    """The 32-bit FNV-1 hash of ``text``'s UTF-8 bytes as 8 hex digits (Go's ``hash/fnv.New32``)."""
    value = _FNV32_OFFSET_BASIS
    for byte in text.encode():
        value = ((value * _FNV32_PRIME) & 0xFFFFFFFF) ^ byte
    return f"{value:08x}"


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def object_identity(manifest: Manifest) -> str:
    """``"<group>/<kind>/<namespace>/<name>"``: what a group of one hashes."""
    return f"{manifest.group}/{manifest.kind}/{manifest.namespace}/{manifest.name}"


def group_name(owner: str, manifest: Manifest, group_by: tuple[str, str] | None) -> str:
    """The group's name before collisions are resolved (``form_groups`` does that): Nova's for a label
    value, ours for a group of one."""
    if group_by is not None:
        return f"{owner}-{fnv1_32(group_by[1])}"
    return f"{owner}-{_short_hash(object_identity(manifest))}"


def form_groups(owner: str, label_key: str | None, manifests: Iterable[Manifest]) -> list[Group]:
    """Group ``manifests`` of one owner; the result is sorted by group name."""
    # One entry per group, keyed by what identifies it: its label value, or the identity of its one object.
    members: dict[tuple[bool, str], list[Manifest]] = {}
    names: dict[tuple[bool, str], str] = {}
    for manifest in manifests:
        value = manifest.labels.get(label_key) if label_key else None
        if label_key and isinstance(value, str):
            identity = (True, value)
            if identity not in names:
                names[identity] = group_name(owner, manifest, (label_key, value))
        else:
            identity = (False, object_identity(manifest))
            names[identity] = group_name(owner, manifest, None)
        members.setdefault(identity, []).append(manifest)
    named = _without_collisions(owner, label_key, names)
    groups = [
        Group(
            named[identity],
            owner,
            (label_key, identity[1]) if identity[0] and label_key else None,
            tuple(sorted(found, key=lambda m: m.key)),
        )
        for identity, found in members.items()
    ]
    return sorted(groups, key=lambda group: group.name)


def _without_collisions(
    owner: str, label_key: str | None, names: dict[tuple[bool, str], str]
) -> dict[tuple[bool, str], str]:
    """``names`` with every name given to one group only: the least identity sharing a name keeps it (the
    same whatever the order of the source's documents), the others get a sha256 name with a suffix."""
    by_name: dict[str, list[tuple[bool, str]]] = {}
    for identity, name in names.items():
        by_name.setdefault(name, []).append(identity)
    if all(len(sharing) == 1 for sharing in by_name.values()):
        return names  # the rule: hashes of distinct keys rarely collide
    result = dict(names)
    taken = set(by_name)
    for sharing in by_name.values():
        # Label values before groups of one (theirs is the name Nova gives), then the least value.
        ordered = sorted(sharing, key=lambda identity: (not identity[0], identity[1]))
        for count, identity in enumerate(ordered[1:], start=2):
            text = f"{label_key}={identity[1]}" if identity[0] else identity[1]
            name = f"{owner}-{_short_hash(text)}-{count}"
            while name in taken:  # astronomically unlikely; still never two groups under one name
                name += "x"
            taken.add(name)
            result[identity] = name
    return result
