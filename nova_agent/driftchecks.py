"""Drift checks of one pass: which unchanged objects no longer hold what git wants (``drifting`` decides).

The pass hands over the objects whose manifest did not change since their last apply and that exist; each is
compared with its live copy from the pass's listing, and only those that depart are dry-run applied. An
object in sync therefore costs no request at all, and no check ever writes (docs/agent.md, "Drift").
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from nova_agent import drifting, redacting
from nova_agent.desired import DesiredObject
from nova_agent.drifting import DriftedObject, DriftMode
from nova_agent.kubeports import KubePort
from nova_agent.ownership import ADOPT_ANNOTATION, ADOPT_FORCE
from nova_agent.resources import Body, ObjectKey, ObjectRef
from nova_gitops.clients.kuberest import KubeApiError

HPA_API_VERSION: Final = "autoscaling/v2"
ADOPTED_DRIFT_FIX: Final = (
    f"; nova-agent adopted this object and does not take fields over from other managers: annotate the "
    f"manifest with {ADOPT_ANNOTATION}: {ADOPT_FORCE} to let it put git's values back"
)


@dataclass(slots=True)
class DriftFindings:
    drifted: list[DriftedObject]
    errors: dict[ObjectRef, str]


def check(
    kube: KubePort,
    items: Sequence[DesiredObject],
    live: Mapping[ObjectKey, Body],
    default: DriftMode,
    seen: MutableMapping[ObjectKey, datetime],
    now: datetime,
    unforced: Collection[ObjectKey] = (),
) -> DriftFindings:
    """The drifted objects among ``items`` (each present in ``live``). ``seen`` remembers when each drift
    was first seen across passes; entries of objects no longer drifted are dropped from it.

    Objects in ``unforced`` (adopted: the agent never takes fields over from other managers there) are
    dry-run without force, as their correction would be applied: a field another manager owns with another
    value makes a conflict, reported as drift the agent may not put back (with the fix)."""
    findings = DriftFindings([], {})
    still: set[ObjectKey] = set()
    for item in items:
        mode = drifting.mode_for(item.body, default)
        current = live.get(item.ref.key)
        if mode is DriftMode.OFF or current is None:
            continue
        if next(drifting.departures(drifting.comparable_manifest(item.body), current), None) is None:
            continue
        fields, mode = _dry_run(kube, item, current, item.ref.key not in unforced, mode, findings)
        if fields:
            still.add(item.ref.key)
            first = seen.setdefault(item.ref.key, now)
            findings.drifted.append(DriftedObject(item.ref, fields, first, mode))
    for key in [key for key in seen if key not in still]:
        del seen[key]
    return findings


def _dry_run(
    kube: KubePort, item: DesiredObject, current: Body, force: bool, mode: DriftMode, findings: DriftFindings
) -> tuple[tuple[str, ...], DriftMode]:
    """The fields applying ``item`` would change (none: in sync, a difference of spelling only), and the mode
    left to act on them: a conflict (an adopted object's field another manager holds) can only be reported."""
    resource = kube.resource_for(item.ref.api_version, item.ref.kind)
    if resource is None:
        return (), mode
    try:
        after = kube.apply(resource, item.body, force=force, dry_run=True)
    except KubeApiError as error:
        why = f"{error.status} {error.reason}: {redacting.redact_server_message(error.message, item.body)}"
        if error.status != 409:
            findings.errors[item.ref] = f"drift check (dry-run apply) failed: {why}"
            return (), mode
        findings.errors[item.ref] = f"drifted, not put back: {why}{ADOPTED_DRIFT_FIX}"
        found = list(drifting.departures(drifting.comparable_manifest(item.body), current))
        return tuple(found[: drifting.MAX_FIELDS_LISTED]), DriftMode.WARN
    return tuple(drifting.changed_paths(after, current)), mode


def autoscaled(kube: KubePort, namespaces: Iterable[str]) -> set[tuple[str, str, str]]:
    """(namespace, kind, name) of what HorizontalPodAutoscalers scale: read cluster-wide, else in each of
    ``namespaces`` (narrowed RBAC); what cannot be read is taken as not autoscaled."""
    resource = kube.resource_for(HPA_API_VERSION, "HorizontalPodAutoscaler")
    if resource is None:
        return set()
    try:
        return drifting.autoscaled_targets(list(kube.list(resource, None)))
    except KubeApiError:
        pass
    found: list[Body] = []
    for namespace in sorted(set(namespaces) - {""}):
        try:
            found += kube.list(resource, namespace)
        except KubeApiError:
            continue
    return drifting.autoscaled_targets(found)
