"""Placement intents users write on a workload, which beat any policy (docs/design.md §2, Nova's annotations).

``nova.elotl.co/cluster: wlc-1`` pins the object to one cluster; ``nova.elotl.co/spread-onto:
"wlc-1,wlc-2"`` divides it over the named clusters, ``"wlc-1,wlc-2::Duplicate"`` copies it to each. Their
syntax is validated when the source is loaded (``api.placementannotations``); here they are only read.
"""

from __future__ import annotations

from dataclasses import dataclass

from nova_gitops.api import placementannotations
from nova_gitops.api.objects import Manifest
from nova_gitops.api.policies import SpreadMode


@dataclass(frozen=True, slots=True)
class Pin:
    cluster: str


@dataclass(frozen=True, slots=True)
class SpreadOnto:
    clusters: tuple[str, ...]
    mode: SpreadMode


def intent(manifest: Manifest) -> Pin | SpreadOnto | None:
    """The annotation intent of ``manifest``; the pin wins when both annotations are present."""
    pinned = placementannotations.pinned_cluster(manifest)
    if pinned is not None:
        return Pin(pinned)
    spread = placementannotations.spread_onto(manifest)
    return SpreadOnto(*spread) if spread is not None else None
