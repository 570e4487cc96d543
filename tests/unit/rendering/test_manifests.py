"""One object rendered for one cluster (docs/design.md §3–§4).

Behaviours covered:
- server fields are stripped (status, uid, resourceVersion, generation, creationTimestamp, managedFields,
  selfLink, the last-applied annotation, annotations a cluster's controllers write such as
  ``deployment.kubernetes.io/revision``) and an emptied annotations map is dropped;
- the target-cluster label and the matching-policy / schedule-group annotations are added, the delegated
  label only in delegated mode; annotation-placed groups name the annotation that placed them;
- a namespaced object that names no namespace gets its resolved one, right after its name;
- replicas land where each kind keeps them (spec.replicas, Job parallelism, CronJob's job template); kinds
  without replicas are untouched;
- Job completions are split in proportion to parallelism and always sum to the source's completions;
- with Luna management pod templates (and bare Pods) get ``elotl-luna: "true"``; an existing value is kept;
- overrides apply last and in order; every failing override is reported, none raised one by one;
- the source body is never mutated (copy-on-write).
"""

from __future__ import annotations

import copy as copying
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.api import fieldpaths, objects
from nova_gitops.api.objects import Manifest
from nova_gitops.api.policies import FieldOverride
from nova_gitops.api.problems import SourceLocation
from nova_gitops.rendering import manifests
from nova_gitops.scheduling.planparts import ClusterCopy, GroupPlan, ObjectPlan
from nova_gitops.scheduling.plans import PlanSettings

LOCATION = SourceLocation("apps/web.yaml", 3)


def manifest(body: dict[str, Any], namespaced: bool = True) -> Manifest:
    metadata = body.get("metadata", {})
    return Manifest(
        body=body,
        location=LOCATION,
        api_version=body["apiVersion"],
        kind=body["kind"],
        name=metadata.get("name", "x"),
        namespace=(metadata.get("namespace") or "default") if namespaced else "",
        namespaced=namespaced,
    )


def group(*objects: ObjectPlan, policy: str | None = "demo-policy") -> GroupPlan:
    return GroupPlan("demo-policy-1a2b3c4d", policy, None, "single", "scheduled", ("wlc-1",), "", objects)


def deployment(replicas: int | None = 3, **metadata: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", **metadata},
        "spec": {
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}}
        },
    }
    if replicas is not None:
        body["spec"] = {"replicas": replicas, **body["spec"]}
    return body


def override(path: str, value: Any) -> FieldOverride:
    return FieldOverride(fieldpaths.parse(path), value)


def render(body: dict[str, Any], copy: ClusterCopy | None = None, **kwargs: Any) -> dict[str, Any]:
    plan_settings = kwargs.pop("plan_settings", PlanSettings())
    source = manifest(body, kwargs.pop("namespaced", True))
    chosen = copy or ClusterCopy("wlc-1")
    return manifests.render_object(
        source, chosen, group(ObjectPlan(source, (chosen,))), plan_settings, **kwargs
    )


def test_server_fields_are_stripped() -> None:
    body = deployment(
        uid="u",
        resourceVersion="1",
        generation=2,
        creationTimestamp="2024-01-01T00:00:00Z",
        managedFields=[{"manager": "kubectl"}],
        selfLink="/apis/x",
        annotations={objects.LAST_APPLIED_ANNOTATION: "{}", "keep": "me"},
    )
    body["status"] = {"replicas": 3}
    rendered = render(body)
    assert "status" not in rendered
    assert list(rendered["metadata"]) == ["name", "namespace", "annotations", "labels"]
    assert rendered["metadata"]["annotations"] == {
        "keep": "me",
        "nova.elotl.co/matching-policy": "demo-policy",
        "nova.elotl.co/schedule-group": "demo-policy-1a2b3c4d",
    }


def test_an_emptied_annotations_map_is_dropped() -> None:
    body = deployment(annotations={objects.LAST_APPLIED_ANNOTATION: "{}"})
    assert "annotations" not in objects.strip_server_fields(body)["metadata"]


@pytest.mark.parametrize("annotation", sorted(objects.CONTROLLER_ANNOTATIONS))
def test_annotations_a_clusters_controllers_write_are_stripped(annotation: str) -> None:
    body = deployment(annotations={annotation: "3", "keep": "me"})
    assert objects.strip_server_fields(body)["metadata"]["annotations"] == {"keep": "me"}
    assert "deployment.kubernetes.io/revision" in objects.CONTROLLER_ANNOTATIONS  # issue 23's real cluster


def test_strip_returns_the_same_object_when_there_is_nothing_to_strip() -> None:
    body = deployment()
    assert objects.strip_server_fields(body) is body


def test_nova_labels_and_annotations() -> None:
    rendered = render(deployment(labels={"app": "web"}), ClusterCopy("wlc-7"))
    assert rendered["metadata"]["labels"] == {"app": "web", "nova.elotl.co/target-cluster": "wlc-7"}
    assert rendered["metadata"]["annotations"]["nova.elotl.co/matching-policy"] == "demo-policy"
    delegated = render(deployment(), plan_settings=PlanSettings(delegated=True))
    assert delegated["metadata"]["labels"]["nova.elotl.co/schedule"] == "true"


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        ({"nova.elotl.co/cluster": "wlc-1"}, "nova.elotl.co/cluster"),
        ({"nova.elotl.co/spread-onto": "wlc-1,wlc-2"}, "nova.elotl.co/spread-onto"),
    ],
)
def test_annotation_placed_groups_name_the_annotation(annotations: dict[str, str], expected: str) -> None:
    source = manifest(deployment(annotations=annotations))
    placed = group(ObjectPlan(source, (ClusterCopy("wlc-1"),)), policy=None)
    assert manifests.placed_by(placed) == expected


def test_missing_namespace_is_written_after_the_name() -> None:
    body = deployment()
    del body["metadata"]["namespace"]
    body["metadata"] = {"labels": {"a": "b"}, **body["metadata"]}
    rendered = render(body)
    assert list(rendered["metadata"])[:3] == ["labels", "name", "namespace"]
    assert rendered["metadata"]["namespace"] == "default"


def test_cluster_scoped_objects_get_no_namespace() -> None:
    body = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "view"}}
    assert "namespace" not in render(body, namespaced=False)["metadata"]


def job(completions: int | None, parallelism: int | None = 4) -> dict[str, Any]:
    spec: dict[str, Any] = {"template": {"spec": {"containers": [{"name": "c"}]}}}
    if parallelism is not None:
        spec["parallelism"] = parallelism
    if completions is not None:
        spec["completions"] = completions
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "b"},
        "spec": spec,
    }


@pytest.mark.parametrize(
    ("body", "path", "expected"),
    [
        (deployment(), ("spec", "replicas"), 2),
        (deployment(replicas=None), ("spec", "replicas"), 2),
        ({**deployment(), "kind": "StatefulSet"}, ("spec", "replicas"), 2),
        ({**deployment(), "kind": "ReplicaSet"}, ("spec", "replicas"), 2),
        ({**deployment(), "apiVersion": "v1", "kind": "ReplicationController"}, ("spec", "replicas"), 2),
        (job(None), ("spec", "parallelism"), 2),
        (
            {
                "apiVersion": "batch/v1",
                "kind": "CronJob",
                "metadata": {"name": "cj"},
                "spec": {"jobTemplate": {}},
            },
            ("spec", "jobTemplate", "spec", "parallelism"),
            2,
        ),
        (
            {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {}},
            ("spec",),
            {},
        ),
        (
            {
                "apiVersion": "argoproj.io/v1alpha1",
                "kind": "Rollout",
                "metadata": {"name": "r"},
                "spec": {"replicas": 5},
            },
            ("spec", "replicas"),
            2,
        ),
    ],
)
def test_replicas_land_where_the_kind_keeps_them(
    body: dict[str, Any], path: tuple[str, ...], expected: Any
) -> None:
    rendered: Any = render(body, ClusterCopy("wlc-1", replicas=2))
    for key in path:
        rendered = rendered[key]
    assert rendered == expected


def test_job_completions_are_split_in_proportion() -> None:
    source = manifest(job(completions=10, parallelism=4))
    copies = (ClusterCopy("a", 3), ClusterCopy("b", 1))
    shares = manifests.completions_by_cluster(ObjectPlan(source, copies))
    assert shares == {"a": 8, "b": 2}  # 7.5 and 2.5: the tie goes to the larger parallelism
    rendered = manifests.render_object(source, copies[1], None, PlanSettings(), completions=shares["b"])
    assert rendered["spec"]["parallelism"] == 1
    assert rendered["spec"]["completions"] == 2


def test_jobs_without_completions_or_copies_without_replicas_keep_completions() -> None:
    assert manifests.completions_by_cluster(ObjectPlan(manifest(job(None)), (ClusterCopy("a", 2),))) == {}
    assert manifests.completions_by_cluster(ObjectPlan(manifest(job(5)), (ClusterCopy("a"),))) == {}


@settings(max_examples=150)
@given(
    completions=st.integers(0, 1000),
    parts=st.lists(st.integers(0, 50), min_size=1, max_size=8),
)
def test_completion_shares_sum_to_the_source(completions: int, parts: list[int]) -> None:
    copies = tuple(ClusterCopy(f"c{index}", part) for index, part in enumerate(parts))
    shares = manifests.completions_by_cluster(ObjectPlan(manifest(job(completions)), copies))
    assert sum(shares.values()) == completions
    total = sum(parts)
    for index, part in enumerate(parts):
        exact = completions * part / total if total else completions / len(parts)
        assert abs(shares[f"c{index}"] - exact) < 1


@pytest.mark.parametrize(
    ("body", "path"),
    [
        (deployment(), ("spec", "template", "metadata", "labels")),
        ({**deployment(), "kind": "DaemonSet"}, ("spec", "template", "metadata", "labels")),
        (job(3), ("spec", "template", "metadata", "labels")),
        (
            {
                "apiVersion": "batch/v1",
                "kind": "CronJob",
                "metadata": {"name": "cj"},
                "spec": {"jobTemplate": {}},
            },
            ("spec", "jobTemplate", "spec", "template", "metadata", "labels"),
        ),
        ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}}, ("metadata", "labels")),
    ],
)
def test_luna_label_on_pod_templates(body: dict[str, Any], path: tuple[str, ...]) -> None:
    rendered: Any = render(body)
    unmanaged: Any = render(body, plan_settings=PlanSettings(luna_management=False))
    for key in path:
        rendered = rendered[key]
        unmanaged = unmanaged.get(key, {})
    assert rendered["elotl-luna"] == "true"
    assert "elotl-luna" not in unmanaged


def test_luna_label_keeps_a_value_the_user_wrote() -> None:
    body = deployment()
    body["spec"]["template"]["metadata"]["labels"]["elotl-luna"] = "false"
    assert render(body)["spec"]["template"]["metadata"]["labels"]["elotl-luna"] == "false"


def test_luna_label_is_not_added_to_other_kinds() -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"}, "data": {}}
    assert render(body)["metadata"]["labels"] == {"nova.elotl.co/target-cluster": "wlc-1"}


def test_overrides_apply_last_and_in_order() -> None:
    overrides = (
        override("spec.replicas", 9),
        override("metadata.labels['tier']", "gold"),
        override("metadata.labels['tier']", "silver"),
    )
    rendered = render(deployment(), ClusterCopy("wlc-1", replicas=2, overrides=overrides))
    assert rendered["spec"]["replicas"] == 9
    assert rendered["metadata"]["labels"]["tier"] == "silver"


def test_every_failing_override_is_reported() -> None:
    overrides = (
        override("spec.template.spec.containers[3].image", "x"),
        override("spec.replicas", 4),
        override("spec.template.spec.containers[7].name", "y"),
    )
    with pytest.raises(manifests.ObjectRenderError) as raised:
        render(deployment(), ClusterCopy("wlc-1", overrides=overrides))
    fields = [failure.field for failure in raised.value.failures]
    assert fields == ["spec.template.spec.containers[3].image", "spec.template.spec.containers[7].name"]


def test_malformed_shapes_are_errors_not_crashes() -> None:
    body = deployment()
    body["spec"] = ["not", "a", "mapping"]
    with pytest.raises(manifests.ObjectRenderError, match="spec"):
        render(body, ClusterCopy("wlc-1", replicas=2))


def test_the_source_body_is_never_mutated() -> None:
    body = deployment(labels={"app": "web"}, annotations={objects.LAST_APPLIED_ANNOTATION: "{}"}, uid="u")
    body["status"] = {"ready": 1}
    before = copying.deepcopy(body)
    render(
        body,
        ClusterCopy(
            "wlc-1", replicas=1, overrides=(override("spec.template.spec.containers[0].image", "i"),)
        ),
    )
    render(body, plan_settings=PlanSettings(delegated=True))
    assert body == before


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (deployment(replicas=None), 1),
        (deployment(replicas=4), 4),
        (job(None, parallelism=None), 1),
        ({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}, None),
        ({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d"}}, None),
    ],
)
def test_source_replicas(body: dict[str, Any], expected: int | None) -> None:
    assert manifests.source_replicas(manifest(body)) == expected


def test_a_created_pod_template_metadata_comes_before_the_spec() -> None:
    rendered = render(job(3))
    assert list(rendered["spec"]["template"]) == ["metadata", "spec"]


def test_a_cluster_scoped_object_loses_the_namespace_it_should_not_have() -> None:
    from tests.builders import cluster, plan, policy

    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "reader", "namespace": "oops", "labels": {"app": "demo"}},
        "rules": [],
    }
    result = plan(cluster("c1"), policy("p"), role)
    (group,) = result.groups
    body = manifests.render_object(
        group.objects[0].manifest, group.objects[0].copies[0], group, result.settings
    )
    assert "namespace" not in body["metadata"]
