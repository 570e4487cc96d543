"""Clusters ordered into waves by a RolloutStrategy's selectors over the Clusters' labels.

A cluster belongs to the first wave whose ``clusterSelector`` selects it, so overlapping selectors never
release a cluster twice; the clusters no wave selects form the implicit last wave ``others`` (present only
when it has clusters). Without a strategy, every cluster is in one wave with no gate (``ungated``): what
nova-gitops did before rollouts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta

from nova_gitops.api import rollouts
from nova_gitops.api.clusters import Cluster
from nova_gitops.api.rollouts import RolloutStrategy


@dataclass(frozen=True, slots=True)
class Wave:
    """One wave: its clusters in name order (the order ``max_parallel`` batches follow), and its settings
    resolved (a wave's own ``maxParallel``/``bakeTime`` over the strategy's)."""

    name: str
    clusters: tuple[str, ...]
    max_parallel: int | None
    bake_time: timedelta
    implicit: bool = False
    ungated: bool = False


def waves_for(strategy: RolloutStrategy | None, clusters: Iterable[Cluster]) -> tuple[Wave, ...]:
    """The waves, in order; a wave its selector leaves empty is kept (``rollout status`` shows it, and it
    passes at once), the implicit one only when some cluster is left for it."""
    found = sorted(clusters, key=lambda cluster: cluster.name)
    if strategy is None:
        names = tuple(cluster.name for cluster in found)
        return (Wave(rollouts.IMPLICIT_WAVE, names, None, timedelta(0), implicit=True, ungated=True),)
    placed: set[str] = set()
    waves: list[Wave] = []
    for spec in strategy.waves:
        members = tuple(
            cluster.name
            for cluster in found
            if cluster.name not in placed and spec.cluster_selector.matches(cluster.labels)
        )
        placed.update(members)
        max_parallel = strategy.max_parallel if spec.max_parallel is None else spec.max_parallel
        bake_time = strategy.bake_time if spec.bake_time is None else spec.bake_time
        waves.append(Wave(spec.name, members, max_parallel, bake_time))
    rest = tuple(cluster.name for cluster in found if cluster.name not in placed)
    if rest:
        waves.append(
            Wave(rollouts.IMPLICIT_WAVE, rest, strategy.max_parallel, strategy.bake_time, implicit=True)
        )
    return tuple(waves)


def wave_of(waves: Iterable[Wave], cluster: str) -> Wave | None:
    """The wave ``cluster`` is in, or None (a cluster that is not in the inventory)."""
    return next((wave for wave in waves if cluster in wave.clusters), None)


def keep_unreported(
    strategy: RolloutStrategy,
    waves: Sequence[Wave],
    members: Mapping[str, str],
    branches: Mapping[str, str | None],
) -> tuple[tuple[Wave, ...], frozenset[str]]:
    """``waves`` with each cluster the record last had in a wave (``members``) put back in it when no wave
    has it now — its report is missing or refused — while its release branch exists (``branches``); and
    those clusters. Deleting a cluster's release branch retires it from the rollout."""
    present = {cluster for wave in waves for cluster in wave.clusters}
    names = {wave.name for wave in waves}
    kept: dict[str, set[str]] = {}
    for cluster, wave_name in members.items():
        known = wave_name in names or wave_name == rollouts.IMPLICIT_WAVE
        if cluster not in present and branches.get(cluster) is not None and known:
            kept.setdefault(wave_name, set()).add(cluster)
    if not kept:
        return tuple(waves), frozenset()
    result = [
        replace(wave, clusters=tuple(sorted({*wave.clusters, *kept.get(wave.name, ())}))) for wave in waves
    ]
    if rollouts.IMPLICIT_WAVE in kept and rollouts.IMPLICIT_WAVE not in names:
        implicit = tuple(sorted(kept[rollouts.IMPLICIT_WAVE]))
        result.append(
            Wave(rollouts.IMPLICIT_WAVE, implicit, strategy.max_parallel, strategy.bake_time, implicit=True)
        )
    return tuple(result), frozenset(cluster for clusters in kept.values() for cluster in clusters)
