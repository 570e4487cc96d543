"""Simulated-cluster mode for the fake API server, like kwok: workloads get pods, pods get nodes or stay
Pending, and workload statuses follow, with no kubelet, scheduler or controller-manager anywhere.

`SimulatedCluster(server, clock=...)` adds to a `FakeKubeServer` what a real control plane does after an
object is written: Deployments make ReplicaSets, ReplicaSets/StatefulSets/Jobs/DaemonSets make Pods, each Pod
is bound to a node that fits its requests, nodeSelector, affinity and taints (or stays Pending with
`PodScheduled=False`, reason `Unschedulable` and kube-scheduler's message), bound pods are Running and Ready
at once (unless an image's name asks for a container waiting in `CrashLoopBackOff`, `ImagePullBackOff`,
...: `simulation_kubelet`), and statuses (`readyReplicas`, `availableReplicas`, `Available`/`Progressing`,
...) are written as the real controllers write them. Deleting a workload deletes what it owns (the garbage
collector).

Two ways to drive it, both deterministic about *what* happens:
- `step()`: run controller rounds until nothing changes, synchronously. Tests call it between their own
  actions (an agent pass, then `step()`, then the next pass) and never wait on threads.
- `start()` / `stop()`: a background thread runs `step()` whenever the store changes (and every `tick`
  seconds, for time-based rules); `settle()` waits until it is idle. For demos and benchmarks.
Time (condition timestamps, Pending-since, Job durations, progress deadlines) comes from the injected
`clock`, so a test that moves a fake clock moves the cluster's notion of time with it.

Test hooks: `add_node` (on the server), `occupy` (a pod nova-gitops does not manage takes a node's room),
`fill_nodes` (occupy every node and evict the pods there, so their controllers' replacements stay Pending),
`release` (remove what `occupy` placed), `set_node_ready`; `kubelet_paused` holds bound pods as they are
(the scheduler still binds them), as `StandInKubelet.pause()` does on a real cluster.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.fakekube import simulation_scheduling as scheduling
from tests.fakekube.preparing import Target
from tests.fakekube.server import FakeKubeServer
from tests.fakekube.simulation_controllers import NODES, PODS, ControllerRound
from tests.fakekube.store import ChangeEvent

Clock = Callable[[], datetime]
OCCUPANT_NAMESPACE = "kube-system"
OCCUPANT_LABEL = "simulation.fakekube/occupant"
NOT_READY_EFFECTS = ("NoSchedule", "NoExecute")


def system_clock() -> datetime:
    return datetime.now(UTC)


class SimulatedCluster:
    def __init__(
        self,
        server: FakeKubeServer,
        clock: Clock = system_clock,
        *,
        job_duration: timedelta | None = None,
        max_rounds: int = 25,
    ) -> None:
        """`job_duration`: Job pods succeed after running this long (None: they run until deleted)."""
        self.server = server
        self.clock = clock
        self.job_duration = job_duration
        self.max_rounds = max_rounds
        self.kubelet_paused = False  # True: bound pods wait for the kubelet (the stand-in kubelet's pause)
        self.errors: list[str] = []
        self._stepping = threading.Lock()
        self._changed = threading.Event()
        self._stopping = threading.Event()
        self._busy = False
        self._thread: threading.Thread | None = None

    # ----- driving

    def step(self) -> int:
        """Reconcile until a round writes nothing (at most `max_rounds`); returns the number of writes."""
        total = 0
        with self._stepping:
            for _ in range(self.max_rounds):
                with self.server.store.lock:
                    round_ = ControllerRound(
                        self.server.store,
                        self.server.table,
                        self.server.operations,
                        self.clock(),
                        self.job_duration,
                        run_pods=not self.kubelet_paused,
                    )
                    round_.run()
                self.errors = round_.errors
                total += round_.writes
                if round_.writes == 0:
                    break
        return total

    def _on_change(self, event: ChangeEvent) -> None:
        self._changed.set()

    def start(self, tick: float = 0.5) -> SimulatedCluster:
        """React to every change in a background thread until `stop()`."""
        if self._thread is not None:
            return self
        self.server.store.listeners.append(self._on_change)
        self._stopping.clear()
        self._changed.set()

        def loop() -> None:
            while not self._stopping.is_set():
                self._changed.wait(tick)
                if self._stopping.is_set():
                    return
                self._busy = True
                self._changed.clear()
                try:
                    self.step()
                finally:
                    self._busy = False

        self._thread = threading.Thread(target=loop, name="fakekube-simulation", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is None:
            return
        self._stopping.set()
        self._changed.set()
        self._thread.join(timeout=5)
        self._thread = None
        if self._on_change in self.server.store.listeners:
            self.server.store.listeners.remove(self._on_change)

    def settle(self, timeout: float = 5.0) -> bool:
        """In background mode: wait until the simulation has caught up with every change (True) or timeout."""
        if self._thread is None:
            self.step()
            return True
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self._changed.is_set() and not self._busy:
                return True
            time.sleep(0.005)
        return False

    # ----- hooks

    def _ensure_namespace(self, name: str) -> None:
        namespaces = self.server.table.find_any_version("", "namespaces")
        assert namespaces is not None
        with self.server.store.lock:
            if self.server.store.get(namespaces.store_key, "", name) is None:
                self.server.operations.create(
                    Target(namespaces, query={}), {"metadata": {"name": name}}, "test"
                )

    def occupy(self, node: str, requests: Mapping[str, str] | None = None, name: str = "") -> dict[str, Any]:
        """A Running pod that nova-gitops does not manage, bound to `node`, requesting `requests` (default:
        all the cpu and memory still free there). Its controller is someone else's, so agents count it as
        used capacity."""
        with self.server.store.lock:  # created and marked Running before the simulation thread sees it
            return self._occupy(node, requests, name)

    def _occupy(self, node: str, requests: Mapping[str, str] | None, name: str) -> dict[str, Any]:
        self._ensure_namespace(OCCUPANT_NAMESPACE)
        if requests is None:
            with self.server.store.lock:
                states = scheduling.node_states(
                    self.server.store.list_objects(NODES), self.server.store.list_objects(PODS)
                )
            state = next(state for state in states if state.name == node)
            requests = {
                "cpu": f"{max(0, state.free('cpu'))}m",
                "memory": str(max(0, state.free("memory")) // 1000),
            }
        pod = self.server.create_pod(
            OCCUPANT_NAMESPACE,
            name or f"occupant-{node}-{len(self.occupants())}",
            requests=requests,
            node_name=node,
            labels={OCCUPANT_LABEL: "true"},
            phase="Running",
        )
        return pod

    def occupants(self) -> list[dict[str, Any]]:
        return [
            pod
            for pod in self.server.objects("pods")
            if (pod["metadata"].get("labels") or {}).get(OCCUPANT_LABEL) == "true"
        ]

    def evict(self, node: str | None = None) -> list[str]:
        """Delete the controller-owned pods on `node` (every node when None), as an eviction would; their
        controllers create replacements at the next step. Returns the evicted pods' names."""
        evicted = []
        pods_type = self.server.table.find_any_version("", "pods")
        assert pods_type is not None
        with self.server.store.lock:
            for pod in self.server.store.list_objects(PODS):
                spec, metadata = pod.get("spec") or {}, pod["metadata"]
                if not metadata.get("ownerReferences") or not spec.get("nodeName"):
                    continue
                if node is None or spec["nodeName"] == node:
                    target = Target(pods_type, metadata["namespace"], metadata["name"], "", {})
                    self.server.operations.delete(target, None)
                    evicted.append(f"{metadata['namespace']}/{metadata['name']}")
        return evicted

    def fill_nodes(self, nodes: list[str] | None = None) -> list[str]:
        """Someone else takes all the room on these nodes (every node when None), evicting the pods there:
        the replacements stay Pending (Unschedulable). Returns the evicted pods' names."""
        names = nodes or [node["metadata"]["name"] for node in self.server.objects("nodes")]
        evicted: list[str] = []
        with self.server.store.lock:  # one step for a running simulation: no replacement lands in between
            for name in names:
                evicted += self.evict(name)
                self.occupy(name)
        return evicted

    def release(self) -> int:
        """Remove every pod `occupy` placed; Pending pods get scheduled at the next step."""
        pods_type = self.server.table.find_any_version("", "pods")
        assert pods_type is not None
        occupants = self.occupants()
        for pod in occupants:
            target = Target(pods_type, OCCUPANT_NAMESPACE, pod["metadata"]["name"], "", {})
            self.server.operations.delete(target, None)
        return len(occupants)

    def set_node_ready(self, node: str, ready: bool) -> None:
        """The node's kubelet reports Ready (or not), and the node lifecycle controller taints a node that is
        not Ready `node.kubernetes.io/not-ready` (NoSchedule and NoExecute), lifting them once it is again."""
        nodes_type = self.server.table.find_any_version("", "nodes")
        assert nodes_type is not None
        with self.server.store.lock:
            target = Target(nodes_type, "", node, "status", {})
            current = self.server.operations.get(target)
            status = dict(current.get("status") or {})
            status["conditions"] = [
                {**c, "status": "True" if ready else "False"} if c.get("type") == "Ready" else c
                for c in status.get("conditions") or []
            ]
            current, _ = self.server.operations.update(target, {**current, "status": status}, "kubelet")
            spec = dict(current.get("spec") or {})
            taints = [t for t in spec.get("taints") or [] if t.get("key") != scheduling.NOT_READY_TAINT]
            if not ready:
                taints += [
                    {"key": scheduling.NOT_READY_TAINT, "effect": effect} for effect in NOT_READY_EFFECTS
                ]
            if taints:
                spec["taints"] = taints
            else:
                spec.pop("taints", None)
            if spec != (current.get("spec") or {}):
                whole = Target(nodes_type, "", node, "", {})
                self.server.operations.update(whole, {**current, "spec": spec}, "kube-controller-manager")
