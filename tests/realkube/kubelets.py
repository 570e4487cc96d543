"""Nodes whose pods run, on whichever cluster a test has: one interface (:class:`Kubelet`), two kubelets.

- On the fake API server, :class:`FakeKubelet`: the fake's simulated cluster (``tests.fakekube.simulation``:
  controllers, scheduler and kubelet in one synchronous step), stepped only when the test lets the cluster
  react, so nothing waits and every run is the same.
- On a real API server (``NOVA_TEST_KUBECONFIG``), :class:`RealKubelet`: the stand-in kubelet
  (``tests.realkube.kubelet``) beside the real controller-manager and scheduler, in threads.

Both name nodes ``<prefix>-<name>`` (the test's namespace, in the ``kubelet`` fixture) and run pods in the
state their images or the ``stand-in.nova.test/state`` annotation ask for (``tests.realkube.podstates``).
``until(condition, what)`` is the one way a test lets the cluster react: the fake steps its simulation and
checks, the real one waits for the condition (no sleep stands for it). ``pause()`` holds pods where they
are (bound, not started) so a test can look at "not running yet" on both, whatever the timing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, Protocol, Self

from nova_gitops.api import quantities
from tests.realkube import kubelet as standin

OCCUPANT_LABEL = "stand-in.nova.test/occupant"


class Kubelet(Protocol):
    """What a test asks of the nodes of its cluster."""

    @property
    def real(self) -> bool:
        """Whether this is a real API server (the controllers and the kubelet run in threads)."""
        ...

    @property
    def nodes(self) -> list[str]: ...

    def node_name(self, name: str) -> str:
        """The name a node asked for as ``name`` gets."""
        ...

    def add_node(
        self,
        name: str,
        allocatable: Mapping[str, str] | None = None,
        labels: Mapping[str, str] | None = None,
        taints: Sequence[Mapping[str, Any]] = (),
        capacity: Mapping[str, str] | None = None,
        ready: bool = True,
    ) -> str:
        """A Node (default 4 cpu, 16Gi memory, 110 pods) whose pods run; returns its name."""
        ...

    def remove_node(self, name: str) -> None: ...

    def set_node_ready(self, name: str, ready: bool) -> None: ...

    def occupy(
        self,
        node: str,
        namespace: str,
        requests: Mapping[str, str] | None = None,
        name: str = "",
        labels: Mapping[str, str] | None = None,
    ) -> str:
        """A running pod bound to ``node`` (no controller's: nova-gitops does not manage it, unless
        ``labels`` say so), requesting ``requests`` (all the cpu and memory still free there by default);
        returns its name. Paused, it is bound and waits like the others."""
        ...

    def pause(self) -> None:
        """Pods stay as they are (bound, not started) until ``resume()``."""
        ...

    def resume(self) -> None: ...

    def until(self, condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
        """Let the cluster react until ``condition()`` holds; AssertionError naming ``what`` otherwise."""
        ...


def free_requests(allocatable: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """The cpu and memory of a node not yet requested by its unfinished pods."""
    used: dict[str, int] = {}
    for pod in pods:
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        for container in (pod.get("spec") or {}).get("containers") or []:
            for resource, value in ((container.get("resources") or {}).get("requests") or {}).items():
                used[resource] = used.get(resource, 0) + quantities.parse_quantity(value)
    free = {
        resource: max(0, quantities.parse_quantity(allocatable.get(resource, "0")) - used.get(resource, 0))
        for resource in ("cpu", "memory")
    }
    return {"cpu": f"{free['cpu']}m", "memory": str(free["memory"] // 1000)}


def occupant(
    name: str, node: str, requests: Mapping[str, str], labels: Mapping[str, str] | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {OCCUPANT_LABEL: "true", **dict(labels or {})}},
        "spec": {
            "nodeName": node,
            "containers": [
                {
                    "name": "occupant",
                    "image": "registry.example/occupant:1",
                    "resources": {"requests": dict(requests)},
                }
            ],
        },
    }


class RealKubelet(standin.StandInKubelet):
    """The stand-in kubelet, as a :class:`Kubelet`."""

    @property
    def real(self) -> bool:
        return True

    def until(self, condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
        self.check()
        self.wait_for(condition, what, timeout)
        self.check()

    def occupy(
        self,
        node: str,
        namespace: str,
        requests: Mapping[str, str] | None = None,
        name: str = "",
        labels: Mapping[str, str] | None = None,
    ) -> str:
        full = self.node_name(node)
        chosen = name or f"occupant-{full}"
        if requests is None:
            listed = self.rest.request("GET", f"/api/v1/nodes/{full}")
            pods = self.rest.request(
                "GET", "/api/v1/pods", query=[("fieldSelector", f"spec.nodeName={full}")]
            )
            requests = free_requests(listed["status"]["allocatable"], pods.get("items") or [])
        self.rest.request(
            "POST", f"/api/v1/namespaces/{namespace}/pods", body=occupant(chosen, full, requests, labels)
        )
        if not self._paused:
            path = f"/api/v1/namespaces/{namespace}/pods/{chosen}"
            self.until(
                lambda: self.rest.request("GET", path)["status"].get("phase") == "Running",
                f"{chosen} running",
            )
        return chosen


class FakeKubelet:
    """The fake API server's simulated cluster, stepped when the test lets it react, as a :class:`Kubelet`."""

    def __init__(
        self, server: Any, prefix: str = "", clock: Callable[[], datetime] = standin.system_clock
    ) -> None:
        from tests.fakekube.simulation import SimulatedCluster

        self.server = server
        self.sim = SimulatedCluster(server, clock)
        self.prefix = prefix
        self._nodes: list[str] = []

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.sim.stop()
        for name in list(self._nodes):
            self.remove_node(name)

    @property
    def real(self) -> bool:
        return False

    @property
    def nodes(self) -> list[str]:
        return sorted(self._nodes)

    def node_name(self, name: str) -> str:
        return f"{self.prefix}-{name}" if self.prefix and not name.startswith(f"{self.prefix}-") else name

    def add_node(
        self,
        name: str,
        allocatable: Mapping[str, str] | None = None,
        labels: Mapping[str, str] | None = None,
        taints: Sequence[Mapping[str, Any]] = (),
        capacity: Mapping[str, str] | None = None,
        ready: bool = True,
    ) -> str:
        full = self.node_name(name)
        self.server.add_node(
            full, allocatable=allocatable, labels=labels, taints=taints, capacity=capacity, ready=ready
        )
        self._nodes.append(full)
        return full

    def remove_node(self, name: str) -> None:
        from tests.fakekube.preparing import Target

        full = self.node_name(name)
        pods_type = self.server.table.find_any_version("", "pods")
        nodes_type = self.server.table.find_any_version("", "nodes")
        with self.server.store.lock:
            for pod in self.server.objects("pods"):
                if (pod.get("spec") or {}).get("nodeName") == full:
                    metadata = pod["metadata"]
                    self.server.operations.delete(
                        Target(pods_type, metadata["namespace"], metadata["name"], "", {}), None
                    )
            self.server.operations.delete(Target(nodes_type, "", full, "", {}), None)
        self._nodes.remove(full)

    def set_node_ready(self, name: str, ready: bool) -> None:
        self.sim.set_node_ready(self.node_name(name), ready)

    def occupy(
        self,
        node: str,
        namespace: str,
        requests: Mapping[str, str] | None = None,
        name: str = "",
        labels: Mapping[str, str] | None = None,
    ) -> str:
        full = self.node_name(node)
        chosen = name or f"occupant-{full}"
        if requests is None:
            [listed] = [body for body in self.server.objects("nodes") if body["metadata"]["name"] == full]
            bound = [
                pod for pod in self.server.objects("pods") if (pod.get("spec") or {}).get("nodeName") == full
            ]
            requests = free_requests(listed["status"]["allocatable"], bound)
        self.server.create_pod(
            namespace,
            chosen,
            requests=requests,
            node_name=full,
            labels={OCCUPANT_LABEL: "true", **dict(labels or {})},
            phase="Pending" if self.sim.kubelet_paused else "Running",  # no step: nothing else moves
        )
        return chosen

    def pause(self) -> None:
        self.sim.kubelet_paused = True

    def resume(self) -> None:
        self.sim.kubelet_paused = False

    def until(self, condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
        """Step the simulation to its fixed point between checks (a few times: a condition may act, e.g.
        an agent pass that applies, and need the cluster to react again)."""
        for _ in range(5):
            if condition():
                return
            if self.sim.step() == 0 and condition():
                return
        raise AssertionError(f"the simulated cluster settled without {what}")


def for_target(api_client: Any, fake: Any, prefix: str) -> FakeKubelet | RealKubelet:
    """The kubelet of a test's cluster: the fake's simulation when ``fake`` is a FakeKubeServer, the
    stand-in kubelet (started) otherwise."""
    if fake is not None:
        return FakeKubelet(fake, prefix)
    return RealKubelet(api_client, prefix=prefix).start()
