"""The local loop on real clusters: the same source repository, controller, rendered repository and
``nova-agent`` per cluster as :class:`tests.e2e.localloop.LocalLoop`, each cluster a real Kubernetes API
server reached through a kubeconfig (``examples/demo/run.py --kubeconfig-1 ... --kubeconfig-2 ...``; the
demo's tests with ``REALK8S_KUBECONFIG_1/_2``).

What differs from the simulated loop, and why:

- Time is the wall clock. The agents' pending timeout, a rollout's bake and a Deployment's progress deadline
  pass for real (the demo makes them short); the stories wait for what they show (:meth:`RealLoop.until`),
  never for a fixed time.
- "The cluster reacts", the simulation's ``step()``, is a wait until the cluster has settled
  (:mod:`tests.e2e.settling`): every workload placed there is complete or stuck, nothing is on its way.
- Nodes: a control plane without nodes of its own (``../shared/realk8s``) gets the stand-in kubelet
  (``tests.realkube.kubelet``) with the simulated clusters' nodes, two of 4 cpu and 8Gi each per cluster;
  a cluster with nodes (kind) keeps its own, and its kubelets pull images: the demo then pushes a pullable
  image (``--image``) for every ``registry.example`` one.
- Filling a cluster (:class:`Tenants`, as the simulation's ``fill_nodes``): another tenant's pods, one per
  node and of a higher priority, ask for all the room the demo's pods have there; kube-scheduler preempts the
  demo's pods and their replacements stay Pending (``Insufficient cpu``). A real scheduler and real kubelets
  do it, so it works on kind as on the stand-in's nodes, with no race against the ReplicaSet controller.
- The clusters must be disposable, and the demo leaves them as it found them: it refuses to start when one
  of its namespaces exists, and :meth:`RealLoop.close` deletes what it made (its namespaces, the other
  tenant's priority class, the stand-in's nodes), waiting until they are gone so the next story can start.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from nova_agent.clocks import SystemClock
from nova_agent.running import Agent, PassOutcome
from nova_gitops.api import labels as nova_labels
from nova_gitops.api import quantities
from nova_gitops.clients.kuberest import KubeApiError, KubeRest, build_api_client
from tests.e2e import settling
from tests.e2e.localloop import AGENT_NAMESPACE, NODE, LocalLoop
from tests.realkube import kubelet as standin

TENANTS: Final = "other-tenants"
"""The namespace of the pods that fill a cluster (someone else's workloads)."""
TENANT_PRIORITY: Final = "nova-demo-other-tenants"
STORY_NAMESPACES: Final = (AGENT_NAMESPACE, "platform", "shop", "web", TENANTS)
"""Every namespace the demo's stories use: absent at the start, deleted at the end."""
PULLABLE_IMAGE: Final = "registry.k8s.io/pause:3.10"
"""What runs on clusters whose kubelets pull images: 750 KB, and it runs until it is stopped."""
SETTLE_TIMEOUT: Final = 120.0
PATHS: Final = {
    "deployments.apps": "/apis/apps/v1/deployments",
    "daemonsets.apps": "/apis/apps/v1/daemonsets",
}

Body = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Kubeconfig:
    """Where a cluster is: a kubeconfig file and a context in it (None: its current context)."""

    path: str
    context: str | None = None


class NotFresh(Exception):
    """A cluster holds what a previous run of the demo left, or something of the same name."""


def rewrite_images(files: Mapping[str, str | None], image: str) -> dict[str, str | None]:
    """Every ``image: registry.example/...`` of these files replaced by ``image`` (a cluster whose
    kubelets pull images cannot pull the examples' made-up ones)."""
    pattern = re.compile(r"(image:\s*)registry\.example/\S+")
    return {
        path: None if text is None else pattern.sub(lambda match: match.group(1) + image, text)
        for path, text in files.items()
    }


def has_own_nodes(rest: KubeRest) -> bool:
    """Whether the cluster has nodes that are not a stand-in kubelet's (a kind cluster's, say)."""
    listing = rest.request("GET", "/api/v1/nodes") or {}
    return any(
        standin.KUBELET_ANNOTATION not in (node["metadata"].get("annotations") or {})
        for node in listing.get("items") or []
    )


class Tenants:
    """Someone else's pods on a real cluster: what the simulation's ``fill_nodes``/``release`` do, done by
    the real scheduler (preemption) so that real kubelets run it too."""

    def __init__(self, rest: KubeRest, image: str) -> None:
        self.rest = rest
        self.image = image

    def fill_nodes(self) -> list[str]:
        """On every node the demo's pods may use, a pod of a higher priority asks for all the room those
        pods have; the scheduler evicts them to make it, and their replacements stay Pending. Returns the
        occupants' names once they run."""
        self._prepare()
        pods = (self.rest.request("GET", "/api/v1/pods") or {}).get("items") or []
        names = []
        for node in schedulable_nodes(self.rest):
            name = node["metadata"]["name"]
            others = [
                pod
                for pod in pods
                if (pod.get("spec") or {}).get("nodeName") == name
                and pod["metadata"]["namespace"] not in STORY_NAMESPACES
            ]
            body = occupant(f"occupant-{name}", name, room(node, others), self.image)
            self.rest.request("POST", f"/api/v1/namespaces/{TENANTS}/pods", body=body)
            names.append(body["metadata"]["name"])
        standin.wait_for(
            lambda: all(self._phase(name) == "Running" for name in names),
            "the other tenant's pods to run (they preempt the demo's)",
            timeout=SETTLE_TIMEOUT,
        )
        return names

    def release(self) -> int:
        """The other tenant leaves: its pods are deleted, and Pending pods get scheduled."""
        listing = self.rest.request("GET", f"/api/v1/namespaces/{TENANTS}/pods") or {}
        names = [pod["metadata"]["name"] for pod in listing.get("items") or []]
        for name in names:
            self.rest.request("DELETE", f"/api/v1/namespaces/{TENANTS}/pods/{name}")
        standin.wait_for(
            lambda: not (self.rest.request("GET", f"/api/v1/namespaces/{TENANTS}/pods") or {}).get("items"),
            "the other tenant's pods to be gone",
            timeout=SETTLE_TIMEOUT,
        )
        return len(names)

    def _phase(self, name: str) -> str:
        pod = self.rest.request("GET", f"/api/v1/namespaces/{TENANTS}/pods/{name}")
        return str((pod.get("status") or {}).get("phase", ""))

    def _prepare(self) -> None:
        create_if_absent(
            self.rest,
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": TENANT_PRIORITY},
                "value": 1000000,
                "description": "nova-gitops demo: another tenant's pods, which take the demo's room",
            },
        )
        create_if_absent(
            self.rest,
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": TENANTS}},
        )


def schedulable_nodes(rest: KubeRest) -> list[Body]:
    """Nodes a pod without tolerations may use: not cordoned, no NoSchedule or NoExecute taint."""
    listing = rest.request("GET", "/api/v1/nodes") or {}
    return [
        node
        for node in listing.get("items") or []
        if not (node.get("spec") or {}).get("unschedulable")
        and not any(
            taint.get("effect") in ("NoSchedule", "NoExecute")
            for taint in (node.get("spec") or {}).get("taints") or []
        )
    ]


def room(node: Mapping[str, Any], others: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """The cpu and memory of a node that pods outside the story do not request."""
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    free = {
        resource: quantities.parse_quantity(allocatable.get(resource, "0")) for resource in ("cpu", "memory")
    }
    for pod in others:
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        for container in (pod.get("spec") or {}).get("containers") or []:
            for resource, value in ((container.get("resources") or {}).get("requests") or {}).items():
                if resource in free:
                    free[resource] -= quantities.parse_quantity(value)
    return {"cpu": f"{max(0, free['cpu'])}m", "memory": str(max(0, free["memory"]) // 1000)}


def occupant(name: str, node: str, requests: Mapping[str, str], image: str) -> Body:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": TENANTS, "labels": {"app": "other-tenant"}},
        "spec": {
            "priorityClassName": TENANT_PRIORITY,
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                        ]
                    }
                }
            },
            "containers": [{"name": "tenant", "image": image, "resources": {"requests": dict(requests)}}],
            "terminationGracePeriodSeconds": 0,
        },
    }


def create_if_absent(rest: KubeRest, path: str, body: Body) -> None:
    try:
        rest.request("POST", path, body=body)
    except KubeApiError as error:
        if error.status != 409:
            raise


@dataclass
class RealCluster:
    """One real cluster of the loop, shaped as the simulated loop's ``SimCluster`` where the stories look."""

    name: str
    api_client: Any
    rest: KubeRest
    agent: Agent
    kubelet: standin.StandInKubelet | None
    sim: Tenants  # what a story does to the cluster, as ``SimCluster.sim``: fill_nodes(), release()

    def workloads(self, resource: str = "deployments.apps") -> dict[str, Body]:
        """Live objects placed here by nova-gitops, by ``namespace/name``."""
        listing = self.rest.request("GET", PATHS[resource]) or {}
        return {
            f"{body['metadata'].get('namespace', '')}/{body['metadata']['name']}": body
            for body in listing.get("items") or []
            if nova_labels.TARGET_CLUSTER in (body["metadata"].get("labels") or {})
        }

    def pods(self, phase: str | None = None) -> list[Body]:
        listing = self.rest.request("GET", "/api/v1/pods") or {}
        return [
            pod
            for pod in listing.get("items") or []
            if phase is None or (pod.get("status") or {}).get("phase") == phase
        ]

    def nodes(self) -> list[Body]:
        return list((self.rest.request("GET", "/api/v1/nodes") or {}).get("items") or [])

    def moving(self) -> list[str]:
        """What has not settled yet (:mod:`tests.e2e.settling`)."""
        namespaces = (self.rest.request("GET", "/api/v1/namespaces") or {}).get("items") or []
        workloads = [  # a list's items have no kind
            *({**body, "kind": "Deployment"} for body in self.workloads().values()),
            *({**body, "kind": "DaemonSet"} for body in self.workloads("daemonsets.apps").values()),
        ]
        return settling.moving(
            workloads,
            [pod for pod in self.pods() if pod["metadata"]["namespace"] in STORY_NAMESPACES],
            [ns for ns in namespaces if ns["metadata"]["name"] in STORY_NAMESPACES],
        )

    def settle(self, timeout: float = SETTLE_TIMEOUT) -> None:
        """Wait until the cluster has reacted to what was applied (AssertionError saying what still moves)."""
        left: list[str] = []

        def settled() -> bool:
            if self.kubelet is not None:
                self.kubelet.check()
            left[:] = self.moving()
            return not left

        try:
            standin.wait_for(settled, f"{self.name} to settle", timeout)
        except AssertionError as error:
            raise AssertionError(f"{error}: {'; '.join(left)}") from None


class RealLoop(LocalLoop):
    """The local loop with real clusters; stepped as the simulated one (:meth:`agent_pass` waits for the
    cluster to settle between the agent's two passes)."""

    def __init__(
        self,
        root: Path,
        kubeconfigs: Mapping[str, Kubeconfig],
        *,
        stand_in: bool | None = None,
        image: str | None = None,
        **options: Any,
    ) -> None:
        """``stand_in``: run the stand-in kubelet's nodes (None: when a cluster has no nodes of its own);
        ``image``: what replaces the examples' images (None: :data:`PULLABLE_IMAGE` on clusters with nodes of
        their own, nothing with the stand-in kubelet, which pulls nothing)."""
        self.kubeconfigs = dict(kubeconfigs)
        self.stand_in = stand_in
        self.image = image
        self.opened: list[RealCluster] = []
        try:
            super().__init__(root, clusters=list(self.kubeconfigs), agent_clock=SystemClock(), **options)
        except BaseException:
            self.close()
            raise

    def _cluster(self, name: str, nodes: int, overrides: dict[str, Any]) -> Any:
        target = self.kubeconfigs[name]
        api_client = build_api_client(target.path, target.context)
        rest = KubeRest(api_client)
        try:
            refuse_unless_fresh(rest, name)
            own_nodes = has_own_nodes(rest)
            stand_in = not own_nodes if self.stand_in is None else self.stand_in
            if self.image is None and not stand_in:
                self.image = PULLABLE_IMAGE
            if not stand_in and not schedulable_nodes(rest):
                raise NotFresh(
                    f"{name} has no node the demo's pods may use; run its pods on the stand-in kubelet's "
                    "(--stand-in-kubelet)"
                )
            kubelet = standin.StandInKubelet(api_client, prefix=name).start() if stand_in else None
        except BaseException:
            api_client.close()
            raise
        agent = self._agent(name, api_client, overrides)
        cluster = RealCluster(
            name, api_client, rest, agent, kubelet, Tenants(rest, self.image or PULLABLE_IMAGE)
        )
        self.opened.append(cluster)
        if kubelet is not None:
            for index in range(1, nodes + 1):
                kubelet.add_node(
                    f"node-{index}", allocatable=NODE, labels={"topology.kubernetes.io/zone": name}
                )
        create_if_absent(
            rest,
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": AGENT_NAMESPACE}},
        )
        return cluster

    # ----- stepping

    def agent_pass(self, name: str) -> PassOutcome:
        """An agent pass, then the cluster settles, then a pass reporting what it shows."""
        cluster = self.clusters[name]
        first = cluster.agent.pass_once()
        cluster.settle()
        second = cluster.agent.pass_once()
        return first if first.sync is not None and (first.sync.applied or first.sync.pruned) else second

    def until(
        self, step: Callable[[], object], condition: Callable[[], bool], what: str, timeout: float = 120.0
    ) -> None:
        """``step()`` (a round of the loop), then ``condition()``, again until it holds (20 ms to 0.5 s
        between rounds); AssertionError naming ``what`` after ``timeout`` seconds."""

        def stepped() -> bool:
            step()
            return condition()

        standin.wait_for(stepped, what, timeout)

    def files(self, files: Mapping[str, str | None]) -> dict[str, str | None]:
        """What to push for these source files on these clusters (images they can pull)."""
        return rewrite_images(files, self.image) if self.image else dict(files)

    def close(self) -> None:
        """Delete what the stories made on each cluster and wait until it is gone, then stop the stand-in
        kubelets (their nodes go with them). Every cluster is cleaned even when one fails."""
        problems: list[str] = []
        for cluster in self.opened:
            for namespace in STORY_NAMESPACES:
                try:
                    cluster.rest.request("DELETE", f"/api/v1/namespaces/{namespace}")
                except KubeApiError as error:
                    if error.status != 404:
                        problems.append(f"{cluster.name}: delete namespace {namespace}: {error}")
                except Exception as error:  # the cluster went away: say so, clean the others
                    problems.append(f"{cluster.name}: delete namespace {namespace}: {error}")
        for cluster in self.opened:
            try:
                standin.wait_for(
                    lambda cluster=cluster: not present_namespaces(cluster.rest),  # type: ignore[misc]
                    f"the demo's namespaces on {cluster.name} to be deleted",
                    timeout=SETTLE_TIMEOUT,
                )
                cluster.rest.request(
                    "DELETE", f"/apis/scheduling.k8s.io/v1/priorityclasses/{TENANT_PRIORITY}"
                )
            except KubeApiError as error:
                if error.status != 404:
                    problems.append(f"{cluster.name}: {error}")
            except Exception as error:
                problems.append(f"{cluster.name}: {error}")
            if cluster.kubelet is not None:
                cluster.kubelet.stop()
            cluster.api_client.close()
        self.opened.clear()
        if problems:
            raise RuntimeError("cleaning up the clusters: " + "; ".join(problems))


def present_namespaces(rest: KubeRest) -> list[str]:
    listing = rest.request("GET", "/api/v1/namespaces") or {}
    return [
        ns["metadata"]["name"]
        for ns in listing.get("items") or []
        if ns["metadata"]["name"] in STORY_NAMESPACES
    ]


def refuse_unless_fresh(rest: KubeRest, name: str) -> None:
    """Wait for the story's namespaces that are being deleted (a previous run's end) to be gone; refuse when
    one of them is there for good, or a stand-in kubelet's node of this cluster's name is left."""
    standin.wait_for(
        lambda: (
            not any(
                ns["metadata"].get("deletionTimestamp")
                for ns in (rest.request("GET", "/api/v1/namespaces") or {}).get("items") or []
                if ns["metadata"]["name"] in STORY_NAMESPACES
            )
        ),
        f"namespaces of a previous run on {name} to be deleted",
        timeout=SETTLE_TIMEOUT,
    )
    present = present_namespaces(rest)
    if present:
        raise NotFresh(
            f"{name} has namespace {', '.join(present)}: the demo needs clusters it may fill and empty, "
            f"and leaves them as it found them (a run that was killed leaves them); "
            f"delete {'it' if len(present) == 1 else 'them'} (kubectl delete namespace {' '.join(present)}) "
            "or use other clusters"
        )
    left = [
        node["metadata"]["name"]
        for node in (rest.request("GET", "/api/v1/nodes") or {}).get("items") or []
        if standin.KUBELET_ANNOTATION in (node["metadata"].get("annotations") or {})
        and node["metadata"]["name"].startswith(f"{name}-")
    ]
    if left:
        raise NotFresh(
            f"{name} has the stand-in kubelet's node {', '.join(left)} of a run that was killed; the next "
            "stand-in kubelet removes it 2 minutes after its last heartbeat, or delete it "
            f"(kubectl delete node {' '.join(left)})"
        )
