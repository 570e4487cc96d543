"""Nova's placement annotations on a workload: the pin (``nova.elotl.co/cluster``) and spread-onto
(``nova.elotl.co/spread-onto``), checked when the source is built and read by the planner."""

from __future__ import annotations

from collections.abc import Mapping

from nova_gitops.api import (
    labels,
    names,
)
from nova_gitops.api.clusters import is_cluster_name
from nova_gitops.api.objects import (
    Manifest,
)
from nova_gitops.api.policies import SpreadMode
from nova_gitops.api.problems import (
    excerpt,
)


def check_placement_annotations(annotations: Mapping[str, str], check: names.Fields) -> None:
    """Syntax of Nova's pin and spread-onto annotations (whether the clusters exist is the planner's call)."""
    pin_field = names.child("metadata.annotations", labels.CLUSTER_PIN)
    spread_field = names.child("metadata.annotations", labels.SPREAD_ONTO)
    pin = annotations.get(labels.CLUSTER_PIN)
    if pin is not None and not is_cluster_name(pin.strip()):
        check.error(pin_field, f"{excerpt(pin)} is not a cluster name: {names.DNS1123_SUBDOMAIN_RULE}")
    spread = annotations.get(labels.SPREAD_ONTO)
    if spread is None:
        return
    try:
        clusters_named, _ = parse_spread_onto(spread)
    except ValueError as error:
        check.error(spread_field, str(error))
        return
    repeated = sorted({name for name in clusters_named if clusters_named.count(name) > 1})
    if repeated:
        check.warning(spread_field, f"names {', '.join(repeated)} more than once; each cluster gets one copy")
    if pin is not None:
        check.warning(spread_field, f"ignored: {labels.CLUSTER_PIN} is also set, and a pin wins")


def parse_spread_onto(text: str) -> tuple[tuple[str, ...], SpreadMode]:
    """``"c1,c2"`` → ``(("c1", "c2"), "Divide")``; ``"c1,c2::Duplicate"`` → ``(..., "Duplicate")``.
    Raise ValueError saying what is wrong (an empty or invalid cluster name, an unknown mode)."""
    listed, separator, mode_text = text.partition("::")
    mode: SpreadMode = "Divide"
    if separator:
        if mode_text.strip() not in ("Divide", "Duplicate"):
            hint = names.suggestion(mode_text.strip(), ("Divide", "Duplicate"))
            raise ValueError(
                f"unknown mode {excerpt(mode_text.strip())} after '::': use Divide or Duplicate{hint}"
            )
        mode = "Duplicate" if mode_text.strip() == "Duplicate" else "Divide"
    cluster_names = tuple(name.strip() for name in listed.split(","))
    for name in cluster_names:
        if not name:
            raise ValueError(f"{excerpt(text)} has an empty cluster name: write c1,c2 or c1,c2::Duplicate")
        if not is_cluster_name(name):
            raise ValueError(f"{excerpt(name)} is not a cluster name: {names.DNS1123_SUBDOMAIN_RULE}")
    return cluster_names, mode


def pinned_cluster(manifest: Manifest) -> str | None:
    """The cluster named by ``nova.elotl.co/cluster`` (validated when the source was built), or None."""
    pin = manifest.annotations.get(labels.CLUSTER_PIN)
    return pin.strip() if isinstance(pin, str) and pin.strip() else None


def spread_onto(manifest: Manifest) -> tuple[tuple[str, ...], SpreadMode] | None:
    """``(clusters, mode)`` of ``nova.elotl.co/spread-onto``, each cluster once, in the order written; None
    when absent. The annotation was validated when the source was built."""
    text = manifest.annotations.get(labels.SPREAD_ONTO)
    if not isinstance(text, str):
        return None
    cluster_names, mode = parse_spread_onto(text)
    return tuple(dict.fromkeys(cluster_names)), mode
