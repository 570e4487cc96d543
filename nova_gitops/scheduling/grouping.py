"""ScheduleGroups: objects of one policy that are placed together (DESIGN §2, §3 "Grouping").

With ``groupBy.labelKey``, objects carrying the label form one group per value; objects lacking the key,
and every object when no key is set, are groups of one. Names are Nova's:
``<policy>-<first 8 hex of sha256("<labelKey>=<value>")>``, and for a group of one
``<policy>-<first 8 hex of sha256("<group>/<kind>/<namespace>/<name>")>``.
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


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def object_identity(manifest: Manifest) -> str:
    """``"<group>/<kind>/<namespace>/<name>"``: what a group of one hashes."""
    return f"{manifest.group}/{manifest.kind}/{manifest.namespace}/{manifest.name}"


def group_name(owner: str, manifest: Manifest, group_by: tuple[str, str] | None) -> str:
    if group_by is not None:
        key, value = group_by
        return f"{owner}-{_short_hash(f'{key}={value}')}"
    return f"{owner}-{_short_hash(object_identity(manifest))}"


def form_groups(owner: str, label_key: str | None, manifests: Iterable[Manifest]) -> list[Group]:
    """Group ``manifests`` of one owner; the result is sorted by group name."""
    members: dict[str, list[Manifest]] = {}
    keys: dict[str, tuple[str, str] | None] = {}
    by_value: dict[str, str] = {}  # label value -> group name: one hash per group, not per member
    for manifest in manifests:
        value = manifest.labels.get(label_key) if label_key else None
        if label_key and isinstance(value, str):
            group_by: tuple[str, str] | None = (label_key, value)
            name = by_value.get(value) or by_value.setdefault(value, group_name(owner, manifest, group_by))
        else:
            group_by = None
            name = group_name(owner, manifest, None)
        members.setdefault(name, []).append(manifest)
        keys[name] = group_by
    return [
        Group(name, owner, keys[name], tuple(sorted(members[name], key=lambda m: m.key)))
        for name in sorted(members)
    ]
