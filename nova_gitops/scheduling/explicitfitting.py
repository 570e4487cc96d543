"""The explicit intents' shares fitted cluster by cluster, so that a plan fits again only the clusters whose
shares changed (``memory.Fitted``).

Placing an explicit intent (a pin, a spread-onto annotation, a policy's spread) fits its share on each of its
clusters in turn, whether or not it fits (``Ledger.consume_regardless``), and each fit reads and changes that
one cluster's room. So what fitting finds on a cluster depends on that cluster's text and the shares put on
it, in group-name order, and on nothing else. With a plan memory the placer places the intents three times,
each time through an ``ExplicitRoom`` port:

1. ``Recorder``: the intents placed, every share asked of each cluster recorded, nothing fitted;
2. ``fit_all``: each cluster's shares fitted on the real ledger, in order — or what an earlier plan found for
   the same cluster and the same shares taken from the memory, and the cluster's room restored;
3. ``Replayer``: the intents placed again, each fit answered with what step 2 found, in the same order.

The division itself (a Divide's arithmetic, a pin's cluster) is worked out twice; it is cheap beside the
fitting, which checks every share on every node. A change to the fleet moves the shares of few clusters
(losing a cluster re-divides only the Divide shares it held), so most clusters are found in the memory: what
``nova-gitops headroom`` relies on to plan a loss per cluster. The plan is the one placing the intents once
on the ledger gives (the plan-memory property tests hold it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from nova_gitops.scheduling import memory
from nova_gitops.scheduling.demand import PodDemand
from nova_gitops.scheduling.ledger import Ledger
from nova_gitops.scheduling.memory import Key
from nova_gitops.scheduling.recalling import Recall

Share = tuple[tuple[PodDemand, ...], Mapping[str, int]]
"""What an intent asks of one cluster: its pods there, and what they request in total."""
Outcome = tuple[tuple[tuple[str, int], ...], str]
"""What fitting a share found: the cluster's free room before it, and the shortfall ("" when it fit)."""


class Recorder:
    """Records the shares each cluster is asked for, in order; fits nothing (every share "fits")."""

    def __init__(self) -> None:
        self.asked: dict[str, list[Share]] = {}

    def free(self, cluster: str) -> Mapping[str, int]:
        return {}

    def consume_regardless(self, cluster: str, demands: Sequence[PodDemand], need: Mapping[str, int]) -> str:
        pods = demands if isinstance(demands, tuple) else tuple(demands)
        self.asked.setdefault(cluster, []).append((pods, need))
        return ""


class Replayer:
    """Answers each cluster's fits, in the order they were recorded, with what ``fit_all`` found."""

    def __init__(self, found: Mapping[str, Sequence[Outcome]]) -> None:
        self._found = found
        self._next = dict.fromkeys(found, 0)

    def free(self, cluster: str) -> Mapping[str, int]:
        return dict(self._found[cluster][self._next[cluster]][0])

    def consume_regardless(self, cluster: str, demands: Sequence[PodDemand], need: Mapping[str, int]) -> str:
        index = self._next[cluster]
        self._next[cluster] = index + 1
        return self._found[cluster][index][1]


def fit_all(
    asked: Mapping[str, Sequence[Share]], ledger: Ledger, recall: Recall
) -> tuple[dict[str, tuple[Outcome, ...]], tuple[Key, ...]]:
    """Fit each cluster's shares on ``ledger`` in order, or take what the memory found for the same cluster
    and shares (restoring the cluster's room): what each fit found, by cluster, and the memory's keys."""
    found: dict[str, tuple[Outcome, ...]] = {}
    keys: list[Key] = []
    for cluster, shares in asked.items():
        key = recall.fits_key(cluster, shares)
        stored = recall.fitted(key)
        if stored is not None:
            ledger.restore_base(cluster, stored.room)
            found[cluster] = stored.outcomes
        else:
            outcomes = []
            for pods, need in shares:
                before = tuple(ledger.free(cluster).items())
                outcomes.append((before, ledger.consume_regardless(cluster, pods, need)))
            found[cluster] = tuple(outcomes)
            recall.keep_fitted(key, memory.Fitted(found[cluster], ledger.base_of(cluster)))
        keys.append(key)
    return found, tuple(keys)
