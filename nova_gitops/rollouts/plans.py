"""The wave plan of a change, for ``diff`` and PLACEMENT.md: which clusters each wave will change, which
clusters the change does not touch, and how long it takes at the earliest.

"At the earliest" assumes every cluster reports healthy for its revision the moment it is released, so
only bake times count: batches of ``maxParallel`` follow each other at once, a wave that changes no
cluster passes at once, and a wave that changes some takes its ``bakeTime``. ``earliest`` is when the last
wave has baked (the rollout is complete); the last release happens one bake sooner
(``earliest_last_release``). Real health adds to both, up to ``healthTimeout`` a batch.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import timedelta

from nova_gitops.rollouts.waves import Wave


@dataclass(frozen=True, slots=True)
class WavePlan:
    name: str
    changed: tuple[str, ...]  # released through the gate, in name order
    unchanged: tuple[str, ...]  # advanced at once
    batches: int  # releases the changed clusters need (maxParallel)
    bake_time: timedelta  # what the wave adds at the earliest (0 when it changes nothing, or ungated)
    max_parallel: int | None = None  # the wave's resolved maxParallel (None: all its changed clusters)

    @property
    def batched(self) -> tuple[tuple[str, ...], ...]:
        """The changed clusters as released: batches of ``max_parallel`` in name order."""
        size = self.max_parallel or len(self.changed) or 1
        return tuple(self.changed[start : start + size] for start in range(0, len(self.changed), size))


@dataclass(frozen=True, slots=True)
class ChangePlan:
    waves: tuple[WavePlan, ...]
    untouched: tuple[str, ...]  # clusters whose directory the change does not touch
    earliest: timedelta
    earliest_last_release: timedelta

    @property
    def changing_waves(self) -> tuple[WavePlan, ...]:
        return tuple(wave for wave in self.waves if wave.changed)


def plan_change(waves: Sequence[Wave], changed: Collection[str]) -> ChangePlan:
    """The plan of a change touching the directories of ``changed`` clusters, over ``waves``
    (``waves_for``: without a strategy, one ungated wave, so nothing waits)."""
    planned: list[WavePlan] = []
    for wave in waves:
        gated = tuple(name for name in wave.clusters if name in changed)
        batches = 0 if not gated else -(-len(gated) // (wave.max_parallel or len(gated)))
        bake = timedelta(0) if wave.ungated or not gated else wave.bake_time
        planned.append(
            WavePlan(
                wave.name,
                gated,
                tuple(name for name in wave.clusters if name not in changed),
                batches,
                bake,
                wave.max_parallel,
            )
        )
    untouched = tuple(sorted(name for wave in waves for name in wave.clusters if name not in changed))
    bakes = [wave.bake_time for wave in planned if wave.changed]
    earliest = sum(bakes, timedelta(0))
    return ChangePlan(tuple(planned), untouched, earliest, earliest - (bakes[-1] if bakes else timedelta(0)))
