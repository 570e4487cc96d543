"""What pods a workload creates and what each asks of a node.

Behaviours covered:
- counts per kind: Pod 1; Deployment/ReplicaSet/StatefulSet/ReplicationController replicas (default 1, 0 → no
  pods); Job parallelism (default 1, completions when smaller); CronJob one run of its job template;
  DaemonSet 1; other kinds none; ``replicas=`` overrides the count (a Divide part);
- effective request: containers summed; max with the largest init container; sidecar init containers
  (restartPolicy Always) add to the sum and to later init steps; overhead added; limits stand in for absent
  requests for every resource including extended ones; pod-level cpu/memory requests replace the containers'
  total and pod-level limits stand in where no container asks; zeros dropped;
- where a pod may run: nodeSelector, required node affinity terms (all six operators, matchFields), and
  tolerations are parsed; equal pods give equal shapes;
- property: the effective request is at least the running containers' sum and every init container, at most
  the sum of all; an added container never lowers it, and an app container raises it by at most its own;
- total_requests multiplies by count and sums;
- bad input: every defect is reported at once, each naming its field, never a crash (also a property over
  arbitrary YAML-like bodies).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.scheduling import demand


def container(requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    return {"name": "c", "image": "x", "resources": resources}


def workload(kind: str, pod_spec: dict[str, Any], **spec: Any) -> dict[str, Any]:
    if kind == "Pod":
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": pod_spec}
    template = {"metadata": {"labels": {"app": "a"}}, "spec": pod_spec}
    if kind == "CronJob":
        return {
            "kind": "CronJob",
            "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {**spec, "template": template}}},
        }
    return {"kind": kind, "metadata": {"name": "w"}, "spec": {**spec, "template": template}}


ONE_CPU = {"containers": [container({"cpu": "1"})]}


@pytest.mark.parametrize(
    ("kind", "spec", "count"),
    [
        ("Pod", {}, 1),
        ("Deployment", {"replicas": 3}, 3),
        ("Deployment", {}, 1),
        ("ReplicaSet", {"replicas": 2}, 2),
        ("StatefulSet", {"replicas": 4}, 4),
        ("ReplicationController", {"replicas": 5}, 5),
        ("DaemonSet", {}, 1),
        ("Job", {}, 1),
        ("Job", {"parallelism": 4}, 4),
        ("Job", {"parallelism": 4, "completions": 2}, 2),
        ("Job", {"parallelism": 2, "completions": 10}, 2),
        ("CronJob", {"parallelism": 3}, 3),
    ],
)
def test_pod_count_per_kind(kind: str, spec: dict[str, Any], count: int) -> None:
    (only,) = demand.pod_demands(workload(kind, ONE_CPU, **spec))
    assert only.count == count
    assert only.shape.requests == {"cpu": 1000}


@pytest.mark.parametrize(
    "body",
    [
        {"kind": "ConfigMap", "data": {"a": "b"}},
        {"kind": "Service", "spec": {"ports": []}},
        {"kind": "Widget", "spec": {"template": {"spec": ONE_CPU}}},
        workload("Deployment", ONE_CPU, replicas=0),
        workload("Job", ONE_CPU, parallelism=0),
    ],
)
def test_no_pods(body: dict[str, Any]) -> None:
    assert demand.pod_demands(body) == ()


def test_replicas_override_the_count() -> None:
    (only,) = demand.pod_demands(workload("Deployment", ONE_CPU, replicas=10), replicas=3)
    assert only.count == 3
    assert demand.pod_demands(workload("Deployment", ONE_CPU, replicas=10), replicas=0) == ()


@pytest.mark.parametrize(
    ("pod_spec", "requests"),
    [
        (
            {"containers": [container({"cpu": "500m", "memory": "1Gi"}), container({"cpu": "250m"})]},
            {"cpu": 750, "memory": 1024**3 * 1000},
        ),
        (
            {"containers": [container({"cpu": "500m"})], "initContainers": [container({"cpu": "2"})]},
            {"cpu": 2000},
        ),
        (
            {
                "containers": [container({"cpu": "500m", "memory": "2Gi"})],
                "initContainers": [container({"cpu": "1"}), container({"memory": "1Gi"})],
            },
            {"cpu": 1000, "memory": 2 * 1024**3 * 1000},
        ),
        (
            {"containers": [container(limits={"cpu": "2", "nvidia.com/gpu": 1})]},
            {"cpu": 2000, "nvidia.com/gpu": 1000},
        ),
        ({"containers": [container({"cpu": "1"}, {"cpu": "4"})]}, {"cpu": 1000}),
        (
            {"containers": [container({"nvidia.com/mig-1g.5gb": "2", "amd.com/gpu": "1"})]},
            {"amd.com/gpu": 1000, "nvidia.com/mig-1g.5gb": 2000},
        ),
        (
            {"containers": [container({"cpu": "1"})], "overhead": {"cpu": "250m", "memory": "120Mi"}},
            {"cpu": 1250, "memory": 120 * 1024**2 * 1000},
        ),
        ({"containers": [container({"cpu": "0", "memory": "0"})]}, {}),
        ({"containers": [{"name": "bare", "image": "x"}]}, {}),
        (
            {
                "containers": [container({"cpu": "1", "memory": "1Gi"})],
                "resources": {"requests": {"cpu": "3"}},
            },
            {"cpu": 3000, "memory": 1024**3 * 1000},
        ),
        (
            {"containers": [container({"cpu": "1"})], "resources": {"limits": {"cpu": "3", "memory": "2Gi"}}},
            {"cpu": 1000, "memory": 2 * 1024**3 * 1000},
        ),
        (
            {
                "containers": [container(limits={"nvidia.com/gpu": "1"})],
                "resources": {"requests": {"nvidia.com/gpu": "4"}},
            },
            {"nvidia.com/gpu": 1000},
        ),
    ],
    ids=[
        "sum",
        "init-max",
        "init-per-resource",
        "limits-stand-in",
        "request-beats-limit",
        "extended",
        "overhead",
        "zeros-dropped",
        "no-resources",
        "pod-level-request",
        "pod-level-limit-where-containers-ask-nothing",
        "pod-level-only-cpu-memory",
    ],
)
def test_effective_request(pod_spec: dict[str, Any], requests: dict[str, int]) -> None:
    (only,) = demand.pod_demands(workload("Pod", pod_spec))
    assert only.shape.requests == requests


def test_sidecars_add_to_the_sum_and_to_later_init_steps() -> None:
    sidecar = {**container({"cpu": "500m"}), "restartPolicy": "Always"}
    pod_spec = {
        "initContainers": [container({"cpu": "1"}), sidecar, container({"cpu": "2"})],
        "containers": [container({"cpu": "1"})],
    }
    # steps: 1 (before the sidecar), 0.5 + 2 (after it); running: 1 + 0.5 → max 2.5 cpu
    (only,) = demand.pod_demands(workload("Pod", pod_spec))
    assert only.shape.requests == {"cpu": 2500}
    pod_spec["initContainers"] = [sidecar]
    (only,) = demand.pod_demands(workload("Pod", pod_spec))
    assert only.shape.requests == {"cpu": 1500}


def test_placement_constraints_are_parsed() -> None:
    pod_spec = {
        **ONE_CPU,
        "nodeSelector": {"zone": "a", "gpu": "a100"},
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "cores", "operator": "Gt", "values": ["8"]},
                                {"key": "spot", "operator": "DoesNotExist"},
                            ]
                        },
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]},
                    ]
                }
            }
        },
        "tolerations": [
            {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
            {"operator": "Exists"},
        ],
    }
    (only,) = demand.pod_demands(workload("Deployment", pod_spec, replicas=2))
    assert list(only.shape.node_selector.items()) == [("gpu", "a100"), ("zone", "a")]
    assert only.shape.required_affinity == (
        demand.NodeSelectorTerm(
            (
                demand.NodeSelectorRequirement("cores", "Gt", ("8",)),
                demand.NodeSelectorRequirement("spot", "DoesNotExist"),
            ),
        ),
        demand.NodeSelectorTerm((), (demand.NodeSelectorRequirement("metadata.name", "In", ("n1",)),)),
    )
    assert only.shape.tolerations == (
        demand.Toleration("dedicated", "Equal", "gpu", "NoSchedule"),
        demand.Toleration("", "Exists", "", ""),
    )


def test_equal_pods_have_equal_shapes() -> None:
    first = demand.pod_demands(workload("Deployment", {**ONE_CPU, "nodeSelector": {"b": "1", "a": "2"}}))
    second = demand.pod_demands(workload("Job", {**ONE_CPU, "nodeSelector": {"a": "2", "b": "1"}}))
    assert repr(first[0].shape) == repr(second[0].shape)


def test_total_requests() -> None:
    one = demand.pod_demands(workload("Deployment", ONE_CPU, replicas=3))
    two = demand.pod_demands(
        workload("Pod", {"containers": [container({"cpu": "1", "nvidia.com/gpu": "1"})]})
    )
    assert demand.total_requests([*one, *two]) == {"cpu": 4000, "nvidia.com/gpu": 1000}
    assert demand.total_requests([]) == {}


def test_every_defect_is_reported_with_its_field() -> None:
    pod_spec = {
        "containers": [container({"cpu": "lots"}), container(limits={"memory": "-1Gi"})],
        "initContainers": "none",
        "nodeSelector": {"gpu": True},
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "k", "operator": "Near", "values": ["x"]},
                                {"key": "n", "operator": "Gt", "values": ["many"]},
                            ]
                        }
                    ]
                }
            }
        },
        "tolerations": [{"key": "a", "operator": "Maybe"}],
    }
    with pytest.raises(demand.DemandError) as raised:
        demand.pod_demands(workload("Deployment", pod_spec, replicas="two"))
    fields = [problem.split(":")[0] for problem in raised.value.problems]
    base = "spec.template.spec"
    assert fields == [
        "spec.replicas",
        f"{base}.containers[0].resources.requests.cpu",
        f"{base}.containers[1].resources.limits.memory",
        f"{base}.initContainers",
        f"{base}.nodeSelector.gpu",
        f"{base}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms[0].matchExpressions[0].operator",
        f"{base}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms[0].matchExpressions[1].values",
        f"{base}.tolerations[0].operator",
    ]
    assert "lots" in str(raised.value)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"kind": "Deployment", "spec": None}, "spec"),
        ({"kind": "Deployment", "spec": {"replicas": 2}}, "spec.template.spec"),
        ({"kind": "CronJob", "spec": {"schedule": "x"}}, "spec.jobTemplate.spec"),
        (
            {"kind": "Pod", "spec": {"containers": [container({"cpu": "1"})], "overhead": ["x"]}},
            "spec.overhead",
        ),
    ],
)
def test_missing_or_malformed_structure_names_the_field(body: dict[str, Any], field: str) -> None:
    with pytest.raises(demand.DemandError, match=f"^{field}:"):
        demand.pod_demands(body)


yaml_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.text(max_size=4)
    | st.sampled_from(["1", "500m", "2Gi"]),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "spec",
                    "template",
                    "containers",
                    "resources",
                    "requests",
                    "limits",
                    "cpu",
                    "replicas",
                    "initContainers",
                    "nodeSelector",
                    "tolerations",
                    "affinity",
                    "overhead",
                    "jobTemplate",
                ]
            ),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=200)
@given(kind=st.sampled_from(["Pod", "Deployment", "Job", "CronJob", "DaemonSet"]), spec=yaml_values)
def test_arbitrary_bodies_give_demands_or_a_demand_error(kind: str, spec: Any) -> None:
    try:
        demands = demand.pod_demands({"kind": kind, "spec": spec})
    except demand.DemandError as error:
        assert error.problems
    else:
        assert all(item.count > 0 for item in demands)


cpu_containers = st.lists(st.integers(min_value=0, max_value=4000), max_size=4)


def cpu_pod(app: list[int], init: list[tuple[int, bool]]) -> dict[str, Any]:
    def one(milli: int, sidecar: bool = False) -> dict[str, Any]:
        item = container({"cpu": f"{milli}m"})
        return {**item, "restartPolicy": "Always"} if sidecar else item

    return workload(
        "Pod", {"containers": [one(m) for m in app], "initContainers": [one(m, s) for m, s in init]}
    )


@settings(max_examples=200)
@given(
    app=cpu_containers,
    init=st.lists(st.tuples(st.integers(0, 4000), st.booleans()), max_size=4),
    extra=st.integers(1, 4000),
)
def test_effective_request_bounds_and_monotonicity(
    app: list[int], init: list[tuple[int, bool]], extra: int
) -> None:
    def cpu(body: dict[str, Any]) -> int:
        return sum(item.shape.requests.get("cpu", 0) for item in demand.pod_demands(body))

    effective = cpu(cpu_pod(app, init))
    assert effective >= sum(app) + sum(milli for milli, sidecar in init if sidecar)
    assert all(effective >= milli for milli, _ in init)
    assert effective <= sum(app) + sum(milli for milli, _ in init)
    assert effective <= cpu(cpu_pod([*app, extra], init)) <= effective + extra
    assert cpu(cpu_pod(app, [*init, (extra, False)])) >= effective
    assert cpu(cpu_pod(app, [*init, (extra, True)])) >= effective


def custom(api_version: str, kind: str, pod_spec: dict[str, Any], **spec: Any) -> dict[str, Any]:
    template = {"metadata": {"labels": {"app": "a"}}, "spec": pod_spec}
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": "w"},
        "spec": {**spec, "template": template},
    }


@pytest.mark.parametrize(
    ("body", "count"),
    [
        # any kind shaped like a Deployment (spec.replicas and a pod template at spec.template) counts
        (custom("argoproj.io/v1alpha1", "Rollout", ONE_CPU, replicas=4, strategy={"canary": {}}), 4),
        (custom("apps.kruise.io/v1alpha1", "CloneSet", ONE_CPU, replicas=3), 3),
        (custom("apps.kruise.io/v1beta1", "StatefulSet", ONE_CPU, replicas=2), 2),
        (custom("example.com/v1", "Widget", ONE_CPU, replicas=0), 0),
    ],
)
def test_a_kind_shaped_like_a_deployment_counts_as_one(body: dict[str, Any], count: int) -> None:
    pods = demand.pod_demands(body)
    assert sum(pod.count for pod in pods) == count
    assert all(pod.shape.requests == {"cpu": 1000} for pod in pods)
    (only,) = demand.pod_demands(body, replicas=1)  # a Divide part
    assert only.count == 1


@pytest.mark.parametrize(
    "body",
    [
        # no spec.replicas: a template alone does not make a controller (many custom kinds carry one)
        custom("example.com/v1", "Widget", ONE_CPU),
        # a template that is not a pod's (no containers list)
        custom("example.com/v1", "Widget", {"steps": []}, replicas=2),
        {"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"replicas": 2, "template": "x"}},
    ],
)
def test_a_custom_kind_not_shaped_like_a_deployment_has_no_pods(body: dict[str, Any]) -> None:
    assert demand.pod_demands(body) == ()


def test_a_bad_replica_count_of_a_shaped_kind_is_a_demand_error() -> None:
    with pytest.raises(demand.DemandError, match=r"spec\.replicas"):
        demand.pod_demands(custom("argoproj.io/v1alpha1", "Rollout", ONE_CPU, replicas="three"))
