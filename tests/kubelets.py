"""A node that runs pods, on whichever cluster a test has: the fake's simulated cluster, or the stand-in
kubelet (``tests/realkube/kubelet.py``) on a real API server (``NOVA_TEST_KUBECONFIG``).

Both take the same requests by image name (``crashloop``, ``imagepullbackoff``, ...: see
``tests/fakekube/simulation_kubelet.py``), so a test that asks for a crash-looping pod runs the same on
both. ``Running.until(condition, what)`` is the one way a test lets the cluster react: on the fake it runs
the simulation to its fixed point (synchronously, nothing waits) and then checks; on a real cluster it waits
for the condition (at most a minute), as the real controllers and the kubelet's threads take their time.
A real run without the stand-in kubelet is skipped, saying so.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest

from tests.fakekube.fixtures import KubeTarget
from tests.fakekube.simulation import SimulatedCluster

NODE_ALLOCATABLE = {"cpu": "4", "memory": "16Gi", "pods": "110"}


@dataclass
class Running:
    """A cluster with a node whose pods run (or fail as their images ask)."""

    node: str
    step: Callable[[], object] | None
    wait: Callable[[Callable[[], bool], str], None] | None

    def until(self, condition: Callable[[], bool], what: str) -> None:
        """Let the cluster react until ``condition()`` holds; AssertionError naming ``what`` otherwise."""
        if self.step is not None:
            self.step()
            assert condition(), f"the simulated cluster settled without {what}"
        else:
            assert self.wait is not None
            self.wait(condition, what)


@contextmanager
def running_node(kube: KubeTarget, name: str = "node-1") -> Iterator[Running]:
    """One Ready node (4 cpu, 16Gi) whose pods run, for the duration of the ``with``."""
    if kube.fake is not None:
        kube.fake.add_node(name, allocatable=NODE_ALLOCATABLE)
        yield Running(name, SimulatedCluster(kube.fake).step, None)
        return
    if importlib.util.find_spec("tests.realkube.kubelet") is None:
        pytest.skip("runs pods on a real cluster with the stand-in kubelet (tests/realkube/kubelet.py)")
    from tests.realkube import kubelet

    stand_in: Any = kubelet.StandInKubelet(kube.api_client, prefix=kube.namespace)
    with stand_in:
        node = stand_in.add_node(name, allocatable=NODE_ALLOCATABLE)

        def wait(condition: Callable[[], bool], what: str) -> None:
            stand_in.wait_for(condition, what)
            stand_in.check()

        yield Running(node, None, wait)
