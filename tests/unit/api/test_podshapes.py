"""PodControllerShape: where a custom kind's pods live, declared with JSONPath, validated like a policy.

Behaviours covered:
- a valid declaration is read into ``SourceSet.pod_shapes`` (beside the built-in RayCluster and PyTorchJob)
  and is not a workload (never rendered); planning counts the declared kind's pods;
- strict validation: an unknown field, a JSONPath that does not parse, a missing template are errors with
  file:line naming the field and the document; every problem is reported at once;
- explain says "demand unknown" (not "has enough resources") for an undeclared custom kind carrying pod
  templates and for pods with DRA resourceClaims.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from nova_gitops.api import inputs, loading, podshapes
from nova_gitops.errors import InputError
from nova_gitops.scheduling import explaining, planning
from nova_gitops.scheduling.plans import PreviousPlacement
from tests.builders import cluster, deployment, policy, source_set

LWS_SHAPE: dict[str, Any] = {
    "apiVersion": "gitops.nova.elotl.co/v1alpha1",
    "kind": "PodControllerShape",
    "metadata": {"name": "leaderworkerset"},
    "spec": {
        "group": "leaderworkerset.x-k8s.io",
        "kind": "LeaderWorkerSet",
        "podSets": [
            {
                "name": "leaders",
                "replicas": "spec.replicas",
                "template": "spec.leaderWorkerTemplate.leaderTemplate",
            },
            {
                "name": "workers",
                "replicas": "$.spec.replicas",
                "template": "spec.leaderWorkerTemplate.workerTemplate",
            },
        ],
    },
}


def pod_template(cpu: str, **pod_spec: Any) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}], **pod_spec}}


def lws(name: str = "vllm") -> dict[str, Any]:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": name, "namespace": "demo", "labels": {"app": "demo"}},
        "spec": {
            "replicas": 2,
            "leaderWorkerTemplate": {
                "leaderTemplate": pod_template("1"),
                "workerTemplate": pod_template("3"),
            },
        },
    }


def problems_of(*documents: dict[str, Any]) -> list[str]:
    text = yaml.dump_all(documents, sort_keys=False)
    loaded, problems = loading.load_documents("source.yaml", text)
    assert not problems
    with pytest.raises(InputError) as raised:
        inputs.build_source_set(loaded, texts={"source.yaml": text})
    return [str(problem) for problem in raised.value.problems if problem.is_error]


def test_a_declaration_is_read_and_not_rendered() -> None:
    found = source_set(LWS_SHAPE, lws())
    shape = found.pod_shapes[("leaderworkerset.x-k8s.io", "LeaderWorkerSet")]
    assert [pod_set.name for pod_set in shape.pod_sets] == ["leaders", "workers"]
    assert ("ray.io", "RayCluster") in found.pod_shapes
    assert [manifest.kind for manifest in found.workloads] == ["LeaderWorkerSet"]


def test_planning_counts_a_declared_kinds_pods() -> None:
    documents = (cluster("c1", cpu="16"), policy("p"), LWS_SHAPE, lws())
    result = planning.plan(source_set(*documents), previous=PreviousPlacement({}))
    (group,) = result.groups
    assert group.status == "scheduled"
    assert dict(result.clusters[0].placed)["cpu"] == 8000  # 2 leaders of 1 cpu + 2 workers of 3 cpu


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            {"podSet": {"name": "x", "template": "t"}},
            "source.yaml:8: PodControllerShape leaderworkerset: spec.podSet: unknown field",
        ),
        (
            {"podSets": [{"name": "x", "template": "spec.[["}]},
            "source.yaml:10: PodControllerShape leaderworkerset: "
            "spec.podSets[0].template: not a JSONPath expression",
        ),
        (
            {"podSets": [{"name": "x", "replica": "spec.replicas", "template": "t"}]},
            "source.yaml:10: PodControllerShape leaderworkerset: spec.podSets[0].replica: unknown field",
        ),
        ({"podSets": [{"name": "x"}]}, "spec.podSets[0].template: required"),
        ({"podSets": []}, "spec.podSets: needs a list of at least one pod set"),
    ],
)
def test_invalid_declarations_are_errors_at_their_line(change: dict[str, Any], expected: str) -> None:
    spec = {key: value for key, value in LWS_SHAPE["spec"].items() if key != "podSets"}
    found = problems_of({**LWS_SHAPE, "spec": {**spec, **change}})
    assert any(expected in problem for problem in found), found


def test_an_unknown_shape_or_dra_claims_make_explain_say_demand_unknown() -> None:
    widget = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "demo", "labels": {"app": "demo"}},
        "spec": {"workers": {"template": pod_template("1")}},
    }
    claims = deployment("claims")
    claims["spec"]["template"]["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "g"}]
    found = source_set(cluster("c1"), policy("p"), widget, claims, deployment("web"))
    result = planning.plan(found, previous=PreviousPlacement({}))
    for reference, why in (("widget/demo/w", "declare where its pods live"), ("deploy/demo/claims", "DRA")):
        explained = explaining.explain(found, result, reference)
        assert why in explained["demand"]["unknown"]
        assert explained["demand"]["unknown"].startswith("demand unknown: ")
        assert not any("has enough resources" in line for line in explained["decision"]), explained[
            "decision"
        ]
        assert any("demand unknown" in line for line in explained["decision"])
    known = explaining.explain(found, result, "deploy/demo/web")
    assert "unknown" not in known["demand"]


def test_built_in_shapes_are_valid_jsonpath() -> None:
    for shape in podshapes.BUILTIN_SHAPES.values():
        for pod_set in shape.pod_sets:
            for expression in (pod_set.each, pod_set.replicas, pod_set.template):
                if expression is not None:
                    podshapes.compiled(expression)
