"""Where the demo's tests run it: the demo's tests (``test_demo.py``, ``test_rollout_demo.py``) run the demo
on two real clusters when the environment names them, on the simulated clusters otherwise.

Two real clusters: ``REALK8S_KUBECONFIG_1`` and ``REALK8S_KUBECONFIG_2`` (what ``../shared/realk8s/up DIR 2``
writes to ``DIR/env``), or ``NOVA_TEST_KUBECONFIG`` with ``NOVA_TEST_KUBECONFIG_2`` (the first is the `kube`
fixture's cluster; ``NOVA_TEST_CONTEXT``/``_2`` choose contexts). One real cluster is not enough for the
demo, which needs two: with ``NOVA_TEST_KUBECONFIG`` alone the demo runs simulated, as the other end-to-end
tests do.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tests.e2e.realloop import Kubeconfig


@dataclass(frozen=True, slots=True)
class DemoClusters:
    """Where the demo runs: wlc-1's and wlc-2's kubeconfig and context (none: the simulated clusters)."""

    kubeconfigs: tuple[Kubeconfig, ...] = ()

    @property
    def real(self) -> bool:
        return bool(self.kubeconfigs)

    @property
    def arguments(self) -> tuple[str, ...]:
        """The flags of ``examples/demo/run.py`` that name them."""
        found: list[str] = []
        for number, where in enumerate(self.kubeconfigs, start=1):
            found += [f"--kubeconfig-{number}", where.path]
            found += [f"--context-{number}", where.context] if where.context else []
        return tuple(found)


def demo_clusters_from(environ: Mapping[str, str]) -> DemoClusters:
    pairs = (
        ("NOVA_TEST_KUBECONFIG", "NOVA_TEST_KUBECONFIG_2", "NOVA_TEST_CONTEXT", "NOVA_TEST_CONTEXT_2"),
        ("REALK8S_KUBECONFIG_1", "REALK8S_KUBECONFIG_2", "", ""),
    )
    for first, second, first_context, second_context in pairs:
        if environ.get(first) and environ.get(second):
            return DemoClusters(
                (
                    Kubeconfig(environ[first], environ.get(first_context) or None),
                    Kubeconfig(environ[second], environ.get(second_context) or None),
                )
            )
    return DemoClusters()
