"""Which objects of the render a sync pass sends: the changed and missing ones, those drifted from git that
are to be put back, each with the live replica count where an autoscaler owns it."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import replace
from datetime import datetime

from nova_agent import driftchecks, drifting, ownership
from nova_agent.clocks import Clock
from nova_agent.desired import DesiredObject
from nova_agent.driftchecks import DriftFindings
from nova_agent.drifting import DriftMode
from nova_agent.inventories import Inventory
from nova_agent.kubeports import KubePort
from nova_agent.resources import Body, ObjectKey
from nova_agent.retrying import FailureTable, may_retry


def changed_objects(
    desired: Sequence[DesiredObject],
    inventory: Inventory,
    live_keys: set[ObjectKey],
    failures: FailureTable,
    now: float,
) -> tuple[list[DesiredObject], int]:
    """Objects to send (new, changed, missing from the cluster) that are not backing off; and how many are
    unchanged. An object is unchanged when its digest equals the one last applied and it still exists."""
    to_send, unchanged = [], 0
    for item in desired:
        key = item.ref.key
        if inventory.digest_of(key) == item.digest and key in live_keys:
            unchanged += 1
        elif may_retry(failures.get(key), item.digest, now):
            to_send.append(item)
    return to_send, unchanged


def drift_corrections(
    kube: KubePort,
    mode: DriftMode,
    desired: Sequence[DesiredObject],
    inventory: Inventory,
    live: Mapping[ObjectKey, Body],
    seen: MutableMapping[ObjectKey, datetime],
    clock: Clock,
) -> tuple[DriftFindings, list[DesiredObject]]:
    """The drifted objects among the unchanged ones (and what could not be checked), and those to put back
    (``mode``: the agent's drift mode, which an object's annotation may override)."""
    if mode is DriftMode.OFF and not any(
        drifting.mode_for(item.body, DriftMode.OFF) is not DriftMode.OFF for item in desired
    ):
        return DriftFindings([], {}), []
    unchanged = [
        item for item in desired if inventory.digest_of(item.ref.key) == item.digest and item.ref.key in live
    ]
    unforced = {
        item.ref.key
        for item in unchanged
        if ownership.applies_unforced(
            *inventory.owner_and_uid(item.ref), live.get(item.ref.key), False, item.body
        )
    }
    findings = driftchecks.check(kube, unchanged, live, mode, seen, clock.now(), unforced)
    correct = {found.ref for found in findings.drifted if found.mode is DriftMode.CORRECT}  # not conflicts
    return findings, [item for item in unchanged if item.ref in correct]


def autoscaled_keep_live_replicas(
    kube: KubePort, desired: Sequence[DesiredObject], live: Mapping[ObjectKey, Body]
) -> list[DesiredObject]:
    """``desired`` with the live ``spec.replicas`` of each object a HorizontalPodAutoscaler scales: the
    autoscaler owns the count (docs/agent.md, "Letting an autoscaler own replicas"). Listed only when some
    object has a replica count."""
    scaled = [item for item in desired if "replicas" in (item.body.get("spec") or {})]
    if not scaled:
        return list(desired)
    targets = driftchecks.autoscaled(kube, {item.ref.namespace for item in scaled})
    if not targets:
        return list(desired)
    return [
        replace(item, body=drifting.with_live_replicas(item.body, live.get(item.ref.key)))
        if (item.ref.namespace, item.ref.kind, item.ref.name) in targets
        else item
        for item in desired
    ]
