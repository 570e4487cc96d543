"""The whole rendered tree (docs/design.md §4), and the splice that makes it fast.

Behaviours covered:
- property: equivalent plans (groups, objects, copies, followed namespaces and clusters shuffled) render to
  byte-identical trees;
- property: every rendered file loads back (CSafeLoader) to the object ``manifests.render_object`` gives for
  that cluster, and its bytes equal a per-cluster emit: splicing cluster names never changes the output;
- each cluster directory has a kustomization listing exactly its files; a known cluster that receives nothing
  still gets one (``resources: []``);
- files are UTF-8 with LF and one trailing newline; the tree also holds placement.yaml, PLACEMENT.md and
  .gitattributes;
- followed namespaces are rendered with the same labels and annotations; a Namespace placed explicitly wins
  over a followed copy of it;
- kind clashes between API groups get distinct files; two objects that would share a file are an error;
- override failures become one InputError listing every object (file:line of object and policy) and the
  clusters it fails in; nothing is rendered;
- the sentinel text in user data, and an override of the target-cluster label, still render correctly.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops import errors
from nova_gitops.api import fieldpaths
from nova_gitops.api.objects import Manifest
from nova_gitops.api.policies import FieldOverride
from nova_gitops.api.problems import SourceLocation
from nova_gitops.rendering import emitting, layout, manifests, renders, reports
from nova_gitops.scheduling.planparts import ClusterCopy, ClusterUsage, GroupPlan, ObjectPlan
from nova_gitops.scheduling.plans import FollowedNamespace, Plan, PlanSettings

SOURCE = reports.SourceInfo("https://git.example.com/apps.git", "abc1234")
CLUSTER_NAMES = ("wlc-1", "wlc-2", "true", "0123", "eu-west-1a", "null")


def manifest(body: dict[str, Any], line: int = 1) -> Manifest:
    metadata = body["metadata"]
    namespaced = body["kind"] not in ("Namespace", "ClusterRole")
    return Manifest(
        body,
        SourceLocation("src/objects.yaml", line),
        body["apiVersion"],
        body["kind"],
        metadata["name"],
        metadata.get("namespace", "default") if namespaced else "",
        namespaced,
    )


def deployment(name: str, namespace: str = "shop", replicas: int = 3) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": name}, "uid": "drop-me"},
        "spec": {
            "replicas": replicas,
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [{"name": "main", "image": "registry.example.com/app:1.0", "args": ["ü"]}]
                },
            },
        },
        "status": {"readyReplicas": 1},
    }


def namespace(name: str) -> Manifest:
    return manifest({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


def override(path: str, value: Any) -> FieldOverride:
    return FieldOverride(fieldpaths.parse(path), value)


def make_group(
    name: str, clusters: tuple[str, ...], *objects: ObjectPlan, policy: str | None = "p"
) -> GroupPlan:
    return GroupPlan(name, policy, None, "divide", "scheduled", clusters, "reason", objects)


def usages(*names: str) -> tuple[ClusterUsage, ...]:
    return tuple(ClusterUsage(name, {"cpu": 4000}, {"cpu": 4000}, {}) for name in sorted(names))


_OVERRIDES = (
    override("metadata.labels['tier']", "gold"),
    override("spec.template.spec.containers[0].image", "registry.example.com/app:eu"),
    override("metadata.annotations['note']", 7),
    override("spec.replicas", 1),
)


@st.composite
def plans(draw: st.DrawFn) -> Plan:
    clusters = draw(st.lists(st.sampled_from(CLUSTER_NAMES), min_size=1, max_size=5, unique=True))
    group_count = draw(st.integers(1, 4))
    groups = []
    followed: dict[tuple[str, str], FollowedNamespace] = {}
    line = 1
    for group_index in range(group_count):
        group_name = f"p-{group_index:08x}"
        chosen = tuple(sorted(draw(st.lists(st.sampled_from(clusters), min_size=1, unique=True))))
        objects = []
        for object_index in range(draw(st.integers(1, 3))):
            line += 10
            kind = draw(st.sampled_from(["Deployment", "ConfigMap", "Job", "ClusterRole"]))
            object_name = f"o{group_index}-{object_index}"
            ns = draw(st.sampled_from(["shop", "web"]))
            if kind == "Deployment":
                body = deployment(object_name, ns)
            elif kind == "ConfigMap":
                body = {"apiVersion": "v1", "kind": kind, "metadata": {"name": object_name, "namespace": ns}}
                body["data"] = {"config.yml": "a: 1\nb: [2]\n"}
            elif kind == "Job":
                body = {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "metadata": {"name": object_name, "namespace": ns},
                }
                body["spec"] = {"parallelism": 4, "completions": 9, "template": {"spec": {"containers": []}}}
            else:
                ns = ""
                body = {
                    "apiVersion": "rbac.authorization.k8s.io/v1",
                    "kind": kind,
                    "metadata": {"name": object_name},
                }
            source = manifest(body, line)
            copies = []
            for cluster in chosen:
                replicas = draw(st.one_of(st.none(), st.integers(0, 5)))
                pool = _OVERRIDES[:3] if kind == "Deployment" else (_OVERRIDES[0], _OVERRIDES[2])
                chosen_overrides = draw(st.lists(st.sampled_from(pool), max_size=2))
                copies.append(ClusterCopy(cluster, replicas, tuple(chosen_overrides)))
                if ns:
                    followed.setdefault(
                        (cluster, ns), FollowedNamespace(namespace(ns), cluster, group_name, "p")
                    )
            objects.append(ObjectPlan(source, tuple(copies)))
        groups.append(make_group(group_name, chosen, *objects))
    plan_settings = PlanSettings(luna_management=draw(st.booleans()), delegated=draw(st.booleans()))
    return Plan(
        tuple(groups),
        (),
        tuple(followed[key] for key in sorted(followed)),
        usages(*clusters),
        (),
        plan_settings,
    )


def shuffled(plan: Plan, rng: random.Random) -> Plan:
    def mix(items: tuple[Any, ...]) -> tuple[Any, ...]:
        listed = list(items)
        rng.shuffle(listed)
        return tuple(listed)

    groups = tuple(
        GroupPlan(
            g.name,
            g.policy,
            g.group_by,
            g.mode,
            g.status,
            mix(g.clusters),
            g.reason,
            mix(tuple(ObjectPlan(o.manifest, mix(o.copies)) for o in g.objects)),
            g.warnings,
        )
        for g in plan.groups
    )
    return Plan(
        mix(groups),
        mix(plan.unscheduled),
        mix(plan.followed_namespaces),
        mix(plan.clusters),
        plan.warnings,
        plan.settings,
    )


@settings(max_examples=60, deadline=None)
@given(plan=plans(), seed=st.integers(0, 2**32))
def test_equivalent_plans_render_identical_bytes(plan: Plan, seed: int) -> None:
    first = renders.render(plan, SOURCE).files
    second = renders.render(shuffled(plan, random.Random(seed)), SOURCE).files
    assert list(first) == list(second)
    assert first == second


@settings(max_examples=60, deadline=None)
@given(plan=plans())
def test_every_file_loads_back_to_the_object_rendered_for_its_cluster(plan: Plan) -> None:
    files = renders.render(plan, SOURCE).files
    expected_paths = {path for path in files if not path.startswith("clusters/")}
    for group in plan.groups:
        for object_plan in group.objects:
            source = object_plan.manifest
            shares = manifests.completions_by_cluster(object_plan)
            for copy in object_plan.copies:
                expected = manifests.render_object(
                    source, copy, group, plan.settings, completions=shares.get(copy.cluster)
                )
                path = layout.object_path(
                    copy.cluster, source.kind, source.group, source.namespace, source.name, False
                )
                assert yaml.load(files[path], Loader=yaml.CSafeLoader) == expected
                assert files[path] == emitting.dump(expected).encode()
                expected_paths.add(path)
    for item in plan.followed_namespaces:
        path = f"clusters/{item.cluster}/_cluster/namespace-{item.manifest.name}.yaml"
        loaded = yaml.load(files[path], Loader=yaml.CSafeLoader)
        assert loaded["metadata"]["labels"]["nova.elotl.co/target-cluster"] == item.cluster
        assert loaded["metadata"]["annotations"]["nova.elotl.co/schedule-group"] == item.group
        expected_paths.add(path)
    for usage in plan.clusters:
        kustomization_path = f"clusters/{usage.cluster}/kustomization.yaml"
        kustomization = yaml.load(files[kustomization_path], Loader=yaml.CSafeLoader)
        below = sorted(
            p.removeprefix(f"clusters/{usage.cluster}/")
            for p in expected_paths
            if p.startswith(f"clusters/{usage.cluster}/")
        )
        assert kustomization["resources"] == below
        expected_paths.add(kustomization_path)
    assert set(files) == expected_paths
    for content in files.values():
        text = content.decode("utf-8")
        assert "\r" not in text
        assert text.endswith("\n") and not text.endswith("\n\n")


def test_a_cluster_that_receives_nothing_gets_an_empty_kustomization() -> None:
    files = renders.render(Plan((), (), (), usages("idle"), ()), SOURCE).files
    assert yaml.load(files["clusters/idle/kustomization.yaml"], Loader=yaml.CSafeLoader)["resources"] == []
    assert set(files) == {
        "clusters/idle/kustomization.yaml",
        "placement.yaml",
        "PLACEMENT.md",
        ".gitattributes",
    }
    assert files[".gitattributes"] == reports.GITATTRIBUTES.encode()


def test_a_placed_namespace_wins_over_a_followed_copy() -> None:
    placed = manifest(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop", "labels": {"team": "a"}}}
    )
    plan = Plan(
        (make_group("p-1", ("c1",), ObjectPlan(placed, (ClusterCopy("c1"),))),),
        (),
        (FollowedNamespace(namespace("shop"), "c1", "p-2", "q"),),
        usages("c1"),
        (),
    )
    loaded = yaml.load(
        renders.render(plan, SOURCE).files["clusters/c1/_cluster/namespace-shop.yaml"], yaml.CSafeLoader
    )
    assert loaded["metadata"]["labels"]["team"] == "a"
    assert loaded["metadata"]["annotations"]["nova.elotl.co/schedule-group"] == "p-1"


def test_kind_clash_between_api_groups_gets_distinct_files() -> None:
    core = manifest({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "shop"}})
    new = manifest(
        {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e", "namespace": "shop"}}
    )
    group = make_group(
        "p-1", ("c1",), ObjectPlan(core, (ClusterCopy("c1"),)), ObjectPlan(new, (ClusterCopy("c1"),))
    )
    files = renders.render(Plan((group,), (), (), usages("c1"), ()), SOURCE).files
    assert "clusters/c1/shop/event-e.yaml" in files
    assert yaml.load(files["clusters/c1/shop/event.events.k8s.io-e.yaml"], yaml.CSafeLoader)[
        "apiVersion"
    ] == ("events.k8s.io/v1")


def test_two_objects_for_one_file_are_an_input_error() -> None:
    first = manifest(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "shop"}}, 1
    )
    second = manifest(
        {"apiVersion": "v2", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "shop"}}, 9
    )
    groups = (
        make_group("p-1", ("c1",), ObjectPlan(first, (ClusterCopy("c1"),))),
        make_group("p-2", ("c1",), ObjectPlan(second, (ClusterCopy("c1"),))),
    )
    with pytest.raises(
        errors.InputError, match=r"would both be rendered to clusters/c1/shop/configmap-c\.yaml"
    ):
        renders.render(Plan(groups, (), (), usages("c1"), ()), SOURCE)


def two_groups_for_one_placement_file() -> Plan:
    """Two groups whose files would share a name: a long name's shortened form is another group's name."""
    long_name = "g" * 300
    other = layout.group_file_name(long_name).removesuffix(".yaml")
    groups = tuple(
        make_group(name, ("c1",), ObjectPlan(manifest(deployment(f"w{index}")), (ClusterCopy("c1"),)))
        for index, name in enumerate((long_name, other))
    )
    return Plan(groups, (), (), usages("c1"), ())


def test_two_groups_for_one_placement_file_are_an_input_error() -> None:
    plan = two_groups_for_one_placement_file()
    with pytest.raises(errors.InputError) as raised:
        renders.render(plan, SOURCE)
    (problem,) = raised.value.problems
    first, second = sorted(group.name for group in plan.groups)
    path = layout.group_file("p", first)
    assert str(problem) == f"<plan>:0: ScheduleGroups {first} and {second} would both be written to {path}"


def test_override_failures_are_collected_into_one_input_error() -> None:
    bad = override("spec.template.spec.containers[4].image", "x")
    web = manifest(deployment("web"), 10)
    api = manifest(deployment("api"), 40)
    groups = (
        make_group(
            "p-1",
            ("wlc-1", "wlc-2", "wlc-3"),
            ObjectPlan(
                web, (ClusterCopy("wlc-1", 1, (bad,)), ClusterCopy("wlc-2", 1, (bad,)), ClusterCopy("wlc-3"))
            ),
            ObjectPlan(api, (ClusterCopy("wlc-1", None, (bad, override("spec.x[2]", 1))),)),
        ),
    )
    plan = Plan(groups, (), (), usages("wlc-1", "wlc-2", "wlc-3"), ())
    with pytest.raises(errors.InputError) as raised:
        renders.render(plan, SOURCE, policy_locations={"p": SourceLocation("policies/p.yaml", 4)})
    messages = [str(problem) for problem in raised.value.problems]
    assert len(messages) == 3
    assert messages[0].startswith("src/objects.yaml:10: spec.template.spec.containers[4].image: ")
    assert "SchedulePolicy p (policies/p.yaml:4)" in messages[0]
    assert messages[0].endswith("(in cluster wlc-1, wlc-2)")
    assert all(message.startswith("src/objects.yaml:40: ") for message in messages[1:])


def test_sentinel_text_in_user_data_still_renders_each_cluster_correctly() -> None:
    body = deployment("web")
    body["metadata"]["annotations"] = {"odd": manifests.SENTINEL_CLUSTER}
    source = manifest(body)
    group = make_group("p-1", ("c1", "c2"), ObjectPlan(source, (ClusterCopy("c1"), ClusterCopy("c2"))))
    files = renders.render(Plan((group,), (), (), usages("c1", "c2"), ()), SOURCE).files
    for cluster in ("c1", "c2"):
        loaded = yaml.load(files[f"clusters/{cluster}/shop/deployment-web.yaml"], yaml.CSafeLoader)
        assert loaded["metadata"]["labels"]["nova.elotl.co/target-cluster"] == cluster
        assert loaded["metadata"]["annotations"]["odd"] == manifests.SENTINEL_CLUSTER


def test_an_override_of_the_target_cluster_label_is_honoured() -> None:
    relabel = override("metadata.labels['nova.elotl.co/target-cluster']", "elsewhere")
    source = manifest(deployment("web"))
    copies = (ClusterCopy("c1", None, (relabel,)), ClusterCopy("c2", None, (relabel,)))
    group = make_group("p-1", ("c1", "c2"), ObjectPlan(source, copies))
    files = renders.render(Plan((group,), (), (), usages("c1", "c2"), ()), SOURCE).files
    for cluster in ("c1", "c2"):
        loaded = yaml.load(files[f"clusters/{cluster}/shop/deployment-web.yaml"], yaml.CSafeLoader)
        assert loaded["metadata"]["labels"]["nova.elotl.co/target-cluster"] == "elsewhere"


def test_unsafe_names_are_input_errors_not_escapes() -> None:
    evil = manifest(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "../../x", "namespace": "shop"}}
    )
    group = make_group("p-1", ("c1",), ObjectPlan(evil, (ClusterCopy("c1"),)))
    with pytest.raises(errors.InputError, match="cannot be part of a file path"):
        renders.render(Plan((group,), (), (), usages("c1"), ()), SOURCE)


def test_a_namespace_followed_from_an_annotation_placed_group_names_the_annotation() -> None:
    pinned = deployment("admin")
    pinned["metadata"]["annotations"] = {"nova.elotl.co/cluster": "c1"}
    group = make_group(
        "annotation-1", ("c1",), ObjectPlan(manifest(pinned), (ClusterCopy("c1"),)), policy=None
    )
    plan = Plan(
        (group,), (), (FollowedNamespace(namespace("shop"), "c1", "annotation-1", None),), usages("c1"), ()
    )
    loaded = yaml.load(
        renders.render(plan, SOURCE).files["clusters/c1/_cluster/namespace-shop.yaml"], yaml.CSafeLoader
    )
    assert loaded["metadata"]["annotations"] == {
        "nova.elotl.co/matching-policy": "nova.elotl.co/cluster",
        "nova.elotl.co/schedule-group": "annotation-1",
    }
